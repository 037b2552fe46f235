"""The course's decoding on an NVIDIA GPU: exactness under GPU numerics, and what speculative decoding buys there.

    decodelab bench cuda [--tokens 64] [--reps 3] [--prompts 16] [--dtypes float32,bfloat16] [--device cuda]

Without a CUDA GPU it says so and exits 2; ``--device cpu`` prints the same table on the CPU (a
test runs that in a small configuration, since CI has no GPU). For each dtype, on the bundled pair
moved to the device (``load_models(device=..., dtype=...)``):

1. **greedy vs transformers**: ``decodelab.generate`` against transformers'
   ``generate(do_sample=False)`` on the same weights, prompt by prompt (identical outputs, or the
   position of the first difference);
2. **speculative greedy vs target-only greedy**: :func:`decodelab.teach.compare.compare_proposers`
   (``strict=False``) with each proposer of :func:`decodelab.teach.compare.default_methods`; where an
   output differs, the position of the first difference and the target's margin between its two
   best logits there (a near tie that the two computation paths break differently: the
   verification pass scores ``gamma + 1`` tokens in one matrix product, a decode step one);
3. **speed**: each proposer's speedup (target-only ms/token / its ms/token, the median over
   ``--reps`` repetitions, prompt by prompt and interleaved), alpha, mean acceptance length, the
   draft cost ``c`` and the cost of its verification pass, in target decode steps; then the cost
   of verifying n = 2 ... 64 tokens in one target pass (:func:`decodelab.speculative_experiments.measure_costs`);
   sampling with a seed runs on the device and repeats itself;
4. **batching**: :func:`decodelab.batching.batch_generate` with every prompt in one left-padded
   batch against batch-1 greedy decoding (identical rows, or where a row differs and the margin
   there), and :func:`decodelab.batching.batch_sweep`'s TPOT (ms) and aggregate tokens/s for
   B = 1, 4, 16, 64 (the prompts repeated to fill a batch).

It measures and prints; nothing is asserted on time. decodelab's forward passes wait for the
device before a timer is read (``decodelab._torch.synchronize``).
"""

from __future__ import annotations

import os
import re
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

@torch.no_grad()
def _margin(target, ids: list[int]) -> float:
    """The target's margin between its two best logits after ``ids`` (one full forward pass), in
    logit units (float32)."""
    logits = target(input_ids=torch.tensor([ids], device=target.device)).logits[0, -1].float()
    top = torch.topk(logits, 2).values
    return float(top[0] - top[1])


def _differs(target, tok, prompt: str, base: list[int], pos: int) -> str:
    from decodelab.models import format_prompt

    return f"  differs: {prompt!r} at token {pos}, top-2 logit margin there {_margin(target, format_prompt(tok, prompt) + base[:pos]):.4f}"


