"""Speculative decoding on pairs other than the bundled one: padded vocabularies, any architecture.

Random-weight models are built from transformers' config classes, saved to temporary folders and
loaded back with ``AutoModelForCausalLM.from_pretrained`` (nothing is downloaded). They share the
bundled tokenizer. For every pair, greedy speculative decoding must equal plain greedy decoding of
the target and transformers' own ``target.generate(do_sample=False)``, token for token.
"""

from __future__ import annotations

import pytest
import torch

from decodelab import generate
from decodelab.models import format_prompt
from decodelab.lean_llama import LlamaRunner
from decodelab.proposers import DraftModelProposer
from decodelab.speculative import as_proposer
from decodelab.speculative import speculative_generate

V = 4096  # the bundled tokenizer's vocabulary
N = 20
PROMPTS = ["대한민국은 민주공화국이다.", "문서를 저장하려면", "국회는 법률을"]


def _config(arch: str, vocab: int):
    import transformers as T

    common = dict(vocab_size=vocab, bos_token_id=1, eos_token_id=2, pad_token_id=0)
    small = dict(hidden_size=32, intermediate_size=64, num_hidden_layers=2, num_attention_heads=4,
                 num_key_value_heads=2, max_position_embeddings=128, initializer_range=0.3, **common)
    if arch == "llama":
        return T.LlamaConfig(**small)
    if arch == "qwen2":
        return T.Qwen2Config(**small)
    if arch == "mistral":
        return T.MistralConfig(sliding_window=None, **small)
    if arch == "gemma":
        return T.GemmaConfig(head_dim=8, **small)
    if arch == "gpt2":
        return T.GPT2Config(n_embd=32, n_layer=2, n_head=4, n_positions=128, initializer_range=0.3, **common)
    raise AssertionError(arch)


def _saved(tmp_path_factory, arch: str, vocab: int, seed: int):
    """A random model of ``arch`` saved to a temporary folder and loaded back from there."""
    from transformers import AutoModelForCausalLM

    torch.manual_seed(seed)
    model = AutoModelForCausalLM.from_config(_config(arch, vocab))
    folder = tmp_path_factory.mktemp(f"{arch}-{vocab}-{seed}")
    model.save_pretrained(folder)
    return AutoModelForCausalLM.from_pretrained(folder).eval()


def _noisy_copy(model, scale: float, seed: int):
    """The model with seeded noise on every weight: a draft that agrees with it often, not always."""
    import copy

    d = copy.deepcopy(model)
    g = torch.Generator().manual_seed(seed)
    with torch.no_grad():
        for w in d.parameters():
            w.add_(scale * w.abs().mean() * torch.randn(w.shape, generator=g))
    return d


@pytest.fixture(scope="module", autouse=True)
def one_thread():
    from decodelab._torch import threads

    with threads(1):
        yield


@pytest.fixture(scope="module")
def tok(pair):
    assert len(pair.tokenizer) == V
    return pair.tokenizer


def _hf_greedy(model, ids, n):
    x = torch.tensor([ids])
    with torch.inference_mode():
        out = model.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, min_new_tokens=n,
                             do_sample=False, pad_token_id=0, eos_token_id=None)
    return out[0, len(ids):].tolist()


def _check_exact(target, draft, tok, gammas=(1, 3, 5)):
    """Greedy speculative == plain greedy == transformers' generate, for each prompt and gamma.
    Returns the speculative results (for acceptance checks)."""
    results = []
    for p in PROMPTS:
        ids = format_prompt(tok, p)
        plain = generate(target, tok, p, N, stop_at_eos=False, top_candidates=0).token_ids
        assert plain == _hf_greedy(target, ids, N), p
        for g in gammas:
            r = speculative_generate(target, draft, tok, p, N, num_speculative_tokens=g, stop_at_eos=False)
            assert r.token_ids == plain, (p, g)
            results.append(r)
    return results


ARCHS = ["llama", "qwen2", "mistral", "gemma", "gpt2"]


@pytest.fixture(scope="module")
def models(tmp_path_factory):
    return {a: _saved(tmp_path_factory, a, V, seed=i) for i, a in enumerate(ARCHS)}


@pytest.mark.slow  # 10-15 s in all here
@pytest.mark.parametrize("arch", ARCHS)
def test_every_architecture_as_target_and_as_draft(models, tok, arch):
    """Each architecture as the target with a noisy copy of itself as the draft (partial
    acceptance: both accepted and recovered tokens), and as the draft of the next architecture's
    target (random models disagree: mostly recovered tokens). The draft runs through the lean
    runner for Llama and through transformers otherwise."""
    target = models[arch]
    near = _noisy_copy(target, 0.03, seed=7)
    prop = as_proposer(near, target, tok)
    assert prop.backend == ("lean" if arch == "llama" else "transformers")
    rs = _check_exact(target, near, tok)
    assert sum(r.num_accepted_tokens for r in rs) > 0
    assert any(rd.kind == "recovered" for r in rs for rd in r.rounds)
    other = models[ARCHS[(ARCHS.index(arch) + 1) % len(ARCHS)]]
    _check_exact(other, target, tok, gammas=(2, 4))


