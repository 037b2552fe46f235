"""Build it yourself: checks of the student's own implementations against the library.

Four implementation exercises of the notebooks, each a function the student writes from a
scaffold and a check here that runs it beside the library's own code (or the model's own
computation) and says, in Korean, where the two differ::

    score = build.check_head_attention(my_head, model, tok)             # notebook 01
    score = build.check_greedy_loop(my_loop, target, draft, tok)      # notebook 04
    score = build.check_accept_rule(my_rule)                            # notebook 04
    score = build.check_roofline(my_step_ms)                            # notebook 02
    ex.check("04-task-build-greedy-loop", score)                        # goal: score == 1

Each check returns the fraction of its cases the student's function got right (a float in
[0, 1]; 1.0 = every case matches) and prints one line per failed case (at most a few) and a
summary. An exception inside the student's function is caught and reported as a failed case
(never a traceback from the check itself), so a notebook that runs every cell stays green with the
scaffold in place.

Two helpers give the greedy loop the one step that is plumbing rather than algorithm:
:func:`verify_pass` (the target reads a block of tokens in ONE forward pass and returns the
logits after each) and :func:`rollback` (drop the rejected positions from the KV cache).

Sources of the rules checked: Leviathan, Kalman & Matias 2023 (arXiv 2211.17192, Algorithm 1 and
App. A.1) for the draft-verify loop and the accept/reject rule with the residual
``norm(max(0, p - q))``; the roofline of :func:`decodelab.latency.estimate_decode_step`
(Williams et al. 2009; kipp.ly "Transformer Inference Arithmetic") for the step time; Vaswani et
al. 2017 (eq. 1, scaled dot-product attention with the decoder's causal mask) and Ainslie et al.
2023 (GQA) for the attention head, checked against the model's KV cache and forward pass.
"""

from __future__ import annotations

import math
import traceback
from collections.abc import Callable, Sequence

__all__ = [
    "ATTENTION_CASES",
    "ROOFLINE_CASES",
    "check_accept_rule",
    "check_greedy_loop",
    "check_head_attention",
    "check_roofline",
    "gqa_model",
    "random_rule_cases",
    "rollback",
    "verify_pass",
]

#: Prompts of the greedy-loop check (short, so the check runs in seconds on 2 CPU cores).
LOOP_PROMPTS = ("대한민국은 민주공화국이다.", "문서를 저장하려면", "표의 셀을 선택한 다음")

#: (model, format, hardware, context tokens, batch) of the roofline check: memory- and
#: compute-bound steps, empty and long caches, one chip each.
ROOFLINE_CASES = (
    ("Llama-3-70B", "fp8", "H100", 8192, 1),
    ("Llama-3-70B", "bf16", "H100", 0, 1),
    ("Llama-3-70B", "fp8", "H200", 2048, 64),
    ("Llama-3-70B", "bf16", "H200", 1024, 512),
    ("Llama-3-8B", "bf16", "H100", 4096, 8),
    ("Llama-3-8B", "bf16", "B200", 128, 1024),
    ("Qwen3-32B", "bf16", "H100", 16384, 32),
    ("Llama-3-8B", "fp8", "H100", 256, 1024),
)

_MAX_SHOWN = 3  # failed cases printed in full; the rest are counted

_verify_calls = 0  # verify_pass calls so far (the greedy-loop check counts a function's rounds)


def _error(e: BaseException) -> str:
    """One line for an exception raised inside the student's function: its type, message and
    the line of the student's code where it happened (the last frame outside decodelab)."""
    frames = [f for f in traceback.extract_tb(e.__traceback__) if "decodelab" not in f.filename.replace("\\", "/")]
    where = f" (줄 {frames[-1].lineno}: {frames[-1].line})" if frames and frames[-1].line else ""
    if isinstance(e, NotImplementedError):
        return f"아직 구현하지 않은 부분이 있습니다 (NotImplementedError){where}"
    if "ellipsis" in str(e):  # a scaffold's `...` reached arithmetic or float()
        return f"아직 채우지 않은 TODO가 있습니다: `...` 를 식으로 바꾸세요{where}"
    return f"함수가 오류를 냈습니다: {type(e).__name__}: {e}{where}"


