"""Exam bank, lecturer's side: parametric numeric items and edit-the-code tasks of notebooks 02-05.

Never shipped to students (not in the decodelab package, not in a release): ``decodelab classroom
init`` copies this folder into the course directory, where the hidden tests of the graded
notebooks read it. Each student sees the item with numbers drawn from the ``params`` space, seeded
by the item id and the student's nbgrader id (:func:`decodelab.classroom.student.draw`); the key is
``answer(p)``, computed by decodelab's own latency model (:mod:`decodelab.latency` on :mod:`decodelab.profiles`). The
parameter grids are fine and the tolerance tight (:data:`TOL`, five significant digits asked), so that
a key rarely fits a classmate: in a generated class of 30 at most one classmate's key is also right
for a student, on any item (tests/test_classroom_items.py; the average is 0.1 students per item
who have such a classmate, 12.5 before).

ITEMS: dicts with ``id``, ``notebook``, ``prompt`` (``{name}`` fields), ``params``, ``unit``
(a unit of :data:`decodelab.assess.quiz.normalize.UNITS`), ``answer(p) -> float``, ``rel_tol`` (relative
tolerance; at least ``abs_tol``), ``points``, ``explanation`` (``{name}`` and ``{answer}`` fields,
shown in the feedback after grading), ``source``.

TASKS: edit-the-code tasks: ``id``, ``notebook``, ``prompt``, ``stub`` (the code the student
completes; ``### SOLUTION`` marks where the lecturer's ``solution`` goes), ``function`` (its name),
``cases`` (argument tuples), ``reference(*args)`` (decodelab's value), ``rel_tol``, ``points``;
each built by ``_task`` from the lecturer's whole solution function.
"""

from __future__ import annotations

import math
import re

from decodelab import latency as L
from decodelab.profiles import get_model

MODELS = ["Llama-3-8B", "Llama-3-70B", "Qwen3-32B"]
GPUS = ["H100", "H200", "B200"]


def _agent(p, **kw):
    return L.agent_loop(p["depth"], p["tokens"], p["tool_ms"], decode_ms_per_token=p["tpot_ms"],
                        prefill_tokens_per_s=math.inf, **kw)


DIGITS = " 답은 유효숫자 다섯 자리로 쓰세요."
"""Said by every prompt: the grader's tolerance (:data:`TOL`, ``rel_tol`` 0.02%) accepts a key rounded
to five significant digits (rounding error at most 0.005%), not one rounded to four (up to 0.05%)."""

TOL = 0.0002
"""Relative tolerance of every item. Tight on purpose: with it and the fine parameter grids below,
in a generated class of 30 (tests/test_classroom_items.py) no student has more than one classmate
whose correct answer is also correct for them, on any item (issue 31, Deliver 6). At 2% and coarse
grids a student had on average 11.8 such classmates per item."""


def _link(gbs):
    """A link of ``gbs`` GB/s and no latency (:class:`decodelab.profiles.Link`)."""
    from decodelab.profiles import Link

    return Link(f"{gbs} GB/s", gbs * 1e9, 0.0)


def _best_speedup(alpha, c):
    """The largest expected speed-up over gamma = 1..16 (its gamma: :func:`decodelab.latency.optimal_gamma`)."""
    return float(L.expected_speedup(alpha, L.optimal_gamma(alpha, c), c))


def _alpha_from_counts(p):
    """(alpha, vLLM's acceptance rate) of ``rounds`` greedy rounds of ``gamma`` drafts: ``full`` rounds
    accepted every draft, the others stopped at a rejection after ``partial`` accepted drafts in all.
    alpha = accepted / judged positions (each stopped round judged its rejected position too);
    acceptance rate = accepted / proposed (GLOSSARY.md; decodelab.speculative.SpeculativeResult)."""
    accepted = p["gamma"] * p["full"] + p["partial"]
    judged = accepted + (p["rounds"] - p["full"])
    return accepted / judged, accepted / (p["gamma"] * p["rounds"])


