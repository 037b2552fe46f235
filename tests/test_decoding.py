"""The decode phase: greedy equality with transformers, KV cache, sampling distributions, errors."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

import decodelab
from decodelab import decoding
from decodelab.models import format_prompt
from decodelab.sampling import SamplingConfig, make_generator, probabilities, sample


def _hf_greedy(model, ids, n):
    x = torch.tensor([ids])
    with torch.inference_mode():
        out = model.generate(x, max_new_tokens=n, do_sample=False, attention_mask=torch.ones_like(x))
    return out[0, len(ids):].tolist()


@pytest.mark.slow  # 4-11 s here
@pytest.mark.parametrize("which", ["target", "draft"])
def test_greedy_equals_transformers_generate(pair, prompts, which):
    model = getattr(pair, which)
    for prompt in prompts[:5]:
        ours = decodelab.generate(model, pair.tokenizer, prompt, 64)
        theirs = _hf_greedy(model, ours.prompt_ids, 64)
        assert ours.token_ids == theirs, prompt
        assert len(ours.token_ids) == 64 or ours.stopped_by == "eos"


def test_cache_and_no_cache_agree(pair, prompts):
    for prompt in prompts[:5]:
        a = decodelab.generate(pair.target, pair.tokenizer, prompt, 24, use_cache=True)
        b = decodelab.generate(pair.target, pair.tokenizer, prompt, 24, use_cache=False)
        assert a.token_ids == b.token_ids


def test_kv_cache_grows_one_position_per_step(pair):
    tok = pair.tokenizer
    ids = tok("대한민국은", add_special_tokens=False)["input_ids"]
    state = decodelab.prefill(pair.target, torch.tensor([ids]))
    assert state.position == len(ids) == decoding.cache_length(state.cache)
    for k in range(1, 9):
        before = decoding.cache_length(state.cache)
        state = decodelab.decode_step(pair.target, state, int(state.logits.argmax()))
        assert decoding.cache_length(state.cache) == before + 1 == len(ids) + k
        assert state.position == len(ids) + k
        # the cached next-token logits equal a fresh full forward pass over all tokens
    fresh = decoding.forward(pair.target, state.input_ids, None)[0, -1]
    torch.testing.assert_close(state.logits, fresh, atol=1e-4, rtol=1e-4)


def test_one_forward_pass_per_token_and_none_after_the_last(pair, monkeypatch):
    """Token 0 comes from the prefill's logits; each later token costs one decode step, taken only
    when the stream is asked for that token, and none follows the last token or an EOS."""
    calls = []
    real = decoding.decode_step

    def counted(model, state, token_id):
        calls.append(token_id)
        return real(model, state, token_id)

    monkeypatch.setattr(decoding, "decode_step", counted)
    steps = decodelab.stream(pair.target, pair.tokenizer, "모든 국민은", 6, stop_at_eos=False)
    first = next(steps)
    assert calls == [] and first.position == len(format_prompt(pair.tokenizer, "모든 국민은"))
    rest = list(steps)
    ids = [first.token_id] + [s.token_id for s in rest]
    assert len(ids) == 6 and calls == ids[:-1]  # the decode step of token i + 1 feeds token i
    calls.clear()
    assert ids[2] not in ids[:2]
    monkeypatch.setattr(decoding, "eos_ids", lambda model, tok: {ids[2]})  # token 2 ends the text
    r = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 6)
    assert r.token_ids == ids[:3] and r.stopped_by == "eos" and calls == ids[:2]


def test_result_fields_and_timings(pair):
    r = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 8, stop_at_eos=False)
    assert len(r.token_ids) == len(r.steps) == 8
    assert [s.index for s in r.steps] == list(range(8))
    assert r.steps[0].position == len(r.prompt_ids)
    assert r.steps[-1].position == len(r.prompt_ids) + 7
    assert "".join(s.piece for s in r.steps) == r.text
    assert r.ttft_ms > 0 and r.tpot_ms > 0
    assert math.isclose(r.e2e_ms, r.ttft_ms + 7 * r.tpot_ms, rel_tol=1e-9)
    assert len(r.itl_ms) == 7
    for s in r.steps:
        assert len(s.top) == 5
        probs = [c.prob for c in s.top]
        assert probs == sorted(probs, reverse=True)
        assert s.top[0].token_id == s.token_id  # greedy picks the most likely candidate


def test_stream_and_callback_yield_the_same_steps(pair):
    seen = []
    r = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 6, on_step=seen.append, stop_at_eos=False)
    streamed = [s.token_id for s in decodelab.stream(pair.target, pair.tokenizer, "모든 국민은", 6, stop_at_eos=False)]
    assert [s.token_id for s in seen] == r.token_ids == streamed


def test_same_seed_same_sample(pair):
    kw = dict(temperature=1.0, top_k=50, top_p=0.95, stop_at_eos=False)
    a = decodelab.generate(pair.target, pair.tokenizer, "문서를 저장하려면", 20, seed=7, **kw)
    b = decodelab.generate(pair.target, pair.tokenizer, "문서를 저장하려면", 20, seed=7, **kw)
    c = decodelab.generate(pair.target, pair.tokenizer, "문서를 저장하려면", 20, seed=8, **kw)
    assert a.token_ids == b.token_ids
    assert a.token_ids != c.token_ids


# ---------------------------------------------------------------- exact distributions


def _reference_probs(logits: np.ndarray, t: float, k: int | None, p: float | None) -> np.ndarray:
    """Independent numpy re-derivation of transformers' Temperature -> TopK -> TopP warpers."""
    x = logits.astype(np.float64) / t
    if k is not None:
        kth = np.sort(x)[-k]
        x = np.where(x < kth, -np.inf, x)
    if p is not None and p < 1:
        probs = np.exp(x - x.max())
        probs /= probs.sum()
        order = np.argsort(probs, kind="stable")  # ascending, like TopPLogitsWarper
        cum = np.cumsum(probs[order])
        remove = cum <= (1 - p)
        remove[-1] = False  # keep at least one token
        x[order[remove]] = -np.inf
    probs = np.exp(x - x.max())
    return probs / probs.sum()


