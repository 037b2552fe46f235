"""The EAGLE proposer: drafting a chain or a static tree with the head, verified in one target pass.

It reads the target's hidden states, so it declares ``reads_target = True`` and runs the target's
passes itself (:class:`EagleProposer`); :func:`decodelab.speculative.as_proposer` builds it for the
names ``"eagle"`` and ``"eagle-tree"`` (:func:`make_proposer`).
"""

from __future__ import annotations

import torch
import torch.nn.functional as F

from ..decoding import DecodeState, new_cache
from ..proposers import Proposal, Proposer, Verification, verify_tree_round
from ..sampling import SamplingConfig, probabilities
from ..tree import DraftTree, TorchDraws, sample_children
from .head import EagleHead, load_head

__all__ = ["DEFAULT_TREE", "EagleProposer", "make_proposer"]

#: The tree ``"eagle-tree"`` uses (truncated to ``num_speculative_tokens`` levels): the best chain
#: of depth 8 with the second candidate (and its best child) at depths 1 and 2, 12 nodes. Small on
#: purpose: on a CPU every extra node makes the target's verification pass measurably longer.
DEFAULT_TREE = DraftTree.spine((2, 2, 1, 1, 1, 1, 1, 1))


class EagleProposer(Proposer):
    """Drafts with the EAGLE head: a chain (``"eagle"``) or a static tree (``"eagle-tree"``).

    Used by :func:`decodelab.speculative.speculative_generate` like every proposer. Because the
    head reads the target's hidden states, this proposer declares ``reads_target = True`` and
    overrides the target's passes (:meth:`prefill_target`, :meth:`verify_round`: the target's
    own ``model`` + ``lm_head`` forward, so every output token is still the target's).

    Each round: the head catches up on the positions the target has just read (one call), then
    drafts level by level: depth ``d`` is one head call over all the depth-``d`` nodes that have
    children, with a tree mask over the head's own cache. Greedy: a node's children are the
    head's top-k tokens; sampling: k tokens drawn without replacement from the head's ``q``
    (warped like the target's ``p``). The :class:`~decodelab.proposers.Proposal` carries the
    tree, its node tokens and those distributions (``tree``, ``node_tokens``, ``node_q``) to
    :meth:`verify_round` (:func:`decodelab.tree.walk_sampling`); nothing is kept between the two.

    Args:
        target: the target model the head belongs to.
        tree: a :class:`DraftTree` (default: a chain as long as ``gamma``); it is truncated to
            ``gamma`` levels each round.
        head: an :class:`EagleHead` (default: :func:`load_head` of the bundled head).

    Attributes:
        forward_calls: head forward passes so far.
        vocab_size: the target's vocabulary (the head reads out through its LM head).
    """

    reads_target = True

    def __init__(self, target, tree: DraftTree | None = None, head: EagleHead | None = None):
        self.target = target
        self.head = load_head(target) if head is None else head.to(device=target.device, dtype=target.dtype)
        self.tree = tree
        self.embed = target.get_input_embeddings().weight
        self.lm_head = target.get_output_embeddings().weight
        self._lm_t = self.lm_head.detach().t().contiguous()  # (hidden, vocab) for the readout
        self._lean = _LeanHead(self.head)
        self.vocab_size = int(self.lm_head.shape[0])
        self.forward_calls = 0
        self.reset()

    def reset(self) -> None:
        """Forget the features and the head's cache (a new generation)."""
        self.features: list[torch.Tensor] = []  # f_j for every position j the target has read
        self._n = 0  # context entries in the head's cache (entry j = (f_j, e(x_{j+1})), at slot j)

    # ---- the target's passes (called by speculative_generate)

    def prefill_target(self, target, input_ids: torch.Tensor):
        """The target's prefill through ``target.model`` + LM head; keeps the features.

        Returns a :class:`decodelab.decoding.DecodeState` as :func:`decodelab.decoding.prefill`.
        """
        ids = torch.as_tensor(input_ids, dtype=torch.long).reshape(1, -1)
        cache = new_cache(target)
        with torch.inference_mode():
            h = target.model(input_ids=ids.to(target.device), cache=cache, use_cache=True).last_hidden_state[0]
            logits = target.get_output_embeddings()(h[-1:])[0].float()
        self.reset()
        self.features = list(h.float())
        return DecodeState(cache=cache, position=ids.shape[1], logits=logits, input_ids=ids)

    def verify_round(self, target, cache, ids: list[int], proposal: Proposal, cfg: SamplingConfig,
                     generator=None) -> Verification:
        """Verify the proposal's tree (or chain) in one target pass
        (:func:`decodelab.proposers.verify_tree_round`) and keep the target's features.

        Returns a :class:`~decodelab.proposers.Verification` whose ``drafted`` is the accepted
        path followed by the tree's best-ranked continuation below it (what a display shows as
        "drafted"). The target's cache is left with ``len(ids) + accepted`` positions (context,
        root, accepted path); the features of those positions are kept. A proposal without a tree
        (empty: a plain target step, the last token of a budget) takes the chain path.
        """
        if proposal.tree is None:
            return super().verify_round(target, cache, ids, proposal, cfg, generator)
        verification, walk = verify_tree_round(target, cache, ids, proposal, cfg, generator)
        del self.features[len(ids) - 1:]
        self.features.extend(walk.hidden)
        return verification

    def sync(self, ids: list[int]) -> None:
        """Drop features past the accepted text (after an EOS cut)."""
        del self.features[max(0, len(ids) - 1):]

    # ---- drafting

    def _ensure_features(self, ids: list[int]) -> None:
        """Compute missing target features with one target pass (only when the proposer is used
        without :meth:`prefill_target`, e.g. by
        :func:`decodelab.speculative_experiments.measure_costs`)."""
        if len(self.features) >= len(ids) - 1:
            return
        with torch.inference_mode():
            h = self.target.model(input_ids=torch.tensor([ids[:-1]], device=self.target.device)).last_hidden_state[0]
        self.features = list(h.float())
        self._n = 0

    @torch.inference_mode()
    def propose(self, ids: list[int], gamma: int, cfg: SamplingConfig, generator=None) -> Proposal:
        """Draft a tree (or chain) of at most ``gamma`` levels after ``ids``: ``depth`` head calls.

        Returns a :class:`~decodelab.proposers.Proposal` carrying the tree (``tree``,
        ``node_tokens``, and ``node_q`` when sampling); its ``tokens`` are the tree's best-ranked
        chain (for display and counting).
        """
        L = len(ids)
        if L < 2:
            return Proposal([], None)
        self._ensure_features(ids)
        tree = (self.tree or DraftTree.chain(gamma)).truncate(max(1, gamma))
        run, lm = self._lean, self._lm_t
        # context entries j = 0..L-2: (f_j, e(ids[j+1])); the last one is re-fed every round so
        # that a round always costs `depth` head calls (as a draft model re-feeds its last token)
        start = min(self._n, L - 2)
        T = L - 1 - start
        feats = torch.stack(self.features[start:L - 1]).to(self.embed.dtype)
        mask = None if T == 1 else run.causal(start, T)
        self.forward_calls += 1
        out = run(self.embed[ids[start + 1:L]], feats, start, T, mask)
        self._n = n_ctx = L - 1

        tokens: list = [None] * (tree.size + 1)
        q_rows: dict = {}
        draws = TorchDraws(generator)
        pred = {0: out[-1:]}  # node -> the head's predicted feature after it, (1, hidden)
        fed = 0  # draft entries written after the context
        for d, (level, sub) in enumerate(_schedule(tree)):
            if d > 0:  # feed the depth-d nodes that have children: (f_hat(parent), e(token))
                if not level or all(tokens[i] is None for i in level):
                    break
                emb = self.embed[[0 if tokens[i] is None else tokens[i] for i in level]]
                feats = torch.cat([pred[tree.parents[i]] for i in level])
                m = torch.cat([torch.ones(len(level), n_ctx, dtype=torch.bool), sub], 1).to(run.K.device)
                self.forward_calls += 1
                o = run(emb, feats, n_ctx + fed, len(level), m, position=L - 2 + d)
                fed += len(level)
                for j, i in enumerate(level):
                    pred[i] = o[j:j + 1]
            rows = torch.cat([pred[i] for i in level])
            logits = (rows @ lm).float()
            for j, i in enumerate(level):
                if i > 0 and tokens[i] is None:
                    continue
                kids = tree.children[i]
                if cfg.greedy:
                    for c, t in zip(kids, torch.topk(logits[j], len(kids)).indices.tolist()):
                        tokens[c] = t
                else:
                    q = probabilities(logits[j], cfg)
                    q_rows[i] = q
                    for c, t in zip(kids, sample_children(q, len(kids), draws)):
                        tokens[c] = t
        chain = [int(tokens[node]) for node in tree.best_path(tokens)]
        return Proposal(chain, None, tree=tree, node_tokens=tokens, node_q=q_rows)