def _memory_chips(p):
    """Weights + the batch's KV cache, in chips' memories (not rounded up)."""
    from decodelab.profiles import get_hardware

    step = L.estimate_decode_step(get_model(p["model"]), p["hardware"], p["context"], p["batch"])
    return float(step.bytes) / get_hardware(p["hardware"]).memory_bytes


ITEMS = [
    # ---- 02: prefill vs decode -------------------------------------------------------------
    dict(id="02-x-step-time", notebook="02", unit="ms", points=2, rel_tol=TOL,
         params={"model": MODELS, "dtype": ["bf16", "fp8"], "hardware": GPUS, "batch": {"range": [1, 16]},
                 "context": {"range": [1000, 32000]}},
         prompt="{model}을(를) {dtype} 가중치로 {hardware} 한 장에서 배치 {batch}, 요청마다 맥락 {context} 토큰으로 디코드합니다. "
                "루프라인 모델(메모리 용량은 따지지 않음)로 어림한 디코드 스텝 하나의 시간은 몇 ms인가요?" + DIGITS,
         answer=lambda p: L.estimate_decode_step_ms(get_model(p["model"], p["dtype"]), p["hardware"], p["context"],
                                                    p["batch"]),
         explanation="스텝마다 가중치 전체를 한 번, 그리고 요청 {batch}개 각각의 맥락 {context} 토큰의 KV 캐시를 읽고, 그 바이트 ÷ "
                     "메모리 대역폭이 연산 시간보다 길어 시간을 정합니다: 약 {answer} ms "
                     "(decodelab.latency.estimate_decode_step_ms로 확인할 수 있습니다)."),
    dict(id="02-x-kv-size", notebook="02", unit="MB", points=2, rel_tol=TOL,
         params={"model": MODELS, "requests": {"range": [1, 64]}, "context": {"range": [500, 40000]}},
         prompt="{model}(KV 캐시 BF16)로 요청 {requests}개를 함께 처리합니다. 요청마다 맥락 {context} 토큰을 KV 캐시에 담고 있습니다. "
                "KV 캐시는 모두 몇 MB인가요? (1 MB = 10^6 바이트)" + DIGITS,
         answer=lambda p: L.kv_bytes_per_token(get_model(p["model"])) * p["context"] * p["requests"] / 1e6,
         explanation="토큰 하나의 KV 캐시는 2(K와 V) × 층 수 × KV 헤드 수 × 헤드 차원 × 2바이트이고, "
                     "여기에 {context} 토큰과 요청 {requests}개를 곱하면 약 {answer} MB입니다."),
    dict(id="02-x-prefill-time", notebook="02", unit="ms", points=2, rel_tol=TOL,
         params={"model": MODELS, "hardware": GPUS, "prompt_tokens": {"range": [200, 32000]}},
         prompt="{model}(BF16)이 {hardware} 한 장에서 프롬프트 {prompt_tokens} 토큰을 프리필(prefill)합니다. "
                "활용률 100%의 루프라인 모델로 어림한 프리필 시간은 몇 ms인가요?" + DIGITS,
         answer=lambda p: L.estimate_prefill_ms(get_model(p["model"]), p["hardware"], p["prompt_tokens"]),
         explanation="프리필은 연산 한계라서 시간은 FLOP ÷ FLOP/s입니다: 2 × 매개변수 수 × {prompt_tokens}에 "
                     "어텐션 항을 더한 계산량으로 약 {answer} ms입니다 (decodelab.latency.estimate_prefill_ms)."),
    dict(id="02-x-batch-intensity", notebook="02", unit="FLOP/byte", points=1, rel_tol=TOL,
         params={"model": MODELS, "batch": {"range": [1, 256]}, "context": {"range": [500, 32000]}},
         prompt="{model}(BF16)을 배치 {batch}, 요청마다 맥락 {context} 토큰으로 디코드합니다. 디코드 스텝 하나 전체(가중치 행렬 곱과 "
                "어텐션)의 산술 강도(arithmetic intensity), 곧 FLOP ÷ 메모리에서 읽는 바이트(가중치와 KV 캐시)는 몇 FLOP/byte인가요?"
                + DIGITS,
         answer=lambda p: L.arithmetic_intensity(get_model(p["model"]), p["context"], p["batch"]),
         explanation="FLOP은 배치에 비례해 늘지만(2 × 매개변수 수 × {batch} + 어텐션), 읽는 바이트도 가중치 한 번에 더해 요청마다 "
                     "KV 캐시가 늘어납니다: 약 {answer} FLOP/byte (decodelab.latency.arithmetic_intensity). 그래서 맥락이 길면 "
                     "배치를 키워도 산술 강도가 가중치만 셀 때(2 × {batch} ÷ 2)만큼 오르지 않습니다."),
    dict(id="02-x-ttft", notebook="02", unit="ms", points=2, rel_tol=TOL,
         params={"model": MODELS, "hardware": GPUS, "prompt_tokens": {"range": [500, 16000]},
                 "queue_ms": {"range": [0, 1000]}},
         prompt="{model}(BF16)을 {hardware} 한 장에서 서빙합니다. 요청이 큐에서 {queue_ms} ms를 기다린 뒤 프롬프트 "
                "{prompt_tokens} 토큰을 프리필합니다. 루프라인 모델로 어림하면, 요청이 도착해서 첫 출력 토큰이 나오기까지 몇 ms인가요?"
                + DIGITS,
         answer=lambda p: L.estimate_ttft_ms(get_model(p["model"]), p["hardware"], p["prompt_tokens"],
                                             queue_ms=p["queue_ms"]),
         explanation="TTFT = 대기 {queue_ms} ms + 프리필 시간이라 약 {answer} ms입니다."),
    # ---- 03: agent loops -------------------------------------------------------------------
    dict(id="03-x-loop-total", notebook="03", unit="s", points=2, rel_tol=TOL,
         params={"depth": {"range": [10, 80]}, "tokens": {"range": [100, 600]},
                 "tool_ms": {"range": [500, 4000], "step": 10}, "tpot_ms": {"range": [5, 50], "step": 0.5}},
         prompt="에이전트가 작업 하나에서 모델을 {depth}번 호출합니다. 호출마다 {tokens} 토큰을 만들고(TPOT {tpot_ms} ms, "
                "첫 토큰은 프리필이 내며 프리필 시간은 0으로 봅니다), 그 뒤 도구가 {tool_ms} ms 걸립니다. "
                "작업 전체는 몇 초인가요?" + DIGITS,
         answer=lambda p: _agent(p).total_s,
         explanation="호출 하나 = ({tokens} − 1) × {tpot_ms} ms + 도구 {tool_ms} ms이고, {depth}번 반복하면 약 {answer} 초입니다."),
    dict(id="03-x-decode-share", notebook="03", unit="%", points=1, rel_tol=TOL,
         params={"depth": {"range": [10, 80]}, "tokens": {"range": [20, 600]},
                 "tool_ms": {"range": [200, 30000], "step": 10}, "tpot_ms": {"range": [5, 50], "step": 0.5}},
         prompt="에이전트 작업: 모델 호출 {depth}번, 호출마다 출력 {tokens} 토큰(TPOT {tpot_ms} ms, 첫 토큰은 프리필이 냄, "
                "프리필 시간 0), 호출마다 도구 {tool_ms} ms. 작업 시간 가운데 디코드가 차지하는 비율은 몇 %인가요?" + DIGITS,
         answer=lambda p: 100 * _agent(p).totals["decode"] / _agent(p).total_ms,
         explanation="디코드 시간 {depth} × ({tokens} − 1) × {tpot_ms} ms를 전체 시간으로 나누면 약 {answer}%입니다 "
                     "(호출 수는 분자와 분모에 똑같이 곱해져 비율을 바꾸지 않습니다)."),
    dict(id="03-x-amdahl", notebook="03", unit="배", points=1, rel_tol=TOL,
         params={"fraction_pct": {"range": [20, 99], "step": 0.1}, "factor": {"range": [1.5, 30], "step": 0.1}},
         prompt="작업 시간의 {fraction_pct}%가 디코드입니다. 디코드만 {factor}배 빨라지면 작업 전체는 몇 배 빨라지나요?" + DIGITS,
         answer=lambda p: L.amdahl_speedup(p["fraction_pct"] / 100, p["factor"]),
         explanation="암달의 법칙: 1 ÷ ((1 − f) + f ÷ {factor}), f = {fraction_pct}% 라서 약 {answer}배입니다."),
    dict(id="03-x-faster-decode", notebook="03", unit="s", points=2, rel_tol=TOL,
         params={"depth": {"range": [10, 60]}, "tokens": {"range": [100, 500]},
                 "tool_ms": {"range": [500, 3000], "step": 10}, "tpot_ms": {"range": [15, 50], "step": 0.5},
                 "tpot_fast_ms": {"range": [1, 10], "step": 0.5}},
         prompt="에이전트 작업: 호출 {depth}번, 호출마다 출력 {tokens} 토큰, 도구 {tool_ms} ms(첫 토큰은 프리필이 냄, 프리필 시간 0). "
                "TPOT가 {tpot_ms} ms에서 {tpot_fast_ms} ms로 줄면 작업 시간은 몇 초 줄어드나요?" + DIGITS,
         answer=lambda p: _agent(p).total_s - _agent({**p, "tpot_ms": p["tpot_fast_ms"]}).total_s,
         explanation="줄어드는 것은 디코드 시간뿐입니다: {depth} × ({tokens} − 1) × ({tpot_ms} − {tpot_fast_ms}) ms ≈ {answer} 초."),
    dict(id="03-x-prefix-cache", notebook="03", unit="s", points=2, rel_tol=TOL,
         params={"depth": {"range": [5, 40]}, "initial": {"range": [1000, 8000]},
                 "growth": {"range": [100, 1500]}, "rate": {"range": [2000, 20000], "step": 100}},
         prompt="에이전트가 모델을 {depth}번 호출합니다. 첫 호출의 맥락은 {initial} 토큰이고 호출마다 {growth} 토큰씩 늘어납니다. "
                "프리필 처리량이 {rate} tokens/s일 때, 접두사 캐싱(prefix caching) 없이 매번 맥락 전체를 프리필하면 "
                "캐싱할 때보다 프리필 시간이 모두 몇 초 더 드나요?" + DIGITS,
         answer=lambda p: (L.agent_loop(p["depth"], 1, 0, decode_ms_per_token=0, prefill_tokens_per_s=p["rate"],
                                        initial_context_tokens=p["initial"], context_growth_per_call=p["growth"],
                                        prefix_caching=False).totals["prefill"]
                           - L.agent_loop(p["depth"], 1, 0, decode_ms_per_token=0, prefill_tokens_per_s=p["rate"],
                                          initial_context_tokens=p["initial"], context_growth_per_call=p["growth"],
                                          prefix_caching=True).totals["prefill"]) / 1e3,
         explanation="캐싱하면 호출마다 새 토큰만, 캐싱하지 않으면 맥락 전체를 프리필합니다. 그 토큰 수의 차이를 "
                     "{rate} tokens/s로 나누면 약 {answer} 초입니다."),
    # ---- 04: speculative decoding -----------------------------------------------------------
    dict(id="04-x-tokens-per-call", notebook="04", unit="토큰", points=1, rel_tol=TOL,
         params={"alpha": {"range": [0.4, 0.97], "step": 0.0001}, "gamma": {"range": [1, 16]}},
         prompt="판정을 받은 초안 토큰 하나가 수락될 확률(Leviathan 등의 수락 확률) α = {alpha}, 초안 토큰 수 γ = {gamma}입니다"
                "(위치마다 서로 독립). "
                "대상 모델의 순전파 한 번이 평균 몇 토큰을 내나요?" + DIGITS,
         answer=lambda p: L.expected_tokens_per_call(p["alpha"], p["gamma"]),
         explanation="(1 − α^(γ+1)) ÷ (1 − α) (Leviathan et al. 2023): α = {alpha}, γ = {gamma}이면 약 {answer} 토큰입니다."),
    dict(id="04-x-speedup", notebook="04", unit="배", points=2, rel_tol=TOL,
         params={"alpha": {"range": [0.4, 0.95], "step": 0.001}, "gamma": {"range": [1, 12]},
                 "c": {"range": [0.01, 0.3], "step": 0.001}},
         prompt="α = {alpha}, γ = {gamma}, 초안 모델 한 스텝이 대상 모델 한 스텝의 {c}배 걸립니다. "
                "투기적 디코딩의 기대 속도 향상은 몇 배인가요?" + DIGITS,
         answer=lambda p: L.expected_speedup(p["alpha"], p["gamma"], p["c"]),
         explanation="기대 토큰 수 ÷ (γ c + 1) = 약 {answer}배입니다."),
    # the best gamma itself (an integer, 1-16) was the same for most of a class, and in 9 of its 35
    # draws the two best gammas' speed-ups were within 0.5%: the item asks for the best speed-up,
    # which both near-best gammas give within the tolerance.
    dict(id="04-x-best-gamma", notebook="04", unit="배", points=1, rel_tol=TOL,
         params={"alpha": {"range": [0.5, 0.95], "step": 0.0001}, "c": {"range": [0.01, 0.3], "step": 0.0001}},
         prompt="α = {alpha}, 초안/대상 한 스텝 시간 비 c = {c}입니다. 초안 토큰 수 γ를 1~16 가운데 기대 속도 향상이 가장 크게 "
                "고르면, 그 기대 속도 향상은 몇 배인가요? (가장 좋은 두 γ의 값이 허용 오차 0.02% 안으로 가까우면 어느 쪽 값도 "
                "정답입니다.)" + DIGITS,
         answer=lambda p: _best_speedup(p["alpha"], p["c"]),
         explanation="γ를 1부터 16까지 넣어 기대 속도 향상 (1 − α^(γ+1)) ÷ ((1 − α)(γ c + 1))을 비교하면 가장 큰 값이 약 "
                     "{answer}배입니다 (decodelab.latency.optimal_gamma가 그 γ를 줍니다). 가장 좋은 γ 근처에서는 속도 향상이 "
                     "완만하게 변해서, 이웃한 γ도 거의 같은 값을 냅니다."),
    dict(id="04-x-spec-tpot", notebook="04", unit="ms", points=2, rel_tol=TOL,
         params={"tpot_ms": {"range": [5, 60], "step": 0.1}, "alpha": {"range": [0.4, 0.95], "step": 0.001},
                 "gamma": {"range": [1, 8]}, "c": {"range": [0.01, 0.2], "step": 0.001}},
         prompt="대상 모델만으로 디코드하면 TPOT가 {tpot_ms} ms입니다. α = {alpha}, γ = {gamma}, c = {c}로 투기적 디코딩을 "
                "켜면 TPOT는 몇 ms가 될 것으로 기대하나요?" + DIGITS,
         answer=lambda p: p["tpot_ms"] / L.expected_speedup(p["alpha"], p["gamma"], p["c"]),
         explanation="TPOT는 기대 속도 향상으로 나눕니다: {tpot_ms} ÷ 속도 향상 ≈ {answer} ms. TTFT는 그대로입니다."),
    dict(id="04-x-verify-cost", notebook="04", unit="배", points=2, rel_tol=TOL,
         params={"alpha": {"range": [0.4, 0.95], "step": 0.001}, "gamma": {"range": [1, 8]},
                 "c": {"range": [0.01, 0.2], "step": 0.001}, "verify": {"range": [1.05, 3.0], "step": 0.01}},
         prompt="CPU에서는 대상 모델이 γ+1 토큰을 한 번에 검증하는 순전파가 한 스텝의 {verify}배 걸립니다. "
                "α = {alpha}, γ = {gamma}, c = {c}일 때 기대 속도 향상은 몇 배인가요?" + DIGITS,
         answer=lambda p: L.expected_speedup(p["alpha"], p["gamma"], p["c"], verify_cost=p["verify"]),
         explanation="분모의 1 대신 검증 비용 {verify}를 씁니다: 기대 토큰 수 ÷ (γ c + {verify}) ≈ {answer}배."),
    # alpha (Leviathan et al.: per judged draft position) is not vLLM's acceptance rate (accepted /
    # proposed): the drafts after a round's first rejection are proposed but never judged (GLOSSARY.md)
    dict(id="04-x-alpha-from-counts", notebook="04", unit="", points=2, rel_tol=TOL,
         params={"gamma": {"range": [2, 8]}, "rounds": {"range": [600, 1500]}, "full": {"range": [20, 300]},
                 "partial": {"range": [0, 300]}},
         prompt="탐욕 투기적 디코딩을 γ = {gamma}로 {rounds} 라운드 돌렸습니다. 초안 {gamma}개가 모두 수락된 라운드가 {full}번이고, "
                "나머지 라운드에는 거절이 있었으며, 그 라운드들에서 첫 거절 앞까지 수락된 초안은 모두 {partial}개입니다. "
                "Leviathan 등의 수락 확률 α, 곧 판정한 초안 위치 가운데 수락된 비율은 얼마인가요? (0과 1 사이의 수)" + DIGITS,
         answer=lambda p: _alpha_from_counts(p)[0],
         explanation="수락된 초안 = {gamma} × {full} + {partial}개입니다. 판정한 위치는 수락된 초안에 거절이 있던 라운드마다 "
                     "거절된 위치 하나({rounds} − {full}개)를 더한 수이고, 첫 거절 뒤의 초안은 판정받지 않고 버려집니다. "
                     "둘의 비가 α ≈ {answer}입니다. vLLM의 수락률(수락된 초안 ÷ 제안된 초안 {gamma} × {rounds}개)은 버려진 초안까지 "
                     "분모에 넣으므로 α보다 작습니다."),
    # ---- 05: chips and disaggregated serving ----------------------------------------------------
    dict(id="05-x-kv-transfer", notebook="05", unit="ms", points=2, rel_tol=TOL,
         params={"model": MODELS, "tokens": {"range": [500, 64000]}, "link": ["NVLink", "400G-NIC"]},
         prompt="분리형 서빙(disaggregated serving)에서 {model}(KV 캐시 BF16) 요청의 KV 캐시 {tokens} 토큰을 "
                "{link}로 디코드 칩에 보냅니다. 전송 시간은 몇 ms인가요? (decodelab의 링크 프로필을 쓰세요)" + DIGITS,
         answer=lambda p: L.kv_transfer_ms(get_model(p["model"]), p["tokens"], p["link"]),
         explanation="KV 바이트(토큰당 바이트 × {tokens}) ÷ 링크 대역폭 + 링크 지연 ≈ {answer} ms입니다."),
    # was "how many chips at least": an integer, shared by half a class; now the unrounded count
    dict(id="05-x-chips-needed", notebook="05", unit="개", points=1, rel_tol=TOL,
         params={"model": ["Llama-3-70B", "Qwen3-32B", "Llama-3-8B"], "hardware": ["Groq3-LPU", "H100", "H200"],
                 "batch": {"range": [1, 64]}, "context": {"range": [500, 32000]}},
         prompt="{model}(BF16)의 가중치와 배치 {batch}개 요청의 KV 캐시(요청마다 맥락 {context} 토큰)를 {hardware} 칩들의 "
                "메모리에 담으려 합니다. 담을 바이트는 칩 몇 개의 메모리에 해당하나요? 올림하지 않은 값(예: 2.374개)으로 쓰세요."
                + DIGITS,
         answer=_memory_chips,
         explanation="(가중치 + 배치 × 맥락 × 토큰당 KV 바이트) ÷ 칩 하나의 메모리 ≈ {answer}개이고, 실제로 필요한 칩 수는 "
                     "이것을 올림한 값입니다 (decodelab.latency.chips_needed)."),
    dict(id="05-x-batch-throughput", notebook="05", unit="tokens/s", points=1, rel_tol=TOL,
         params={"model": MODELS, "hardware": ["H100", "H200", "B200", "Rubin"], "batch": {"range": [1, 128]},
                 "context": {"range": [1000, 8192]}},
         prompt="{model}(BF16)을 {hardware} 한 장에서 배치 {batch}, 요청마다 맥락 {context} 토큰으로 디코드합니다. "
                "루프라인 모델로 어림한 전체 처리량(배치 전체가 1초에 만드는 토큰)은 몇 tokens/s인가요?" + DIGITS,
         answer=lambda p: p["batch"] * 1e3 / L.estimate_decode_step_ms(get_model(p["model"]), p["hardware"],
                                                                       p["context"], p["batch"]),
         explanation="스텝 하나가 요청마다 토큰 하나, 모두 {batch}개를 냅니다: {batch} ÷ 스텝 시간 ≈ {answer} tokens/s. "
                     "가중치는 한 번만 읽으므로 배치를 키우면 처리량이 늘어납니다(요청마다 읽는 KV 캐시는 배치와 함께 늡니다)."),
    dict(id="05-x-transfer-vs-prefill", notebook="05", unit="%", points=2, rel_tol=TOL,
         params={"model": ["Llama-3-70B", "Qwen3-32B"], "prompt_tokens": {"range": [1000, 32000]},
                 "link_gbs": {"range": [25, 900]}, "hardware": GPUS},
         prompt="{model}(BF16)의 프롬프트 {prompt_tokens} 토큰을 {hardware} 한 장에서 프리필한 뒤 KV 캐시를 대역폭 {link_gbs} GB/s"
                "(1 GB = 10^9 바이트, 지연은 0으로 봄)의 링크로 보냅니다. KV 전송 시간은 프리필 시간의 몇 %인가요? "
                "(프리필은 활용률 100%의 루프라인 모델)" + DIGITS,
         answer=lambda p: 100 * L.kv_transfer_ms(get_model(p["model"]), p["prompt_tokens"], _link(p["link_gbs"]))
         / L.estimate_prefill_ms(get_model(p["model"]), p["hardware"], p["prompt_tokens"]),
         explanation="전송 시간(토큰당 KV 바이트 × {prompt_tokens} ÷ {link_gbs} GB/s) ÷ 프리필 시간 ≈ {answer}%. "
                     "실제 시스템은 층마다 전송을 프리필과 겹칩니다."),
    dict(id="05-x-multi-chip-step", notebook="05", unit="ms", points=2, rel_tol=TOL,
         params={"model": ["Llama-3-70B", "Qwen3-32B"], "hardware": GPUS, "n_chips": [2, 4, 8],
                 "comm_ms": {"range": [0.1, 3.0], "step": 0.01}, "context": {"range": [2048, 32768]}},
         prompt="{model}(BF16)을 {hardware} {n_chips}장에 나눠(텐서 병렬) 배치 1, 맥락 {context} 토큰으로 디코드합니다. "
                "칩 사이 통신이 스텝마다 {comm_ms} ms 더해진다고 가정하면 디코드 스텝 하나는 몇 ms인가요?" + DIGITS,
         answer=lambda p: L.estimate_decode_step_ms(get_model(p["model"]), p["hardware"], p["context"],
                                                    n_chips=p["n_chips"], comm_ms=p["comm_ms"]),
         explanation="칩 {n_chips}장이 바이트를 나눠 읽어 메모리 시간이 1/{n_chips}로 줄고, 통신 {comm_ms} ms가 더해져 "
                     "약 {answer} ms입니다."),
]

