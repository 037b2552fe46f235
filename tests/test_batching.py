"""Batched greedy decoding: every request's tokens equal batch-1 greedy decoding (fp32 CPU), for
prompts of one length, of different lengths (left padding), and under continuous batching."""

from __future__ import annotations

import pytest
import torch

import decodelab
from decodelab.batching import (MIXED_PROMPTS, BatchResult, ContinuousResult, Request, RequestTrace, batch_generate,
                                batch_sweep, continuous_batching, continuous_figure, demo_requests, same_length_prompts)

N_NEW = 12


def test_same_length_prompts_share_a_token_length(pair):
    prompts = same_length_prompts(pair.tokenizer, 16)
    assert len(prompts) == len(set(prompts)) == 16
    lengths = {len(pair.tokenizer(p, add_special_tokens=False)["input_ids"]) for p in prompts}
    assert len(lengths) == 1


def test_each_request_in_a_batch_equals_batch_one_greedy(pair):
    model, tok = pair.target, pair.tokenizer
    prompts = same_length_prompts(tok, 16)
    batch = batch_generate(model, tok, prompts, N_NEW)
    assert batch.batch_size == 16 and len(batch.step_ms) == N_NEW - 1
    references = [decodelab.generate(model, tok, p, N_NEW, stop_at_eos=False, top_candidates=0) for p in prompts]
    for got, ref in zip(batch.token_ids, references):
        assert got == ref.token_ids
    assert batch.texts == [r.text for r in references]
    # the batch really holds different requests: not all rows are the same continuation
    assert len({tuple(t) for t in batch.token_ids}) > 1


def test_sweep_rows_agree_with_the_largest_batch(pair):
    model, tok = pair.target, pair.tokenizer
    rows = batch_sweep(model, tok, N_NEW, (1, 2, 4))
    assert [r.batch_size for r in rows] == [1, 2, 4]
    assert rows[0].token_ids[0] == rows[1].token_ids[0] == rows[2].token_ids[0]
    assert rows[1].token_ids == rows[2].token_ids[:2]
    for r in rows:
        assert r.tpot_ms > 0 and r.tokens_per_s > 0 and r.prefill_ms > 0


def test_aggregate_throughput_and_tpot_arithmetic():
    r = BatchResult(batch_size=4, prompt_tokens=[3] * 4, token_ids=[[1, 2, 3]] * 4, texts=[""] * 4,
                    prefill_ms=5.0, step_ms=[10.0, 30.0])
    assert r.tpot_ms == 20.0                      # mean decode step, each request gets one token per step
    assert r.tokens_per_s == 4 * 2 * 1000 / 40    # 200 tokens/s over the batch
    assert r.e2e_ms == 45.0


def test_bad_inputs(pair):
    model, tok = pair.target, pair.tokenizer
    with pytest.raises(TypeError, match="프롬프트 목록"):
        batch_generate(model, tok, "헌법은", 4)
    with pytest.raises(ValueError, match="비어 있습니다"):
        batch_generate(model, tok, [], 4)
    with pytest.raises(ValueError, match="max_new_tokens"):
        batch_generate(model, tok, ["헌법은"], 0)
    with pytest.raises(ValueError, match="배치 크기"):
        batch_sweep(model, tok, 4, (0, 2))
    with pytest.raises(ValueError, match="max_new_tokens"):
        batch_sweep(model, tok, 1)
    with pytest.raises(ValueError, match="프롬프트가 1개뿐"):
        batch_sweep(model, tok, 4, (1, 2), prompts=["헌법은"])
    with pytest.raises(ValueError, match="후보가"):
        same_length_prompts(tok, 500)


def test_batch_figure_plots_the_rows():
    import matplotlib.pyplot as plt

    from decodelab.batching import batch_figure

    rows = [BatchResult(batch_size=b, prompt_tokens=[3] * b, token_ids=[[0, 0]] * b, texts=[""] * b,
                        prefill_ms=2.0 * b, step_ms=[10.0 + b]) for b in (1, 2, 4)]
    fig = batch_figure(rows)
    try:
        left, right = fig.axes
        x, y = left.lines[0].get_data()
        assert list(x) == [1, 2, 4]
        assert list(y) == pytest.approx([b * 1000 / (10.0 + b) for b in (1, 2, 4)])
        assert list(right.lines[0].get_ydata()) == [11.0, 12.0, 14.0]   # per-request TPOT
        assert list(right.lines[1].get_ydata()) == [2.0, 4.0, 8.0]      # TTFT of the batched prefill
        for ax in (left, right):
            assert ax.xaxis.label.get_fontsize() >= 10
            assert all(t.get_rotation() == 0 for t in ax.get_xticklabels())
    finally:
        plt.close(fig)


def _greedy(pair, prompt, n):
    return decodelab.generate(pair.target, pair.tokenizer, prompt, n, stop_at_eos=False, top_candidates=0).token_ids


def test_prompts_of_different_lengths_equal_batch_one_greedy(pair):
    tok = pair.tokenizer
    lengths = [len(tok(p, add_special_tokens=False)["input_ids"]) for p in MIXED_PROMPTS]
    assert min(lengths) <= 3 and max(lengths) >= 14          # really different: 2 ... 14 tokens
    batch = batch_generate(pair.target, tok, list(MIXED_PROMPTS), N_NEW)
    assert batch.prompt_tokens == lengths
    for prompt, got in zip(MIXED_PROMPTS, batch.token_ids):
        assert got == _greedy(pair, prompt, N_NEW)