_SCHEDULES: dict = {}


def _schedule(tree: DraftTree):
    """Per depth ``d = 0..depth-1``: the depth-``d`` nodes that have children (fed at depth d;
    the root at d = 0 is the context's last entry) and, for d >= 1, the tree-mask block over the
    draft entries fed so far (bool ``(len(level), fed_before + len(level))``: ancestors and self)."""
    key = tree.paths
    if key not in _SCHEDULES:
        out, order = [], []
        anc = tree.ancestor_mask
        for d in range(tree.depth):
            level = [i for i in range(tree.size + 1) if tree.depths[i] == d and tree.children[i]]
            if d == 0:
                out.append((level, None))
                continue
            keys = order + level
            out.append((level, anc[torch.tensor(level, dtype=torch.long)][:, torch.tensor(keys, dtype=torch.long)]
                        if level else None))
            order = keys
        _SCHEDULES[key] = out
    return _SCHEDULES[key]


class _LeanHead:
    """The head's forward pass for drafting, with a preallocated KV cache: the same maths as
    :class:`EagleHead` (tested to 1e-5) in fewer tensor operations, as
    :class:`decodelab.lean_llama.LlamaRunner` does for draft models (RMSNorm weights folded into
    the next matrix, q/k/v and their RoPE-rotated halves from one product, residuals in ``addmm``).
    Call: ``run(emb (T, hidden), feat (T, hidden), slot, T, mask, position=None)`` writes keys and
    values at cache slots ``slot..slot+T-1`` (positions ``position..`` or, if None, ``slot..``)
    and attends over slots ``0..slot+T-1`` with ``mask`` (bool ``(T, slot + T)``, None = all)."""

    def __init__(self, head: EagleHead, max_len: int = 1024):
        h, nkv, d, H = head.heads, head.kv_heads, head.head_dim, head.hidden
        self.h, self.nkv, self.d = h, nkv, d
        self.deps = H * head.eps
        root = H ** 0.5
        half = d // 2
        dev = head.fc.weight.device
        with torch.no_grad():
            P = torch.zeros(d, d, device=dev)
            P[half:, :half] = -torch.eye(half, device=dev)
            P[:half, half:] = torch.eye(half, device=dev)
            wq, wk, wv = head.q_proj.weight.float(), head.k_proj.weight.float(), head.v_proj.weight.float()
            rq = (P.t() @ wq.view(h, d, -1)).reshape(h * d, -1)
            rk = (P.t() @ wk.view(nkv, d, -1)).reshape(nkv * d, -1)
            ln1 = head.input_layernorm.weight.float() * root
            ln2 = head.post_attention_layernorm.weight.float() * root
            dt = head.fc.weight.dtype
            self.wfc = head.fc.weight.detach().t().contiguous()
            self.bfc = head.fc.bias.detach().clone()
            self.wqkv = (torch.cat([wq, wk, wv, rq, rk]) * ln1[None, :]).t().contiguous().to(dt)
            self.wo = head.o_proj.weight.detach().t().contiguous()
            self.wgu = (torch.cat([head.gate_proj.weight.float(), head.up_proj.weight.float()]) * ln2[None, :]).t().contiguous().to(dt)
            self.wdown = head.down_proj.weight.detach().t().contiguous()
        self.ke = (h + nkv) * d
        self.ve = self.ke + nkv * d
        self.head = head
        self.K = torch.zeros(1, nkv, 0, d, dtype=self.wfc.dtype, device=dev)
        self.V = self.K
        self._grow(max_len)

    def _grow(self, n: int) -> None:
        dev = self.K.device
        K = torch.empty(1, self.nkv, n, self.d, dtype=self.wfc.dtype, device=dev)
        V = torch.empty_like(K)
        K[:, :, : self.K.shape[2]] = self.K
        V[:, :, : self.V.shape[2]] = self.V
        self.K, self.V = K, V
        cos, sin = self.head.rope(torch.arange(n, device=dev))
        self.cos, self.sin = cos[:, None, :].to(K.dtype), sin[:, None, :].to(K.dtype)
        self._tril = torch.ones(n, n, dtype=torch.bool, device=dev).tril_()

    def causal(self, start: int, T: int) -> torch.Tensor:
        """The causal mask of T new entries after ``start`` cached ones: bool ``(T, start + T)``."""
        if start + T > self._tril.shape[0]:
            self._grow(max(start + T, 2 * self.K.shape[2]))
        return self._tril[start:start + T, :start + T]

    def __call__(self, emb, feat, slot: int, T: int, mask=None, position: int | None = None):
        end = slot + T
        if end > self.K.shape[2]:
            self._grow(max(end, 2 * self.K.shape[2]))
        h, nkv, d, ke, ve = self.h, self.nkv, self.d, self.ke, self.ve
        pos = slot if position is None else position
        cos, sin = self.cos[pos:pos + T], self.sin[pos:pos + T]
        x = torch.addmm(self.bfc, torch.cat([emb, feat], -1), self.wfc)
        qkv = (x * x.square().sum(-1, keepdim=True).add_(self.deps).rsqrt_()) @ self.wqkv
        qk = torch.addcmul(qkv[:, :ke].view(T, h + nkv, d) * cos, qkv[:, ve:].view(T, h + nkv, d), sin)
        self.K[0, :, slot:end] = qk[:, h:].transpose(0, 1)
        self.V[0, :, slot:end] = qkv[:, ke:ve].view(T, nkv, d).transpose(0, 1)
        q = qk[None, :, :h].transpose(1, 2)
        att = F.scaled_dot_product_attention(q, self.K[:, :, :end], self.V[:, :, :end], attn_mask=mask,
                                             enable_gqa=nkv != h)
        x = torch.addmm(x, att[0].transpose(0, 1).reshape(T, h * d), self.wo)
        g, u = ((x * x.square().sum(-1, keepdim=True).add_(self.deps).rsqrt_()) @ self.wgu).chunk(2, dim=-1)
        return torch.addmm(x, F.silu(g) * u, self.wdown)


def make_proposer(name: str, target) -> EagleProposer:
    """``"eagle"`` (the head drafting a chain) or ``"eagle-tree"`` (the head with :data:`DEFAULT_TREE`)."""
    return EagleProposer(target, DEFAULT_TREE if name == "eagle-tree" else None)
