"""The counters of speculative decoding, with vLLM's names: one accumulator, fed once per round.

:class:`SpecDecodingStats` follows ``vllm/v1/spec_decode/metrics.py`` (``SpecDecodingStats`` and
its ``observe_draft``): :func:`decodelab.speculative.speculative_generate` feeds it once per
drafting round, and it gives vLLM's ``acceptance_rate`` and ``mean_acceptance_length`` and
Leviathan et al.'s (arXiv 2211.17192) per-token acceptance probability ``alpha``;
:meth:`SpecDecodingStats.merge` pools several (as vLLM sums its counters), e.g. over the prompts of
:func:`decodelab.speculative_experiments.speedup_sweep`. No torch: plain counts.
"""

from __future__ import annotations

from dataclasses import dataclass, field

__all__ = ["SpecDecodingStats"]


@dataclass
class SpecDecodingStats:
    """Counters of speculative decoding, with vLLM's names (``vllm/v1/spec_decode/metrics.py``,
    ``SpecDecodingStats.observe_draft``), plus what Leviathan et al.'s ``alpha`` needs.

    One instance is fed once per drafting round by :meth:`observe_draft`
    (:func:`decodelab.speculative.speculative_generate`); :meth:`merge` pools several
    (:func:`decodelab.speculative_experiments.speedup_sweep`).

    Attributes:
        num_spec_tokens: gamma (length of the per-position lists).
        num_drafts: drafting rounds (vLLM ``spec_decode_num_drafts``).
        num_draft_tokens: drafted tokens (``spec_decode_num_draft_tokens``).
        num_accepted_tokens: accepted drafted tokens (``spec_decode_num_accepted_tokens``).
        num_accepted_tokens_per_pos: accepted count at draft position 0..gamma-1
            (``spec_decode_num_accepted_tokens_per_pos``).
        num_drafts_per_pos: drafts that reached position i (a round drafting fewer than gamma
            tokens, e.g. the last one, does not reach the later positions).
        num_evaluated_tokens: draft positions the verification actually decided: a round whose
            first rejection is at 0-based position k evaluated k + 1 positions; a round with no
            rejection evaluated all of its accepted drafts.
    """

    num_spec_tokens: int
    num_drafts: int = 0
    num_draft_tokens: int = 0
    num_accepted_tokens: int = 0
    num_accepted_tokens_per_pos: list[int] = field(default_factory=list)
    num_drafts_per_pos: list[int] = field(default_factory=list)
    num_evaluated_tokens: int = 0

    def __post_init__(self) -> None:
        for pos in (self.num_accepted_tokens_per_pos, self.num_drafts_per_pos):
            pos.extend([0] * (self.num_spec_tokens - len(pos)))

    def observe_draft(self, num_draft_tokens: int, num_accepted_tokens: int, rejected: bool | None = None) -> None:
        """Count one drafting round: ``num_draft_tokens`` drafted, the first
        ``num_accepted_tokens`` accepted. ``rejected`` says whether the round ended with a
        rejection (default: ``num_accepted_tokens < num_draft_tokens``; an accepted EOS ends a
        round early without one)."""
        if rejected is None:
            rejected = num_accepted_tokens < num_draft_tokens
        self.num_drafts += 1
        self.num_draft_tokens += num_draft_tokens
        self.num_accepted_tokens += num_accepted_tokens
        self.num_evaluated_tokens += num_accepted_tokens + int(rejected)
        for i in range(num_draft_tokens):
            self.num_drafts_per_pos[i] += 1
        for i in range(num_accepted_tokens):
            self.num_accepted_tokens_per_pos[i] += 1

    def merge(self, other: "SpecDecodingStats") -> "SpecDecodingStats":
        """Add ``other``'s counts to these (pooling, as vLLM sums its counters); returns self."""
        if other.num_spec_tokens > self.num_spec_tokens:
            self.num_spec_tokens = other.num_spec_tokens
            self.__post_init__()
        self.num_drafts += other.num_drafts
        self.num_draft_tokens += other.num_draft_tokens
        self.num_accepted_tokens += other.num_accepted_tokens
        self.num_evaluated_tokens += other.num_evaluated_tokens
        for i, (a, n) in enumerate(zip(other.num_accepted_tokens_per_pos, other.num_drafts_per_pos)):
            self.num_accepted_tokens_per_pos[i] += a
            self.num_drafts_per_pos[i] += n
        return self

    @property
    def acceptance_rate(self) -> float:
        """Accepted / drafted tokens (vLLM: ``num_accepted_tokens / num_draft_tokens``); 0 if none.
        Lower than ``alpha`` by construction: drafts after a rejection count as not accepted."""
        return self.num_accepted_tokens / self.num_draft_tokens if self.num_draft_tokens else 0.0

    @property
    def mean_acceptance_length(self) -> float:
        """1 + accepted / drafts (vLLM's mean acceptance length): tokens per drafting round."""
        return 1.0 + self.num_accepted_tokens / self.num_drafts if self.num_drafts else 1.0

    @property
    def alpha(self) -> float:
        """Leviathan et al.'s per-token acceptance probability, estimated as accepted draft
        positions / draft positions actually evaluated (``num_evaluated_tokens``; the maximum-
        likelihood estimate when each position is accepted independently with probability
        alpha). The alpha of ``expected_tokens_per_call(alpha, gamma)``; 0 if nothing drafted."""
        return self.num_accepted_tokens / self.num_evaluated_tokens if self.num_evaluated_tokens else 0.0

    @property
    def per_position_acceptance_rate(self) -> list[float]:
        """Accepted fraction at each draft position (vLLM divides per-position accepted counts
        by ``num_drafts``; here the denominator is the drafts that reached that position, which
        is the same when every round drafts ``gamma`` tokens)."""
        return [a / n if n else 0.0 for a, n in zip(self.num_accepted_tokens_per_pos, self.num_drafts_per_pos)]