def run_dtype(name: str, dtype, prompts: list[str], n: int, reps: int, device: str = "cuda") -> None:
    import decodelab
    from decodelab.batching import batch_generate, batch_sweep
    from decodelab.teach.compare import compare_proposers, default_methods, first_difference
    from decodelab.models import format_prompt
    from decodelab.speculative import speculative_generate
    from decodelab.speculative_experiments import measure_costs

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
    diffs = []
    for p in prompts:
        base[p] = decodelab.generate(t, tok, p, n, top_candidates=0, stop_at_eos=False).token_ids
        ids = format_prompt(tok, p)
        x = torch.tensor([ids], device=t.device)
        with torch.inference_mode():
            theirs = t.generate(x, max_new_tokens=n, do_sample=False, attention_mask=torch.ones_like(x))[0, len(ids):].tolist()
        if (pos := first_difference(theirs, base[p])) is not None:
            diffs.append(_differs(t, tok, p, base[p], pos))
    print(f"greedy, decodelab vs transformers generate: {len(prompts) - len(diffs)}/{len(prompts)} prompts identical ({n} tokens)")
    for line in diffs:
        print(line)

    # 2 + 3. speculative greedy vs target-only greedy, timed and interleaved (compare_proposers)
    rows = compare_proposers(t, tok, methods, prompts, n, reps=reps, cost_reps=30, strict=False)
    print(f"{len(prompts)} prompts x {n} tokens; speedup = target-only ms/token / method ms/token, median of {reps} reps")
    print(f"{'method':<20}{'gamma':>6}{'nodes':>6}{'identical':>11}{'alpha':>7}{'MAL':>6}{'speedup':>9}{'c':>7}{'verify':>8}")
    for row in rows:
        print(f"{row.name:<20}{row.gamma:>6}{row.nodes:>6}{len(prompts) - len(row.differences):>7}/{len(prompts):<3}"
              f"{row.alpha:>7.2f}{row.mean_acceptance_length:>6.2f}{row.speedup:>8.2f}x{row.c:>7.2f}{row.verify_cost:>8.2f}")
        for p, pos in row.differences:
            print(_differs(t, tok, p, base[p], pos))

    # sampling runs on the device with a seed, and the same seed gives the same tokens
    same_seed = []
    for k, (d, g) in methods.items():
        runs = [speculative_generate(t, d, tok, prompts[0], n, num_speculative_tokens=g, temperature=0.8, top_p=0.95,
                                     seed=0, stop_at_eos=False).token_ids for _ in range(2)]
        same_seed.append(f"{k} {'yes' if runs[0] == runs[1] else 'NO'}")
    print("sampling (temperature 0.8, top-p 0.95, seed 0), same tokens twice: " + ", ".join(same_seed))

    # 4. batched greedy decoding (every prompt in one left-padded batch) vs batch-1 greedy, and
    # throughput against the batch size (the prompts repeated to fill the larger batches)
    batch = batch_generate(t, tok, prompts, n)
    diffs = [_differs(t, tok, p, base[p], pos) for p, row in zip(prompts, batch.token_ids)
             if (pos := first_difference(row, base[p])) is not None]
    print(f"batched greedy (B={len(prompts)}, left-padded) vs batch-1 greedy: {len(prompts) - len(diffs)}/{len(prompts)} prompts identical")
    for line in diffs:
        print(line)
    pool = prompts * 4
    sizes = [b for b in (1, 4, 16, 64) if b <= len(pool)]
    sweep = batch_sweep(t, tok, n, sizes, prompts=pool, repeats=3)
    print("batch size B: TPOT ms / aggregate tokens/s = "
          + ", ".join(f"B={r.batch_size}: {r.tpot_ms:.2f} / {r.tokens_per_s:,.0f}" for r in sweep))

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
                    help="쉼표로 나눈 자료형: float32, bfloat16, float16 (fp32, bf16, fp16도 됨; 기본 float32,bfloat16)")
    ap.add_argument("--device", default="cuda", metavar="DEV", help="cuda (기본), cuda:N, 또는 같은 표를 CPU에서 재는 cpu")
    args = ap.parse_args(argv)
    from decodelab.models import resolve_dtype

    dtypes = []
    for name in (d.strip() for d in args.dtypes.split(",")):
        try:
            dtypes.append((name, resolve_dtype(name, "cpu")))  # the names load_models takes: float32, fp32, bf16...
        except ValueError:
            ap.error(f"--dtypes: 모르는 자료형 {name!r} (허용: float32, bfloat16, float16 또는 fp32, bf16, fp16)")
    if args.prompts > len(PROMPTS):
        ap.error(f"--prompts: {len(PROMPTS)} 이하로 주세요 (지금: {args.prompts})")
    if not re.fullmatch(r"cpu|cuda(:\d+)?", args.device):
        ap.error(f"--device: cuda, cuda:N 또는 cpu (지금: {args.device!r})")
    if args.device.startswith("cuda") and not torch.cuda.is_available():
        print("CUDA GPU가 없습니다: 이 벤치마크는 NVIDIA GPU에서 돕니다 (같은 표를 CPU에서 보려면 --device cpu)", file=sys.stderr)
        return 2
    if ":" in args.device and int(args.device.split(":")[1]) >= torch.cuda.device_count():
        ap.error(f"--device: 이 컴퓨터의 GPU는 {torch.cuda.device_count()}개입니다 (cuda:0 ~ cuda:{torch.cuda.device_count() - 1})")
    import transformers

    transformers.logging.set_verbosity_error()
    where = torch.cuda.get_device_name(args.device) if args.device.startswith("cuda") else "CPU"
    print(f"{where}; torch {torch.__version__}, CUDA {torch.version.cuda}, "
          f"transformers {transformers.__version__}; TF32 matmul {torch.backends.cuda.matmul.allow_tf32}; "
          f"{time.strftime('%Y-%m-%d')}")
    for name, dtype in dtypes:
        run_dtype(name, dtype, PROMPTS[: args.prompts], args.tokens, args.reps, args.device)
    return 0


if __name__ == "__main__":
    sys.exit(main())