def _until_eos(ids, eos):
    return ids[: ids.index(eos) + 1] if eos in ids else ids


def test_padded_batch_equals_transformers_generate_with_left_padding(pair):
    model, tok = pair.target, pair.tokenizer
    prompts = list(MIXED_PROMPTS[:5])
    ids = [tok(p, add_special_tokens=False)["input_ids"] for p in prompts]
    width = max(map(len, ids))
    pad = tok.pad_token_id
    x = torch.tensor([[pad] * (width - len(i)) + i for i in ids])
    mask = torch.tensor([[0] * (width - len(i)) + [1] * len(i) for i in ids])
    out = model.generate(x, attention_mask=mask, max_new_tokens=N_NEW, do_sample=False, pad_token_id=pad)
    ours = batch_generate(model, tok, prompts, N_NEW)
    eos = tok.eos_token_id
    for row, got in zip(out[:, width:].tolist(), ours.token_ids):
        # transformers stops a row at EOS and pads after it; ours runs on: compare up to the first EOS
        assert _until_eos(got, eos) == _until_eos(row, eos)[: len(_until_eos(got, eos))]


def test_continuous_batching_each_request_equals_batch_one_greedy(pair):
    reqs = demo_requests(6)
    assert [r.arrival_step for r in reqs] == [0, 3, 6, 9, 12, 15]
    res = continuous_batching(pair.target, pair.tokenizer, reqs)
    for req, trace in zip(reqs, res.requests):
        assert trace.token_ids == _greedy(pair, req.prompt, req.max_new_tokens)
        assert len(trace.token_ms) == req.max_new_tokens
        assert trace.joined_step == req.arrival_step                    # no limit: joins on arrival
        # one token per iteration from the join on: it leaves at join + n - 1
        assert trace.finished_step == trace.joined_step + req.max_new_tokens - 1
        assert trace.ttft_ms > 0 and trace.tpot_ms > 0
    # the batch really grows and shrinks: rows in each decode pass, from the schedule alone
    expected = []
    for k in range(len(res.step_ms)):
        expected.append(sum(1 for r in res.requests if r.joined_step < k <= r.finished_step))
    assert res.running == expected and max(res.running) >= 3
    assert sorted(i for j in res.joined for i in j) == list(range(6))
    assert sorted(i for j in res.left for i in j) == list(range(6))


def test_a_full_batch_makes_later_requests_wait(pair):
    reqs = [Request("헌법은", 6, 0), Request("표의 셀 서식을 바꾸려면", 4, 0), Request("대통령은", 3, 1), Request("저장하려면", 1, 1)]
    res = continuous_batching(pair.target, pair.tokenizer, reqs, max_batch_size=2)
    steps = [(t.joined_step, t.finished_step) for t in res.requests]
    # 0 and 1 fill the batch; 1 leaves at iteration 3, so 2 joins then; 0 leaves at 5, then 3 joins and leaves at once
    assert steps == [(0, 5), (0, 3), (3, 5), (5, 5)]
    assert max(res.running) <= 2
    for req, trace in zip(reqs, res.requests):
        assert trace.token_ids == _greedy(pair, req.prompt, req.max_new_tokens)
    assert res.requests[3].tpot_ms == 0.0
    # request 2 arrived at iteration 1 and waited through iterations 1 and 2: its TTFT counts the wait
    assert res.requests[2].ttft_ms >= res.step_ms[1] + res.step_ms[2]


def test_trace_and_result_arithmetic():
    trace = RequestTrace(Request("a", 3, 2), 1, [1, 2, 3], "", 2, 4, arrival_ms=10.0, token_ms=[15.0, 25.0, 45.0])
    assert trace.ttft_ms == 5.0 and trace.e2e_ms == 35.0
    assert trace.tpot_ms == 15.0                                        # (45 - 15) / (3 - 1)
    other = RequestTrace(Request("b", 1, 0), 1, [7], "", 0, 0, arrival_ms=0.0, token_ms=[4.0])
    res = ContinuousResult([trace, other], step_ms=[4.0, 6.0, 10.0], running=[0, 1, 1], joined=[[1], [0], []], left=[[1], [], [0]])
    assert res.total_ms == 20.0 and res.tokens_per_s == 4 * 1000 / 20.0   # 200 tokens/s


def test_continuous_figure_and_bad_inputs(pair):
    import matplotlib.pyplot as plt

    reqs = [Request("헌법은", 3, 0), Request("대통령은", 2, 1)]
    res = continuous_batching(pair.target, pair.tokenizer, reqs)
    fig = continuous_figure(res)
    try:
        top, bottom = fig.axes
        assert [p.get_height() for p in bottom.patches] == res.running
        assert len(top.patches) == 2                                    # one bar per request, none waited
    finally:
        plt.close(fig)
    with pytest.raises(TypeError, match="Request 목록"):
        continuous_batching(pair.target, pair.tokenizer, ["헌법은"])
    with pytest.raises(ValueError, match="비어 있습니다"):
        continuous_batching(pair.target, pair.tokenizer, [])
    with pytest.raises(ValueError, match="max_batch_size"):
        continuous_batching(pair.target, pair.tokenizer, reqs, max_batch_size=0)
    with pytest.raises(ValueError, match="arrival_step"):
        continuous_batching(pair.target, pair.tokenizer, [Request("헌법은", 2, -1)])
    with pytest.raises(ValueError, match="max_new_tokens"):
        continuous_batching(pair.target, pair.tokenizer, [Request("헌법은", 0, 0)])
    with pytest.raises(ValueError, match="준비된 프롬프트"):
        demo_requests(99)
