"""Speculative decoding vs target-only greedy decoding on the bundled pair, in one run.

    decodelab bench speculative [--tokens 64] [--prompts 6] [--reps 5]          (all proposers)
    decodelab bench speculative --sweep [--gammas 1-8] [--threads 1]             (the draft model's gamma sweep)

Default (all proposers in one run, :func:`decodelab.teach.compare.compare_proposers`): target-only
greedy decoding, the draft model (gamma 6), prompt lookup (n-gram, gamma 4), the EAGLE head as a
chain (gamma 6), the EAGLE head with its draft tree (depth 8) and transformers' assisted
generation with the draft model (its default settings), prompt by prompt and interleaved, repeated
``--reps`` times. Per method: alpha, mean acceptance length, c, verification cost, Leviathan et
al.'s predicted speedup (with and without the measured verification cost), and the measured speedup
(median over repetitions of target-only ms/token / method ms/token) with its range, plus the ratio
to transformers' assisted generation; greedy outputs are checked identical to target-only decoding
in every repetition. The machine's load average is printed before and after.

``--sweep``: the draft model's gamma sweep:

For gamma = 1..8 it prints: vLLM's acceptance rate, Leviathan et al.'s alpha (accepted / evaluated
draft positions), mean acceptance length (measured tokens per drafting round) next to the paper's
E[len] = (1 - a**(g+1)) / (1 - a) for that alpha (it assumes independent acceptances), tokens per
target forward pass (prefill included), the paper's predicted speedup with the measured alpha and c
("pred"), the per-round overhead (a round's inter-token latency minus its drafting time and its
verification forward pass, measured inside the same round, so load changes cancel), and ms per
generated token of

* target-only greedy decoding (``decodelab.generate``),
* ``decodelab.speculative_generate`` (greedy; its output is checked token-identical),
* transformers' assisted generation ``target.generate(assistant_model=draft, do_sample=False)``
  with ``num_assistant_tokens=gamma``, schedule "constant", confidence threshold off,

with ratios (speedup = target-only ms/token / method ms/token), plus a prompt-lookup (n-gram) row
and transformers' default assisted settings. The first two, their pooled acceptance counts and the
exactness check come from ``decodelab.speculative_experiments.speedup_sweep`` (ms/token = ``e2e_ms``, i.e.
tokenising + prefill + decoding, / tokens); transformers' ms/token = wall time of its whole
``generate`` call / tokens, run by the sweep's ``on_prompt`` hook right after the other two. Every
method generates the same number of tokens.

Timings on shared CPUs vary ~30% between runs: the three methods are measured interleaved, prompt
by prompt, inside each gamma block, and ratios are taken within the block. Compare ratios, not
absolute numbers across runs. No assertion on time: this script measures and prints.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import torch  # noqa: E402

from decodelab import generate, load_models  # noqa: E402
from decodelab._torch import set_threads  # noqa: E402
from decodelab.latency import expected_speedup, expected_tokens_per_call  # noqa: E402
from decodelab.models import format_prompt  # noqa: E402
from decodelab.proposers import DraftModelProposer, NGramProposer  # noqa: E402
from decodelab.speculative import speculative_generate  # noqa: E402
from decodelab.speculative_experiments import measure_costs, speedup_sweep  # noqa: E402

# half LibreOffice-help style (the bundled models often loop there: high acceptance), half
# legal / FAQ style (more varied output: acceptance about 0.5 at gamma 4)
PROMPTS = [
    "문서를 저장하려면",
    "대한민국은 민주공화국이다.",
    "글꼴 크기를 바꾸려면",
    "국회는 법률을",
    "표의 셀을 선택한 다음",
    "데비안 패키지는",
    "스프레드시트에서 함수를",
    "모든 국민은",
]


def _gammas(text: str) -> list[int]:
    if "-" in text:
        a, b = text.split("-")
        return list(range(int(a), int(b) + 1))
    return [int(x) for x in text.split(",")]


def _time(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, (time.perf_counter() - t0) * 1000.0


def hf_generate(target, ids, n, assistant=None):
    x = torch.tensor([ids])
    kw = dict(attention_mask=torch.ones_like(x), max_new_tokens=n, do_sample=False, pad_token_id=2)
    if assistant is not None:
        kw["assistant_model"] = assistant
    with torch.inference_mode():
        out = target.generate(x, **kw)
    return out[0, len(ids):].tolist()


def _setup(args):
    """The bundled pair with EOS stops off (every method generates exactly ``--tokens`` tokens),
    the prompts and the token count."""
    import transformers

    transformers.logging.set_verbosity_error()
    pair = load_models()
    pair.target.generation_config.eos_token_id = None
    pair.draft.generation_config.eos_token_id = None
    return pair, PROMPTS[: args.prompts], args.tokens


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--tokens", type=int, default=64, help="new tokens per generation")
    ap.add_argument("--prompts", type=int, default=6, help="how many prompts (<= 8)")
    ap.add_argument("--gammas", default="1-8", help="e.g. 1-8 or 2,4,6")
    ap.add_argument("--threads", type=int, default=1, help="torch threads (1 is fastest for these tiny models)")
    ap.add_argument("--no-hf", action="store_true", help="skip transformers' assisted generation")
    ap.add_argument("--sweep", action="store_true", help="the draft model's gamma sweep instead of all proposers")
    ap.add_argument("--reps", type=int, default=5, help="repetitions of the all-proposers comparison")
    args = ap.parse_args(argv)
    set_threads(args.threads)
    if not args.sweep:
        return compare_main(args)
    pair, prompts, n = _setup(args)
    t, d, tok = pair.target, pair.draft, pair.tokenizer
    gammas = _gammas(args.gammas)
    n_t = sum(p.numel() for p in t.parameters())
    n_d = sum(p.numel() for p in d.parameters())
    print(f"target {n_t / 1e6:.2f} M params, draft {n_d / 1e6:.2f} M params; torch {torch.__version__}, "
          f"{args.threads} thread(s); {len(prompts)} prompts x {n} tokens, greedy")

    # warm-up (first calls allocate and load kernels)
    for p in prompts[:2]:
        generate(t, tok, p, 8, top_candidates=0, stop_at_eos=False)
        speculative_generate(t, d, tok, p, 8, stop_at_eos=False)
        if not args.no_hf:
            hf_generate(t, format_prompt(tok, p), 8, d)

    st = measure_costs(t, d, tok, prompts[0], gammas=sorted(set(gammas) | {4, 8}), reps=40)
    c = st["c"]
    c_hf = measure_costs(t, DraftModelProposer(d, backend="transformers"), tok, prompts[0], gammas=(), reps=40)["c"]
    print(f"step times (median ms): target 1 token {st['target_step_ms']:.2f}, verify 5 tokens {st['verify_ms'][4]:.2f} "
          f"({st['verify_cost'][4]:.2f}x), verify 9 tokens {st['verify_ms'][8]:.2f} ({st['verify_cost'][8]:.2f}x), "
          f"draft step {st['draft_step_ms']:.3f} -> c = {c:.3f} (draft through transformers: c = {c_hf:.3f})")

    refs = {p: generate(t, tok, p, n, top_candidates=0, stop_at_eos=False).token_ids for p in prompts}
    gc = d.generation_config
    saved = (gc.num_assistant_tokens, gc.num_assistant_tokens_schedule, gc.assistant_confidence_threshold)
    hf_ms: list[float] = []  # transformers' ms/token per prompt, of the gamma being swept
    overhead: list[float] = []  # per-round overhead per prompt, ms
    round_ms: list[float] = []  # mean round time per prompt, ms
    exact = [True]

    def run_hf(g, p, base, spec):
        """speedup_sweep's hook: after its target-only and speculative runs of prompt p, run
        transformers' assisted generation (interleaved, so load changes hit all three alike)."""
        exact[0] &= spec.token_ids == refs[p]
        # a round = drafting + one verification forward pass + the rest (accepting, cropping, the
        # loop's bookkeeping): the rest is the overhead
        overhead.append(statistics.mean(itl - r.draft_ms - r.verify_forward_ms for itl, r in zip(spec.itl_ms, spec.rounds)))
        round_ms.append(statistics.mean(spec.itl_ms))
        if args.no_hf:
            return
        out, ms = _time(lambda: hf_generate(t, format_prompt(tok, p), n, d))
        hf_ms.append(ms / len(out))
        exact[0] &= out == refs[p]

    header = (f"{'gamma':>5} {'accept':>7} {'alpha':>6} {'mean_len':>8} {'E[len]':>6} {'tok/call':>8} {'pred':>5} "
              f"{'ovh ms':>6} | {'base ms/tok':>11} "
              f"{'spec ms/tok':>11} {'speedup':>7} | {'HF asst ms/tok':>14} {'HF speedup':>10} {'spec/HF':>7} | exact")
    print()
    print(header)
    print("-" * len(header))
    rows = []
    for g in gammas:
        gc.num_assistant_tokens, gc.num_assistant_tokens_schedule, gc.assistant_confidence_threshold = g, "constant", 0.0
        hf_ms.clear()
        overhead.clear()
        round_ms.clear()
        exact[0] = True
        # the pooled counts and ms/token come from the library's sweep (it raises RuntimeError if
        # the greedy speculative output ever differs from target-only decoding)
        (r,) = speedup_sweep(t, d, tok, prompts, n, [g], on_prompt=run_hf)
        a, ms, mb = r.alpha, r.spec_ms_per_token, r.base_ms_per_token
        mh = statistics.mean(hf_ms) if hf_ms else float("nan")
        ovh = statistics.mean(overhead) if overhead else float("nan")
        rows.append((g, a, ms, mb, mh, ovh, statistics.mean(round_ms)))
        print(f"{g:>5} {r.acceptance_rate:>7.3f} {a:>6.3f} {r.mean_acceptance_length:>8.2f} "
              f"{expected_tokens_per_call(a, g):>6.2f} {r.tokens_per_target_call:>8.2f} {expected_speedup(a, g, c):>5.2f} "
              f"{ovh:>6.3f} | "
              f"{mb:>11.2f} {ms:>11.2f} {mb / ms:>6.2f}x | {mh:>14.2f} {mb / mh:>9.2f}x {mh / ms:>6.2f}x | "
              f"{'yes' if exact[0] else 'NO'}")
    gc.num_assistant_tokens, gc.num_assistant_tokens_schedule, gc.assistant_confidence_threshold = saved

    # comparison rows: prompt lookup (no draft model) and transformers' default assisted settings
    print()
    best = max(rows, key=lambda r: r[3] / r[2])
    print(f"best gamma {best[0]}: speculative_generate {best[3] / best[2]:.2f}x faster than target-only greedy"
          + ("" if args.no_hf else f", {best[4] / best[2]:.2f}x faster than transformers' assisted generation"))
    print(f"per-round overhead at gamma {best[0]}: {best[5]:.3f} ms of a {best[6]:.2f} ms round "
          f"({100 * best[5] / best[6]:.1f}%; round time minus drafting and the verification forward pass, "
          f"measured inside each round)")
    print(f"formula (Leviathan et al. 2023, Thm 3.8) with measured alpha {best[1]:.3f}, c {c:.3f}: "
          f"{expected_speedup(best[1], best[0], c):.2f}x, E[tokens/call] {expected_tokens_per_call(best[1], best[0]):.2f}"
          f" (assumes a verification costs one target step; measured {st['verify_cost'][4]:.2f}x for 5 tokens)")
    hf_ms.clear()
    (ng,) = speedup_sweep(t, NGramProposer(), tok, prompts, n, [best[0]], on_prompt=run_hf)
    mb = ng.base_ms_per_token
    print(f"prompt lookup (n-gram, gamma {best[0]}): acceptance {ng.acceptance_rate:.3f}, "
          f"{ng.tokens_per_target_call:.2f} tokens/target call, {ng.spec_ms_per_token:.2f} ms/token, "
          f"{ng.speedup:.2f}x vs target-only {mb:.2f} ms/token")
    if hf_ms:
        print(f"transformers assisted, default settings (heuristic schedule, 20 tokens, threshold 0.4): "
              f"{statistics.mean(hf_ms):.2f} ms/token, {mb / statistics.mean(hf_ms):.2f}x vs target-only")
    return 0


