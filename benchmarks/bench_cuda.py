"""The course's decoding on an NVIDIA GPU: exactness under GPU numerics, and what speculative decoding buys there.

    decodelab bench cuda [--tokens 64] [--reps 3] [--dtypes float32,bfloat16] [--device cuda]

Needs a CUDA GPU (without one it says so and exits 2); CI has none, so no test runs it. For each
dtype, on the bundled pair moved to the GPU (``load_models(device="cuda", dtype=...)``):

1. **greedy vs transformers**: ``decodelab.generate`` against transformers'
   ``generate(do_sample=False)`` on the same weights, prompt by prompt (identical outputs, or the
   position of the first difference);
2. **speculative greedy vs target-only greedy**: ``speculative_generate`` with each proposer of
   :func:`decodelab.compare.default_methods` against ``decodelab.generate``; where an output
   differs, the position of the first difference and the target's margin between its two best
   logits there (a near tie that the two computation paths break differently: the verification
   pass scores ``gamma + 1`` tokens in one matrix product, a decode step one);
3. **speed**: ms per generated token of target-only decoding and of each proposer (median over
   ``--reps`` repetitions, prompt by prompt and interleaved), their ratio (speedup), and from
   :func:`decodelab.speculative.measure_costs` the draft cost ``c`` and the cost of verifying
   ``n`` tokens in one target pass, in target decode steps;
4. **batching**: :func:`decodelab.batching.batch_generate` with every prompt in one left-padded
   batch against batch-1 greedy decoding (identical rows, or where a row differs and the margin
   there), and :func:`decodelab.batching.batch_sweep`'s TPOT and aggregate tokens/s for B = 1,
   4, 16, 64 (the prompts repeated to fill a batch).

It measures and prints; nothing is asserted on time. Timings on a GPU are taken after
``torch.cuda.synchronize`` (decodelab's timers synchronise the model's device).
"""

from __future__ import annotations

import os
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))

import torch  # noqa: E402

from bench_speculative import PROMPTS as SPECULATIVE_PROMPTS  # noqa: E402  (the script's own folder is on sys.path)

#: the eight prompts of ``decodelab bench speculative``, and eight more of the same kinds
PROMPTS = SPECULATIVE_PROMPTS + [
    "대통령은 국가의 원수이며",
    "새 문서를 만들려면",
    "인쇄 미리 보기에서",
    "패키지를 설치하려면",
    "법원은 헌법과 법률에 의하여",
    "그림을 삽입하려면",
    "커널을 업데이트한 뒤",
    "국민의 모든 자유와 권리는",
]

DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16, "float16": torch.float16}


def _first_difference(a: list[int], b: list[int]) -> int | None:
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


@torch.no_grad()
def _margin(target, ids: list[int]) -> float:
    """The target's margin between its two best logits after ``ids`` (one full forward pass), in
    logit units (float32)."""
    logits = target(input_ids=torch.tensor([ids], device=target.device)).logits[0, -1].float()
    top = torch.topk(logits, 2).values
    return float(top[0] - top[1])