SETTINGS = [(1.0, None, None), (0.7, 50, None), (1.3, None, 0.9), (1.0, 5, 0.8), (0.5, 20, 0.95)]


@pytest.fixture(scope="module")
def next_logits(pair):
    ids = pair.tokenizer("데비안 패키지는", add_special_tokens=False)["input_ids"]
    return decodelab.prefill(pair.target, torch.tensor([ids])).logits


@pytest.mark.parametrize("t,k,p", SETTINGS)
def test_warped_distribution_matches_reference(next_logits, t, k, p):
    ours = probabilities(next_logits, SamplingConfig(t, k, p)).double().numpy()
    ref = _reference_probs(next_logits.numpy(), t, k, p)
    np.testing.assert_allclose(ours, ref, atol=1e-6)
    if k is not None:
        assert (ours > 0).sum() <= k


#: ``sample`` draws from whatever probabilities it is given, and the five settings' probabilities are
#: checked exactly above, so two settings are drawn from, each with tokens filtered out: the two where
#: a slightly wrong sampler lands furthest outside the bound (for one drawing from ``probs ** 1.1``
#: the exact TV distance is 1.5 and 2.1 times the bound there, 0.2 to 1.0 times in the other three)
DRAWN_SETTINGS = [(0.7, 50, None), (0.5, 20, 0.95)]


@pytest.mark.parametrize("t,k,p", DRAWN_SETTINGS)
def test_empirical_frequencies_match_warped_softmax(next_logits, t, k, p):
    n = 20_000
    ref = _reference_probs(next_logits.numpy(), t, k, p)
    probs = probabilities(next_logits, SamplingConfig(t, k, p))
    gen = make_generator(123)
    draws = np.array([sample(probs, gen) for _ in range(n)])
    emp = np.bincount(draws, minlength=len(ref)) / n
    assert set(np.flatnonzero(emp)) <= set(np.flatnonzero(ref)), "sampled a filtered-out token"
    tv = 0.5 * np.abs(emp - ref).sum()
    # expected TV of an n-sample empirical distribution ~ sum_x sqrt(p(1-p) / (2 pi n)); allow 3x
    bound = 3 * np.sum(np.sqrt(ref * (1 - ref) / (2 * np.pi * n))) + 1e-3
    assert tv < bound, (tv, bound)