def _report(title: str, n_ok: int, n: int, failures: list[str], against: str = "라이브러리와") -> float:
    for line in failures[:_MAX_SHOWN]:
        print("  ✗", line)
    if len(failures) > _MAX_SHOWN:
        print(f"  ... 그 밖에 {len(failures) - _MAX_SHOWN}개 경우도 다릅니다")
    mark = "✅" if n_ok == n else "🔧"
    print(f"{mark} {title}: {n}개 경우 중 {n_ok}개가 {against} 같습니다")
    return n_ok / n if n else 0.0


# --------------------------------------------------------------------------------------------
# (a) the greedy draft-verify loop


def verify_pass(model, state, tokens: Sequence[int]):
    """The target reads ``tokens`` in ONE forward pass after the positions cached in ``state``.

    Args:
        model: the target model.
        state: a :class:`decodelab.DecodeState` whose cache holds ``state.position`` positions
            (from :func:`decodelab.prefill`, :func:`decodelab.decode_step` or :func:`rollback`).
        tokens: the block to read, e.g. ``[newest token] + drafted`` (1 or more ints).

    Returns:
        ``(logits, new_state)``: ``logits`` is a float32 tensor of shape ``(len(tokens), vocab)``,
        row ``i`` the next-token logits after ``tokens[i]``; ``new_state`` holds
        ``state.position + len(tokens)`` positions (its ``logits`` are row ``-1``). The cache
        grows in place: use ``new_state`` from now on.

    Raises:
        ValueError: (Korean) an empty block, or a stale ``state`` (its cache already grew).
    """
    import torch

    from .._check import fail
    from ..decoding import DecodeState, cache_length, forward

    block = [int(t) for t in tokens]
    if not block:
        raise fail("tokens", tokens, "검증할 토큰이 없습니다: [가장 최근 토큰] + 초안 토큰을 넣으세요", "1개 이상의 토큰 id")
    if state.cache is None or cache_length(state.cache) != state.position:
        raise fail("state.position", state.position,
                   "이 상태의 KV 캐시는 이미 자랐습니다(캐시는 제자리에서 자랍니다): 가장 최근 상태를 넣으세요",
                   "verify_pass나 rollback이 마지막으로 돌려준 상태")
    global _verify_calls
    _verify_calls += 1
    ids = torch.tensor([block], dtype=torch.long)
    logits = forward(model, ids, state.cache, logits_to_keep=len(block))[0]
    new = DecodeState(cache=state.cache, position=state.position + len(block), logits=logits[-1],
                      input_ids=torch.cat([state.input_ids, ids], dim=1))
    return logits, new


def rollback(state, keep: int):
    """Keep only the first ``keep`` positions of ``state``'s KV cache (drop rejected drafts).

    Returns a state with ``position == keep``; its ``logits`` are not known after a rollback and
    are NaN (the next :func:`verify_pass` gives new ones).

    Raises:
        TypeError / ValueError: (Korean) ``keep`` not a whole number in ``[1, state.position]``.
    """
    import torch

    from .._check import check, fail
    from ..decoding import DecodeState, crop_cache

    keep = check("keep", keep, "남길 위치 수", low=1, integer=True, hint=f"1 이상 {state.position} 이하의 정수")
    if keep > state.position:
        raise fail("keep", keep, f"캐시에는 {state.position} 위치밖에 없습니다", f"1 이상 {state.position} 이하의 정수")
    crop_cache(state.cache, keep)
    return DecodeState(cache=state.cache, position=keep, logits=torch.full_like(state.logits, float("nan")),
                       input_ids=state.input_ids[:, :keep])


