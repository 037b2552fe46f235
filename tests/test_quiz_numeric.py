"""Numeric quiz items: each key is computed with decodelab's own functions, and no item re-asks a
worked example of the notebooks with the same numbers."""

from __future__ import annotations

import math
import re
from pathlib import Path

import pytest
import torch

import decodelab.latency as lat
from decodelab.profiles import get_hardware, get_link, get_model
from decodelab.decoding import tpot
from decodelab.assess.quiz import load_quizzes
from decodelab.sampling import SamplingConfig, probabilities
from decodelab.serving import SpecDecodeStats
from decodelab.rejection import acceptance_probabilities, residual_distribution

NUMERIC = {q.id: q for q in load_quizzes() if q.kind == "numeric"}
NOTEBOOKS = Path(__file__).resolve().parents[1] / "notebooks" / "src"
DIST = torch.tensor([0.4, 0.25, 0.2, 0.1, 0.05]).log()
LLAMA8 = get_model("Llama-3-8B", "bf16")


def _agent(tpot_ms, tool_ms=1200.0, calls=30, tokens=240):
    return lat.agent_loop(calls, tokens, tool_ms, decode_ms_per_token=tpot_ms, prefill_tokens_per_s=math.inf).totals


KEYS = {
    "01-topk-prob": lambda: probabilities(DIST, SamplingConfig(temperature=1.0, top_k=3))[2].item(),
    "01-topp-count": lambda: int((probabilities(DIST, SamplingConfig(temperature=1.0, top_p=0.7)) > 0).sum()),
    # without a cache every step re-reads the whole sequence: 12 + 13 + 14 + 15
    "01-kv-off-positions": lambda: float(sum(range(12, 12 + 4))),
    "02-decode-step-time": lambda: lat.estimate_decode_step_ms(LLAMA8, "H200", 4096),
    "02-decode-tokens-per-s": lambda: 1000.0 / 16.0,
    "02-ridge-point": lambda: lat.ridge_point("Trainium2", "fp8"),
    "02-batch-ridge": lambda: lat.ridge_point("B200", "fp8") / lat.weight_matmul_intensity(1, 1.0),
    "02-tpot-calc": lambda: tpot(1500.0, 300.0, 25),
    "02-e2e-calc": lambda: 180.0 + (36 - 1) * 14.0,
    "02-kv-bytes-per-token": lambda: lat.kv_bytes_per_token(get_model("Qwen3-32B")) / 1e6,
    "02-kv-bytes-context": lambda: lat.kv_bytes_per_token(LLAMA8) * 16384 / 1e9,
    "02-prefill-time": lambda: lat.estimate_prefill_ms(LLAMA8, "H200", 4096),
    "03-added-latency": lambda: 30 * 240 * 6 / 1000,
    "03-loop-total-slow": lambda: 30 * (240 / 20 + 1.2),
    "03-loop-total-fast": lambda: 30 * (240 / 400 + 1.2),
    "03-amdahl-floor": lambda: _agent(0.0)["total"] / 1000,
    "04-accept-prob": lambda: acceptance_probabilities(torch.tensor([[0.12, 0.88]]), torch.tensor([[0.4, 0.6]]),
                                                       torch.tensor([0]))[0].item(),
    "04-residual": lambda: residual_distribution(torch.tensor([0.45, 0.3, 0.25]),
                                                 torch.tensor([0.2, 0.25, 0.55]))[0].item(),
    "04-bonus-tokens": lambda: lat.expected_tokens_per_call(1.0, 6),
    "04-acceptance-rate": lambda: SpecDecodeStats(250, 1000, 620, []).acceptance_rate,
    "04-mean-acceptance-length": lambda: SpecDecodeStats(250, 1000, 620, []).mean_acceptance_length,
    "04-expected-tokens": lambda: lat.expected_tokens_per_call(0.7, 5),
    "04-speedup": lambda: lat.expected_speedup(0.7, 5, 0.1),
    "04-leviathan-predict": lambda: lat.expected_speedup(0.85, 3, 0.6),
    "05-sram-read-time": lambda: 300e6 / get_hardware("Groq3-LPU").bandwidth * 1e6,
    "05-lpx-sram-total": lambda: lat.chips_needed(get_model("Qwen3-32B", "fp8"), "Groq3-LPU"),
    "05-kv-transfer-nvlink": lambda: 1.2e9 / get_link("NVLink").bandwidth * 1e3 + get_link("NVLink").latency_ms,
    "05-kv-transfer-nic": lambda: 1.2e9 / get_link("400G-NIC").bandwidth * 1e3 + get_link("400G-NIC").latency_ms,
    # developer eagle's draft-tree item: a node's position = the root's position + its depth
    "04-tree-positions": lambda: 7 + __import__("decodelab.tree", fromlist=["DraftTree"]).DraftTree.chain(3).depths[-1],
    "07-acceptance-rate-metrics": lambda: SpecDecodeStats(160, 640, 432, []).acceptance_rate,
    "07-mean-acceptance-length-metrics": lambda: SpecDecodeStats(160, 640, 432, []).mean_acceptance_length,
}