def test_greedy_probabilities_are_one_hot(next_logits):
    p = probabilities(next_logits, SamplingConfig(0.0))
    assert p.sum().item() == 1.0 and p[next_logits.argmax()].item() == 1.0


# ---------------------------------------------------------------- errors


@pytest.mark.parametrize(
    "kwargs,needle,exc",
    [
        (dict(prompt=""), "prompt", ValueError),
        (dict(prompt="   "), "prompt", ValueError),
        (dict(max_new_tokens=0), "max_new_tokens", ValueError),
        (dict(max_new_tokens=2.5), "max_new_tokens", ValueError),
        (dict(max_new_tokens="4"), "max_new_tokens", TypeError),
        (dict(temperature=-0.1), "temperature", ValueError),
        (dict(top_p=0.0), "top_p", ValueError),
        (dict(top_p=1.5), "top_p", ValueError),
        (dict(top_p="0.9"), "top_p", TypeError),
        (dict(top_k=-1), "top_k", ValueError),  # 0 is "off" (the explorer slider's 0=끄기)
        (dict(top_k=2.5), "top_k", ValueError),
        (dict(top_k=True), "top_k", TypeError),
        (dict(max_new_tokens=10_000), "max_new_tokens", ValueError),
        (dict(prompt=123), "prompt", TypeError),
        (dict(temperature=float("inf")), "temperature", ValueError),
        (dict(temperature="hot"), "temperature", TypeError),
        (dict(seed="abc"), "seed", TypeError),
        (dict(seed=-1), "seed", ValueError),
        (dict(top_candidates="3"), "top_candidates", TypeError),
    ],
)
def test_bad_input_names_the_parameter(pair, kwargs, needle, exc):
    """Wrong types raise TypeError, wrong values ValueError; every message has one shape:
    ``name=value: 설명 (허용: ...)``."""
    args = dict(prompt="모든 국민은", max_new_tokens=4)
    args.update(kwargs)
    with pytest.raises(exc) as e:
        decodelab.generate(pair.target, pair.tokenizer, args.pop("prompt"), args.pop("max_new_tokens"), **args)
    assert type(e.value) is exc
    assert str(e.value).startswith(f"{needle}=") and "(허용: " in str(e.value), str(e.value)


def test_context_length_error_says_what_to_change(pair):
    limit = pair.target.config.max_position_embeddings
    n = len(pair.tokenizer("모든 국민은", add_special_tokens=False)["input_ids"])
    where = f"모델의 맥락 길이(context length) {limit} 토큰(config.max_position_embeddings)"
    assert n >= 2
    with pytest.raises(ValueError) as e:
        decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", limit - 1)
    assert str(e.value) == (f"max_new_tokens={limit - 1}: 프롬프트 {n} 토큰 + 새 토큰 {limit - 1}개 = {n + limit - 1} 토큰이 "
                            f"{where}을 넘습니다: max_new_tokens를 {limit - n} 이하로 줄이거나 프롬프트를 1 토큰 이하로 "
                            f"줄이세요 (허용: {limit - n} 이하)")
    with pytest.raises(ValueError, match=rf"넘습니다: max_new_tokens를 {limit - n} 이하로 줄이세요 \(허용"):
        decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", limit)  # no prompt is short enough
    long_prompt = "모든 국민은 " * limit
    m = len(format_prompt(pair.tokenizer, long_prompt))
    assert m > limit
    for run in (lambda: decodelab.generate(pair.target, pair.tokenizer, long_prompt, 1),
                lambda: decodelab.speculative_generate(pair.target, pair.draft, pair.tokenizer, long_prompt, 1)):
        with pytest.raises(ValueError) as e:
            run()
        assert str(e.value) == (f"prompt 길이={m}: 프롬프트가 {m} 토큰이라 {where}에 새 토큰이 들어갈 위치가 없습니다: "
                                f"프롬프트를 {limit - 1} 토큰 이하로 줄이세요 (허용: {limit - 1} 토큰 이하)")