def test_lean_and_transformers_draft_paths_give_the_same_tokens(models, tok):
    target = models["qwen2"]
    draft = _noisy_copy(models["llama"], 0.0, seed=0)
    assert LlamaRunner.supports(draft) and not LlamaRunner.supports(target)
    for p in PROMPTS:
        for temperature, seed in ((0.0, None), (1.0, 3)):
            lean = speculative_generate(target, DraftModelProposer(draft, backend="lean"), tok, p, N,
                                        temperature=temperature, seed=seed, stop_at_eos=False)
            hf = speculative_generate(target, DraftModelProposer(draft, backend="transformers"), tok, p, N,
                                      temperature=temperature, seed=seed, stop_at_eos=False)
            assert lean.token_ids == hf.token_ids
            assert [r.accepted for r in lean.rounds] == [r.accepted for r in hf.rounds]


@pytest.fixture(scope="module")
def padded(tmp_path_factory, pair):
    """A Llama target with 4,160 output rows (64 padded) and a draft = the same model cut to the
    4,096 rows of the tokenizer, plus the reverse (a 4,160-row draft of the bundled target)."""
    big = _saved(tmp_path_factory, "llama", V + 64, seed=11)
    small = _saved(tmp_path_factory, "llama", V, seed=11)
    with torch.no_grad():  # the same weights on the rows both have: the draft agrees often
        small.model.embed_tokens.weight.copy_(big.model.embed_tokens.weight[:V])
        small.lm_head.weight.copy_(big.lm_head.weight[:V])
        small.model.norm.weight.copy_(big.model.norm.weight)
        for a, b in zip(small.model.layers.parameters(), big.model.layers.parameters()):
            a.copy_(b)
    small = _noisy_copy(small, 0.03, seed=5)
    bundled_target_padded_draft = _saved(tmp_path_factory, "llama", V + 64, seed=12)
    return big, small, bundled_target_padded_draft


def test_padded_vocabulary_pair_is_exact(padded, pair, tok):
    """Target 4,160 rows, draft 4,096 (and the reverse): greedy speculative == target greedy ==
    transformers' generate; the draft only proposes ids the target has."""
    big, small, padded_draft = padded
    assert big.get_output_embeddings().weight.shape[0] == V + 64
    rs = _check_exact(big, small, tok)
    assert sum(r.num_accepted_tokens for r in rs) > 0 and any(rd.kind == "recovered" for r in rs for rd in r.rounds)
    assert as_proposer(small, big, tok).vocab_size == V
    # the random target emits an id from its padded rows at least once: the draft, which has no
    # embedding for it, reads it as id 0 and the output stays exact
    assert any(t >= V for r in rs for t in r.token_ids)
    # a draft with more rows than the target drafts from the target's rows only
    prop = as_proposer(padded_draft, pair.target, tok)
    assert prop.vocab_size == V
    rs = _check_exact(pair.target, padded_draft, tok, gammas=(3,))
    assert all(t < V for r in rs for rd in r.rounds for t in rd.proposed)


def test_padded_vocabulary_sampling_stays_in_the_targets_support(padded, tok):
    """Sampling with a narrower draft: top_k=1 equals greedy (p and q one-hot, q zero-padded), and
    sampled outputs are reproducible with a seed."""
    big, small, _ = padded
    for p in PROMPTS:
        greedy = generate(big, tok, p, N, stop_at_eos=False, top_candidates=0).token_ids
        k1 = speculative_generate(big, small, tok, p, N, temperature=0.8, top_k=1, seed=0, stop_at_eos=False)
        assert k1.token_ids == greedy
        a = speculative_generate(big, small, tok, p, N, temperature=1.0, seed=1, stop_at_eos=False)
        b = speculative_generate(big, small, tok, p, N, temperature=1.0, seed=1, stop_at_eos=False)
        assert a.token_ids == b.token_ids and len(a.token_ids) == N


def test_half_precision_runs_and_agrees_where_numerics_allow(models, tok):
    """bf16 weights: the algorithm has no hard-coded float32 (logits are upcast once). A draft equal
    to the target accepts nearly everything; greedy exactness is not asserted under bf16 (a
    verification over gamma + 1 positions may round differently from one-token steps)."""
    import copy

    target = copy.deepcopy(models["qwen2"]).to(torch.bfloat16)
    draft = copy.deepcopy(models["llama"]).to(torch.bfloat16)
    for d in (draft, target):
        r = speculative_generate(target, d, tok, PROMPTS[0], N, num_speculative_tokens=3, stop_at_eos=False)
        assert len(r.token_ids) == N and r.target_forward_calls == 1 + len(r.rounds)
    same = speculative_generate(target, copy.deepcopy(target), tok, PROMPTS[1], N, stop_at_eos=False)
    assert same.acceptance_rate > 0.8
    runner = LlamaRunner(draft)
    assert runner.dtype == torch.bfloat16
