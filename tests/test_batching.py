"""Batched greedy decoding: every request's tokens equal batch-1 greedy decoding (fp32 CPU)."""

from __future__ import annotations

import pytest

import decodelab
from decodelab.batching import BatchResult, batch_generate, batch_sweep, same_length_prompts

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
    r = BatchResult(batch_size=4, prompt_tokens=3, token_ids=[[1, 2, 3]] * 4, texts=[""] * 4,
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
    with pytest.raises(ValueError, match="토큰 길이가 서로 다릅니다"):
        batch_generate(model, tok, ["헌법은", "지방자치단체는"], 4)
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

    rows = [BatchResult(batch_size=b, prompt_tokens=3, token_ids=[[0, 0]] * b, texts=[""] * b,
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