def test_unknown_model_path_is_a_clear_error_not_a_download(tmp_path):
    with pytest.raises(FileNotFoundError, match="찾을 수 없습니다"):
        decodelab.load_models(tmp_path / "no-such-model")
    with pytest.raises(FileNotFoundError, match="config.json"):
        decodelab.load_models(tmp_path)
    with pytest.raises(FileNotFoundError):
        decodelab.load_models("meta-llama/Llama-3-8B")  # a hub id is not a local folder
    with pytest.raises(TypeError, match="경로"):
        decodelab.load_models(123)


def test_vocabulary_mismatch_is_rejected(pair, tmp_path):
    from transformers import LlamaConfig, LlamaForCausalLM

    cfg = LlamaConfig(vocab_size=pair.target.config.vocab_size - 7, hidden_size=32, intermediate_size=64,
                      num_hidden_layers=1, num_attention_heads=2, num_key_value_heads=2)
    LlamaForCausalLM(cfg).save_pretrained(tmp_path / "odd")
    with pytest.raises(ValueError, match="어휘"):
        decodelab.load_models(pair.target_path, tmp_path / "odd")


def test_any_local_pair_loads_through_the_same_api(pair, tmp_path):
    # a saved copy of the bundled draft, loaded as a "user's" pair from local paths
    pair.draft.save_pretrained(tmp_path / "d")
    pair.tokenizer.save_pretrained(tmp_path / "d")
    other = decodelab.load_models(tmp_path / "d", tmp_path / "d")
    assert other.target is other.draft
    r1 = decodelab.generate(other.target, other.tokenizer, "모든 국민은", 10)
    r2 = decodelab.generate(pair.draft, pair.tokenizer, "모든 국민은", 10)
    assert r1.token_ids == r2.token_ids