def _first_difference(mine: list, ref: list) -> str:
    for i, (a, b) in enumerate(zip(mine, ref)):
        if a != b:
            return f"출력 토큰 {i}번째에서 다릅니다 (내 함수 {a}, 라이브러리 {b})"
    return f"길이가 다릅니다 (내 함수 {len(mine)}개, 라이브러리 {len(ref)}개)"


def check_greedy_loop(fn: Callable, target, draft, tokenizer, *, prompts: Sequence[str] = LOOP_PROMPTS,
                      max_new_tokens: int = 20, gammas: Sequence[int] = (2, 4)) -> float:
    """Run the student's greedy draft-verify loop beside :func:`decodelab.speculative_generate`.

    ``fn(target, draft, prompt_ids, max_new_tokens, gamma)`` gets the prompt as a list of token
    ids and must return exactly ``max_new_tokens`` token ids (no stop at EOS). A case passes when
    the list equals the library's speculative output at temperature 0 (or plain greedy decoding
    of the target: the two are equal up to float numerics, facts/speculative.md) AND, when the
    function verifies with :func:`verify_pass`, it needs no more verification rounds than the
    library: a loop that accepts fewer drafts than it should still emits the target's tokens,
    only in more rounds.

    Returns:
        The fraction of (prompt, gamma) cases that pass, in [0, 1]; prints each failure in Korean.
    """
    from ..decoding import generate
    from ..models import format_prompt
    from ..speculative import speculative_generate

    failures, n_ok, n = [], 0, 0
    for prompt in prompts:
        ids = format_prompt(tokenizer, prompt)
        plain = None  # plain greedy decoding, computed only when a case needs it
        for g in gammas:
            n += 1
            calls0 = _verify_calls
            try:
                mine = fn(target, draft, list(ids), max_new_tokens, g)
                mine = [int(t) for t in mine]
            except Exception as e:  # noqa: BLE001 - the student's code: report, never raise
                failures.append(f"{prompt!r}, γ={g}: {_error(e)}")
                continue
            rounds = _verify_calls - calls0
            ref = speculative_generate(target, draft, tokenizer, prompt, max_new_tokens, num_speculative_tokens=g,
                                       stop_at_eos=False)
            if mine != ref.token_ids and plain is None:
                plain = generate(target, tokenizer, prompt, max_new_tokens, stop_at_eos=False, top_candidates=0).token_ids
            if mine != ref.token_ids and mine != plain:
                failures.append(f"{prompt!r}, γ={g}: {_first_difference(mine, ref.token_ids)}")
            elif mine == ref.token_ids and rounds > len(ref.rounds):
                failures.append(f"{prompt!r}, γ={g}: 토큰은 같지만 검증을 {rounds}번 했습니다(라이브러리 {len(ref.rounds)}번): "
                                "받아들여야 할 초안을 버리고 있습니다")
            else:
                n_ok += 1
    return _report("탐욕 초안-검증 루프", n_ok, n, failures)


# --------------------------------------------------------------------------------------------
# (b) the sampling accept / reject rule


def random_rule_cases(n: int = 200, vocab: int = 6, gamma: int = 3, seed: int = 0) -> list[tuple]:
    """``n`` random cases ``(p, q, drafts, u)`` for the accept/reject rule: ``p`` target rows
    ``(gamma + 1, vocab)``, ``q`` draft rows ``(gamma, vocab)``, ``drafts`` drawn from ``q``
    (``gamma`` ints), ``u`` uniforms ``(gamma,)``. Some rows are sparse (zeros) and every tenth
    case has ``q == p`` on its rows (the residual is all zeros there)."""
    import torch

    gen = torch.Generator().manual_seed(seed)
    cases = []
    for i in range(n):
        p = torch.rand(gamma + 1, vocab, generator=gen) ** 3
        q = torch.rand(gamma, vocab, generator=gen) ** 3
        if i % 4 == 1:  # sparse rows: tokens one side cannot produce
            p = p * (torch.rand(gamma + 1, vocab, generator=gen) > 0.4)
            q = q * (torch.rand(gamma, vocab, generator=gen) > 0.4)
            p[:, 0] += 0.05
            q[:, 0] += 0.05
        p = p / p.sum(-1, keepdim=True)
        q = q / q.sum(-1, keepdim=True)
        if i % 10 == 3:
            q = p[:gamma].clone()
        drafts = [int(torch.multinomial(q[j], 1, generator=gen)) for j in range(gamma)]
        u = torch.rand(gamma, generator=gen)
        cases.append((p, q, drafts, u))
    return cases