def _task(task_id: str, solution: str, prompt: str, *, cases: list, reference, explanation: str,
          rel_tol: float = 1e-6) -> dict:
    """One entry of TASKS, worth 3 points, from the lecturer's ``solution`` (a whole function's
    source): its ``def`` line is the student's ``stub`` (over the ``### SOLUTION`` mark), the body
    the ``solution`` that replaces the mark, its name the ``function``; the notebook is the id's
    first two characters."""
    head, body = solution.lstrip("\n").split("\n", 1)
    name = re.fullmatch(r"def (\w+)\(.*\):", head)[1]
    return dict(id=task_id, notebook=task_id[:2], function=name, points=3, rel_tol=rel_tol, prompt=prompt,
                stub=f"{head}\n    ### SOLUTION\n", solution=body, cases=cases, explanation=explanation,
                reference=reference)


TASKS = [
    _task("02-c-step-time", """
def decode_step_ms(weight_gb, kv_gb, bandwidth_tbs):
    return (weight_gb + kv_gb) * 1e9 / (bandwidth_tbs * 1e12) * 1e3
""",
          "메모리 한계 디코드 스텝의 시간을 구하는 함수를 완성하세요: 가중치 `weight_gb` GB와 KV 캐시 `kv_gb` GB를 "
          "메모리 대역폭 `bandwidth_tbs` TB/s로 한 번씩 읽는 시간(ms)을 돌려줍니다.",
          cases=[(70.6, 2.68, 3.35), (16.1, 0.5, 4.8), (140.0, 10.0, 8.0)],
          reference=lambda w, kv, bw: (w + kv) * 1e9 / (bw * 1e12) * 1e3,
          explanation="메모리 한계 스텝은 읽을 바이트 ÷ 대역폭입니다: (가중치 + KV 캐시) GB × 10^9 ÷ (TB/s × 10^12) 초를 ms로 바꿉니다."),
    _task("03-c-loop-total", """
def loop_total_s(depth, tokens, tpot_ms, tool_ms):
    return depth * ((tokens - 1) * tpot_ms + tool_ms) / 1e3
""",
          "에이전트 작업 시간(초)을 구하는 함수를 완성하세요: 호출 `depth`번, 호출마다 출력 `tokens` 토큰(첫 토큰은 프리필이 "
          "내고 프리필 시간은 0), TPOT `tpot_ms` ms, 호출마다 도구 `tool_ms` ms.",
          cases=[(50, 300, 20, 2000), (10, 100, 1, 500), (1, 1, 30, 0)],
          reference=lambda d, n, t, tool: L.agent_loop(d, n, tool, decode_ms_per_token=t,
                                                       prefill_tokens_per_s=math.inf).total_s,
          explanation="호출 하나 = (출력 토큰 − 1) × TPOT + 도구 시간이고, 이것을 호출 수만큼 더합니다(첫 토큰은 프리필이 냅니다)."),
    _task("04-c-tokens-per-call", """
def tokens_per_call(alpha, gamma):
    if alpha == 1:
        return gamma + 1
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)
""",
          "토큰 하나의 수락 확률 `alpha`, 초안 토큰 수 `gamma`일 때 대상 모델 순전파 한 번이 내는 기대 토큰 수를 돌려주는 "
          "함수를 완성하세요 (alpha = 1이면 gamma + 1).",
          cases=[(0.75, 7), (0.5, 3), (1.0, 4), (0.0, 5)],
          reference=lambda a, g: L.expected_tokens_per_call(a, g),
          explanation="기대 토큰 수는 1 + α + α² + … + α^γ = (1 − α^(γ+1)) ÷ (1 − α)이고, α = 1이면 γ + 1입니다."),
    _task("05-c-kv-bytes", """
def kv_bytes_per_token(n_layers, n_kv_heads, d_head, bytes_per_value):
    return 2 * n_layers * n_kv_heads * d_head * bytes_per_value
""",
          "토큰 하나의 KV 캐시 바이트 수를 돌려주는 함수를 완성하세요: 층 수 `n_layers`, KV 헤드 수 `n_kv_heads`, "
          "헤드 차원 `d_head`, 값 하나의 바이트 `bytes_per_value`.",
          cases=[(80, 8, 128, 2), (32, 8, 128, 2), (64, 8, 128, 1)],
          reference=lambda n, h, d, b: 2.0 * n * h * d * b, rel_tol=1e-9,
          explanation="토큰 하나마다 층마다 K와 V를 KV 헤드 수 × 헤드 차원만큼 저장하므로 2 × 층 수 × KV 헤드 수 × 헤드 차원 × 바이트입니다."),
]
