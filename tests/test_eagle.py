"""The EAGLE draft head and draft trees (decodelab.eagle, decodelab.tree).

* the tree attention mask and position ids against a hand-built tree, and the target's tree pass
  against feeding each path alone;
* the accepted path's cache selection against a cache built by feeding the path in order;
* greedy head / head + tree output identical to transformers' ``generate`` on prompts the head
  never saw (it was trained on text the target sampled after BOS only), for several tree shapes;
* the multi-candidate sampling rule exact by enumerating every branch of the real code on a toy
  vocabulary, and within sampling noise on the bundled target;
* the bundled head's files load offline beside the pair, and refuse a target they do not fit;
* a tree proposal carries everything its verification needs (tree, node tokens, draft
  probabilities): any proposer may return one, and a later proposal never changes how an
  earlier one is verified.
"""

from __future__ import annotations

import itertools
import math
from collections import defaultdict

import pytest
import torch

from decodelab.decoding import crop_cache, new_cache
from decodelab.models import format_prompt as encode_prompt
from decodelab.proposers import Proposal, Proposer
from decodelab.eagle import DEFAULT_TREE, EAGLE_DIR, EagleProposer, load_head
from decodelab.sampling import SamplingConfig, probabilities
from decodelab.speculative import speculative_generate
from decodelab.tree import DraftTree, sample_children, verify_tree, walk_greedy, walk_sampling

#: prompts outside the course's usual list (and the head never saw a prompt at all)
UNSEEN = ["프린터 설정을 바꾸려면", "법원은 재판을", "새 창을 열고", "이 규정은 공포한 날부터"]

SMALL = DraftTree([(0,), (1,), (0, 0), (0, 1), (1, 0)])


def test_tree_structure_mask_and_positions_by_hand():
    t = SMALL
    # nodes: 1=(0,) 2=(1,) 3=(0,0) 4=(0,1) 5=(1,0)
    assert t.parents == [-1, 0, 0, 1, 1, 2]
    assert t.depths == [0, 1, 1, 2, 2, 2]
    assert t.ranks == [0, 0, 1, 0, 1, 0]
    assert t.children == [[1, 2], [3, 4], [5], [], [], []]
    expected = torch.tensor([
        [1, 0, 0, 0, 0, 0],
        [1, 1, 0, 0, 0, 0],
        [1, 0, 1, 0, 0, 0],
        [1, 1, 0, 1, 0, 0],
        [1, 1, 0, 0, 1, 0],
        [1, 0, 1, 0, 0, 1],
    ], dtype=torch.bool)
    assert torch.equal(t.ancestor_mask, expected)
    m = t.mask(cached=3)
    assert m.shape == (6, 9) and m[:, :3].all() and torch.equal(m[:, 3:], expected)
    assert t.position_ids(10).tolist() == [10, 11, 11, 12, 12, 12]
    assert DraftTree.chain(3).parents == [-1, 0, 1, 2]
    assert SMALL.truncate(1).paths == ((0,), (1,))
    with pytest.raises(ValueError):
        DraftTree([(0,), (0, 1)])  # rank 1 without its rank-0 sibling
    with pytest.raises(ValueError):
        DraftTree([(1,)])


def test_tree_pass_equals_each_path_fed_alone(pair):
    """One pass with the tree mask and positions gives every node the logits of its own path."""
    target, tok = pair.target, pair.tokenizer
    ids = encode_prompt(tok, "프린터 설정을 바꾸려면")
    tokens = [None, 11, 22, 33, 44, 55]
    n_ctx = len(ids) - 1
    cache = new_cache(target)
    with torch.inference_mode():
        target(input_ids=torch.tensor([ids[:-1]]), cache=cache, use_cache=True)
        fed = [ids[-1]] + tokens[1:]
        h = target.model(input_ids=torch.tensor([fed]), attention_mask=SMALL.mask(n_ctx)[None, None],
                         position_ids=SMALL.position_ids(n_ctx)[None], cache=cache, use_cache=True).last_hidden_state[0]
        tree_logits = target.lm_head(h)
        for node in range(SMALL.size + 1):
            path = [ids[-1]] + [tokens[i] for i in SMALL.path_to(node)]
            alone = target(input_ids=torch.tensor([ids[:-1] + path])).logits[0, -1]
            assert torch.allclose(tree_logits[node], alone, atol=1e-4), node