def test_every_numeric_item_has_a_computed_key():
    assert set(NUMERIC) - set(KEYS) == set(), "수치 문항마다 decodelab 함수로 정답을 계산하는 줄을 KEYS에 더하세요"
    assert len(set(KEYS) & set(NUMERIC)) >= 30


@pytest.mark.parametrize("qid", sorted(NUMERIC))
def test_key_matches_decodelab(qid):
    q = NUMERIC[qid]
    want = float(KEYS[qid]())
    assert abs(q.answer - want) <= max(1e-4 * abs(want), 1e-6), (q.answer, want)
    assert q.tolerance < 0.05 * abs(want) or q.tolerance == 0 or abs(want) < 1, "허용 오차가 너무 큽니다"


def test_agent_loop_counts_agree_within_the_tolerance():
    """The hand count (every output token one decode step) and agent_loop's (the first token comes
    from the prefill) both fall inside the items' tolerance."""
    slow, fast = NUMERIC["03-loop-total-slow"], NUMERIC["03-loop-total-fast"]
    assert abs(_agent(50.0)["total"] / 1000 - slow.answer) <= slow.tolerance
    assert abs(_agent(2.5)["total"] / 1000 - fast.answer) <= fast.tolerance
    added = NUMERIC["03-added-latency"]
    assert abs((_agent(56.0, 0)["total"] - _agent(50.0, 0)["total"]) / 1000 - added.answer) <= added.tolerance


# ------------------------------------------------------------------------------------------------
# Not the worked examples of the notebooks
# ------------------------------------------------------------------------------------------------

_NUMBER = re.compile(r"(?<![\w.-])\d[\d,]*(?:\.\d+)?(?![\d.]*[A-Za-z])")
"""A number in a text; not the digits of a name ("Llama-3-8B", "Qwen3-32B", "H200")."""


def _numbers(text: str) -> set[str]:
    out = set()
    for m in _NUMBER.finditer(text):
        v = m.group().replace(",", "")
        out.add(f"{float(v):g}")
    return out


def _cells(text: str) -> list[str]:
    """A MyST notebook split into its cells (markdown blocks and code cells)."""
    return [c for c in re.split(r"^\+\+\+.*$|^```\{code-cell\}.*$", text, flags=re.M) if c.strip()]


CELLS = [(p.name, c) for p in sorted(NOTEBOOKS.glob("*.md")) for c in _cells(p.read_text(encoding="utf-8"))]


def _telling(numbers: set[str]) -> set[str]:
    """The numbers that identify an example: not small counts (below 20), not years, not the powers
    of two that every model size and sequence length is made of (32, 64, 128, ...)."""
    out = set()
    for n in numbers:
        v = float(n)
        if v.is_integer() and (v < 20 or 1900 <= v <= 2100 or (v <= 1024 and int(v) & (int(v) - 1) == 0)):
            continue
        out.add(n)
    return out


def _worked_example(q) -> str | None:
    """The notebook cell that holds every telling number of ``q``'s prompt (at least two), if any."""
    mine = _telling(_numbers(q.prompt))
    if len(mine) < 2:
        return None
    return next((name for name, cell in CELLS if mine <= _numbers(cell)), None)


def test_numeric_items_are_not_the_worked_examples():
    found = {qid: _worked_example(q) for qid, q in NUMERIC.items()}
    assert {k: v for k, v in found.items() if v} == {}


def test_the_worked_example_check_can_fail():
    from decodelab.assess.quiz.schema import NumericQuestion

    old = NumericQuestion(id="03-t", kind="numeric", prompt="호출 50번, 호출마다 300토큰, 토큰당 10 ms가 늘면 몇 초?",
                          answer=150, tolerance=0.5, unit="s", explanation="테스트입니다.",
                          source={"notebook": "03", "passage": "tt"})
    assert _worked_example(old) is not None
