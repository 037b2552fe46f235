"""Draft proposers for speculative decoding: who writes the draft the target model checks.

:func:`decodelab.speculative.speculative_generate` talks to a draft through one small interface,
:class:`Proposer`: ``propose(ids, gamma, cfg, generator) -> Proposal(tokens, q)``. Three
implementations:

* :class:`DraftModelProposer` — a small causal LM (the 초안 모델, draft model) drafts
  autoregressively with its own KV cache. Each drafted token is drawn from ``q`` = the draft's
  next-token distribution under the SAME temperature / top-k / top-p as the target
  (:func:`decodelab.sampling.probabilities`), and ``q`` is returned for the rejection rule.
* :class:`NGramProposer` — model-free n-gram drafting, ``draft="ngram"`` (vLLM's name for it;
  Saxena 2023 calls it "prompt lookup decoding"): find the latest earlier occurrence of the last
  n tokens and propose what followed it. It is deterministic, so ``q`` is one-hot at each proposed token
  (``Proposal.q is None``); the rejection rule stays exact with a one-hot ``q``.
* anything else that subclasses :class:`Proposer` (an abstract base class: ``propose`` is
  required, ``reset`` and ``sync`` have no-op defaults).

:func:`decodelab.speculative.as_proposer` is the one place that turns a ``draft`` argument (a
model, a proposer or a name) into a proposer; the loop's module owns it, so EAGLE (a proposer
built on this one) is imported downward from there.

Llama drafts run through :class:`decodelab.lean_llama.LlamaRunner` (``backend="lean"``), a lean
re-implementation of the Llama forward pass that makes a draft step cheap enough to pay; other
architectures through ``transformers``. The draft's forward pass only changes speed, never the
output distribution.

A proposer may also return a *tree* of drafts (``Proposal.tree``; EAGLE always does, its chain
being a tree with one child per node): the proposal then carries the tree, its node tokens and
the drafter's distributions, and :meth:`Proposer.verify_round` verifies it in one target pass
with tree attention (:func:`decodelab.tree.verify_tree`); everything the verification needs is
in its arguments.

Vocabularies: a draft may have more or fewer output rows than the target (real pairs that share
one tokenizer are often padded differently, e.g. Qwen2.5-0.5B 151,936 rows vs Qwen2.5-7B 152,064).
:class:`DraftModelProposer` drafts from its first ``vocab_size`` rows only (``decodelab.speculative.as_proposer`` passes
the smaller of the two sizes), so it never proposes an id the target cannot read, and ``q`` has
that many columns; the verification pads it with zeros to the target's width.
"""

from __future__ import annotations

import abc
import time
from dataclasses import dataclass, field, replace

import torch

from ._check import check, fail
from .decoding import DecodeState, cache_length, crop_cache, forward, new_cache, prefill
from .lean_llama import LlamaRunner
from .models import output_rows
from .rejection import verify_logits
from .sampling import SamplingConfig, probabilities
from .tree import DraftTree, TreeVerification, verify_tree

__all__ = [
    "DraftModelProposer",
    "NGramProposer",
    "Proposal",
    "Proposer",
    "Verification",
    "common_prefix_length",
    "verify_tree_round",
]