def _library_rule(p, q, drafts, u):
    """The library's rule as ``(k, next-token distribution)`` for given uniforms ``u``: draft i is
    accepted when ``u_i < min(1, p_i(d_i) / q_i(d_i))`` (as in :func:`decodelab.rejection.verify_probabilities`)."""
    import torch

    from ..rejection import acceptance_probabilities, residual_distribution

    a = acceptance_probabilities(p, q, torch.tensor(drafts))
    g = len(drafts)
    for k in range(g):
        if not bool(u[k] < a[k]):
            return k, residual_distribution(p[k], q[k])
    return g, p[g]


def check_accept_rule(fn: Callable, cases: Sequence[tuple] | None = None, *, atol: float = 1e-6) -> float:
    """Compare the student's accept/reject rule with the library's on random distributions.

    ``fn(p, q, drafts, u)`` gets target rows ``p`` ``(gamma + 1, vocab)``, draft rows ``q``
    ``(gamma, vocab)`` (the distributions the drafts were drawn from), the ``gamma`` draft ids and
    ``gamma`` uniforms ``u`` in [0, 1); it returns ``(k, dist)``: the number of accepted drafts
    (draft i accepted when ``u[i] < min(1, p_i(d_i) / q_i(d_i))``, stopping at the first
    rejection) and the distribution the next token is drawn from (the residual
    ``norm(max(0, p_k - q_k))`` after a rejection, ``p_gamma`` after all are accepted). A case
    passes when ``k`` is equal and ``dist`` matches within ``atol``.

    Returns:
        The fraction of cases that pass, in [0, 1] (default cases: :func:`random_rule_cases`).
    """
    import torch

    cases = random_rule_cases() if cases is None else cases
    failures, n_ok = [], 0
    for i, (p, q, drafts, u) in enumerate(cases):
        k_ref, d_ref = _library_rule(p, q, drafts, u)
        try:
            k, dist = fn(p.clone(), q.clone(), list(drafts), u.clone())
            k = int(k)
            dist = torch.as_tensor(dist, dtype=torch.float32).reshape(-1)
        except Exception as e:  # noqa: BLE001
            failures.append(f"경우 {i}: {_error(e)}")
            continue
        if k != k_ref:
            failures.append(f"경우 {i}: 수락한 초안 수가 다릅니다 (내 함수 {k}, 라이브러리 {k_ref})")
        elif dist.shape != d_ref.shape or not torch.isfinite(dist).all():
            failures.append(f"경우 {i}: 다음 토큰의 분포가 크기 {tuple(d_ref.shape)}의 유한한 확률이어야 합니다 "
                            f"(받은 크기 {tuple(dist.shape)})")
        elif not torch.allclose(dist, d_ref.float(), atol=atol, rtol=0):
            where = "잔여 분포" if k_ref < len(drafts) else "보너스 토큰의 분포 (p의 마지막 행)"
            failures.append(f"경우 {i}: k={k}까지는 같지만 {where}가 다릅니다 "
                            f"(최대 차이 {float((dist - d_ref).abs().max()):.3g})")
        else:
            n_ok += 1
    return _report("수락/거절 규칙", n_ok, len(cases), failures)


