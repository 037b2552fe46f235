"""All proposers side by side on one target, measured in one run (notebook 04, ``decodelab bench speculative``).

:func:`compare_proposers` times target-only greedy decoding and greedy
:func:`decodelab.speculative.speculative_generate` with each proposer (a draft model, prompt
lookup, the EAGLE head as a chain, the head with a tree), prompt by prompt and interleaved, so
that a change of load on the machine hits every method alike; the speedup is taken within each
repetition (target-only ms/token / method ms/token) and the median over repetitions is reported.
Every greedy output is checked token-identical to target-only decoding, in every repetition.

Beside each measured speedup stands Leviathan et al.'s prediction (2023, Thm 3.8;
:func:`decodelab.latency.expected_speedup`) with the measured alpha, c and verification cost.
For a tree the formula is read *per depth*: alpha is then the probability that *some* candidate
at a depth is accepted once the walk reached it (accepted depths / evaluated depths), gamma the
tree's depth, c one head call per depth, and the verification cost that of ``1 + N`` tokens for
a tree of ``N`` nodes. The formula assumes independent depths and a chain's cost model; a tree
spends more target work per pass to raise that per-depth alpha.
"""

from __future__ import annotations

import statistics
import time
from dataclasses import dataclass, field

__all__ = ["MethodRow", "compare_proposers", "default_methods", "first_difference"]


@dataclass
class MethodRow:
    """One method of :func:`compare_proposers`.

    Attributes:
        name: the label. gamma: drafted positions per round (a tree: its depth). nodes: drafted
            tokens per round (a tree: its size; a chain: gamma).
        alpha, mean_acceptance_length, acceptance_rate: pooled over prompts and repetitions
            (:class:`decodelab.speculative_metrics.SpecDecodingStats`).
        c: one draft step (a tree: one depth level) / one target step, measured.
        verify_cost: one verification pass of ``nodes + 1`` tokens / one target step, measured.
        speedups: target-only ms/token / this method's ms/token, one per repetition.
        predicted: ``expected_speedup(alpha, gamma, c, verify_cost=verify_cost)``.
        exact: every greedy output equalled target-only decoding.
        differences: ``(prompt, index of the first differing token)`` of each output of the first
            repetition that differed from target-only decoding (filled with ``strict=False``).
    """

    name: str
    gamma: int
    nodes: int
    alpha: float = float("nan")
    mean_acceptance_length: float = float("nan")
    acceptance_rate: float = float("nan")
    c: float = float("nan")
    verify_cost: float = float("nan")
    speedups: list = field(default_factory=list)
    predicted: float = float("nan")
    exact: bool = True
    differences: list = field(default_factory=list)

    @property
    def speedup(self) -> float:
        """Median of :attr:`speedups` (``nan`` when none)."""
        return statistics.median(self.speedups) if self.speedups else float("nan")

    @property
    def predicted_plain(self) -> float:
        """Leviathan et al.'s formula with a verification costing one target step (the paper's case)."""
        from ..latency import expected_speedup

        return float(expected_speedup(min(self.alpha, 1.0), self.gamma, self.c))


def default_methods(pair, gammas: dict | None = None) -> dict:
    """``{name: (draft, gamma)}``: the draft model, n-gram lookup, the head and the head + tree.

    ``gammas`` overrides the default gammas (draft model 6, n-gram 4, head 6, head + tree 8).
    The two head methods are left out when no head is trained for ``pair.target``
    (:func:`decodelab.eagle.has_head`: the bundled head fits the bundled target only).
    """
    from ..eagle import DEFAULT_TREE, EagleProposer, has_head
    from ..proposers import DraftModelProposer, NGramProposer

    g = {"draft model": 6, "n-gram": 4, "EAGLE head": 6, "EAGLE head + tree": DEFAULT_TREE.depth, **(gammas or {})}
    methods = {
        "draft model": (DraftModelProposer(pair.draft), g["draft model"]),
        "n-gram": (NGramProposer(), g["n-gram"]),
    }
    if has_head(pair.target):
        methods["EAGLE head"] = (EagleProposer(pair.target), g["EAGLE head"])
        methods["EAGLE head + tree"] = (EagleProposer(pair.target, DEFAULT_TREE), g["EAGLE head + tree"])
    return methods