def compare_main(args) -> int:
    """All proposers in one run (see the module docstring)."""
    from decodelab.teach.compare import compare_proposers, default_methods

    pair, prompts, n = _setup(args)
    t, d, tok = pair.target, pair.draft, pair.tokenizer
    load0 = os.getloadavg()
    print(f"torch {torch.__version__}, {args.threads} thread(s), {os.cpu_count()} CPUs; {len(prompts)} prompts x {n} "
          f"tokens, greedy, {args.reps} repetitions; load average before {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f}")
    methods = default_methods(pair)
    for p in prompts[:2]:  # warm-up
        generate(t, tok, p, 8, top_candidates=0, stop_at_eos=False)
        for dr, g in methods.values():
            speculative_generate(t, dr, tok, p, 8, num_speculative_tokens=g, stop_at_eos=False)
    extra = {} if args.no_hf else {"HF assisted (draft model)": lambda ids, m: hf_generate(t, ids, m, d)}

    def progress(r, rows):
        print(f"  repetition {r + 1}: " + ", ".join(f"{x.name} {x.speedups[-1]:.2f}x" for x in rows), flush=True)

    rows = compare_proposers(t, tok, methods, prompts, n, reps=args.reps, cost_reps=40, extra=extra, on_rep=progress)
    hf = next((x for x in rows if x.name.startswith("HF")), None)
    print()
    head = (f"{'method':<22} {'gamma':>5} {'nodes':>5} {'alpha':>6} {'mean_len':>8} {'c':>6} {'verify':>6} "
            f"{'pred':>5} {'pred(v)':>7} | {'speedup':>7} {'range':>11} {'vs HF':>6} exact")
    print(head)
    print("-" * len(head))
    for x in rows:
        rng = f"{min(x.speedups):.2f}-{max(x.speedups):.2f}"
        vs = f"{x.speedup / hf.speedup:>5.2f}x" if hf is not None and x is not hf else f"{'-':>6}"
        if x.gamma:
            print(f"{x.name:<22} {x.gamma:>5} {x.nodes:>5} {x.alpha:>6.3f} {x.mean_acceptance_length:>8.2f} {x.c:>6.3f} "
                  f"{x.verify_cost:>6.2f} {x.predicted_plain:>5.2f} {x.predicted:>7.2f} | {x.speedup:>6.2f}x {rng:>11} "
                  f"{vs} {'yes' if x.exact else 'NO'}")
        else:
            print(f"{x.name:<22} {'':>5} {'':>5} {'':>6} {'':>8} {'':>6} {'':>6} {'':>5} {'':>7} | {x.speedup:>6.2f}x "
                  f"{rng:>11} {'':>6} {'yes' if x.exact else 'NO'}")
    load1 = os.getloadavg()
    print(f"load average after {load1[0]:.2f} {load1[1]:.2f} {load1[2]:.2f}. speedup = target-only ms/token / "
          f"method ms/token within each repetition, median over {args.reps}; pred = Leviathan et al. with the "
          f"measured alpha and c (a verification = 1 target step), pred(v) = with the measured verification cost; "
          f"for the tree alpha is per depth (some candidate accepted), gamma its depth, c one head call per depth.")
    return 0 if all(x.exact for x in rows) else 1


if __name__ == "__main__":
    raise SystemExit(main())