def test_select_cache_keeps_exactly_the_accepted_path(pair):
    target, tok = pair.target, pair.tokenizer
    ids = encode_prompt(tok, "법원은 재판을")
    cache = new_cache(target)
    with torch.inference_mode():
        target(input_ids=torch.tensor([ids[:-1]]), cache=cache, use_cache=True)
    tokens = [None, 11, 22, 33, 44, 55]
    # force the path 2 -> 5 by making those nodes the target's greedy choices
    with torch.inference_mode():
        best1 = int(target(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
        best2 = int(target(input_ids=torch.tensor([ids + [best1]])).logits[0, -1].argmax())
    tokens[2], tokens[5] = best1, best2
    v = verify_tree(target, cache, ids, SMALL, tokens, SamplingConfig(0.0))
    assert v.path == [2, 5] and v.tokens == [best1, best2]
    assert cache.get_seq_length() == len(ids) + 2
    ref = new_cache(target)
    with torch.inference_mode():
        target(input_ids=torch.tensor([ids + [best1, best2]]), cache=ref, use_cache=True)
        full_h = target.model(input_ids=torch.tensor([ids + [best1, best2]])).last_hidden_state[0]
    for a, b in zip(cache.layers, ref.layers):
        assert torch.allclose(a.keys, b.keys, atol=1e-4) and torch.allclose(a.values, b.values, atol=1e-4)
    assert torch.allclose(v.hidden, full_h[len(ids) - 1:], atol=1e-4)
    # and the next token read with that cache equals the uncached target's
    with torch.inference_mode():
        nxt = target(input_ids=torch.tensor([[v.token]]), cache=cache, use_cache=True).logits[0, -1]
        alone = target(input_ids=torch.tensor([ids + [best1, best2, v.token]])).logits[0, -1]
    assert torch.allclose(nxt, alone, atol=1e-4)


def _hf_greedy(target, ids, n):
    x = torch.tensor([ids])
    with torch.inference_mode():
        out = target.generate(x, attention_mask=torch.ones_like(x), max_new_tokens=n, do_sample=False,
                              pad_token_id=2, eos_token_id=None)
    return out[0, len(ids):].tolist()


TREES = {
    "chain": None,
    "default": DEFAULT_TREE,
    "wide": DraftTree([(0,), (1,), (2,), (3,), (0, 0), (1, 0), (2, 0), (0, 0, 0)]),
    "binary": DraftTree([p for d in range(1, 4) for p in itertools.product((0, 1), repeat=d)]),
}


@pytest.mark.parametrize("shape", list(TREES))
def test_greedy_identical_to_transformers_generate(pair, shape):
    target, tok = pair.target, pair.tokenizer
    head = load_head(target)
    n = 40
    for prompt in UNSEEN[:2] if shape != "default" else UNSEEN:
        ids = encode_prompt(tok, prompt)
        ref = _hf_greedy(target, ids, n)
        prop = EagleProposer(target, TREES[shape], head)
        for gamma in (3, 6):
            r = speculative_generate(target, prop, tok, prompt, n, num_speculative_tokens=gamma, stop_at_eos=False)
            assert r.token_ids == ref, (shape, prompt, gamma)
            # the target's cache invariant held in every round
            assert all(rd.target_cache_len == len(ids) + sum(len(x.emitted) for x in r.rounds[:i + 1])
                       for i, rd in enumerate(r.rounds))
            assert r.num_accepted_tokens > 0  # the head is really drafting something the target keeps


def test_by_name_and_faster_rounds_than_the_chain(pair):
    """``"eagle"`` and ``"eagle-tree"`` by name; on the same text the tree accepts at least as
    many tokens per round as the chain of its best candidates."""
    target, tok = pair.target, pair.tokenizer
    ref = None
    lengths = {}
    for name in ("eagle", "eagle-tree"):
        r = speculative_generate(target, name, tok, UNSEEN[2], 48, num_speculative_tokens=6, stop_at_eos=False)
        ref = ref or _hf_greedy(target, encode_prompt(tok, UNSEEN[2]), 48)
        assert r.token_ids == ref
        lengths[name] = r.mean_acceptance_length
    assert lengths["eagle-tree"] >= lengths["eagle"] > 1.5


# --------------------------------------------------------------------------------------------
# the sampling rule, by enumeration


class EnumDraws:
    """Draws that follow a scripted list of choices (then option 0), recording the path's
    probability and the untried alternatives, so that a DFS visits every outcome once."""

    def __init__(self, script):
        self.script, self.taken, self.weight, self.points = list(script), [], 1.0, []

    def _choose(self, options):  # options: [(value, prob)] with prob > 0
        i = len(self.taken)
        j = self.script[i] if i < len(self.script) else 0
        if i >= len(self.script):
            self.points.append((i, len(options)))
        self.taken.append(j)
        value, prob = options[j]
        self.weight *= prob
        return value

    def bernoulli(self, prob):
        prob = float(prob)
        return self._choose([o for o in ((True, prob), (False, 1 - prob)) if o[1] > 0])

    def categorical(self, probs):
        return self._choose([(i, float(v)) for i, v in enumerate(probs.tolist()) if v > 0])


def enumerate_outcomes(run):
    """``{outcome: probability}`` of ``run(draws)`` over every branch of its random choices."""
    out = defaultdict(float)
    stack = [[]]
    while stack:
        d = EnumDraws(stack.pop())
        value = run(d)
        out[value] += d.weight
        for i, n in d.points:
            for alt in range(1, n):
                stack.append(d.taken[:i] + [alt])
    return out


def _toy(V, seed, zeros):
    g = torch.Generator().manual_seed(seed)

    def table():
        memo = {}

        def dist(prefix):
            if prefix not in memo:
                w = torch.rand(V, generator=g, dtype=torch.float64) + 0.05
                if zeros:  # some tokens impossible under this distribution
                    w[torch.randperm(V, generator=g)[: V // 3]] = 0.0
                memo[prefix] = w / w.sum()
            return memo[prefix]
        return dist

    return table(), table()


@pytest.mark.parametrize("shape,V,seed,zeros", [
    ("small", 3, 0, False), ("small", 4, 1, True), ("wide", 3, 2, False), ("chain", 3, 3, True), ("binary", 4, 4, False),
])
def test_tree_sampling_rule_exact_by_enumeration(shape, V, seed, zeros):
    """Drafting (children without replacement from q) + recursive rejection over siblings, then
    the target alone for the rest: the first depth+1 tokens have exactly the target's joint law."""
    tree = {"small": SMALL, "wide": DraftTree([(0,), (1,), (2,), (0, 0), (2, 0)]), "chain": DraftTree.chain(3),
            "binary": DraftTree([(0,), (1,), (0, 0), (0, 1), (1, 0), (1, 1)])}[shape]
    p_of_prefix, q_of_prefix = _toy(V, seed, zeros)
    q_of_prefix(())  # q and p tables are independent random laws
    T = tree.depth + 1

    def run(d):
        tokens = [None] * (tree.size + 1)
        prefix = {0: ()}
        q_rows = {}
        for i in range(tree.size + 1):  # breadth-first: a parent is filled before its children
            if i > 0 and tokens[i] is None:
                continue
            if i > 0:
                prefix[i] = prefix[tree.parents[i]] + (tokens[i],)
            kids = tree.children[i]
            if kids:
                q_rows[i] = q_of_prefix(prefix[i])
                for c, t in zip(kids, sample_children(q_rows[i], len(kids), d)):
                    tokens[c] = t
        path, tok = walk_sampling(tree, tokens, lambda i: p_of_prefix(prefix[i]), q_rows, d)
        return tuple(tokens[i] for i in path) + (tok,)

    law = enumerate_outcomes(run)
    assert abs(sum(law.values()) - 1) < 1e-12
    got = defaultdict(float)
    for emitted, w in law.items():  # continue with the target alone up to T tokens
        rest = T - len(emitted)
        for tail in itertools.product(range(V), repeat=rest):
            pr = w
            seq = emitted
            for t in tail:
                pr *= float(p_of_prefix(seq)[t])
                seq = seq + (t,)
            got[seq] += pr
    for seq in itertools.product(range(V), repeat=T):
        want = math.prod(float(p_of_prefix(seq[:j])[seq[j]]) for j in range(T))
        assert abs(got[seq] - want) < 1e-12, seq
    # the tree is really used: some outcome accepts a non-first sibling
    assert len({len(e) for e in law}) > 1


def test_enumeration_catches_a_rule_that_forgets_to_remove_rejected_siblings():
    """The same enumeration fails for a wrong rule (q not updated after a rejected sibling)."""
    from decodelab import tree as tree_mod

    V = 4
    p_of_prefix, q_of_prefix = _toy(V, 5, False)
    tree = DraftTree([(0,), (1,)])  # two siblings out of four tokens

    def wrong(tree_, tokens, p_of, q_rows, draws):
        from decodelab.rejection import residual_distribution
        p, q = p_of(0), q_rows[0]
        for c in tree_.children[0]:
            x = tokens[c]
            if draws.bernoulli(min(1.0, float(p[x] / q[x]))):
                return [c], 0
            p = residual_distribution(p, q)  # q never loses x: not exact
        return [], draws.categorical(p)

    def law_of(walk):
        def run(d):
            tokens = [None] + sample_children(q_of_prefix(()), 2, d)
            path, tok = walk(tree, tokens, lambda i: p_of_prefix(()), {0: q_of_prefix(())}, d)
            return tokens[path[0]] if path else tok
        return enumerate_outcomes(run)

    good, bad = law_of(tree_mod.walk_sampling), law_of(wrong)
    p = p_of_prefix(())
    assert max(abs(good[x] - float(p[x])) for x in range(V)) < 1e-12
    assert max(abs(bad[x] - float(p[x])) for x in range(V)) > 1e-2


def test_greedy_walk_by_hand():
    tree = SMALL
    tokens = [None, 5, 7, 1, 2, 3]
    best = {0: 7, 2: 3, 5: 9}  # target argmax after each node

    def logits(i):
        v = torch.zeros(10)
        v[best[i]] = 1.0
        return v

    assert walk_greedy(tree, tokens, logits) == ([2, 5], 9)


def test_best_path_and_tree_proposal_truncation_by_hand():
    tree = DraftTree([(0,), (1,), (0, 0), (1, 0), (0, 0, 0)])  # nodes 1..5 in this order
    tokens = [None, 5, 6, 7, 8, 9]
    assert tree.best_path(tokens) == [1, 3, 5] and tree.best_path(tokens, below=2) == [4]
    assert tree.best_path(tokens, below=5) == [] and tree.best_path([None, 5, 6, None, 8, 9]) == [1]
    q = {node: torch.full((10,), 0.1) for node in (0, 1, 2, 3)}
    proposal = Proposal([5, 7, 9], None, tree, tokens, q)
    assert proposal.depth == 3 and proposal.truncate(3) is proposal
    cut = proposal.truncate(2)  # the budget: nodes deeper than 2 go, the others keep their numbers
    assert cut.tree.paths == ((0,), (1,), (0, 0), (1, 0)) and cut.node_tokens == [None, 5, 6, 7, 8]
    assert cut.tokens == [5, 7] and set(cut.node_q) == {0, 1, 2, 3} and cut.depth == 2
    assert set(proposal.truncate(1).node_q) == {0, 1, 2}  # node 3's distribution went with its children
    assert proposal.truncate(0).tokens == [] and proposal.truncate(0).tree is None
    chain = Proposal([1, 2, 3], torch.eye(4)[1:])
    assert chain.truncate(2).tokens == [1, 2] and torch.equal(chain.truncate(2).q, torch.eye(4)[1:3])
    with pytest.raises(ValueError, match="node_tokens"):
        Proposal([5], None, tree, [None, 5])  # one token per node, root included


class _SecondChoiceTree(Proposer):
    """A proposer (not EAGLE) that drafts a two-leaf tree: a wrong token ranked first and the
    target's own greedy token ranked second (it asks the target, as only a test may)."""

    def __init__(self, target):
        self.target = target

    def propose(self, ids, gamma, cfg, generator=None):
        with torch.inference_mode():
            best = int(self.target(input_ids=torch.tensor([ids])).logits[0, -1].argmax())
        wrong = (best + 1) % self.target.config.vocab_size
        return Proposal([wrong], None, DraftTree([(0,), (1,)]), [None, wrong, best])


def test_any_proposer_may_draft_a_tree(pair):
    """The base verification reads the tree from the proposal: the second-ranked candidate is
    accepted every round (a chain verification of ``tokens`` would reject them all), and the
    output is still the target's greedy output."""
    target, tok = pair.target, pair.tokenizer
    ids = encode_prompt(tok, UNSEEN[0])
    r = speculative_generate(target, _SecondChoiceTree(target), tok, UNSEEN[0], 17, num_speculative_tokens=3,
                             stop_at_eos=False)
    assert r.token_ids == _hf_greedy(target, ids, 17)
    assert r.acceptance_rate == 1.0 and [rd.kind for rd in r.rounds] == ["bonus"] * 8


def test_verify_round_reads_only_its_proposal(pair):
    """A later proposal does not change how an earlier one is verified (no state kept between
    ``propose`` and ``verify_round``)."""
    target, tok = pair.target, pair.tokenizer
    cfg = SamplingConfig(0.0)
    prop = EagleProposer(target, DEFAULT_TREE)
    ids = encode_prompt(tok, UNSEEN[1])
    state = prop.prefill_target(target, torch.tensor([ids]))
    ids = ids + [int(state.logits.argmax())]
    cache, feats = state.cache, list(prop.features)

    def verify(proposal):
        prop.features = list(feats)
        v = prop.verify_round(target, cache, ids, proposal, cfg)
        crop_cache(cache, len(ids) - 1)
        return v.drafted, v.accepted, v.token

    deep = prop.propose(ids, 4, cfg)
    alone = verify(deep)
    shallow = prop.propose(ids, 1, cfg)
    assert (deep.tree.depth, shallow.tree.depth) == (4, 1) and len(alone[0]) == 4
    assert verify(deep) == alone
    assert len(verify(shallow)[0]) == 1


NOISE = 0.03  # fc weight noise: TV(q, p) about 0.25 at this context


@pytest.mark.slow  # 4-11 s here
def test_tree_sampling_within_noise_on_the_bundled_target(pair):
    """The first token a head-tree round emits after a fixed context, drawn many times, follows
    the target's distribution (temperature 1, top-k 6) within sampling noise, although the
    drafter's q differs from p and later siblings are accepted too."""
    target, tok = pair.target, pair.tokenizer
    cfg = SamplingConfig(1.0, top_k=6)
    ids = encode_prompt(tok, "새 창을 열고")
    tree = DraftTree([(0,), (1,), (2,)])
    # the bundled head with seeded noise on its input layer: a drafter that overlaps p but clearly
    # differs from it (the rule must be exact for any drafter; the test must tell q from p)
    import copy

    head = copy.deepcopy(load_head(target))
    g = torch.Generator().manual_seed(1)
    with torch.no_grad():
        head.fc.weight.add_(torch.randn(head.fc.weight.shape, generator=g) * NOISE)
    prop = EagleProposer(target, tree, head)
    state = prop.prefill_target(target, torch.tensor([ids]))
    p = probabilities(state.logits, cfg)
    ids = ids + [int(p.argmax())]
    # the context now ends with a token the target has not read; its p is the law to match
    with torch.inference_mode():
        p = probabilities(target(input_ids=torch.tensor([ids])).logits[0, -1].float(), cfg)
    cache = state.cache
    n = 300
    counts = torch.zeros_like(p)
    gen = torch.Generator().manual_seed(0)
    feats = list(prop.features)
    sibling_wins = 0
    for _ in range(n):
        prop.features = list(feats)
        proposal = prop.propose(ids, 1, cfg, gen)
        v = prop.verify_round(target, cache, ids, proposal, cfg, gen)
        first = v.drafted[0] if v.accepted else v.token
        counts[first] += 1
        sibling_wins += int(v.accepted > 0 and proposal.node_tokens[1] != first)
        crop_cache(cache, len(ids) - 1)
    q = proposal.node_q[0]
    freq = counts / n
    tv = 0.5 * float((freq - p).abs().sum())
    tv_pq = 0.5 * float((q - p).abs().sum())
    noise = 0.5 * float(torch.sqrt(2 * p * (1 - p) / (math.pi * n)).sum())  # expected TV of n draws
    print(f"TV(spec, p) {tv:.3f}, expected noise {noise:.3f}, TV(q, p) {tv_pq:.3f}")
    assert tv < 3 * noise, (tv, noise)
    assert tv_pq > 3 * noise  # the test can tell q from p
    assert sibling_wins > 0


def test_head_files_load_offline_and_fit_only_their_target(pair):
    from safetensors import safe_open

    files = {f.name for f in EAGLE_DIR.iterdir()}
    assert {"config.json", "model.safetensors"} <= files
    size = (EAGLE_DIR / "model.safetensors").stat().st_size
    assert 1e6 < size < 6e6
    with safe_open(str(EAGLE_DIR / "model.safetensors"), "pt") as f:
        assert {f.get_tensor(k).dtype for k in f.keys()} == {torch.float16}
    head = load_head(pair.target)
    assert sum(p.numel() for p in head.parameters()) * 2 <= size
    with pytest.raises(ValueError, match="다른 대상 모델"):
        load_head(pair.draft)


def test_lean_head_equals_the_module(pair):
    """The drafting forward pass (_LeanHead, preallocated cache, tree masks) computes what the
    training module computes."""
    from decodelab.eagle.proposer import _LeanHead

    head = load_head(pair.target)
    g = torch.Generator().manual_seed(0)
    T = 7
    emb = torch.randn(T, head.hidden, generator=g)
    feat = torch.randn(T, head.hidden, generator=g)
    with torch.inference_mode():
        ref, _ = head(emb[None], feat[None], torch.arange(T))
        run = _LeanHead(head, max_len=4)  # also grows its buffers
        out = torch.cat([run(emb[:3], feat[:3], 0, 3, run.causal(0, 3)), run(emb[3:], feat[3:], 3, 4, run.causal(3, 4))])
    assert torch.allclose(out, ref[0], atol=1e-4)


def test_training_is_reproducible_and_lowers_the_loss(pair):
    """``decodelab train eagle``'s training, shrunk: the same seed gives the same head, bit for
    bit, and the held-out KL ends below where the initial head starts."""
    from decodelab.eagle.train import HeadConfig, train_head

    cfg = dict(sequences=40, length=24, steps=12, batch=4, loss_positions=8, temperatures=(1.0,))
    h1, log1 = train_head(pair.target, HeadConfig(**cfg), progress=False)
    h2, _ = train_head(pair.target, HeadConfig(**cfg), progress=False)
    for (k, a), (_, b) in zip(h1.state_dict().items(), h2.state_dict().items()):
        assert torch.equal(a, b), k
    kls = [r["kl"] for r in log1["log"] if "kl" in r]
    assert log1["heldout"]["kl"] < kls[0]


def test_sampled_generation_by_name_is_seeded_and_stops_at_eos(pair):
    target, tok = pair.target, pair.tokenizer
    from decodelab.decoding import eos_ids

    stop = eos_ids(target, tok)
    for name in ("eagle", "eagle-tree"):
        a = speculative_generate(target, name, tok, UNSEEN[3], 40, num_speculative_tokens=6, temperature=0.9,
                                 top_p=0.95, seed=5)
        b = speculative_generate(target, name, tok, UNSEEN[3], 40, num_speculative_tokens=6, temperature=0.9,
                                 top_p=0.95, seed=5)
        assert a.token_ids == b.token_ids and 1 <= len(a.token_ids) <= 40
        assert not any(t in stop for t in a.token_ids[:-1])  # nothing after an EOS
        assert a.num_accepted_tokens > 0


def test_train_eagle_command_checks_its_arguments(capsys):
    from decodelab.tools.train import main

    assert main(["eagle", "--steps", "0"]) == 2
    assert "--steps" in capsys.readouterr().out