def run_dtype(name: str, dtype, prompts: list[str], n: int, reps: int, device: str = "cuda") -> None:
    import decodelab
    from decodelab.compare import default_methods
    from decodelab.models import format_prompt
    from decodelab.speculative import SpecDecodingStats, measure_costs, speculative_generate

    pair = decodelab.load_models(device=device, dtype=dtype)
    t, tok = pair.target, pair.tokenizer
    t.generation_config.eos_token_id = None
    pair.draft.generation_config.eos_token_id = None
    methods = default_methods(pair)
    print(f"\n## {name} (device {pair.device}, weights {str(pair.dtype).replace('torch.', '')})")

    # warm-up: kernels load and the allocator grows on the first calls
    for p in prompts[:2]:
        decodelab.generate(t, tok, p, 8, top_candidates=0, stop_at_eos=False)
        for d, g in methods.values():
            speculative_generate(t, d, tok, p, 8, num_speculative_tokens=g, stop_at_eos=False)

    # 1. decodelab greedy vs transformers greedy
    base: dict[str, list[int]] = {}
    same_hf, diffs_hf = 0, []
    for p in prompts:
        ours = decodelab.generate(t, tok, p, n, top_candidates=0, stop_at_eos=False).token_ids
        base[p] = ours
        ids = format_prompt(tok, p)
        x = torch.tensor([ids], device=t.device)
        with torch.inference_mode():
            theirs = t.generate(x, max_new_tokens=n, do_sample=False, attention_mask=torch.ones_like(x))[0, len(ids):].tolist()
        pos = _first_difference(ours, theirs)
        if pos is None:
            same_hf += 1
        else:
            diffs_hf.append((p, pos, _margin(t, ids + ours[:pos])))
    print(f"greedy, decodelab vs transformers generate: {same_hf}/{len(prompts)} prompts identical ({n} tokens)")
    for p, pos, m in diffs_hf:
        print(f"  differs: {p!r} at token {pos}, top-2 logit margin there {m:.4f}")

    # 2 + 3. speculative greedy vs target-only greedy, timed, interleaved
    spent = {k: [] for k in ["target only", *methods]}
    same = {k: 0 for k in methods}
    diffs: dict[str, list] = {k: [] for k in methods}
    stats = {k: SpecDecodingStats(int(g)) for k, (d, g) in methods.items()}
    for r in range(reps):
        per = {k: 0.0 for k in spent}
        for p in prompts:
            b = decodelab.generate(t, tok, p, n, top_candidates=0, stop_at_eos=False)
            per["target only"] += b.e2e_ms / len(b.token_ids)
            for k, (d, g) in methods.items():
                s = speculative_generate(t, d, tok, p, n, num_speculative_tokens=g, stop_at_eos=False)
                per[k] += s.e2e_ms / len(s.token_ids)
                if r == 0:
                    stats[k].merge(s.stats)
                    pos = _first_difference(s.token_ids, base[p])
                    if pos is None:
                        same[k] += 1
                    else:
                        ids = format_prompt(tok, p)
                        diffs[k].append((p, pos, _margin(t, ids + base[p][:pos])))
        for k in spent:
            spent[k].append(per[k] / len(prompts))
    ms = {k: statistics.median(v) for k, v in spent.items()}
    print(f"target only: {ms['target only']:.3f} ms/token (median of {reps} reps, {len(prompts)} prompts x {n} tokens)")
    print(f"{'method':<20}{'gamma':>6}{'identical':>11}{'alpha':>7}{'MAL':>6}{'ms/tok':>8}{'speedup':>9}{'c':>7}{'verify':>8}")
    for k, (d, g) in methods.items():
        costs = measure_costs(t, d, tok, prompts[0], gammas=(int(g),), reps=30)
        print(f"{k:<20}{g:>6}{same[k]:>7}/{len(prompts):<3}{stats[k].alpha:>7.2f}{stats[k].mean_acceptance_length:>6.2f}"
              f"{ms[k]:>8.3f}{ms['target only'] / ms[k]:>8.2f}x{costs['c']:>7.2f}{costs['verify_cost'][int(g)]:>8.2f}")
        for p, pos, m in diffs[k]:
            print(f"  differs: {p!r} at token {pos}, top-2 logit margin there {m:.4f}")

    # 4. batched greedy decoding (every prompt in one left-padded batch) vs batch-1 greedy, and
    # throughput against the batch size (the prompts repeated to fill the larger batches)
    from decodelab.batching import batch_generate, batch_sweep

    batch = batch_generate(t, tok, prompts, n)
    same_b = [p for p, row in zip(prompts, batch.token_ids) if row == base[p]]
    print(f"batched greedy (B={len(prompts)}, left-padded) vs batch-1 greedy: {len(same_b)}/{len(prompts)} prompts identical")
    for p, row in zip(prompts, batch.token_ids):
        if row != base[p]:
            pos = _first_difference(row, base[p])
            print(f"  differs: {p!r} at token {pos}, top-2 logit margin there {_margin(t, format_prompt(tok, p) + base[p][:pos]):.4f}")
    pool = prompts * 4
    sizes = [b for b in (1, 4, 16, 64) if b <= len(pool)]
    rows = batch_sweep(t, tok, n, sizes, prompts=pool, repeats=3)
    print("batch size B: TPOT ms / aggregate tokens/s = "
          + ", ".join(f"B={r.batch_size}: {r.tpot_ms:.2f} / {r.tokens_per_s:,.0f}" for r in rows))

    # verification cost against the number of tokens scored in one target pass
    d0 = methods["draft model"][0]
    costs = measure_costs(t, d0, tok, prompts[0], gammas=(1, 3, 7, 15, 31, 63), reps=30)
    print(f"one target decode step: {costs['target_step_ms']:.3f} ms; verifying n tokens in one pass costs "
          + ", ".join(f"n={g + 1}: {v:.2f}" for g, v in costs["verify_cost"].items()) + " steps")


def main(argv=None) -> int:
    from decodelab._cli import ArgumentParser, positive_int

    ap = ArgumentParser(prog="decodelab bench cuda",
                        description="번들 모델 쌍을 NVIDIA GPU에 올려 탐욕 출력의 정확성과 투기적 디코딩의 속도 향상을 잽니다.")
    ap.add_argument("--tokens", type=positive_int, default=64, metavar="N", help="생성마다 새로 만들 토큰 수, 1 이상 (기본 64)")
    ap.add_argument("--reps", type=positive_int, default=3, metavar="N", help="시간을 재는 반복 횟수, 1 이상 (기본 3; 결과는 중앙값)")
    ap.add_argument("--prompts", type=positive_int, default=len(PROMPTS), metavar="N",
                    help=f"프롬프트 수, 1~{len(PROMPTS)} (기본 {len(PROMPTS)})")
    ap.add_argument("--dtypes", default="float32,bfloat16", metavar="LIST",
                    help="쉼표로 나눈 자료형: float32, bfloat16, float16 (기본 float32,bfloat16)")
    ap.add_argument("--device", default="cuda", metavar="DEV", help="cuda (기본), cuda:N, 또는 같은 표를 CPU에서 재는 cpu")
    args = ap.parse_args(argv)
    dtypes = [d.strip() for d in args.dtypes.split(",")]
    if bad := [d for d in dtypes if d not in DTYPES]:
        ap.error(f"--dtypes: 모르는 자료형 {bad} (허용: {', '.join(DTYPES)})")
    if args.prompts > len(PROMPTS):
        ap.error(f"--prompts: {len(PROMPTS)} 이하로 주세요 (지금: {args.prompts})")
    if not (args.device == "cpu" or args.device.startswith("cuda")):
        ap.error(f"--device: cuda, cuda:N 또는 cpu (지금: {args.device!r})")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("CUDA GPU가 없습니다: 이 벤치마크는 NVIDIA GPU에서 돕니다 (같은 표를 CPU에서 보려면 --device cpu)", file=sys.stderr)
        return 2
    import transformers

    transformers.logging.set_verbosity_error()
    where = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "CPU"
    print(f"{where}; torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"transformers {transformers.__version__}; TF32 matmul {torch.backends.cuda.matmul.allow_tf32}; "
          f"{time.strftime('%Y-%m-%d')}")
    for name in dtypes:
        run_dtype(name, DTYPES[name], PROMPTS[: args.prompts], args.tokens, args.reps, args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