# --------------------------------------------------------------------------------------------
# (c) the roofline of one decode step


def check_roofline(fn: Callable, cases: Sequence[tuple] = ROOFLINE_CASES, *, rel: float = 1e-6) -> float:
    """Compare the student's decode-step time with :func:`decodelab.latency.estimate_decode_step`.

    ``fn(model, hw, context_tokens, batch)`` gets a :class:`decodelab.profiles.ModelProfile`, a
    :class:`decodelab.profiles.Hardware` and two ints, and returns the step time in ms: the
    larger of bytes / bandwidth and FLOP / FLOP/s, with bytes = W + B S kv and FLOP = 2 P B +
    4 B L S a (one chip, full utilisation). A case passes within relative tolerance ``rel``.

    Returns:
        The fraction of cases (default :data:`ROOFLINE_CASES`) that pass, in [0, 1].
    """
    from .. import latency as lat
    from ..profiles import get_hardware, get_model

    failures, n_ok = [], 0
    for name, dtype, hw_name, s, b in cases:
        m, hw = get_model(name, dtype), get_hardware(hw_name)
        ref = lat.estimate_decode_step(m, hw, s, b)
        label = f"{name} {dtype.upper()}, {hw_name}, 맥락 {s}, 배치 {b}"
        try:
            mine = float(fn(m, hw, s, b))
        except Exception as e:  # noqa: BLE001
            failures.append(f"{label}: {_error(e)}")
            continue
        if math.isfinite(mine) and math.isclose(mine, float(ref.ms), rel_tol=rel):
            n_ok += 1
        else:
            hint = ""
            if math.isclose(mine, float(ref.memory_ms), rel_tol=rel) and ref.bound == "compute":
                hint = " (메모리 시간만 셌습니다: 이 경우는 연산 한계입니다)"
            elif math.isclose(mine, float(ref.compute_ms), rel_tol=rel) and ref.bound == "memory":
                hint = " (연산 시간만 셌습니다: 이 경우는 메모리 한계입니다)"
            failures.append(f"{label}: 내 함수 {mine:.4g} ms, 라이브러리 {float(ref.ms):.4g} ms{hint}")
    return _report("디코드 스텝의 루프라인", n_ok, len(cases), failures)


# --------------------------------------------------------------------------------------------
# (d) one attention head, from the model's own weights


#: (model, prompt, layer, query head) of the attention check. ``"target"`` is the model passed to
#: :func:`check_head_attention` (the bundled target: 5 query heads, 5 KV heads, no GQA);
#: ``"gqa"`` is :func:`gqa_model`, a small Llama with 4 query heads sharing 2 KV heads, whose
#: prompts are token ids. Later layers, later heads and GQA pairs where ``kv != head``. On another
#: target (``DECODELAB_TARGET``) a layer or head past its size wraps round (``% n_layers``, ``% n_q_heads``).
ATTENTION_CASES = (
    ("target", "모든 국민은 법률 앞에 평등하다", 0, 0),
    ("target", "모든 국민은 법률 앞에 평등하다", 1, 3),
    ("target", "셀 서식을 바꾸려면", 5, 4),
    ("gqa", (3, 17, 8, 42, 5, 11, 29), 0, 1),
    ("gqa", (3, 17, 8, 42, 5, 11, 29), 1, 2),
    ("gqa", (40, 2, 33, 7), 1, 3),
)

_gqa = None  # the GQA model, built once


def gqa_model():
    """A small Llama-shaped model with grouped-query attention (4 query heads, 2 KV heads, head
    size 8, 2 layers, 50-token vocabulary), random weights from a fixed seed (the global torch
    RNG is left as it was), eager attention. Built in milliseconds, nothing downloaded: it checks
    the GQA head mapping that the bundled model (as many KV heads as query heads) cannot."""
    global _gqa
    if _gqa is None:
        import torch
        from transformers import LlamaConfig, LlamaForCausalLM

        cfg = LlamaConfig(vocab_size=50, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                          num_attention_heads=4, num_key_value_heads=2, head_dim=8, max_position_embeddings=64)
        cfg._attn_implementation = "eager"
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(0)
            _gqa = LlamaForCausalLM(cfg).eval()
    return _gqa


