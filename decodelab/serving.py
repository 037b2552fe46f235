"""Measuring a real serving engine: TTFT, TPOT, ITL and E2E of streamed completions.

Works with any OpenAI-compatible server (vLLM, SGLang, llama.cpp's ``llama-server``,
``transformers serve``...), through the ``openai`` client, with bounded timeouts (a server that
stops sending or drops the connection mid-stream gives a clear error, never a hang).

Definitions are exactly those of vLLM's serving benchmark, so the numbers mean what vLLM's mean
(``vllm/benchmarks/lib/endpoint_request_func.py``, ``async_request_openai_completions``; and
``vllm/benchmarks/serve.py``, ``calculate_metrics``):

- the clock starts just before the request is sent;
- TTFT: time until the first streamed chunk that carries a choice (its text may be empty, e.g. a
  special token);
- ITL: the gaps between consecutive chunks that carry a choice (the first chunk is TTFT only);
- E2E (vLLM's "latency"): time until the last chunk that carries a choice;
- output tokens: ``usage.completion_tokens`` reported by the server in the stream
  (``stream_options.include_usage``); when a server reports none, the number of chunks with a
  choice is used instead (see :attr:`RequestMetrics.tokens_from_usage`);
- TPOT = (E2E - TTFT) / (output tokens - 1), 0 for a single token;
- aggregate output throughput = all output tokens / wall time of the whole run (tokens/s).

When the server exposes Prometheus ``/metrics`` with vLLM's speculative-decoding counters
(``vllm:spec_decode_num_drafts``, ``vllm:spec_decode_num_draft_tokens``,
``vllm:spec_decode_num_accepted_tokens``, ``vllm:spec_decode_num_accepted_tokens_per_pos`` with a
``position`` label; defined in ``vllm/v1/spec_decode/metrics.py``, ``SpecDecodingProm``),
:func:`sweep` reports the acceptance rate (accepted / drafted tokens) and the mean acceptance
length (1 + accepted / drafts) of the requests it sent, from the counters' change.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
from concurrent.futures import ThreadPoolExecutor
from dataclasses import asdict, dataclass, field
from pathlib import Path

from ._check import check
from ._cli import ArgumentParser, korean_error

__all__ = [
    "DEFAULT_PROMPTS",
    "LocalServer",
    "RequestMetrics",
    "ServingError",
    "SpecDecodeStats",
    "SweepRow",
    "base_url",
    "fetch_spec_decode_stats",
    "main",
    "measure_request",
    "parse_spec_decode_metrics",
    "server_model",
    "start_transformers_serve",
    "sweep",
    "wait_until_ready",
]

#: Korean prompts sent by default (request i uses prompt i mod len).
DEFAULT_PROMPTS = (
    "대한민국은 민주공화국이다.",
    "문서를 저장하려면",
    "표의 셀을 선택한 다음",
    "모든 국민은",
    "국회는 법률을",
    "글꼴 크기를 바꾸려면",
    "슬라이드 쇼를 시작하려면",
    "이 대화 상자에서",
)

#: Seconds to open a connection; seconds a stream may stay silent before it counts as stalled.
CONNECT_TIMEOUT_S, READ_TIMEOUT_S = 5.0, 30.0


class ServingError(RuntimeError):
    """The server could not be reached, refused the request, or broke off a stream (Korean message)."""


@dataclass
class RequestMetrics:
    """One streamed request, timed as vLLM's benchmark times it (all times in ms).

    Attributes:
        ttft_ms: time to the first chunk carrying a choice.
        itl_ms: gaps between consecutive such chunks (``len == chunks - 1``).
        e2e_ms: time to the last such chunk.
        output_tokens: ``usage.completion_tokens`` from the server, else the chunk count.
        tokens_from_usage: whether ``output_tokens`` came from the server's usage report.
        text: the generated text.
        finish_reason: the server's reason for stopping (``"length"``, ``"stop"``...), if sent.
    """

    ttft_ms: float
    itl_ms: list[float]
    e2e_ms: float
    output_tokens: int
    tokens_from_usage: bool
    text: str
    finish_reason: str | None = None
    start_s: float = field(default=0.0, repr=False)  # perf_counter at send time (for sweeps)

    @property
    def tpot_ms(self) -> float:
        """(E2E - TTFT) / (output tokens - 1) in ms; 0.0 for one token (vLLM ``calculate_metrics``)."""
        n = self.output_tokens
        return (self.e2e_ms - self.ttft_ms) / (n - 1) if n > 1 else 0.0


@dataclass
class SweepRow:
    """One concurrency level of :func:`sweep` (times in ms, throughput in tokens/s).

    ``output_tokens_per_s`` is the aggregate: all output tokens of the level / its wall time.
    Means and medians of TTFT and TPOT are over requests; ITL over all gaps of all requests
    (vLLM reports them the same way).
    """

    concurrency: int
    requests: int
    duration_s: float
    output_tokens: int
    output_tokens_per_s: float
    mean_ttft_ms: float
    median_ttft_ms: float
    mean_tpot_ms: float
    median_tpot_ms: float
    mean_itl_ms: float
    median_itl_ms: float
    mean_e2e_ms: float
    results: list[RequestMetrics] = field(default_factory=list, repr=False)

    def as_dict(self, *, with_requests: bool = False) -> dict:
        d = asdict(self)
        if not with_requests:
            d.pop("results")
        else:
            for r, src in zip(d["results"], self.results):
                r["tpot_ms"] = src.tpot_ms
                r.pop("start_s", None)
        return d


@dataclass
class SpecDecodeStats:
    """vLLM's speculative-decoding counters (summed over engines), or their change over a run.

    Attributes:
        num_drafts: draft rounds (``vllm:spec_decode_num_drafts``).
        num_draft_tokens: drafted tokens (``vllm:spec_decode_num_draft_tokens``).
        num_accepted_tokens: accepted draft tokens (``vllm:spec_decode_num_accepted_tokens``).
        accepted_per_position: accepted tokens at draft position 0, 1, ...
            (``vllm:spec_decode_num_accepted_tokens_per_pos``).
    """

    num_drafts: float
    num_draft_tokens: float
    num_accepted_tokens: float
    accepted_per_position: list[float]

    @property
    def acceptance_rate(self) -> float | None:
        """Accepted / drafted tokens (vLLM's "draft acceptance rate"); None without drafts."""
        return self.num_accepted_tokens / self.num_draft_tokens if self.num_draft_tokens else None

    @property
    def mean_acceptance_length(self) -> float | None:
        """1 + accepted / drafts: tokens per target pass, the bonus token included (vLLM's convention)."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts if self.num_drafts else None

    @property
    def per_position_acceptance(self) -> list[float]:
        """Accepted at position k / drafts, for each position (vLLM's per-position acceptance rate)."""
        return [a / self.num_drafts for a in self.accepted_per_position] if self.num_drafts else []

    def __sub__(self, before: "SpecDecodeStats") -> "SpecDecodeStats":
        pos = [a - (before.accepted_per_position[i] if i < len(before.accepted_per_position) else 0.0)
               for i, a in enumerate(self.accepted_per_position)]
        return SpecDecodeStats(self.num_drafts - before.num_drafts, self.num_draft_tokens - before.num_draft_tokens,
                               self.num_accepted_tokens - before.num_accepted_tokens, pos)


# --------------------------------------------------------------------------------------------
# endpoint and client

def base_url(endpoint: str) -> str:
    """The OpenAI API base (``.../v1``) of ``endpoint`` (``http://host:port`` or ``.../v1``).

    Raises:
        TypeError: not a str.
        ValueError: not an ``http://`` or ``https://`` address with a host.
    """
    if not isinstance(endpoint, str):
        raise TypeError(f"endpoint={endpoint!r}: 서버 주소는 글(str)이어야 합니다. 예: http://127.0.0.1:8000")
    parts = urllib.parse.urlsplit(endpoint.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"endpoint={endpoint!r}: 서버 주소는 http:// 또는 https://로 시작해야 합니다. 예: http://127.0.0.1:8000")
    path = parts.path.rstrip("/")
    for suffix in ("/chat/completions", "/completions"):
        if path.endswith(suffix):
            path = path[: -len(suffix)]
    if not path.endswith("/v1"):
        path += "/v1"
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def _root(endpoint: str) -> str:
    parts = urllib.parse.urlsplit(base_url(endpoint))
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _client(endpoint: str, timeout_s: float, api_key: str | None):
    import openai

    # openai.Timeout is the Timeout of the HTTP library this openai release is built on (httpx2 in
    # openai 3.x, httpx in 1.x): the client refuses the other library's Timeout
    timeout = openai.Timeout(timeout_s, connect=min(CONNECT_TIMEOUT_S, timeout_s))
    return openai.OpenAI(base_url=base_url(endpoint), api_key=api_key or "EMPTY", timeout=timeout, max_retries=0)


def _status_hint(code: int) -> str:
    """What to do about an HTTP error status of the server (Korean)."""
    if code == 429:
        return "서버가 요청이 너무 많다고 답했습니다: 동시 요청 수(--concurrency)나 요청 수(--requests)를 줄이거나 잠시 뒤 다시 재세요."
    if code >= 500:
        return "서버 내부 오류입니다: 서버 로그를 확인하세요 (모델을 불러오지 못했거나 메모리가 모자랄 수 있습니다)."
    if code in (401, 403):
        return "서버가 인증을 요구합니다: --api-key를 확인하세요."
    if code == 404:
        return "주소나 모델을 찾지 못했습니다: --endpoint 주소와 --model 이름을 확인하세요."
    return "--model 이름과 max_tokens를 확인하세요."


def _http_errors(*names: str) -> tuple[type[BaseException], ...]:
    """The exception classes called ``names`` in each HTTP library here that the openai client
    raises through: httpx2 (openai 3.x) and httpx (openai 1.x, and this module's own
    ``GET /metrics`` and readiness polls)."""
    libraries = []
    for name in ("httpx2", "httpx"):
        try:
            libraries.append(importlib.import_module(name))
        except ImportError:
            continue
    return tuple(getattr(lib, n) for lib in libraries for n in names if hasattr(lib, n))


def _wrap(exc: Exception, endpoint: str, *, streaming: bool = False) -> ServingError:
    """A Korean :class:`ServingError` for a failure of the openai client or its HTTP library.

    ``streaming``: the failure came after the first chunk (a broken stream, not a refused
    connection).
    """
    import openai

    where = base_url(endpoint)
    cause = exc.__cause__ if isinstance(exc, openai.APITimeoutError) and exc.__cause__ is not None else exc
    if isinstance(cause, _http_errors("ConnectTimeout", "PoolTimeout")):
        return ServingError(f"서버 {where}가 제한 시간 안에 연결을 받지 않았습니다 (연결 대기열이 가득 찼거나 서버가 "
                            f"바쁨). 동시 요청 수(--concurrency)를 줄이거나 서버 상태를 확인하세요. ({type(cause).__name__})")
    if isinstance(exc, (openai.APITimeoutError, *_http_errors("TimeoutException"))):
        what = "스트림이 멈춤" if streaming else "첫 응답을 기다리다 멈춤"
        return ServingError(f"서버 {where}가 제한 시간 안에 응답하지 않았습니다 ({what}). timeout_s(명령에서는 --timeout)를 "
                            f"늘리거나 서버 상태를 확인하세요. ({type(exc).__name__})")
    if isinstance(exc, openai.APIStatusError):
        return ServingError(f"서버 {where}가 요청을 거절했습니다 (HTTP {exc.status_code}): {str(exc)[:300]}. "
                            f"{_status_hint(exc.status_code)}")
    if streaming or isinstance(exc, _http_errors("RemoteProtocolError", "ReadError")) or "incomplete" in str(exc).lower():
        return ServingError(f"서버 {where}가 응답을 보내던 중 연결을 끊었습니다 (스트림이 중간에 끝남). 서버 로그를 "
                            f"확인하세요. ({type(exc).__name__}: {exc})")
    return ServingError(f"서버 {where}에 연결하지 못했습니다: 주소와 포트가 맞는지, 서버가 켜져 있는지 확인하세요. "
                        f"({type(exc).__name__}: {exc})")


def _malformed(endpoint: str, exc: Exception) -> ServingError:
    """A Korean :class:`ServingError` for a stream chunk that is not OpenAI's format (bad JSON,
    ``choices`` not a list, missing fields)."""
    what = "JSON이 아닙니다" if isinstance(exc, json.JSONDecodeError) else "OpenAI 형식과 다릅니다"
    return ServingError(f"서버 {base_url(endpoint)}가 보낸 스트림 조각이 {what} ({type(exc).__name__}: {str(exc)[:120]}). "
                        "OpenAI 호환 서버인지, --endpoint 주소가 맞는지 확인하세요.")


class _Deadline:
    """Bounds one streamed request as a whole: after ``seconds`` the response's socket is shut down
    (waking a read blocked on a server that only sends keep-alive comments) and :attr:`expired`
    is set, so the caller reports the overall timeout instead of a broken stream."""

    def __init__(self, seconds: float):
        self.expired = threading.Event()
        self.stream = None
        self.timer = threading.Timer(seconds, self._fire)
        self.timer.daemon = True
        self.timer.start()

    def _fire(self) -> None:
        self.expired.set()
        response = getattr(self.stream, "response", None)
        if response is None:
            return
        net = response.extensions.get("network_stream") if hasattr(response, "extensions") else None
        sock = net.get_extra_info("socket") if net is not None else None
        try:
            if sock is not None:
                sock.shutdown(socket.SHUT_RDWR)
            else:
                response.close()
        except (OSError, RuntimeError):
            pass

    def cancel(self) -> None:
        self.timer.cancel()


def _errors():
    import openai

    return (openai.APIError, *_http_errors("HTTPError"))


def server_model(endpoint: str, *, timeout_s: float = 10.0, api_key: str | None = None) -> str:
    """The id of the first model the server lists at ``GET /v1/models`` (what ``--model`` defaults to).

    Raises:
        ServingError: unreachable server, or it lists no model.
    """
    try:
        models = list(_client(endpoint, timeout_s, api_key).models.list())
    except _errors() as exc:
        raise _wrap(exc, endpoint) from exc
    if not models:
        raise ServingError(f"서버 {base_url(endpoint)}가 모델을 하나도 알려 주지 않았습니다 (/v1/models). --model로 이름을 주세요.")
    return models[0].id


def _check(max_tokens, timeout_s) -> tuple[int, float]:
    """``max_tokens`` (an int >= 1) and ``timeout_s`` (seconds in (0, 3600]) checked, as int and float."""
    return (check("max_tokens", max_tokens, "만들 토큰 수(max_tokens)", low=1, integer=True),
            check("timeout_s", timeout_s, "제한 시간(초)", strict=True, high=3600))


# --------------------------------------------------------------------------------------------
# one request

def measure_request(
    endpoint: str,
    prompt: str | list[dict] = DEFAULT_PROMPTS[0],
    *,
    model: str | None = None,
    max_tokens: int = 32,
    temperature: float = 0.0,
    chat: bool | None = None,
    timeout_s: float = READ_TIMEOUT_S,
    api_key: str | None = None,
    extra_body: dict | None = None,
    _client_obj=None,
) -> RequestMetrics:
    """Stream one completion and time it with vLLM's benchmark definitions (module docstring).

    Args:
        endpoint: server address, ``http://host:port`` or ``http://host:port/v1``.
        prompt: text (``/v1/completions``) or chat messages (``/v1/chat/completions``).
        model: model name the server knows; ``None`` = the first one it lists.
        max_tokens: tokens to generate, int >= 1 (the server may stop earlier at EOS; vLLM's
            ``ignore_eos`` can be sent through ``extra_body``).
        temperature: 0 (default) = greedy, so a run can be repeated.
        chat: force the chat endpoint (True) or the text one (False); default from ``prompt``.
        timeout_s: bound on the whole request in seconds, from sending it to the last chunk
            (connecting waits at most 5 s of it); a server that keeps the stream open with
            keep-alive comments is cut off at ``timeout_s`` too.
        extra_body: extra JSON fields for engines that take them (e.g. ``{"ignore_eos": True}``).

    Returns:
        :class:`RequestMetrics`.

    Raises:
        ValueError: ``max_tokens`` < 1, ``timeout_s`` not in (0, 3600].
        ServingError: unreachable server, HTTP error, stalled or broken stream, a chunk that is not
            OpenAI's format, no chunk at all, the whole request longer than ``timeout_s``.
    """
    max_tokens, timeout_s = _check(max_tokens, timeout_s)
    client = _client_obj or _client(endpoint, timeout_s, api_key)
    if model is None:
        model = server_model(endpoint, timeout_s=timeout_s, api_key=api_key)
    use_chat = (not isinstance(prompt, str)) if chat is None else chat
    body = dict(model=model, max_tokens=max_tokens, temperature=temperature, stream=True,
                stream_options={"include_usage": True}, extra_body=extra_body or None)
    text, itl, usage_tokens, finish, chunks = [], [], None, None, 0
    ttft = last = None
    start = time.perf_counter()
    deadline = _Deadline(timeout_s)

    def overtime() -> ServingError:
        return ServingError(f"서버 {base_url(endpoint)}의 요청이 제한 시간 {timeout_s:g}초 안에 끝나지 않았습니다 "
                            f"(받은 조각 {chunks}개; 서버가 keep-alive만 보내거나 너무 느림). timeout_s(명령에서는 --timeout)를 "
                            "늘리거나 max_tokens(--max-tokens)를 줄이세요.")

    try:
        if use_chat:
            messages = prompt if not isinstance(prompt, str) else [{"role": "user", "content": prompt}]
            stream = client.chat.completions.create(messages=messages, **body)
        else:
            stream = client.completions.create(prompt=prompt, **body)
        deadline.stream = stream
        with stream:
            for chunk in stream:
                now = time.perf_counter()
                if deadline.expired.is_set():
                    raise overtime()
                choices = chunk.choices
                if choices is not None and not isinstance(choices, list):
                    raise TypeError(f"choices가 목록이 아니라 {type(choices).__name__}입니다")
                if choices:
                    choice = choices[0]
                    piece = (choice.delta.content if use_chat and choice.delta else getattr(choice, "text", None)) or ""
                    if ttft is None:
                        ttft = now - start
                    else:
                        itl.append(now - last)
                    last = now
                    chunks += 1
                    text.append(piece)
                    finish = choice.finish_reason or finish
                if getattr(chunk, "usage", None) is not None and chunk.usage.completion_tokens is not None:
                    usage_tokens = int(chunk.usage.completion_tokens)
    except _errors() as exc:
        if deadline.expired.is_set():
            raise overtime() from exc
        raise _wrap(exc, endpoint, streaming=ttft is not None) from exc
    except (ValueError, TypeError, KeyError, IndexError, AttributeError) as exc:  # a malformed chunk
        if deadline.expired.is_set():
            raise overtime() from exc
        raise _malformed(endpoint, exc) from exc
    finally:
        deadline.cancel()
    if deadline.expired.is_set():
        raise overtime()
    if ttft is None:
        raise ServingError(f"서버 {base_url(endpoint)}가 토큰을 하나도 보내지 않고 스트림을 끝냈습니다 (TTFT를 잴 수 없음).")
    if finish is None and usage_tokens is None:
        raise ServingError(f"서버 {base_url(endpoint)}의 스트림이 끝 표시(finish_reason) 없이 끝났습니다: 연결이 중간에 "
                           f"끊긴 것으로 봅니다. 서버 로그를 확인하세요.")
    return RequestMetrics(
        ttft_ms=ttft * 1000.0,
        itl_ms=[g * 1000.0 for g in itl],
        e2e_ms=(last - start) * 1000.0,
        output_tokens=usage_tokens if usage_tokens is not None else chunks,
        tokens_from_usage=usage_tokens is not None,
        text="".join(text),
        finish_reason=finish,
        start_s=start,
    )


# --------------------------------------------------------------------------------------------
# concurrency sweep

def _parse_levels(concurrency) -> list[int]:
    if isinstance(concurrency, str):
        try:
            concurrency = [int(x) for x in concurrency.replace(" ", "").split(",") if x]
        except ValueError:
            raise ValueError(f"concurrency={concurrency!r}: 쉼표로 구분한 1 이상의 정수여야 합니다. 예: 1,2,4,8") from None
    if isinstance(concurrency, int):
        concurrency = [concurrency]
    levels = list(concurrency)
    if not levels or any(isinstance(c, bool) or not isinstance(c, int) or c < 1 for c in levels):
        raise ValueError(f"concurrency={concurrency!r}: 동시 요청 수는 1 이상의 정수여야 합니다. 예: 1,2,4,8")
    return levels


def _row(concurrency: int, results: list[RequestMetrics], duration_s: float) -> SweepRow:
    tokens = sum(r.output_tokens for r in results)
    ttfts = [r.ttft_ms for r in results]
    tpots = [r.tpot_ms for r in results if r.output_tokens > 1]  # vLLM: tpots only for n > 1
    itls = [g for r in results for g in r.itl_ms]
    med = lambda xs: statistics.median(xs) if xs else 0.0  # noqa: E731
    mean = lambda xs: statistics.fmean(xs) if xs else 0.0  # noqa: E731
    return SweepRow(concurrency, len(results), duration_s, tokens, tokens / duration_s if duration_s > 0 else 0.0,
                    mean(ttfts), med(ttfts), mean(tpots), med(tpots), mean(itls), med(itls),
                    mean([r.e2e_ms for r in results]), results)


def sweep(
    endpoint: str,
    *,
    model: str | None = None,
    concurrency=(1, 2, 4, 8),
    max_tokens: int = 32,
    requests_per_level: int | None = None,
    prompts=DEFAULT_PROMPTS,
    temperature: float = 0.0,
    timeout_s: float = READ_TIMEOUT_S,
    api_key: str | None = None,
    extra_body: dict | None = None,
    warmup: bool = True,
) -> tuple[list[SweepRow], SpecDecodeStats | None]:
    """Measure the server at each concurrency level: aggregate tokens/s against per-request latency.

    At level C, C client threads keep C requests in flight (vLLM's ``--max-concurrency C``)
    until ``requests_per_level`` requests (default ``2 * C``) have completed. More requests in
    flight raise the server's aggregate output tokens/s (one weight read serves a whole batch)
    and, past some point, each request's TPOT and TTFT: the cost / concurrent-requests trade.

    Args:
        endpoint, model, max_tokens, temperature, timeout_s, api_key, extra_body: as in
            :func:`measure_request`.
        concurrency: levels, e.g. ``(1, 2, 4, 8)`` or ``"1,2,4,8"``.
        requests_per_level: requests per level (int >= 1); default twice the level.
        prompts: texts (or chat message lists) cycled over the requests.
        warmup: send one unmeasured request first (the first request of a fresh server pays
            one-off costs).

    Returns:
        ``(rows, spec)``: one :class:`SweepRow` per level, and the change of vLLM's
        speculative-decoding counters over the sweep (None when the server has no such
        ``/metrics``).

    Raises:
        ValueError: bad levels, ``max_tokens``, ``timeout_s`` or ``requests_per_level``.
        TypeError: ``requests_per_level`` not an int.
        ServingError: any request failed (message of the first failure).
    """
    levels = _parse_levels(concurrency)
    max_tokens, timeout_s = _check(max_tokens, timeout_s)
    if requests_per_level is not None:
        check("requests_per_level", requests_per_level, "동시 요청 수마다 보낼 요청 수", low=1, integer=True,
              hint="None = 동시 요청 수의 2배")
    prompts = [prompts] if isinstance(prompts, str) else list(prompts)
    if not prompts:
        raise ValueError("prompts: 보낼 프롬프트가 하나 이상 있어야 합니다.")
    client = _client(endpoint, timeout_s, api_key)
    if model is None:
        model = server_model(endpoint, timeout_s=timeout_s, api_key=api_key)
    kw = dict(model=model, max_tokens=max_tokens, temperature=temperature, timeout_s=timeout_s,
              extra_body=extra_body, _client_obj=client)
    before = fetch_spec_decode_stats(endpoint, timeout_s=min(timeout_s, 5.0))
    if warmup:
        measure_request(endpoint, prompts[0], **kw)
    rows = []
    for c in levels:
        n = requests_per_level or 2 * c
        t0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=c, thread_name_prefix="decodelab-measure") as pool:
            futures = [pool.submit(measure_request, endpoint, prompts[i % len(prompts)], **kw) for i in range(n)]
            results = [f.result() for f in futures]
        rows.append(_row(c, results, time.perf_counter() - t0))
    spec = None
    if before is not None:
        after = fetch_spec_decode_stats(endpoint, timeout_s=min(timeout_s, 5.0))
        spec = after - before if after is not None else None
    return rows, spec


# --------------------------------------------------------------------------------------------
# vLLM's speculative-decoding counters on /metrics

_SPEC = {
    "vllm:spec_decode_num_drafts": "num_drafts",
    "vllm:spec_decode_num_draft_tokens": "num_draft_tokens",
    "vllm:spec_decode_num_accepted_tokens": "num_accepted_tokens",
}
_PER_POS = "vllm:spec_decode_num_accepted_tokens_per_pos"


def parse_spec_decode_metrics(text: str) -> SpecDecodeStats | None:
    """vLLM's speculative-decoding counters from a Prometheus ``/metrics`` text.

    Parsed with ``prometheus_client.parser``; each counter is summed over its label sets (one
    per engine / model name), per-position counts by their ``position`` label.

    Returns:
        :class:`SpecDecodeStats`, or None when the text has none of the counters (a server
        without speculative decoding, or not vLLM).

    Raises:
        ValueError: the text is not in the Prometheus text format.
    """
    from prometheus_client.parser import text_string_to_metric_families

    found: dict[str, float] = {}
    per_pos: dict[int, float] = {}
    try:
        families = list(text_string_to_metric_families(text))
    except Exception as exc:  # the parser raises ValueError and others on malformed lines
        raise ValueError(f"/metrics 내용이 Prometheus 텍스트 형식이 아닙니다: {exc}") from exc
    for fam in families:
        name = fam.name[:-6] if fam.name.endswith("_total") else fam.name
        if name not in _SPEC and name != _PER_POS:
            continue
        for s in fam.samples:
            if s.name.endswith("_created"):
                continue
            if name == _PER_POS:
                pos = int(s.labels.get("position", 0))
                per_pos[pos] = per_pos.get(pos, 0.0) + s.value
            else:
                found[_SPEC[name]] = found.get(_SPEC[name], 0.0) + s.value
    if not found and not per_pos:
        return None
    return SpecDecodeStats(found.get("num_drafts", 0.0), found.get("num_draft_tokens", 0.0),
                           found.get("num_accepted_tokens", 0.0),
                           [per_pos.get(k, 0.0) for k in range(max(per_pos) + 1)] if per_pos else [])


def fetch_spec_decode_stats(endpoint: str, *, timeout_s: float = 5.0) -> SpecDecodeStats | None:
    """GET ``<server>/metrics`` and parse it; None when there is no such page or no counters."""
    import httpx

    try:
        r = httpx.get(_root(endpoint) + "/metrics", timeout=timeout_s)
    except httpx.HTTPError:
        return None
    if r.status_code != 200:
        return None
    try:
        return parse_spec_decode_metrics(r.text)
    except ValueError:
        return None


# --------------------------------------------------------------------------------------------
# a local server to measure: transformers serve on loopback

LOOPBACK = ("127.0.0.1", "localhost", "::1")


class LocalServer:
    """A ``transformers serve`` process started by :func:`start_transformers_serve`.

    Attributes:
        url: its address, e.g. ``"http://127.0.0.1:8123"``.
        model: the model id to send (the folder it serves).
        process: the ``subprocess.Popen``; ``log_path``: file holding its output.

    :meth:`stop` ends it (also called at interpreter exit, and by ``with``).
    """

    def __init__(self, process: subprocess.Popen, url: str, model: str, log_path: Path):
        self.process, self.url, self.model, self.log_path = process, url, model, log_path

    @property
    def running(self) -> bool:
        return self.process.poll() is None

    def stop(self, timeout_s: float = 20.0) -> None:
        """Stop the server (SIGTERM, then kill after ``timeout_s`` seconds); safe to call twice."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        atexit.unregister(self.stop)

    def log_tail(self, chars: int = 2000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-chars:]
        except OSError:
            return ""

    def __enter__(self) -> "LocalServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        return f"LocalServer(url={self.url!r}, running={self.running})"


def _transformers_cli() -> str | None:
    exe = Path(sys.executable).with_name("transformers")
    return str(exe) if exe.exists() else shutil.which("transformers")


def start_transformers_serve(
    model_dir: str | os.PathLike | None = None,
    *,
    host: str = "127.0.0.1",
    port: int | None = None,
    continuous_batching: bool = True,
    threads: int = 1,
    timeout_s: float = 180.0,
) -> LocalServer:
    """Start ``transformers serve`` on a loopback address and wait until ``/health`` answers.

    Offline (``HF_HUB_OFFLINE=1``), on CPU, serving one local folder (default: the bundled
    target). ``continuous_batching`` (transformers' ``--continuous-batching``) lets the server
    decode several requests in one forward pass, as vLLM does; without it each request is
    generated on its own (no forward pass is shared). ``threads`` sets ``OMP_NUM_THREADS`` for the server: on a shared 2-core
    machine one thread made the bundled target's steps about 10x faster than the default
    (measured here: about 30 ms instead of about 300-400 ms per token).

    Args:
        model_dir: local model folder (config.json, weights, tokenizer).
        host: ``127.0.0.1`` (default), ``localhost`` or ``::1``: the course never opens a
            server to the network.
        port: TCP port; default a free one (another one if it is taken before the server binds it).
        timeout_s: how long to wait for the server to answer ``/health``.

    Returns:
        :class:`LocalServer` (stopped at interpreter exit if not before).

    Raises:
        ValueError: ``host`` is not a loopback address; ``threads`` < 1.
        FileNotFoundError: ``model_dir`` is not a model folder.
        ServingError: ``transformers serve`` (extra ``transformers[serving]``) is not installed,
            exits, or does not answer within ``timeout_s`` (the message holds its log's end);
            ``port`` is taken by another program (without ``port``: each of
            :data:`_PORT_TRIES` free ports was taken before the server could bind it).
    """
    from ._paths import MODELS_DIR
    from .models import check_folder

    if host not in LOOPBACK:
        raise ValueError(f"host={host!r}: 강좌의 서버는 이 컴퓨터 안에서만 엽니다 (허용: {', '.join(LOOPBACK)}).")
    if isinstance(threads, bool) or not isinstance(threads, int) or threads < 1:
        raise ValueError(f"threads={threads!r}: 서버 스레드 수는 1 이상의 정수여야 합니다.")
    folder = check_folder(model_dir if model_dir is not None else MODELS_DIR / "target", "서버(serve)").resolve()
    cli = _transformers_cli()
    try:
        import fastapi  # noqa: F401
        import uvicorn  # noqa: F401
    except ImportError:
        cli = None
    if cli is None:
        raise ServingError("transformers serve를 찾지 못했습니다: pip install \"transformers[serving]\" 로 설치하세요 "
                           "(bash course.sh setup이 설치합니다).")
    options = ["--device", "cpu"]
    if continuous_batching:
        # a small paged KV cache (64 blocks x 32 positions = 2,048 token positions: 8 requests of
        # 256 tokens): transformers sizes it from free memory otherwise, and allocating that made
        # the first request take about 20 s here instead of about 4 s
        options += ["--continuous-batching", "--cb-block-size", "32", "--cb-num-blocks", "64", "--cb-max-batch-tokens", "256"]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads), HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1")
    # a free port is only free until someone takes it: the server binds it after loading the model,
    # seconds later, so a port taken meanwhile (another program on a busy machine) means a new try
    tries, attempt = (_PORT_TRIES if port is None else 1), 0
    while True:
        attempt += 1
        chosen = _free_port(host) if port is None else port
        cmd = [cli, "serve", str(folder), "--host", host, "--port", str(chosen), *options]
        log = Path(tempfile.mkstemp(prefix="decodelab-serve-", suffix=".log")[1])
        with open(log, "wb") as fh:
            proc = subprocess.Popen(cmd, env=env, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL)
        netloc = f"[{host}]:{chosen}" if ":" in host else f"{host}:{chosen}"
        server = LocalServer(proc, f"http://{netloc}", str(folder), log)
        atexit.register(server.stop)
        try:
            wait_until_ready(server.url + "/health", proc, timeout_s, what="transformers serve")
            return server
        except ServingError as e:
            server.stop()
            tail = server.log_tail()
            taken = "address already in use" in tail.lower()
            if taken and attempt < tries:
                continue
            if not taken:
                raise ServingError(f"{e} 로그 끝:\n{tail}") from None
            hint = ("다른 port를 주거나 port를 비워 두세요(빈 포트를 고릅니다)" if port is not None
                    else f"빈 포트를 {tries}번 골랐지만 번번이 다른 프로그램이 먼저 썼습니다; 잠시 뒤 다시 실행하세요")
            raise ServingError(f"transformers serve: 포트 {chosen}을(를) 이미 다른 프로그램이 쓰고 있습니다: {hint}. "
                               f"로그 끝:\n{tail}") from None


#: how many free ports :func:`start_transformers_serve` tries when each one is taken before the server binds it
_PORT_TRIES = 3


def _free_port(host: str) -> int:
    """A TCP port the OS calls free on ``host`` now (bind to port 0, read it, close)."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def wait_until_ready(url: str, process: subprocess.Popen, timeout_s: float, *, what: str = "서버",
                     poll_s: float = 0.3, request_timeout_s: float = 2.0) -> None:
    """Wait until an HTTP GET of ``url`` answers 200 while ``process`` (the server behind it) runs.

    Asks every ``poll_s`` seconds, each request waiting at most ``request_timeout_s`` seconds; a
    refused or failed connection, or another status, means not ready yet. The process is left as
    it is in every case (stopping it is the caller's). Needs ``httpx`` (the ``serving`` extra).

    Args:
        url: the readiness address, e.g. ``http://127.0.0.1:8000/health``.
        process: the server's process (anything with ``poll()`` and ``returncode``).
        timeout_s: how long to wait in all, in seconds.
        what: the server's name at the start of the error message.

    Raises:
        ServingError: (Korean) the process ended first (the message gives its exit code), or
            ``url`` gave no 200 answer within ``timeout_s`` seconds.
    """
    import httpx

    deadline = time.monotonic() + timeout_s
    while True:
        if process.poll() is not None:
            raise ServingError(f"{what}: 시작하자마자 끝났습니다 (종료 코드 {process.returncode}).")
        try:
            if httpx.get(url, timeout=request_timeout_s).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        if time.monotonic() > deadline:
            raise ServingError(f"{what}: {timeout_s:g}초 안에 준비되지 않았습니다 ({url}이 200으로 답하지 않음).")
        time.sleep(poll_s)


# --------------------------------------------------------------------------------------------
# command line: decodelab measure

def format_table(rows: list[SweepRow]) -> str:
    """The sweep as a Korean text table (ms and tokens/s)."""
    head = f"{'동시 요청':>8} {'요청 수':>6} {'처리량(tokens/s)':>16} {'TTFT 중앙값':>11} {'TPOT 중앙값':>11} {'ITL 중앙값':>10} {'E2E 평균':>9}"
    lines = [head]
    for r in rows:
        lines.append(f"{r.concurrency:>8} {r.requests:>6} {r.output_tokens_per_s:>16.1f} {r.median_ttft_ms:>9.1f}ms "
                     f"{r.median_tpot_ms:>9.1f}ms {r.median_itl_ms:>8.1f}ms {r.mean_e2e_ms:>7.0f}ms")
    return "\n".join(lines)


class _Parser(ArgumentParser):
    """The project's Korean argparse (:class:`decodelab._cli.ArgumentParser`) with messages that
    say what to change for ``--endpoint`` and the numeric options."""

    def error(self, message: str):
        if "--endpoint" in message and "required" in message:
            message = ("--endpoint가 필요합니다: 잴 서버의 주소를 주세요 "
                       "(예: decodelab measure --endpoint http://127.0.0.1:8000)")
        elif message.startswith("unrecognized arguments:"):
            message = f"모르는 옵션입니다:{message.split(':', 1)[1]} (쓸 수 있는 옵션은 decodelab measure --help)"
        elif "expected one argument" in message:
            message = f"{message.split(':', 1)[0].replace('argument ', '옵션 ')}: 옵션 뒤에 값을 하나 주세요"
        elif "invalid" in message and "value" in message:
            message = (f"{message.split(':', 1)[0].replace('argument ', '옵션 ')}: 숫자를 주세요 "
                       f"(받은 값:{message.rsplit(':', 1)[1]}; 예: --max-tokens 32, --timeout 30)")
        else:
            message = korean_error(message)
        self.print_usage(sys.stderr)
        self.exit(2, f"{self.prog}: 오류: {message}\n")


def _parser() -> ArgumentParser:
    p = _Parser(
        prog="decodelab measure",
        description="OpenAI 호환 서버(vLLM, SGLang, llama.cpp, transformers serve 등)의 TTFT, TPOT, ITL, E2E를 "
                    "vLLM 벤치마크와 같은 정의로 재고, 동시 요청 수를 바꿔 가며 합계 처리량을 잽니다.",
    )
    p.add_argument("--endpoint", required=True, help="서버 주소, 예: http://127.0.0.1:8000 (또는 .../v1)")
    p.add_argument("--model", default=None, help="모델 이름 (기본: 서버가 /v1/models에서 알려 주는 첫 모델)")
    p.add_argument("--concurrency", default="1,2,4,8", help="동시 요청 수 목록, 쉼표로 구분 (기본 1,2,4,8)")
    p.add_argument("--max-tokens", type=int, default=32, help="요청마다 만들 토큰 수 (기본 32)")
    p.add_argument("--requests", type=int, default=None, help="동시 요청 수마다 보낼 요청 수 (기본: 동시 요청 수의 2배)")
    p.add_argument("--prompt", action="append", default=None, help="보낼 프롬프트 (여러 번 줄 수 있음; 기본: 한국어 문장 8개)")
    p.add_argument("--chat", action="store_true", help="/v1/chat/completions로 보냅니다 (Instruct 모델)")
    p.add_argument("--timeout", type=float, default=READ_TIMEOUT_S, help=f"요청 하나 전체(보내기부터 마지막 조각까지)의 최대 초 (기본 {READ_TIMEOUT_S:g})")
    p.add_argument("--api-key", default=None, help="서버가 요구하면 API 키 (기본: 없음)")
    p.add_argument("--json", action="store_true", help="결과를 JSON으로 출력합니다 (요청별 수치 포함)")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``decodelab measure``; 0 on success, 1 when the server failed (unreachable,
    HTTP error, broken or malformed stream, over ``--timeout``), 2 for bad options."""
    args = _parser().parse_args(argv)
    try:
        levels = _parse_levels(args.concurrency)
        base_url(args.endpoint)
        prompts = args.prompt or DEFAULT_PROMPTS
        if args.chat:
            prompts = [[{"role": "user", "content": p}] for p in prompts]
        rows, spec = sweep(args.endpoint, model=args.model, concurrency=levels, max_tokens=args.max_tokens,
                           requests_per_level=args.requests, prompts=prompts, timeout_s=args.timeout,
                           api_key=args.api_key)
    except (ValueError, TypeError) as exc:
        print(f"decodelab measure: {exc}", file=sys.stderr)
        return 2
    except ServingError as exc:
        print(f"decodelab measure: {exc}", file=sys.stderr)
        return 1
    if args.json:
        out = {"endpoint": base_url(args.endpoint), "max_tokens": args.max_tokens,
               "definitions": "vLLM benchmarks/serve.py calculate_metrics",
               "rows": [r.as_dict(with_requests=True) for r in rows],
               "spec_decode": None if spec is None else {
                   **asdict(spec), "acceptance_rate": spec.acceptance_rate,
                   "mean_acceptance_length": spec.mean_acceptance_length,
                   "per_position_acceptance": spec.per_position_acceptance}}
        print(json.dumps(out, ensure_ascii=False, indent=1))
        return 0
    print(f"서버 {base_url(args.endpoint)}, 요청마다 최대 {args.max_tokens} 토큰 (정의: vLLM 벤치마크와 같음)")
    print(format_table(rows))
    if any(not r.tokens_from_usage for row in rows for r in row.results):
        print("참고: 서버가 토큰 수(usage)를 알려 주지 않아 스트림 조각 수로 셌습니다.")
    if spec is not None and spec.num_drafts:
        print(f"투기적 디코딩 (서버 /metrics): 수락률(acceptance rate) {spec.acceptance_rate:.3f}, "
              f"평균 수락 길이(mean acceptance length) {spec.mean_acceptance_length:.2f}")
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
