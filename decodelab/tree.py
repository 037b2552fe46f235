"""Draft trees: several candidates per position, verified by the target in ONE forward pass.

A chain draft (``speculative.py``) proposes one token per position; when the draft's first
choice is wrong at position i, everything after it is lost. A *draft tree* keeps the draft's
top-k candidates at a position and continues drafting below each of them, so the target can
accept the second choice where the first was wrong (SpecInfer, Miao et al. 2024, arXiv 2305.09781;
Medusa, Cai et al. 2024; EAGLE, Li et al. 2024, arXiv 2401.15077, Sec. 4.1 "tree attention").

**Static tree** (:class:`DraftTree`): the shape is fixed in advance as a list of *paths of ranks*
(the convention of Medusa's and EAGLE's ``choices``): ``(0,)`` is the drafter's best candidate at
depth 1, ``(0, 1)`` the second-best candidate below it, ``(1, 0)`` the best candidate below the
second-best depth-1 candidate, ... Node 0 is the *root*: the newest accepted token, which the
target has not read yet. Nodes are numbered in breadth-first order (by depth, then by path).

**One verification pass**: the target reads ``[root] + nodes`` (``1 + N`` tokens) in one forward
pass with

* a *tree attention mask* (:meth:`DraftTree.mask`): a node sees every cached position, the root,
  its own ancestors and itself, never a sibling or a cousin: each path of the tree is then
  computed exactly as if it had been fed alone;
* *position ids* ``start + depth`` (:meth:`DraftTree.position_ids`): siblings share a position,
  so RoPE rotates each node as it would be rotated on its own path.

The target's KV cache then holds every node; :func:`select_cache` keeps the accepted path only
(the keys/values of a node on the path are exactly those of that token at that position, since
the node saw exactly its path), and the caller crops as for a chain.

**Acceptance** walks down from the root and accepts the longest accepted path:

* greedy (:func:`walk_greedy`): at a node, the target's argmax; if a child carries that token
  (siblings are distinct), accept it and go on; else emit the argmax and stop. Every emitted
  token is the target's argmax after its prefix, so the output is token-identical to plain
  greedy decoding of the target.
* sampling (:func:`walk_sampling`): **recursive rejection sampling without replacement over the
  siblings** (Jeon et al. 2024, "Recursive Speculative Decoding", arXiv 2402.14160; Sequoia, Chen et
  al. 2024, arXiv 2402.12374; SpecInfer's multi-round speculative sampling draws the siblings
  independently, with replacement, and keeps ``q`` unchanged): the children of a node were drawn
  *without replacement* from the drafter's distribution ``q`` at that node (in rank order,
  :func:`sample_children`). For each child ``x_j`` in turn: accept with probability
  ``min(1, p(x_j) / q(x_j))``; on a rejection set ``p <- norm(max(0, p - q))`` and remove ``x_j``
  from ``q`` (``q(x_j) <- 0``, renormalised) before trying the next sibling. If every child is
  rejected, draw the recovered token from the last ``p``; at a leaf draw the bonus token from
  ``p``. Exact: given the rejected ``x_1`` (which has ``p(x_1) < q(x_1)``, so the new ``p`` gives
  it 0), the next sibling is an ordinary one-draft rejection step against the residual with the
  proposal ``q`` minus ``x_1``, and one-draft rejection sampling is exact for any proposal
  (Leviathan et al. 2023, App. A.1); by induction the emitted token has distribution ``p``
  (tested by enumerating every outcome on a toy vocabulary, :func:`walk_sampling` with a
  recording ``draws``). With one child per node it is exactly Leviathan et al.'s chain rule.

Random draws go through a small interface (:class:`TorchDraws`: ``bernoulli(prob)`` and
``categorical(probs)``) so that tests can enumerate every branch of the very same code.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

import torch

from ._check import fail
from .rejection import residual_distribution, same_width
from .sampling import SamplingConfig, probabilities

__all__ = [
    "DraftTree",
    "TorchDraws",
    "TreeVerification",
    "sample_children",
    "select_cache",
    "tree_figure",
    "verify_tree",
    "walk_greedy",
    "walk_sampling",
]


class DraftTree:
    """A static draft tree given by its paths of candidate ranks.

    Args:
        paths: tuples of ranks, e.g. ``[(0,), (1,), (0, 0), (0, 1), (1, 0), (0, 0, 0)]``. Every
            prefix of a path must be a path too, and the ranks of a node's children must be
            ``0..k-1`` (its top-k candidates).

    Attributes:
        paths: the paths in breadth-first order; node ``i`` (1-based) is ``paths[i - 1]``.
        parents: ``parents[i]`` = the parent node of node ``i`` (0 = the root); ``parents[0] = -1``.
        depths: ``depths[i]`` = depth of node ``i`` (root 0).
        ranks: ``ranks[i]`` = rank of node ``i`` among its siblings (root 0).
        children: ``children[i]`` = the child nodes of node ``i``, by rank.
        size: ``N``, the number of drafted nodes (the root not counted).
        depth: the deepest node's depth (= tokens per round at most, + 1 bonus).

    Raises:
        TypeError: ``paths`` not a sequence of tuples of ints.
        ValueError: an empty tree, a missing prefix, ranks with gaps, or duplicate paths.
    """

    def __init__(self, paths):
        try:
            ps = [tuple(int(r) for r in p) for p in paths]
        except (TypeError, ValueError):
            raise fail("paths", paths, "트리는 순위(rank) 튜플의 목록이어야 합니다",
                       "예: [(0,), (1,), (0, 0)]", TypeError) from None
        if not ps or any(len(p) == 0 or min(p) < 0 for p in ps) or len(set(ps)) != len(ps):
            raise fail("paths", paths, "트리 경로는 비어 있지 않고 서로 달라야 하며 순위는 0 이상이어야 합니다",
                       "예: [(0,), (1,), (0, 0)]")
        ps.sort(key=lambda p: (len(p), p))
        index = {(): 0}
        for i, p in enumerate(ps, start=1):
            if p[:-1] not in index or (p[-1] > 0 and p[:-1] + (p[-1] - 1,) not in index):
                raise fail("paths", paths, f"경로 {p}의 앞부분이나 앞 순위 형제가 트리에 없습니다",
                           "모든 경로의 앞부분과 순위 0..k-1 형제가 함께 있는 트리")
            index[p] = i
        self.paths = tuple(ps)
        self.parents = [-1] + [index[p[:-1]] for p in ps]
        self.depths = [0] + [len(p) for p in ps]
        self.ranks = [0] + [p[-1] for p in ps]
        self.children: list[list[int]] = [[] for _ in range(len(ps) + 1)]
        for i in range(1, len(ps) + 1):
            self.children[self.parents[i]].append(i)
        self.size = len(ps)
        self.depth = max(self.depths)

    @classmethod
    def chain(cls, depth: int) -> "DraftTree":
        """A chain: one candidate per position (``[(0,), (0, 0), ...]``), i.e. ordinary drafting."""
        return cls([(0,) * d for d in range(1, int(depth) + 1)])

    @classmethod
    def spine(cls, widths) -> "DraftTree":
        """A chain of best candidates where depth ``d`` also keeps the next ``widths[d-1] - 1``
        candidates, and the second-best candidate at each depth gets one best child of its own.

        ``widths`` e.g. ``(3, 2, 2, 1, 1)``: depth 1 has candidates ranked 0, 1, 2 below the root.
        """
        paths = []
        for d, w in enumerate(widths):
            stem = (0,) * d
            paths += [stem + (r,) for r in range(int(w))]
            if w > 1 and d + 1 < len(widths):
                paths.append(stem + (1, 0))
        return cls(paths)

    def truncate(self, max_depth: int) -> "DraftTree":
        """The same tree without the nodes deeper than ``max_depth`` (>= 1)."""
        return DraftTree([p for p in self.paths if len(p) <= max_depth])

    @cached_property
    def ancestor_mask(self) -> torch.Tensor:
        """Bool ``(N + 1, N + 1)``: entry ``[i, j]`` is True iff node ``j`` is node ``i`` or one of
        its ancestors (the root is everyone's ancestor). Row = query, column = key."""
        n = self.size + 1
        m = torch.zeros(n, n, dtype=torch.bool)
        for i in range(n):
            j = i
            while j >= 0:
                m[i, j] = True
                j = self.parents[j]
        return m

    def mask(self, cached: int = 0) -> torch.Tensor:
        """The tree attention mask for one verification pass: bool ``(N + 1, cached + N + 1)``,
        True = may attend. Columns ``0..cached-1`` are the cached positions (all visible), the
        rest are the root and the nodes (:attr:`ancestor_mask`)."""
        return torch.cat([torch.ones(self.size + 1, int(cached), dtype=torch.bool), self.ancestor_mask], dim=1)

    def position_ids(self, start: int = 0) -> torch.Tensor:
        """LongTensor ``(N + 1,)``: the position of the root is ``start``, of a node ``start + depth``."""
        return torch.tensor(self.depths, dtype=torch.long) + int(start)

    def path_to(self, node: int) -> list[int]:
        """The nodes from depth 1 down to ``node`` (``[]`` for the root)."""
        out = []
        while node > 0:
            out.append(node)
            node = self.parents[node]
        return out[::-1]

    def best_path(self, tokens: list[int | None], below: int = 0) -> list[int]:
        """The best-ranked chain under ``below``: the nodes reached by following each node's
        rank-0 child while that child is filled (``tokens[child] is not None``), ``[]`` at a leaf.

        Args:
            tokens: ``tokens[i]`` = node ``i``'s token (``None`` = not filled), as in :func:`walk_greedy`.
            below: the node to start from (default: the root).
        """
        path, node = [], below
        while self.children[node] and tokens[self.children[node][0]] is not None:
            node = self.children[node][0]
            path.append(node)
        return path

    def __repr__(self) -> str:
        return f"DraftTree(size={self.size}, depth={self.depth}, paths={list(self.paths)})"


# --------------------------------------------------------------------------------------------
# random draws (an interface, so that tests can enumerate every branch)


class TorchDraws:
    """Random draws from a ``torch.Generator`` (``None``: the global RNG)."""

    def __init__(self, generator: torch.Generator | None = None):
        self.generator = generator

    def bernoulli(self, prob: float) -> bool:
        """True with probability ``prob`` (one uniform draw ``u < prob``, on the generator's device)."""
        where = self.generator.device if self.generator is not None else "cpu"
        return bool(torch.rand((), generator=self.generator, device=where).item() < prob)

    def categorical(self, probs: torch.Tensor) -> int:
        """One token id drawn from the distribution ``probs`` ``(vocab,)``."""
        return int(torch.multinomial(probs, 1, generator=self.generator))


def sample_children(q: torch.Tensor, k: int, draws) -> list[int]:
    """``k`` distinct tokens drawn from ``q`` without replacement, in draw order (rank order).

    Each draw comes from ``q`` with the earlier draws removed and renormalised. Fewer than ``k``
    come back when ``q`` has fewer than ``k`` tokens of positive probability (e.g. top-k < k).
    """
    q = q.clone()
    out = []
    for _ in range(int(k)):
        s = float(q.sum())
        if not s > 0:
            break
        t = draws.categorical(q / s)
        out.append(t)
        q[t] = 0.0
    return out


# --------------------------------------------------------------------------------------------
# walking the tree: which path is accepted


def walk_greedy(tree: DraftTree, tokens: list[int | None], logits) -> tuple[list[int], int]:
    """Greedy acceptance: follow the target's argmax down the tree.

    Args:
        tree: the shape.
        tokens: ``tokens[i]`` = the token of node ``i`` (index 0, the root, is ignored; ``None``
            = a node the drafter did not fill, never accepted).
        logits: callable ``i -> (vocab,)`` float tensor, the target's logits after node ``i``'s
            path (called only for the root and the accepted nodes).

    Returns:
        ``(path, token)``: the accepted nodes (depth 1 down) and the target's argmax after the
        last of them (the recovered token, or the bonus when the last is a leaf).
    """
    node, path = 0, []
    while True:
        best = int(logits(node).argmax())
        nxt = next((c for c in tree.children[node] if tokens[c] == best), None)
        if nxt is None:
            return path, best
        path.append(nxt)
        node = nxt


def walk_sampling(tree: DraftTree, tokens: list[int | None], p_of, q_rows: dict, draws) -> tuple[list[int], int]:
    """Recursive rejection sampling down the tree (the rule of the module docstring).

    Args:
        tree, tokens: as :func:`walk_greedy`.
        p_of: callable ``i -> (vocab,)`` target probabilities after node ``i``'s path (already
            temperature / top-k / top-p warped).
        q_rows: ``{i: (vocab,)}`` the drafter's distribution at node ``i`` from which its
            children were drawn without replacement (same warping as ``p``); nodes absent from
            it have no filled children.
        draws: :class:`TorchDraws` or any object with ``bernoulli`` and ``categorical``.

    Returns:
        ``(path, token)`` as :func:`walk_greedy`; the emitted tokens are distributed as
        successive draws from the target.
    """
    node, path = 0, []
    while True:
        p = p_of(node)
        kids = [c for c in tree.children[node] if tokens[c] is not None]
        if not kids:
            return path, draws.categorical(p)
        q = q_rows[node]
        p, q = same_width(p, q)
        accepted = None
        for c in kids:
            x = tokens[c]
            qx, px = float(q[x]), float(p[x])
            if qx > 0 and draws.bernoulli(min(1.0, px / qx)):
                accepted = c
                break
            p = residual_distribution(p, q)
            q = q.clone()
            q[x] = 0.0
            s = float(q.sum())
            q = q / s if s > 0 else q
        if accepted is None:
            return path, draws.categorical(p)
        path.append(accepted)
        node = accepted


# --------------------------------------------------------------------------------------------
# the target's verification pass


def select_cache(cache, keep: torch.Tensor) -> None:
    """Keep only the cached positions ``keep`` (LongTensor of indices, increasing), in place.

    For the tree's accepted path after a verification pass: the cache then holds the context,
    the root and the accepted nodes, in order. transformers 5.x ``DynamicCache`` stores each
    layer's ``keys`` / ``values`` as tensors ``(batch, kv_heads, positions, head_dim)``.
    """
    keep = keep.to(torch.long)
    for layer in cache.layers:
        if getattr(layer, "keys", None) is None or layer.keys.numel() == 0:
            continue
        idx = keep.to(layer.keys.device)
        layer.keys = layer.keys.index_select(-2, idx)
        layer.values = layer.values.index_select(-2, idx)


@dataclass
class TreeVerification:
    """The outcome of one tree verification (:func:`verify_tree`): the walk's accepted path.

    Attributes:
        path: the accepted nodes, depth 1 down (``len(path)`` = accepted drafts).
        tokens: their tokens.
        token: the recovered token (a child was wanted but none accepted) or the bonus token.
        hidden: the target's last hidden states (after its final norm, what its LM head reads),
            ``(1 + len(path), hidden)``: at the root and at each accepted node.
    """

    path: list[int]
    tokens: list[int]
    token: int
    hidden: torch.Tensor


def verify_tree(target, cache, ids: list[int], tree: DraftTree, tokens: list[int | None], cfg: SamplingConfig,
                q_rows: dict | None = None, generator: torch.Generator | None = None) -> TreeVerification:
    """One target forward pass over ``[ids[-1]] + nodes`` with the tree mask, then acceptance.

    Args:
        target: a ``transformers`` Llama-style causal LM (``target.model`` gives the last hidden
            states, ``target.lm_head`` the logits; a custom 4-D bool mask is passed as it is).
        cache: the target's ``DynamicCache`` holding ``len(ids) - 1`` positions; afterwards it
            holds ``len(ids) + len(path)`` (context, root, accepted nodes).
        ids: prompt + tokens so far; ``ids[-1]`` (the root) has not been read by the target.
        tree: the shape; ``tokens``: the node tokens (``None`` = unfilled, fed as token 0 and
            never accepted).
        cfg: greedy or sampling settings (the same as the drafter's).
        q_rows: for sampling, the drafter's distributions (see :func:`walk_sampling`).
        generator: for sampling.

    Returns:
        :class:`TreeVerification`. The logits of a node are computed (LM head) only when the walk
        reaches it.
    """
    n_ctx = len(ids) - 1
    fed = [ids[-1]] + [0 if t is None else int(t) for t in tokens[1:]]
    dev = target.device
    mask = tree.mask(n_ctx)[None, None].to(dev)
    pos = tree.position_ids(n_ctx)[None].to(dev)
    with torch.inference_mode():
        h = target.model(input_ids=torch.tensor([fed], device=dev), attention_mask=mask, position_ids=pos,
                         cache=cache, use_cache=True).last_hidden_state[0]
        head = target.get_output_embeddings()
        memo: dict[int, torch.Tensor] = {}

        def logits(i):
            if i not in memo:
                memo[i] = head(h[i:i + 1])[0].float()
            return memo[i]

        if cfg.greedy:
            path, token = walk_greedy(tree, tokens, logits)
        else:
            path, token = walk_sampling(tree, tokens, lambda i: probabilities(logits(i), cfg), q_rows or {},
                                        TorchDraws(generator))
    keep = torch.cat([torch.arange(n_ctx + 1), torch.tensor([n_ctx + i for i in path], dtype=torch.long)])
    select_cache(cache, keep)
    rows = torch.tensor([0] + path, dtype=torch.long, device=h.device)
    return TreeVerification(path, [int(tokens[i]) for i in path], int(token), h.index_select(0, rows).float())


# --------------------------------------------------------------------------------------------
# a figure for notebook 04


def tree_figure(tree: DraftTree, labels: list[str] | None = None, start: int = 0):
    """The tree (left) and its attention mask (right) in one matplotlib figure; returns it.

    Args:
        tree: the shape. labels: one text per node incl. the root (default: ``"뿌리"`` and each
            node's path of ranks). start: the root's position id (shown under each node).
    """
    from .plots import new_figure

    labels = labels or ["뿌리"] + ["-".join(str(r + 1) for r in p) for p in tree.paths]
    fig, (ax, bx) = new_figure(1, 2, figsize=(11, 4.2), dpi=100, gridspec_kw={"width_ratios": [1.25, 1]})
    # layout: depth = x, leaves spread on y
    ys: dict[int, float] = {}
    leaf = [0]

    def place(i):
        kids = tree.children[i]
        if not kids:
            ys[i] = leaf[0]
            leaf[0] += 1
        else:
            for c in kids:
                place(c)
            ys[i] = sum(ys[c] for c in kids) / len(kids)

    place(0)
    pos = tree.position_ids(start).tolist()
    for i in range(1, tree.size + 1):
        j = tree.parents[i]
        ax.plot([tree.depths[j], tree.depths[i]], [-ys[j], -ys[i]], "-", color="#9ca3af", zorder=1)
    for i in range(tree.size + 1):
        color = "#f59e0b" if i == 0 else ("#2563eb" if tree.ranks[i] == 0 else "#60a5fa")
        ax.scatter([tree.depths[i]], [-ys[i]], s=900, color=color, zorder=2)
        ax.text(tree.depths[i], -ys[i], f"{i}", ha="center", va="center", color="white", fontsize=11, zorder=3)
        ax.text(tree.depths[i], -ys[i] - 0.42, f"{labels[i]} (위치 {pos[i]})", ha="center", va="top", fontsize=8)
    ax.set_xticks(range(tree.depth + 1))
    ax.set_xlabel("깊이 (초안 위치)")
    ax.set_yticks([])
    ax.set_ylim(-leaf[0] - 0.2, 0.8)
    ax.set_xlim(-0.5, tree.depth + 0.5)
    ax.set_title("초안 트리: 진한 파랑 = 각 위치의 1순위 후보")
    m = tree.ancestor_mask.numpy()
    bx.imshow(m, cmap="Blues", vmin=0, vmax=1.4)
    bx.set_xticks(range(tree.size + 1))
    bx.set_yticks(range(tree.size + 1))
    bx.set_xlabel("읽히는 노드 (키)")
    bx.set_ylabel("계산하는 노드 (쿼리)")
    bx.set_title("트리 어텐션 마스크 (색칠 = 볼 수 있음)")
    for i in range(tree.size + 1):
        for j in range(tree.size + 1):
            if m[i, j]:
                bx.text(j, i, "✓" if i != j else "●", ha="center", va="center", fontsize=8, color="#1e3a8a")
    fig.tight_layout()
    return fig