@dataclass
class Proposal:
    """What a proposer returns for one round: a chain of drafted tokens, or a tree of them.

    Attributes:
        tokens: the drafted token ids, ``0 <= len(tokens) <= gamma`` (a proposer may propose
            fewer, e.g. ``NGramProposer`` when nothing matches; 0 tokens = a plain target step).
            For a tree: its best-ranked chain (:meth:`decodelab.tree.DraftTree.best_path`).
        q: float tensor ``(len(tokens), vocab)``: row i is the distribution ``tokens[i]`` was
            drawn from, or ``None`` for a deterministic proposer (one-hot at ``tokens[i]``). For
            greedy decoding (temperature 0) model drafts also return ``None``; a tree keeps its
            distributions in ``node_q`` instead.
        tree: ``None`` for a chain; for a tree draft its shape (:class:`decodelab.tree.DraftTree`,
            at most ``gamma`` levels deep).
        node_tokens: a tree's node tokens, ``len == tree.size + 1``: ``node_tokens[i]`` is node
            ``i``'s token (index 0, the root, is ``None``; ``None`` elsewhere = a node the drafter
            did not fill, never accepted).
        node_q: a sampled tree's draft probabilities: ``{node: (vocab,) float tensor}``, the
            distribution node ``node``'s children were drawn from without replacement (warped as
            the target's ``p``; see :func:`decodelab.tree.walk_sampling`); empty for greedy.

    Raises:
        ValueError: ``tree`` without ``node_tokens`` of length ``tree.size + 1``.
    """

    tokens: list[int]
    q: torch.Tensor | None = None
    tree: DraftTree | None = None
    node_tokens: list[int | None] | None = None
    node_q: dict[int, torch.Tensor] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.tree is None:
            return
        if self.node_tokens is None or len(self.node_tokens) != self.tree.size + 1:
            raise fail("node_tokens", None if self.node_tokens is None else len(self.node_tokens),
                       "트리 초안에는 노드마다 토큰이 하나씩 있어야 합니다 (뿌리 자리는 None)",
                       f"길이 {self.tree.size + 1}(tree.size + 1)의 목록")

    @property
    def depth(self) -> int:
        """Draft positions the proposal spans: the tree's depth, or ``len(tokens)`` for a chain."""
        return len(self.tokens) if self.tree is None else self.tree.depth

    def truncate(self, depth: int) -> "Proposal":
        """The same proposal cut to at most ``depth`` draft positions (itself if it fits): a
        chain keeps its first ``depth`` tokens and rows of ``q``; a tree drops its nodes deeper
        than ``depth`` (nodes are numbered by depth first, so the kept ones keep their numbers)."""
        if self.depth <= depth:
            return self
        if self.tree is None:
            return replace(self, tokens=self.tokens[:depth], q=None if self.q is None else self.q[:depth])
        if depth < 1:
            return Proposal([])
        tree = self.tree.truncate(depth)
        return Proposal(self.tokens[:depth], None, tree, self.node_tokens[: tree.size + 1],
                        {node: q for node, q in self.node_q.items() if node <= tree.size})


@dataclass(frozen=True, kw_only=True)
class Verification:
    """The outcome of one round's verification (:meth:`Proposer.verify_round`).

    Attributes:
        drafted: the drafted tokens of this round as a display shows them (a chain: all of them;
            a tree: the accepted path and the best-ranked continuation below it).
        accepted: how many of them the target accepted (a prefix of ``drafted``).
        token: the target's own token after them: recovered (a rejection) or bonus (all accepted).
        forward_s: wall time of the target's verification forward pass, seconds (the chain path:
            the pass alone; a tree: the pass and the walk, which reads the LM head lazily).
    """

    drafted: list[int]
    accepted: int
    token: int
    forward_s: float