def first_difference(a: list[int], b: list[int]) -> int | None:
    """Index of the first token where ``a`` and ``b`` differ (the shorter length if one is a
    prefix of the other); None when they are equal."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def _nodes(draft, gamma: int) -> int:
    tree = getattr(draft, "tree", None)
    return tree.truncate(gamma).size if tree is not None else gamma


def compare_proposers(target, tokenizer, methods: dict, prompts, max_new_tokens: int, *, reps: int = 3,
                      cost_reps: int = 15, extra: dict | None = None, on_rep=None,
                      strict: bool = True) -> list[MethodRow]:
    """Measure every method in ``methods`` against target-only greedy decoding, interleaved.

    Args:
        target, tokenizer: the target model and its tokenizer.
        methods: ``{name: (draft, gamma)}`` with ``draft`` anything ``speculative_generate``
            accepts (see :func:`default_methods`).
        prompts: prompts; each generation makes ``max_new_tokens`` tokens (EOS ignored).
        reps: repetitions (each one runs every prompt with every method); speedups per repetition.
        cost_reps: repetitions of the step-time measurements for ``c`` and the verification cost.
        extra: ``{name: fn(prompt_ids, n) -> token ids}``, more timed methods (e.g. transformers'
            assisted generation), interleaved with the others; their speedups are reported too.
        on_rep: called after each repetition with the rows so far.
        strict: raise at the first greedy output that differs from target-only decoding (the
            course's fp32 CPU runs); False records it in :attr:`MethodRow.differences` and goes
            on (other numerics, e.g. bf16 on a GPU, where a near tie may break differently).

    Returns:
        One :class:`MethodRow` per method (then one per ``extra`` entry, with only
        ``speedups`` and ``exact`` filled).

    Raises:
        RuntimeError: (``strict``) a greedy speculative output differed from target-only decoding.
    """
    from ..decoding import generate
    from ..models import format_prompt
    from ..latency import expected_speedup
    from ..speculative import speculative_generate
    from ..speculative_experiments import measure_costs
    from ..speculative_metrics import SpecDecodingStats

    rows = {name: MethodRow(name, int(g), _nodes(d, int(g))) for name, (d, g) in methods.items()}
    stats = {name: SpecDecodingStats(int(g)) for name, (d, g) in methods.items()}
    for name, fn in (extra or {}).items():
        rows[name] = MethodRow(name, 0, 0)
    for r in range(reps):
        base = 0.0
        spent = {name: 0.0 for name in rows}
        for p in prompts:
            b = generate(target, tokenizer, p, max_new_tokens, top_candidates=0, stop_at_eos=False)
            base += b.e2e_ms / len(b.token_ids)
            for name, (d, g) in methods.items():
                s = speculative_generate(target, d, tokenizer, p, max_new_tokens, num_speculative_tokens=g,
                                         stop_at_eos=False)
                if s.token_ids != b.token_ids:
                    rows[name].exact = False
                    if strict:
                        raise RuntimeError(f"{name}, prompt={p!r}: 탐욕 투기적 디코딩의 출력이 대상 모델만의 출력과 다릅니다")
                    if r == 0:
                        rows[name].differences.append((p, first_difference(s.token_ids, b.token_ids)))
                spent[name] += s.e2e_ms / len(s.token_ids)
                if r == 0:
                    stats[name].merge(s.stats)
            for name, fn in (extra or {}).items():
                ids = format_prompt(tokenizer, p)
                t0 = time.perf_counter()
                out = fn(ids, max_new_tokens)
                spent[name] += (time.perf_counter() - t0) * 1000.0 / len(out)
                rows[name].exact &= out == b.token_ids
        for name in rows:
            rows[name].speedups.append(base / spent[name])
        if on_rep is not None:
            on_rep(r, list(rows.values()))
    for name, (d, g) in methods.items():
        row, st = rows[name], stats[name]
        row.alpha, row.mean_acceptance_length, row.acceptance_rate = st.alpha, st.mean_acceptance_length, st.acceptance_rate
        costs = measure_costs(target, d, tokenizer, prompts[0], gammas=(row.nodes,), reps=cost_reps)
        row.c, row.verify_cost = costs["c"], costs["verify_cost"][row.nodes]
        row.predicted = float(expected_speedup(min(row.alpha, 1.0), row.gamma, row.c, verify_cost=row.verify_cost))
    return list(rows.values())