def _attend(q, k, v, scale: float, causal: bool = True):
    """``softmax(q k^T * scale [+ causal mask]) v`` (the near misses the check recognises)."""
    import torch

    scores = (q @ k.T) * scale
    if causal:
        n = q.shape[0]
        scores = scores.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _close(a, b, atol: float) -> bool:
    import torch

    return tuple(a.shape) == tuple(b.shape) and bool(torch.allclose(a, b, atol=atol, rtol=1e-4))


def _diagnose_kv(name: str, mine, inp, ref, kv: int, atol: float) -> str:
    """Why the student's key (``name == "키"``) or value differs from the cache's."""
    d = inp.d_head
    w = inp.W_K if name == "키" else inp.W_V
    heads = [inp.x @ w[:, j * d:(j + 1) * d] for j in range(inp.n_kv_heads)]
    if name == "키":
        if _close(mine, heads[kv], atol):
            return "키에 RoPE를 적용하지 않았습니다: 캐시의 키는 inp.rope(...)로 위치를 넣은 뒤의 키입니다"
        heads = [inp.rope(h) for h in heads]
    elif _close(mine, inp.rope(heads[kv]), atol):
        return "값에 RoPE를 적용했습니다: RoPE는 쿼리와 키에만 씁니다"
    for j, h in enumerate(heads):
        if j != kv and _close(mine, h, atol):
            return (f"KV 헤드 {j}의 {name}입니다: 쿼리 헤드는 KV 헤드 head // group = {kv}를 읽습니다 "
                    f"(group = 쿼리 헤드 {inp.n_q_heads}개 ÷ KV 헤드 {inp.n_kv_heads}개 = {inp.group})")
    return f"{name}가 모델의 KV 캐시와 다릅니다 (최대 차이 {float((mine - ref).abs().max()):.3g})"


def _diagnose_output(mine, inp, ref_all, head: int, kv: int, atol: float) -> str:
    """Why the student's head output differs from the model's (a wrong scale, no mask, a wrong head)."""
    d = inp.d_head
    q = inp.rope(inp.x @ inp.W_Q[:, head * d:(head + 1) * d])
    k = inp.rope(inp.x @ inp.W_K[:, kv * d:(kv + 1) * d])
    v = inp.x @ inp.W_V[:, kv * d:(kv + 1) * d]
    near = [
        (_attend(q, k, v, 1.0), "점수를 √d로 나누지 않았습니다: Q Kᵀ / √d_head"),
        (_attend(q, k, v, 1.0 / d), "점수를 √d가 아니라 d로 나눴습니다: Q Kᵀ / √d_head"),
        (_attend(q, k, v, d ** 0.5), "점수에 √d를 곱했습니다: 나눠야 합니다"),
        (_attend(q, k, v, d ** -0.5, causal=False),
         "인과 마스크가 없습니다: 위치 i는 자기와 앞 위치(j ≤ i)만 봅니다 (대각선 위를 -inf로)"),
        (_attend(inp.x @ inp.W_Q[:, head * d:(head + 1) * d], k, v, d ** -0.5),
         "쿼리에 RoPE를 적용하지 않았습니다: 쿼리와 키 모두 inp.rope(...)를 거칩니다"),
    ]
    for out, why in near:
        if _close(mine, out, atol):
            return why
    for h in range(ref_all.shape[0]):
        if h != head and _close(mine, ref_all[h], atol):
            return f"쿼리 헤드 {h}의 출력입니다: W_Q에서 헤드 {head}의 열(head × d_head부터 d_head개)을 쓰세요"
    ref = ref_all[head]
    return f"출력이 모델의 어텐션 출력과 다릅니다 (최대 차이 {float((mine - ref).abs().max()):.3g})"


