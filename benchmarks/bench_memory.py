"""Benchmark: a decode step of a full-size model is memory-bound here; verifying k tokens costs about one step.

Builds a Llama-shaped model with random weights (``decodelab.memory_bound.random_model``, default
"400m": 418 M parameters, nothing downloaded), then in one run:

* the read-bandwidth probe (sum over a buffer 8x the last-level cache, at least 256 MiB);
* per dtype (fp32, bf16): the weight bytes a decode step reads, the step's time (k = 1), the
  weight-read bandwidth it achieves and its fraction of the probe;
* the time of one pass of k = 1, 2, 4, ..., 64 tokens and its ratio to k = 1 (a verification
  pass of speculative decoding reads the same weights as one step);
* this computer's ridge point per dtype (square-matmul FLOP/s / probe) and the k where a pass
  would meet it; whether the CPU has bfloat16 instructions (AVX512_BF16, AMX_BF16, Arm BF16).

Goals (issue 43, reported, never asserted): decode at >= 0.75 of the probe in the best dtype;
a pass of 8 tokens <= 1.2x one token in bf16 on a CPU with AVX512_BF16 or AMX.

Run: ``decodelab bench memory [--size 400m --repeats 3 --threads N --json out.json]``.
"""

from __future__ import annotations

import json
import sys


def main(argv=None) -> int:
    from decodelab._cli import ArgumentParser, positive_int
    from decodelab.memory_bound import DEFAULT_SIZE, KS, SIZES

    ap = ArgumentParser(prog="decodelab bench memory",
                        description="무작위 가중치의 실제 크기 모델로 디코드 스텝이 메모리 한계인지, "
                                    "토큰 k개 순전파가 스텝 하나와 얼마나 다른지 같은 실행에서 잽니다.")
    ap.add_argument("--size", choices=list(SIZES), default=DEFAULT_SIZE,
                    help=f"모델 크기 (기본 {DEFAULT_SIZE}; tiny는 캐시에 들어가는 시험용)")
    ap.add_argument("--repeats", type=positive_int, default=3, metavar="N",
                    help="k마다 잴 순전파 수, 1 이상 (기본 3; 결과는 중앙값)")
    ap.add_argument("--threads", type=positive_int, default=None, metavar="N",
                    help="torch 스레드 수 (기본: torch의 현재 설정)")
    ap.add_argument("--ks", default=",".join(map(str, KS)), metavar="K,K,...",
                    help=f"순전파당 토큰 수, 쉼표로 구분, 1을 포함 (기본 {','.join(map(str, KS))})")
    ap.add_argument("--json", default=None, metavar="PATH", help="결과를 JSON으로도 씁니다")
    args = ap.parse_args(argv)
    try:
        ks = [int(k) for k in args.ks.split(",")]
    except ValueError:
        ap.error(f"argument --ks: 쉼표로 구분한 정수가 아닙니다: {args.ks!r}")

    import torch

    from decodelab.memory_bound import measure_memory_bound

    try:
        r = measure_memory_bound(args.size, ks=ks, repeats=args.repeats, num_threads=args.threads)
    except (MemoryError, ValueError, TypeError) as exc:
        print(f"decodelab bench memory: {exc}", file=sys.stderr)
        return 2
    gb = 1e9
    print(f"model: Llama-shaped, random weights, size {r.size}: {r.n_params / 1e6:.1f} M parameters; "
          f"context {r.context} tokens; torch {torch.__version__}, threads {r.threads}")
    print(f"CPU: {r.bf16.describe()}")
    print(f"read-bandwidth probe: {r.probe / gb:.1f} GB/s")
    print()
    print("| dtype | weight bytes | step ms (k=1) | achieved GB/s | fraction of probe | ridge FLOP/byte | k at ridge |")
    print("|---|---|---|---|---|---|---|")
    for d in r.dtypes:
        print(f"| {d} | {r.weight_bytes[d]:,} | {r.step_ms(d):.1f} | {r.achieved(d) / gb:.1f} | {r.fraction(d):.2f} "
              f"| {r.ridge_point(d):.1f} | {r.ridge_k(d):.1f} |")
    print()
    print("| k | " + " | ".join(f"{d} ms | {d} / k=1" for d in r.dtypes) + " |")
    print("|---|" + "---|---|" * len(r.dtypes))
    for i, k in enumerate(r.ks):
        print(f"| {k} | " + " | ".join(f"{r.ms[d][i]:.1f} | {r.ratio(d, k):.2f}" for d in r.dtypes) + " |")
    print()
    best = max(r.dtypes, key=r.fraction)
    print(f"goal 1, decode >= 0.75 of the probe in the best dtype: {best} {r.fraction(best):.2f} "
          f"({'met' if r.fraction(best) >= 0.75 else 'not met'})")
    if "bf16" in r.dtypes and 8 in r.ks:
        where = "this CPU has bf16 instructions" if r.bf16.fast else "this CPU has no bf16 instructions: goal not applicable"
        print(f"goal 2, a pass of 8 tokens <= 1.2x one token in bf16: {r.ratio('bf16', 8):.2f}x "
              f"({'met' if r.ratio('bf16', 8) <= 1.2 else 'not met'}; {where})")
    if "fp32" in r.dtypes and 8 in r.ks:
        print(f"fp32, a pass of 8 tokens: {r.ratio('fp32', 8):.2f}x one token")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(r.as_dict(), f, indent=1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
