"""The decode phase, step by step: :func:`prefill`, :func:`decode_step`, :func:`generate`.

Serving a causal language model has two phases (vLLM docs, "disaggregated prefill"; kipp.ly,
"Transformer Inference Arithmetic"):

* **prefill** (프리필): the whole prompt goes through the model in one
  parallel forward pass, filling the KV cache and giving the distribution of the first new token;
* **decode** (디코드 단계): one token per forward pass, each pass reading the KV cache of all
  earlier positions and appending one position to it.

Data flows one way: prompt -> tokenizer -> :func:`prefill` -> :func:`decode_step` ... ->
:class:`GenerationResult` with per-step timings. Greedy output equals
``model.generate(do_sample=False)`` token for token (tested), and sampling draws from exactly the
distribution transformers' logits warpers define (:mod:`decodelab.sampling`).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import numpy as np
import torch

from ._check import check, fail
from ._torch import synchronize
from .models import format_prompt
from .sampling import SamplingConfig, choose, make_generator, probabilities


# --------------------------------------------------------------------------------------------
# the two phases


@dataclass
class DecodeState:
    """Where decoding stands after a forward pass.

    Attributes:
        cache: the model's KV cache (``transformers.DynamicCache``), or ``None`` when decoding
            without a cache. It is updated in place: after :func:`decode_step` the previous state's
            ``cache`` is the same (grown) object.
        position: number of tokens whose keys/values are in the cache (= prompt length after
            prefill, + 1 per decode step); the next token gets this position index.
        logits: float32 tensor of shape ``(vocab,)``, the next-token logits.
        input_ids: LongTensor ``(1, position)`` of every token seen so far (needed only when
            decoding without a cache, kept always for inspection).
    """

    cache: object | None
    position: int
    logits: torch.Tensor
    input_ids: torch.Tensor


def new_cache(model):
    """An empty ``transformers.DynamicCache`` for ``model``."""
    from transformers import DynamicCache

    return DynamicCache(config=model.config)


def forward(model, input_ids: torch.Tensor, cache=None, logits_to_keep: int = 1) -> torch.Tensor:
    """One forward pass; returns float32 logits of shape ``(batch, logits_to_keep, vocab)`` on the
    model's device (any dtype in memory: bf16/fp16 logits are upcast here), once the device has
    finished the pass (on a GPU too, so a timer around this call measures the pass).

    Args:
        input_ids: LongTensor ``(batch, new_tokens)``, on any device (moved to the model's).
        cache: a KV cache to read and extend in place, or ``None`` (no cache: attend over
            ``input_ids`` only).
        logits_to_keep: how many trailing positions get logits (0 = all), saving the
            vocabulary projection of positions nobody reads.
    """
    with torch.inference_mode():
        out = model(input_ids=input_ids.to(model.device), cache=cache, use_cache=cache is not None,
                    logits_to_keep=logits_to_keep)
        logits = out.logits.float()
    synchronize(logits.device)
    return logits


def cache_length(cache) -> int:
    """Number of positions stored in a KV cache (0 for ``None``)."""
    return 0 if cache is None else int(cache.get_seq_length())


def crop_cache(cache, length: int) -> None:
    """Keep only the first ``length`` positions of a KV cache, in place (drop the rest).

    Used to throw away the keys/values of rejected draft tokens (speculative decoding) or of a
    timing pass. A cache with ``length`` positions or fewer, or ``None``, is left as it is.
    transformers 5.x ``DynamicCache.crop(n)`` takes a NEGATIVE ``n`` = how many positions to
    remove from the end (a positive value raises there), so this calls
    ``crop(length - cache_length(cache))``.

    Args:
        cache: a ``transformers`` cache (e.g. ``DynamicCache``) or ``None``.
        length: positions to keep, an int >= 0.

    Raises:
        TypeError: ``length`` is not an int.
        ValueError: ``length`` is negative.
    """
    length = check("length", length, "남길 캐시 위치 수", integer=True)
    n = cache_length(cache)
    if n > length:
        cache.crop(length - n)


def context_length(model) -> int | None:
    """The model's maximum number of positions, if its config says (``max_position_embeddings``;
    GPT-2 configs call it ``n_positions``). The one place the course reads it."""
    cfg = model.config
    return getattr(cfg, "max_position_embeddings", None) or getattr(cfg, "n_positions", None)


def vocab_rows(model) -> int:
    """How many token ids ``model`` has an embedding row for (valid ids: ``0 .. rows - 1``)."""
    return int(model.get_input_embeddings().weight.shape[0])


def _flat(x) -> Iterator:
    """The items of a nested list/tuple, depth first."""
    for item in x:
        if isinstance(item, (list, tuple)):
            yield from _flat(item)
        else:
            yield item


def token_ids_tensor(model, input_ids, name: str = "input_ids") -> torch.Tensor:
    """``input_ids`` (token ids: a tensor, array or nested list of ints) as a LongTensor, every id
    checked against ``model``'s vocabulary before torch sees it.

    Valid ids are ``0 .. vocab_rows(model) - 1`` (:func:`vocab_rows`). Checking first matters:
    torch turns an id beyond int64 (``2**63``) into its own English ``Overflow when unpacking
    long`` and an id beyond the rows into an ``IndexError`` deep inside the embedding lookup.

    Returns:
        a LongTensor of the same shape.

    Raises:
        TypeError: (Korean) not token ids: a str, a float (5.0 too: a token id is an int), None.
        ValueError: (Korean, naming the valid range) an id that is negative or ``>=`` the rows of
            the model's input embeddings.
    """
    rows = vocab_rows(model)
    allowed = (f"0 이상 {rows - 1} 이하의 토큰 번호; 글을 번호로 바꿀 때는 tok(글, add_special_tokens=False)"
               "['input_ids']처럼 토크나이저가 만든 번호를 쓰세요")
    if isinstance(input_ids, (str, bytes)) or input_ids is None:
        raise fail(name, input_ids, "토큰 번호(정수)의 목록이 아닙니다", allowed, TypeError)
    if isinstance(input_ids, torch.Tensor):
        values = input_ids
    else:
        items = list(_flat(input_ids)) if isinstance(input_ids, (list, tuple)) else None
        if items is not None:
            if not all(_is_int(t) for t in items):
                raise fail(name, input_ids, "토큰 번호는 정수여야 합니다", allowed, TypeError)
            items = [int(t) for t in items]
            bad = sorted({t for t in items if not 0 <= t < rows})
            if bad:
                raise _outside(name, bad, rows, allowed)
        try:
            values = torch.as_tensor(input_ids)
        except (TypeError, ValueError, RuntimeError, OverflowError):
            raise fail(name, input_ids, "토큰 번호(정수)의 목록이 아닙니다", allowed, TypeError) from None
    if values.is_floating_point() or values.is_complex() or values.dtype == torch.bool:
        raise fail(name, input_ids, f"토큰 번호는 정수여야 합니다 (받은 자료형: {values.dtype})", allowed, TypeError)
    bad = sorted({int(t) for t in values.reshape(-1).tolist() if not 0 <= int(t) < rows})
    if bad:
        raise _outside(name, bad, rows, allowed)
    return values.to(torch.long)


def _is_int(t) -> bool:
    """An int, a numpy integer or a one-number integer tensor (never a bool or a float)."""
    if isinstance(t, torch.Tensor):
        return t.numel() == 1 and not (t.is_floating_point() or t.is_complex() or t.dtype == torch.bool)
    return isinstance(t, (int, np.integer)) and not isinstance(t, (bool, np.bool_))


def _outside(name: str, bad: list[int], rows: int, allowed: str) -> ValueError:
    return fail(name, bad[:8], f"이 모델의 어휘 밖에 있는 토큰 번호입니다 (어휘 {rows}개: 번호 0~{rows - 1})", allowed)


def prefill(model, input_ids: torch.Tensor, *, use_cache: bool = True) -> DecodeState:
    """Prefill: run the whole prompt through ``model`` in ONE forward pass.

    Args:
        model: a transformers causal LM.
        input_ids: LongTensor of shape ``(1, S)`` (or ``(S,)``), S >= 1 prompt tokens.
        use_cache: keep the KV cache (default). Without it every later step recomputes the
            whole sequence.

    Returns:
        :class:`DecodeState` with ``position == S``, the cache holding S positions, and the
        logits (shape ``(vocab,)``) of the first new token.

    Raises:
        ValueError: empty ``input_ids``, a batch larger than 1, or a token id outside the model's
            vocabulary (negative, or ``>=`` the rows of its input embeddings, ``2**63`` too;
            Korean, naming the valid range; :func:`token_ids_tensor`).
        TypeError: ``input_ids`` holds something other than ints (Korean).
    """
    ids = token_ids_tensor(model, input_ids)
    if ids.dim() == 1:
        ids = ids[None]
    if ids.dim() != 2 or ids.shape[0] != 1 or ids.shape[1] == 0:
        raise fail("input_ids.shape", tuple(ids.shape), "프롬프트 토큰은 한 줄(배치 1)에 1개 이상이어야 합니다", "(1, S), S >= 1")
    cache = new_cache(model) if use_cache else None
    logits = forward(model, ids, cache)[0, -1]
    return DecodeState(cache=cache, position=ids.shape[1], logits=logits, input_ids=ids)


def decode_step(model, state: DecodeState, token_id: int) -> DecodeState:
    """Decode: feed ONE token and get the next-token logits.

    With a cache the forward pass sees a ``(1, 1)`` input and attends over ``state.position``
    cached positions, then appends one position to the cache (it grows by exactly 1). Without a
    cache the whole sequence (``position + 1`` tokens) is recomputed.

    Args:
        state: the state from :func:`prefill` or the previous :func:`decode_step`.
        token_id: the token just chosen (an int in ``[0, vocab)``).

    Returns:
        A new :class:`DecodeState` with ``position == state.position + 1``.

    Raises:
        ValueError: ``state`` is stale: its cache already grew past ``state.position`` because
            an earlier ``decode_step`` used the same state (branch with ``copy.deepcopy``); or
            ``token_id`` is outside the model's vocabulary (Korean, naming the valid range).
        TypeError: ``token_id`` is not a whole number.
    """
    rows = vocab_rows(model)
    if isinstance(token_id, torch.Tensor) and token_id.numel() == 1:
        token_id = token_id.item()  # state.logits.argmax() without int(...)
    token_id = check("token_id", token_id, "토큰 번호(token_id)", integer=True, high=rows - 1,
                     hint=f"이 모델의 어휘는 {rows}개; 다음 토큰은 int(state.logits.argmax())처럼 state.logits에서 고르세요")
    if state.cache is not None and cache_length(state.cache) != state.position:
        raise fail("state.position", state.position,
                   f"이 DecodeState는 이미 다음 스텝으로 진행됐습니다: KV 캐시에 {cache_length(state.cache)} 위치가 있습니다 "
                   f"(캐시는 제자리에서 자랍니다)",
                   "가장 최근 상태, 또는 한 상태에서 여러 갈래를 시험하려면 copy.deepcopy(state)로 복사한 상태")
    tok = torch.tensor([[int(token_id)]], dtype=torch.long)
    ids = torch.cat([state.input_ids, tok], dim=1)
    if state.cache is not None:
        logits = forward(model, tok, state.cache)[0, -1]
    else:
        logits = forward(model, ids, None)[0, -1]
    return DecodeState(cache=state.cache, position=state.position + 1, logits=logits, input_ids=ids)


# --------------------------------------------------------------------------------------------
# generation


@dataclass
class Candidate:
    """One of the most likely next tokens at a step: id, its text, probability in [0, 1]."""

    token_id: int
    piece: str
    prob: float


@dataclass
class Step:
    """One generated token.

    Attributes:
        index: 0 for the first new token (produced by prefill), 1, 2, ... for decode steps.
        token_id: the chosen token.
        token: the token's own string in the vocabulary (byte-level BPE form).
        piece: the text this token adds to the output. A Korean syllable spans several bytes and
            can span two tokens: then the first token's ``piece`` is "" and the next one carries it.
        ms: wall time of this step in milliseconds (forward pass + choosing the token; for the
            first token, the prefill).
        position: the position index the token was written at.
        top: the 5 (or ``top_candidates``) most likely tokens of the distribution sampled from
            (for greedy decoding: softmax of the raw logits), highest first.
    """

    index: int
    token_id: int
    token: str
    piece: str
    ms: float
    position: int
    top: list[Candidate] = field(default_factory=list)


@dataclass
class GenerationResult:
    """What :func:`generate` returns.

    Attributes:
        prompt_ids: the prompt's token ids.
        token_ids: the generated token ids (prompt excluded), ``len <= max_new_tokens``.
        text: the generated text (prompt excluded).
        steps: one :class:`Step` per generated token.
        ttft_ms: time to first token in ms = tokenisation + prefill + choosing the first token.
        tpot_ms: time per output token in ms = (E2E - TTFT) / (n - 1), vLLM's definition
            (0.0 when n == 1).
        e2e_ms: end-to-end time in ms. All three count the model's work (tokenisation, forward
            passes, choosing tokens), not the display of results.
        stopped_by: "eos" or "max_new_tokens".
    """

    prompt_ids: list[int]
    token_ids: list[int]
    text: str
    steps: list[Step]
    ttft_ms: float
    tpot_ms: float
    e2e_ms: float
    stopped_by: str

    @property
    def itl_ms(self) -> list[float]:
        """Inter-token latencies in ms: the gaps between consecutive tokens (one per decode step)."""
        return [s.ms for s in self.steps[1:]]

    @property
    def tokens_per_s(self) -> float:
        """Decode throughput, tokens/s = 1000 / TPOT (0 when undefined)."""
        return 1000.0 / self.tpot_ms if self.tpot_ms > 0 else 0.0


def tpot(e2e_ms: float, ttft_ms: float, n_tokens: int) -> float:
    """Time per output token in ms, vLLM's definition: (E2E - TTFT) / (n - 1); 0.0 when n <= 1.

    Source: vLLM ``benchmarks/`` serving metrics (facts/hardware.md, "Serving metrics").
    """
    return (e2e_ms - ttft_ms) / (n_tokens - 1) if n_tokens > 1 else 0.0


def check_budget(model, n_prompt: int, max_new_tokens: int) -> int:
    """``max_new_tokens`` checked against the context length; returned as an int.

    ``n_prompt`` is the prompt's length in tokens; prompt + new tokens must fit the model's
    context length (:func:`context_length`, ``config.max_position_embeddings``).

    Raises:
        TypeError: ``max_new_tokens`` is not a number. ValueError: it is not a whole number >= 1;
            or (Korean, naming the prompt's length, the limit and the config field) the prompt
            leaves no position for a new token, or prompt + new tokens exceeds the limit.
    """
    max_new_tokens = check("max_new_tokens", max_new_tokens, "만들 토큰 수(max_new_tokens)", low=1, integer=True)
    limit = context_length(model)
    if limit is None or n_prompt + max_new_tokens <= limit:
        return max_new_tokens
    field = "max_position_embeddings" if getattr(model.config, "max_position_embeddings", None) else "n_positions"
    where = f"모델의 맥락 길이(context length) {limit} 토큰(config.{field})"
    if n_prompt >= limit:
        raise fail("prompt 길이", n_prompt,
                   f"프롬프트가 {n_prompt} 토큰이라 {where}에 새 토큰이 들어갈 위치가 없습니다: "
                   f"프롬프트를 {limit - 1} 토큰 이하로 줄이세요", f"{limit - 1} 토큰 이하")
    change = f"max_new_tokens를 {limit - n_prompt} 이하로 줄이세요"
    if max_new_tokens < limit:
        change = f"max_new_tokens를 {limit - n_prompt} 이하로 줄이거나 프롬프트를 {limit - max_new_tokens} 토큰 이하로 줄이세요"
    raise fail("max_new_tokens", max_new_tokens,
               f"프롬프트 {n_prompt} 토큰 + 새 토큰 {max_new_tokens}개 = {n_prompt + max_new_tokens} 토큰이 {where}을 "
               f"넘습니다: {change}", f"{limit - n_prompt} 이하")


def check_prompt_ids(model, tokenizer, ids: list[int]) -> None:
    """Refuse token ids the model has no embedding row for.

    A tokenizer with tokens added after training (``tokenizer.add_special_tokens``, e.g. 20 new
    special tokens) gives ids ``>= `` the model's rows; the embedding lookup would fail with
    torch's ``IndexError``.

    Raises:
        ValueError: an id in ``ids`` is ``>=`` the rows of the model's input embeddings.
    """
    rows = vocab_rows(model)
    bad = sorted({int(t) for t in ids if int(t) >= rows})
    if bad:
        shown = ", ".join(f"{t} {tokenizer.convert_ids_to_tokens(t)!r}" for t in bad[:5])
        raise fail("prompt", bad[:8],
                   f"프롬프트에 모델의 임베딩 행({rows}행)에 없는 토큰 번호가 있습니다 ({shown}): 토크나이저에 "
                   f"추가한 특수 토큰(added special tokens)은 모델이 학습하지 않은 토큰입니다 (토크나이저 {len(tokenizer)}개 토큰)",
                   f"번호가 {rows} 미만인 토큰만 든 프롬프트; 추가한 특수 토큰을 빼거나, "
                   f"model.resize_token_embeddings(len(tokenizer))로 행을 늘리고 학습한 모델")


class _Detok:
    """Incremental detokenizer: the text each new token adds (holds back incomplete UTF-8).

    It decodes only the tokens since the last point where the text was complete (one earlier
    token is decoded with them as context, for decoders that treat a first token specially), so
    a step costs the same at token 1000 as at token 1. The pieces are those of re-decoding all
    ids at every step (tested) and always join to the text (``tokenizers.decoders.DecodeStream``
    holds a whole token back and drops an incomplete tail at the end, so its pieces do not).
    """

    def __init__(self, tokenizer):
        self.tokenizer = tokenizer
        self.ids: list[int] = []
        self.start = 0  # ids[:start] decode to complete text, all of it already returned
        self.shown = ""  # what was returned of the text of ids[start:]

    def _text_since_start(self) -> str:
        ctx = max(0, self.start - 1)
        head = self.tokenizer.decode(self.ids[ctx:self.start], skip_special_tokens=True)
        text = self.tokenizer.decode(self.ids[ctx:], skip_special_tokens=True)
        return text[len(head):] if text.startswith(head) else text

    def push(self, token_id: int, final: bool = False) -> str:
        """Add a token; return the text it completes. Trailing replacement characters (an
        incomplete UTF-8 sequence) are held back until a later token completes them, or until
        ``final`` (then they are emitted as they are, so the pieces always join to the text)."""
        self.ids.append(int(token_id))
        window = self._text_since_start()
        stable = window if final else window.rstrip("\ufffd")
        if not stable.startswith(self.shown):  # cannot happen for byte-level BPE; stay consistent
            stable = window
        piece, self.shown = stable[len(self.shown):], stable
        if not window.endswith("\ufffd"):  # the text is complete here: start a new window
            self.start, self.shown = len(self.ids), ""
        return piece


def shown_probabilities(logits: torch.Tensor, cfg: SamplingConfig) -> torch.Tensor:
    """The distribution the course shows for a step: the one sampled from (after temperature,
    top-k, top-p), or for greedy settings the softmax of the raw logits (a one-hot vector would
    hide the runner-up candidates). Same shape as ``logits``."""
    return torch.softmax(logits.float(), -1) if cfg.greedy else probabilities(logits, cfg)


def top_tokens(logits: torch.Tensor, cfg: SamplingConfig, tokenizer, k: int) -> list[Candidate]:
    """The ``k`` most likely tokens under :func:`shown_probabilities`, highest first (``k <= 0``:
    none). Used by :class:`Step` and the notebook widgets."""
    if k <= 0:
        return []
    values, idx = torch.topk(shown_probabilities(logits, cfg), min(k, logits.shape[-1]))
    return [Candidate(int(i), tokenizer.decode([int(i)]), float(v)) for v, i in zip(values.tolist(), idx.tolist())]


def eos_ids(model, tokenizer) -> set[int]:
    """Token ids that end generation: the generation config's ``eos_token_id`` (int or list),
    else the tokenizer's EOS."""
    gc = getattr(model, "generation_config", None)
    eos = getattr(gc, "eos_token_id", None) if gc is not None else None
    if eos is None:
        eos = tokenizer.eos_token_id
    if eos is None:
        return set()
    return {int(e) for e in (eos if isinstance(eos, (list, tuple)) else [eos])}


def _steps(model, tokenizer, ids: list[int], *, max_new_tokens: int, cfg: SamplingConfig, use_cache: bool,
           gen: torch.Generator | None, stop: set[int], top_candidates: int) -> Iterator[Step]:
    """The one generation loop behind :func:`stream` and :func:`generate` (arguments checked):
    prefill ``ids``, then a decode step per token; yields each :class:`Step` (``ms``: forward pass
    + choosing the token)."""
    detok = _Detok(tokenizer)
    t0 = time.perf_counter()
    state = prefill(model, torch.tensor([ids]), use_cache=use_cache)  # its logits give token 0
    for i in range(max_new_tokens):
        tid = choose(state.logits, cfg, gen)
        ms = (time.perf_counter() - t0) * 1000.0
        top = top_tokens(state.logits, cfg, tokenizer, top_candidates)
        last = tid in stop or i == max_new_tokens - 1
        yield Step(i, tid, tokenizer.convert_ids_to_tokens(tid), detok.push(tid, last), ms, state.position, top)
        if last:
            return
        t0 = time.perf_counter()
        state = decode_step(model, state, tid)  # the logits of token i + 1


def _prepare(model, tokenizer, prompt, max_new_tokens, temperature, top_k, top_p, seed, stop_at_eos, top_candidates):
    """Check the arguments :func:`stream` and :func:`generate` share; returns the prompt ids and
    the keyword arguments of :func:`_steps` but ``use_cache``."""
    cfg = SamplingConfig(temperature, top_k, top_p)
    n_top = check("top_candidates", top_candidates, "기록할 후보 수", integer=True, hint="기본 5")
    ids = format_prompt(tokenizer, prompt)
    check_prompt_ids(model, tokenizer, ids)
    n = check_budget(model, len(ids), max_new_tokens)
    stop = eos_ids(model, tokenizer) if stop_at_eos else set()
    return ids, dict(max_new_tokens=n, cfg=cfg, gen=make_generator(seed, model.device), stop=stop, top_candidates=n_top)


def stream(model, tokenizer, prompt: str | list[dict], max_new_tokens: int, *, temperature: float = 0.0,
           top_k: int | None = None, top_p: float | None = None, use_cache: bool = True, seed: int | None = None,
           stop_at_eos: bool = True, top_candidates: int = 5) -> Iterator[Step]:
    """Generate token by token, yielding each :class:`Step` as soon as it exists.

    Arguments, errors and output: as :func:`generate` (without the timing summary). Use it for
    live display::

        for step in decodelab.stream(model, tok, "대한민국의 수도는", 20):
            print(step.piece, end="")

    The arguments are checked at the call, before the first step.
    """
    ids, run = _prepare(model, tokenizer, prompt, max_new_tokens, temperature, top_k, top_p, seed, stop_at_eos,
                        top_candidates)
    return _steps(model, tokenizer, ids, use_cache=use_cache, **run)


def generate(model, tokenizer, prompt: str | list[dict], max_new_tokens: int, *, temperature: float = 0.0,
             top_k: int | None = None, top_p: float | None = None, use_cache: bool = True, seed: int | None = None,
             stop_at_eos: bool = True, top_candidates: int = 5,
             on_step: Callable[[Step], None] | None = None) -> GenerationResult:
    """Generate up to ``max_new_tokens`` tokens after ``prompt``: one prefill, then decode steps.

    Args:
        model: a transformers causal LM (e.g. ``load_models().target``).
        tokenizer: its tokenizer.
        prompt: non-empty text, or a list of chat messages (see
            :func:`decodelab.models.format_prompt`).
        max_new_tokens: int >= 1; prompt + new tokens must fit the context length.
        temperature: 0 (default) = greedy: the argmax token, exactly like
            ``model.generate(do_sample=False)``. > 0: sample from softmax(logits / temperature)
            after top-k and top-p filtering, in transformers' warper order. A temperature so
            small that logits / temperature overflows float32 is its limit, greedy
            (:mod:`decodelab.sampling`).
        top_k: keep only the k most likely tokens (None or 0 = off).
        top_p: keep the smallest most-likely set with probability >= top_p (None = off).
        use_cache: with the KV cache (default) each decode step processes 1 new token; without
            it each step recomputes all tokens so far (same tokens, more time per step).
        seed: seed of the ``torch.Generator`` used for sampling (same seed -> same output).
        stop_at_eos: stop after the EOS token (it is included in ``token_ids``).
        top_candidates: how many top candidates to record per step (0 = none, slightly faster).
        on_step: called with each :class:`Step` as it is produced (streaming callback).

    Returns:
        :class:`GenerationResult` with ``token_ids``, ``text``, ``steps``, ``ttft_ms``,
        ``tpot_ms`` (ms; definitions as in vLLM's benchmark), ``e2e_ms``. The timings count
        tokenisation, forward passes and choosing tokens, not the candidates' bookkeeping or
        ``on_step``.

    Raises:
        TypeError: an argument of the wrong type (e.g. a prompt that is not a str).
        ValueError: empty prompt, ``max_new_tokens < 1``, ``temperature`` negative or not
            finite, ``top_k < 0``, ``top_p`` outside (0, 1], ``seed < 0``,
            ``top_candidates < 0``, prompt + ``max_new_tokens`` beyond the context length, a
            prompt token the model has no row for (:func:`check_prompt_ids`).
    """
    t0 = time.perf_counter()
    ids, run = _prepare(model, tokenizer, prompt, max_new_tokens, temperature, top_k, top_p, seed, stop_at_eos,
                        top_candidates)
    tokenize_ms = (time.perf_counter() - t0) * 1000.0
    steps: list[Step] = []
    for step in _steps(model, tokenizer, ids, use_cache=use_cache, **run):
        steps.append(step)
        if on_step is not None:
            on_step(step)
    ttft = tokenize_ms + steps[0].ms
    e2e = ttft + sum(s.ms for s in steps[1:])
    return GenerationResult(steps=steps, **result_fields(tokenizer, ids, [s.token_id for s in steps], ttft, e2e, run["stop"]))


def result_fields(tokenizer, prompt_ids: list[int], token_ids: list[int], ttft_ms: float, e2e_ms: float,
                  stop: set[int]) -> dict:
    """The fields every generation result shares: ``prompt_ids``, ``token_ids``, ``text``,
    ``ttft_ms``, ``tpot_ms`` (vLLM's definition, :func:`tpot`), ``e2e_ms`` and ``stopped_by``
    (``"eos"`` when the last token is in ``stop``, else ``"max_new_tokens"``)."""
    return dict(prompt_ids=prompt_ids, token_ids=token_ids, text=tokenizer.decode(token_ids, skip_special_tokens=True),
                ttft_ms=ttft_ms, tpot_ms=tpot(e2e_ms, ttft_ms, len(token_ids)), e2e_ms=e2e_ms,
                stopped_by="eos" if token_ids and token_ids[-1] in stop else "max_new_tokens")