def check_head_attention(fn: Callable, model, tokenizer, *, cases: Sequence[tuple] = ATTENTION_CASES,
                         atol: float = 1e-4) -> float:
    """Compare the student's attention head with the model's own computation.

    ``fn(inp, head)`` gets a :class:`decodelab.attention.LayerInputs` (the layer's normalised
    input ``inp.x`` ``(S, d_model)``, the learned weights ``inp.W_Q``, ``inp.W_K``, ``inp.W_V``,
    the sizes, and ``inp.rope``) and a query head; it returns ``(output, K, V)``, each a tensor
    ``(S, d_head)``: the head's keys and values (keys after RoPE) and its output
    ``softmax(Q K^T / sqrt(d_head) + causal mask) V`` (Vaswani et al. 2017, eq. 1), where query
    head ``h`` reads KV head ``h // group`` (GQA; Ainslie et al. 2023).

    A case passes when K and V equal what the model's KV cache holds for that KV head after a
    prefill of the prompt, and the output equals the model's own attention output for that head
    (the input of ``o_proj``; :func:`decodelab.attention.model_attention`), within ``atol``
    (float32). Cases: :data:`ATTENTION_CASES`, on ``model`` and on :func:`gqa_model`. A failed
    case names the likely mistake (no RoPE, another KV head, a scale other than 1/sqrt(d), no
    causal mask, another query head) when the student's tensor equals that near miss.

    Returns:
        The fraction of cases that pass, in [0, 1]; prints each failure in Korean.
    """
    import torch

    from ..attention import attention_shapes, layer_inputs, model_attention

    failures, n_ok = [], 0
    for which, prompt, layer, head in cases:
        m, tok = (model, tokenizer) if which == "target" else (gqa_model(), None)
        shapes = attention_shapes(m)
        layer, head = layer % shapes.n_layers, head % shapes.n_q_heads
        inp = layer_inputs(m, tok, list(prompt) if not isinstance(prompt, str) else prompt, layer=layer)
        ref = model_attention(m, tok, inp.token_ids, layer=layer)
        kv = head // inp.group
        label = (f"{'번들 모델' if which == 'target' else 'GQA 모델(쿼리 헤드 4개, KV 헤드 2개)'} 층 {layer}, 헤드 {head}"
                 f" (토큰 {len(inp.token_ids)}개)")
        try:
            result = fn(inp, head)
            out, k, v = (torch.as_tensor(t, dtype=torch.float32) for t in result)
        except Exception as e:  # noqa: BLE001
            failures.append(f"{label}: {_error(e)}")
            continue
        want = (len(inp.token_ids), inp.d_head)
        bad_shape = [n for n, t in (("출력", out), ("키", k), ("값", v)) if tuple(t.shape) != want]
        if bad_shape:
            failures.append(f"{label}: {', '.join(bad_shape)}의 모양이 {want} = (위치 수, 헤드 크기)가 아닙니다 "
                            f"(받은 모양 {tuple(out.shape)}, {tuple(k.shape)}, {tuple(v.shape)})")
        elif not _close(k, ref.keys[kv], atol):
            failures.append(f"{label}: {_diagnose_kv('키', k, inp, ref.keys[kv], kv, atol)}")
        elif not _close(v, ref.values[kv], atol):
            failures.append(f"{label}: {_diagnose_kv('값', v, inp, ref.values[kv], kv, atol)}")
        elif not _close(out, ref.outputs[head], atol):
            failures.append(f"{label}: {_diagnose_output(out, inp, ref.outputs, head, kv, atol)}")
        else:
            n_ok += 1
    return _report("어텐션 헤드 하나", n_ok, len(cases), failures, against="모델의 KV 캐시·출력과")