class Proposer(abc.ABC):
    """The draft side of speculative decoding (an abstract base class). Subclass it and implement
    :meth:`propose`; :meth:`reset` and :meth:`sync` are no-op hooks by default (as transformers'
    ``CandidateGenerator.update_candidate_strategy``).

    The target's two passes are methods too, so the loop in
    :func:`decodelab.speculative.speculative_generate` has one path for every proposer:
    :meth:`prefill_target` (the target's prefill) and :meth:`verify_round` (one target pass over
    the newest token and the draft, then the rejection rule of :mod:`decodelab.rejection`, or a
    tree's walk, :mod:`decodelab.tree`). A proposer that reads the target's hidden states (EAGLE,
    :mod:`decodelab.eagle`) declares it with ``reads_target = True`` and overrides both, the way
    transformers' candidate generators declare what they need with class attributes.

    Attributes:
        forward_calls: number of model forward passes made so far (0 by default: model-free).
        vocab_size: size of the distributions in ``Proposal.q`` (``None`` if it never returns q).
        reads_target: ``True`` when the proposer runs the target's passes itself (its overrides of
            :meth:`prefill_target` and :meth:`verify_round` keep the target's hidden states).
    """

    forward_calls: int = 0
    vocab_size: int | None = None
    reads_target: bool = False

    @abc.abstractmethod
    def propose(self, ids: list[int], gamma: int, cfg: SamplingConfig,
                generator: torch.Generator | None = None) -> Proposal:
        """Draft up to ``gamma`` tokens that follow ``ids`` (prompt + tokens accepted so far)."""

    def reset(self) -> None:
        """Forget all state (KV cache, history) before a new generation. Default: nothing."""

    def sync(self, ids: list[int]) -> None:
        """Called after every verification with the accepted text ``ids``, so that a proposer
        with a cache can drop rejected positions at once. Default: nothing."""

    def prefill_target(self, target, input_ids: torch.Tensor) -> DecodeState:
        """The target's prefill over ``input_ids`` (LongTensor ``(1, S)``): a
        :class:`~decodelab.decoding.DecodeState` whose logits give the first token.
        Default: :func:`decodelab.decoding.prefill`, exactly as plain decoding."""
        return prefill(target, input_ids)

    def verify_round(self, target, cache, ids: list[int], proposal: Proposal, cfg: SamplingConfig,
                     generator: torch.Generator | None = None) -> Verification:
        """Verify ``proposal`` in ONE target forward pass and apply the rejection rule.

        Depends only on its arguments: a tree proposal carries its tree, node tokens and draft
        probabilities.

        Args:
            target: the target model; ``cache``: its KV cache holding ``len(ids) - 1`` positions
                (every token but the newest, ``ids[-1]``), extended in place by ``1 + len(drafts)``
                (a tree: left with ``len(ids) + accepted``).
            ids: prompt + tokens so far; ``proposal``: this round's draft (may be empty: a plain
                target step); ``cfg``, ``generator``: the sampling settings and draws.

        Returns:
            :class:`Verification`. The caller crops the cache to the accepted text. A chain: a
            forward pass over ``[ids[-1]] + drafts`` keeping ``len(drafts) + 1`` logits, then
            :func:`decodelab.rejection.verify_logits`. A tree (``proposal.tree``): a
            Llama-style target reads every node at once, :func:`verify_tree_round`.
        """
        if proposal.tree is not None:
            return verify_tree_round(target, cache, ids, proposal, cfg, generator)[0]
        drafted = proposal.tokens
        t0 = time.perf_counter()
        logits = forward(target, torch.tensor([[ids[-1]] + drafted]), cache, logits_to_keep=len(drafted) + 1)[0]
        forward_s = time.perf_counter() - t0
        accepted, token = verify_logits(logits, drafted, cfg, proposal.q, generator)
        return Verification(drafted=drafted, accepted=accepted, token=token, forward_s=forward_s)


def verify_tree_round(target, cache, ids: list[int], proposal: Proposal, cfg: SamplingConfig,
                      generator: torch.Generator | None = None) -> tuple[Verification, TreeVerification]:
    """Verify a tree proposal (``proposal.tree`` not ``None``) with :func:`decodelab.tree.verify_tree`.

    Returns ``(verification, tree_verification)``: the round's :class:`Verification`, whose
    ``drafted`` is the accepted path followed by the tree's best-ranked continuation below it
    (what a display shows as "drafted"), and the walk's own
    :class:`~decodelab.tree.TreeVerification` (its ``hidden`` states are what EAGLE keeps). The
    target's cache is left with ``len(ids) + accepted`` positions (context, root, accepted path).
    """
    tree, node_tokens = proposal.tree, proposal.node_tokens
    t0 = time.perf_counter()
    walk = verify_tree(target, cache, ids, tree, node_tokens, cfg, proposal.node_q, generator)
    forward_s = time.perf_counter() - t0
    last = walk.path[-1] if walk.path else 0
    shown = walk.tokens + [int(node_tokens[node]) for node in tree.best_path(node_tokens, below=last)]
    return Verification(drafted=shown, accepted=len(walk.path), token=walk.token, forward_s=forward_s), walk