def test_draft_with_a_different_tokenizer_is_rejected(pair, tmp_path):
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import PreTrainedTokenizerFast

    # same vocabulary size, different token -> id map
    vocab = {f"t{i}": i for i in range(len(pair.tokenizer))}
    tk = Tokenizer(models.WordLevel(vocab=vocab, unk_token="t0"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(tokenizer_object=tk).save_pretrained(tmp_path / "d")
    pair.draft.save_pretrained(tmp_path / "d")
    with pytest.raises(ValueError, match="토크나이저"):
        decodelab.load_models(pair.target_path, tmp_path / "d")
    # the bundled draft folder carries the same tokenizer: accepted
    ok = decodelab.load_models(pair.target_path, pair.draft_path)
    assert ok.draft is not ok.target


def test_reusing_a_stale_state_is_an_error_and_deepcopy_branches_work(pair):
    import copy

    ids = pair.tokenizer("모든 국민은", add_special_tokens=False)["input_ids"]
    s0 = decodelab.prefill(pair.target, torch.tensor([ids]))
    branch = copy.deepcopy(s0)
    s1 = decodelab.decode_step(pair.target, s0, 5)
    with pytest.raises(ValueError, match="deepcopy"):
        decodelab.decode_step(pair.target, s0, 7)
    b1 = decodelab.decode_step(pair.target, branch, 7)
    fresh = decoding.forward(pair.target, torch.tensor([ids + [7]]), None)[0, -1]
    torch.testing.assert_close(b1.logits, fresh, atol=1e-4, rtol=1e-4)
    assert s1.position == b1.position == len(ids) + 1


def _pieces_by_full_redecode(tokenizer, ids):
    """The reference: re-decode all ids at every step, hold back trailing U+FFFD until the end."""
    text, out = "", []
    for j in range(len(ids)):
        full = tokenizer.decode(ids[: j + 1], skip_special_tokens=True)
        stable = full if j == len(ids) - 1 else full.rstrip("\ufffd")
        out.append(stable[len(text):])
        text = stable
    return out


def test_incremental_detokenizer_on_syllables_split_across_tokens(pair):
    """Korean text where one syllable's UTF-8 bytes span two tokens: the first token adds only
    what is complete (here the space before the syllable), the next one the syllable; pieces
    join to the decoded text, equal the full re-decode at every step, also for random ids
    (split sequences, special tokens, an incomplete tail at the end)."""
    import random

    from tokenizers.decoders import DecodeStream

    from decodelab.decoding import _Detok

    tok = pair.tokenizer
    text = "대한민국은 민주공화국이다. 뷁 똠양꿍을 먹었다."
    ids = tok(text, add_special_tokens=False)["input_ids"]
    split = [j for j, i in enumerate(ids) if "\ufffd" in tok.decode([i])]
    assert split, "the text should contain a syllable split across tokens"
    d = _Detok(tok)
    pieces = [d.push(i, final=j == len(ids) - 1) for j, i in enumerate(ids)]
    assert "".join(pieces) == tok.decode(ids) == text
    j = split[0]
    assert "\ufffd" not in "".join(pieces)
    assert pieces[j] == " " and pieces[j + 1] == "민", (pieces[j], pieces[j + 1])  # " 민" = 'Ġë¯' + '¼'
    assert pieces == _pieces_by_full_redecode(tok, ids)
    rng = random.Random(0)
    for _ in range(200):
        rid = [rng.randrange(len(tok)) for _ in range(rng.randrange(1, 25))]
        d = _Detok(tok)
        got = [d.push(i, final=k == len(rid) - 1) for k, i in enumerate(rid)]
        assert got == _pieces_by_full_redecode(tok, rid)
        assert "".join(got) == tok.decode(rid, skip_special_tokens=True)
    # the tokenizers library's incremental decoder gives other pieces (it holds the whole token
    # back): the reason the course keeps its own (see decoding._Detok)
    s = DecodeStream(skip_special_tokens=True)
    theirs = [s.step(tok.backend_tokenizer, i) or "" for i in ids]
    assert "".join(theirs) == text and theirs[j] == "" and theirs[j + 1] == " 민"
    # and the pieces are what stream() reports
    steps = list(decodelab.stream(pair.target, tok, "대한민국은", 30, stop_at_eos=False, top_candidates=0))
    gen = [s.token_id for s in steps]
    assert [s.piece for s in steps] == _pieces_by_full_redecode(tok, gen)


def test_chat_messages_are_encoded_by_format_prompt(pair, tmp_path):
    """A list of chat messages goes through the tokenizer's chat template (models.format_prompt),
    exactly; the answer then equals transformers' greedy generate from those ids."""
    from transformers import AutoTokenizer

    from decodelab.models import format_prompt

    pair.tokenizer.save_pretrained(tmp_path / "chat")
    chat = AutoTokenizer.from_pretrained(tmp_path / "chat")
    chat.chat_template = ("{% for m in messages %}{{ m['role'] }}: {{ m['content'] }}\n{% endfor %}"
                          "{% if add_generation_prompt %}assistant:{% endif %}")
    msgs = [{"role": "user", "content": "대한민국의 수도는"}]
    want = chat("user: 대한민국의 수도는\nassistant:", add_special_tokens=False)["input_ids"]
    assert format_prompt(chat, msgs) == want
    r = decodelab.generate(pair.target, chat, msgs, 6, top_candidates=0)
    assert r.prompt_ids == want
    assert r.token_ids == _hf_greedy(pair.target, want, 6)
    assert [s.token_id for s in decodelab.stream(pair.target, chat, msgs, 6, top_candidates=0)] == r.token_ids
    with pytest.raises(ValueError, match=r"^prompt=.*대화 템플릿.*\(허용: "):
        decodelab.generate(pair.target, pair.tokenizer, msgs, 4)  # the bundled tokenizer has none
    with pytest.raises(TypeError, match=r"^prompt\[0\]="):
        decodelab.generate(pair.target, chat, [{"role": "user"}], 4)


# --------------------------------------------------------------------------------------------
# edge cases that used to end in torch's raw errors


def test_temperature_below_float32_range_is_greedy(pair):
    """1e-40 is below float32's smallest normal number: logits / temperature overflows for any
    logit, so it is the temperature-0 limit, greedy (it used to raise torch's raw "probability
    tensor contains either inf, nan or element < 0")."""
    from decodelab import speculative_generate

    greedy = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 12, stop_at_eos=False)
    tiny = decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 12, stop_at_eos=False,
                              temperature=1e-40, seed=0)
    assert tiny.token_ids == greedy.token_ids
    assert SamplingConfig(1e-40).greedy and not SamplingConfig(1e-30).greedy
    spec = speculative_generate(pair.target, pair.draft, pair.tokenizer, "모든 국민은", 12, temperature=1e-40,
                                seed=0, stop_at_eos=False)
    assert spec.token_ids == greedy.token_ids