def common_prefix_length(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists (binary search on C-level slices)."""
    n = min(len(a), len(b))
    if a[:n] == b[:n]:
        return n
    lo, hi = 0, n  # a[:lo] == b[:lo], a[:hi] != b[:hi]
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid
    return lo


# --------------------------------------------------------------------------------------------
# proposers


class DraftModelProposer(Proposer):
    """A draft model proposing tokens autoregressively, with its own KV cache.

    Cache bookkeeping: the proposer remembers the tokens whose keys/values are in its cache
    (``self.history``). After each verification :meth:`sync` crops the cache to the longest
    prefix it shares with the accepted text (rejected drafts go). :meth:`propose` then feeds the
    rest of ``ids`` (the first call: the whole prompt, i.e. the draft's prefill; later: 1 token, or
    2 when the previous round accepted every draft, like transformers' ``new_len - 2`` crop) and
    drafts ``gamma`` tokens: ``gamma`` forward passes in all. Right after drafting its cache
    holds ``len(ids) + gamma - 1`` positions.

    Args:
        model: a ``transformers`` causal LM sharing the target's tokenizer (any architecture).
        backend: ``"auto"`` (the lean :class:`~decodelab.lean_llama.LlamaRunner` when the
            architecture allows, else ``transformers``), ``"lean"`` or ``"transformers"``. Both
            give the same tokens.
        vocab_size: draft from the first ``vocab_size`` output rows only (default: all rows);
            :func:`decodelab.speculative.as_proposer` passes ``min(draft rows, target rows)``.

    Raises:
        ValueError: unknown ``backend``, or ``"lean"`` for an unsupported architecture.
    """

    def __init__(self, model, *, backend: str = "auto", vocab_size: int | None = None):
        if backend not in ("auto", "lean", "transformers"):
            raise fail("backend", backend, "초안 모델을 돌릴 방식을 고르세요", "'auto', 'lean', 'transformers'")
        if backend == "auto":
            backend = "lean" if LlamaRunner.supports(model) else "transformers"
        self.model = model
        rows = output_rows(model)
        self.vocab_size = rows if vocab_size is None else min(rows, int(vocab_size))
        self.forward_calls = 0
        self._runner = LlamaRunner(model, vocab_size=self.vocab_size) if backend == "lean" else None
        self._device = next(model.parameters()).device
        self._n_embed = int(model.get_input_embeddings().weight.shape[0])
        self.reset()

    @property
    def backend(self) -> str:
        """``"lean"`` (:class:`~decodelab.lean_llama.LlamaRunner`) or ``"transformers"``."""
        return "transformers" if self._runner is None else "lean"

    def reset(self) -> None:
        """Forget the draft's KV cache and its token history before a new generation (the next
        :meth:`propose` prefills the whole prompt). :func:`speculative_generate` calls it."""
        self.history: list[int] = []
        self._hf_cache = None
        if self._runner is not None:
            self._runner.crop(0)

    # one forward pass over new tokens -> logits of the last position, shape (vocab_size,)
    def _step(self, new: list[int]) -> torch.Tensor:
        self.forward_calls += 1
        self.history.extend(new)
        if max(new) >= self._n_embed:  # a token from the target's padded rows: the draft has no
            new = [t if t < self._n_embed else 0 for t in new]  # embedding for it; any input keeps q valid
        if self._runner is not None:
            return self._runner.forward(new)[0]
        return forward(self.model, torch.tensor([new], device=self._device), self._hf_cache)[0, -1, : self.vocab_size]

    def _crop(self, n: int) -> None:
        del self.history[n:]
        if self._runner is not None:
            self._runner.crop(n)
        else:
            crop_cache(self._hf_cache, n)

    def sync(self, ids: list[int]) -> None:
        """Crop the cache to the longest prefix it shares with ``ids`` (the accepted text): called
        after every verification, so the draft's cache never keeps a rejected token."""
        n = common_prefix_length(self.history, ids)
        if n < len(self.history):
            self._crop(n)

    def cache_length(self) -> int:
        """Positions currently in the draft's KV cache (== ``len(self.history)``)."""
        return self._runner.length if self._runner is not None else cache_length(self._hf_cache)

    def propose(self, ids: list[int], gamma: int, cfg: SamplingConfig,
                generator: torch.Generator | None = None) -> Proposal:
        """Draft ``gamma`` tokens after ``ids`` (``gamma`` forward passes).

        Greedy (``cfg.greedy``): each token is the draft's argmax, ``q`` is ``None``. Otherwise
        each token is drawn from ``q_i = probabilities(draft_logits_i, cfg)`` and ``q`` is the
        ``(gamma, vocab_size)`` stack of those rows, the very tensors that were sampled from.
        """
        if self._runner is None and self._hf_cache is None:
            self._hf_cache = new_cache(self.model)
        keep = common_prefix_length(self.history, ids)
        if keep == len(ids):  # everything is cached already: re-feed the last token
            keep -= 1
        self._crop(keep)
        logits = self._step(ids[keep:])
        tokens: list[int] = []
        if cfg.greedy:
            for i in range(gamma):
                tok = int(logits.argmax())
                tokens.append(tok)
                if i + 1 < gamma:
                    logits = self._step([tok])
            return Proposal(tokens, None)
        rows = []
        for i in range(gamma):
            q = probabilities(logits, cfg)
            tok = int(torch.multinomial(q, 1, generator=generator))
            rows.append(q)
            tokens.append(tok)
            if i + 1 < gamma:
                logits = self._step([tok])
        return Proposal(tokens, torch.stack(rows))


class NGramProposer(Proposer):
    """Prompt lookup / n-gram drafting: no model, no forward passes (c ~ 0).

    Looks for the most recent earlier occurrence of the last ``n`` tokens of ``ids`` (trying
    ``n = max_n`` down to ``min_n``) and proposes the up to ``gamma`` tokens that followed it
    (vLLM ``method="ngram"`` with ``prompt_lookup_min/max``; Saxena 2023, "prompt lookup
    decoding"). Deterministic: the
    returned ``q`` is ``None`` (one-hot). Acceptance depends entirely on repetition in the text.

    Raises:
        TypeError: ``min_n`` or ``max_n`` not a number.
        ValueError: ``min_n`` not a whole number >= 1, or ``max_n`` not one >= ``min_n``.
    """

    def __init__(self, min_n: int = 1, max_n: int = 3, vocab_size: int | None = None):
        self.min_n = check("min_n", min_n, "가장 짧은 n-gram 길이", low=1, integer=True)
        self.max_n = check("max_n", max_n, "가장 긴 n-gram 길이", low=self.min_n, integer=True, hint="min_n 이상")
        self.vocab_size = vocab_size
        self.forward_calls = 0

    def propose(self, ids: list[int], gamma: int, cfg: SamplingConfig | None = None,
                generator: torch.Generator | None = None) -> Proposal:
        """Propose the tokens that followed the latest earlier occurrence of the last n tokens.

        Args:
            ids: prompt + tokens accepted so far (token ids, length L).
            gamma: the most tokens to propose (int >= 0).
            cfg, generator: ignored (the proposal is deterministic); accepted for the interface.

        Returns:
            :class:`Proposal` with ``tokens`` = ``ids[start + n : start + n + gamma]`` for the
            longest ``n`` in ``max_n..min_n`` (and ``n <= L - 1``) whose last-n-token tail occurs
            earlier at ``start`` with at least one token after it, the latest such ``start``;
            0 to ``gamma`` tokens, fewer when the match is near the end, ``[]`` when nothing
            repeats (then :func:`speculative_generate` does a plain target step). ``q`` is
            ``None`` (one-hot).
        """
        L = len(ids)
        for n in range(min(self.max_n, L - 1), self.min_n - 1, -1):
            tail = ids[L - n:]
            for start in range(L - n - 1, -1, -1):  # latest earlier occurrence first
                if ids[start:start + n] == tail:
                    follow = ids[start + n: start + n + gamma]
                    if follow:
                        return Proposal(list(follow), None)
        return Proposal([], None)