def test_a_temperature_that_overflows_the_logits_gives_the_argmax():
    # 100 / 1e-37 = 1e39 > float32's largest number: the row is the limit distribution, one-hot
    logits = torch.tensor([[1.0, 100.0, 3.0], [0.5, 0.25, 0.0]])
    p = probabilities(logits, SamplingConfig(1e-37))
    torch.testing.assert_close(p[0], torch.tensor([0.0, 1.0, 0.0]))
    assert p[1, 0] == 1.0 and bool(torch.isfinite(p).all())  # 0.5 / 1e-37 = 5e36: finite, yet one-hot
    # an ordinary temperature is untouched: softmax(logits / T) exactly
    torch.testing.assert_close(probabilities(logits, SamplingConfig(2.0)), torch.softmax(logits / 2.0, -1))


def _with_added_special_tokens(tokenizer, n=20):
    import copy

    tok = copy.deepcopy(tokenizer)
    tok.add_tokens([f"<도구{i}>" for i in range(n)], special_tokens=True)
    return tok


def test_prompt_ids_beyond_the_model_rows_are_refused(pair):
    tok = _with_added_special_tokens(pair.tokenizer)
    rows = pair.target.get_input_embeddings().weight.shape[0]
    assert len(tok) == len(pair.tokenizer) + 20 and len(tok) > rows
    # a prompt without the added tokens still works: they are never generated
    assert decodelab.generate(pair.target, tok, "모든 국민은", 3).token_ids == \
        decodelab.generate(pair.target, pair.tokenizer, "모든 국민은", 3).token_ids
    for call in (lambda: decodelab.generate(pair.target, tok, "모든 <도구3> 국민은", 4),
                 lambda: decodelab.stream(pair.target, tok, "<도구0>", 4),
                 lambda: decodelab.speculative_generate(pair.target, pair.draft, tok, "<도구19> 모든", 4)):
        with pytest.raises(ValueError, match=r"^prompt=.*추가한 특수 토큰\(added special tokens\).*\(허용: ") as e:
            call()
        assert f"임베딩 행({rows}행)" in str(e.value)


def test_load_models_names_added_special_tokens_not_another_tokenizer(pair):
    from decodelab.models import check_same_vocabulary

    tok = _with_added_special_tokens(pair.tokenizer)
    with pytest.raises(ValueError, match=r"특수 토큰\(added special tokens\) 20개") as e:
        check_same_vocabulary(pair.target, pair.draft, tok)
    assert "다른 토크나이저로 학습" not in str(e.value)


def test_generate_and_stream_have_explicit_public_signatures():
    """Both list their keyword arguments themselves (no **options, no rewritten __signature__, no
    private argument), with the same defaults; generate adds on_step."""
    import inspect

    assert "__signature__" not in vars(decodelab.generate) and "__signature__" not in vars(decodelab.stream)
    gen, st = (inspect.signature(f).parameters for f in (decodelab.generate, decodelab.stream))
    assert not any(p.kind is p.VAR_KEYWORD or p.name.startswith("_") for p in [*gen.values(), *st.values()])
    assert [(p.name, p.default) for p in gen.values()] == [(p.name, p.default) for p in st.values()] + [("on_step", None)]
