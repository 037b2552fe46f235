"""Benchmark: the roofline's shape on this computer, as ratios of one run's step times.

Times one fp32 weight matrix (sized from the last-level cache) times B vectors for B = 1 ... 256
(``decodelab.latency_measure.measure_matmul_roofline``) and prints, per B, the step time relative
to B = 1 and to the roofline's prediction. Memory-bound (B below the measured ridge batch) the
ratio to B = 1 stays near 1 (the matrix-matrix kernel of B >= 2 may cost up to 2x once); compute-bound it grows
about in proportion to B. Nothing here asserts a time.

Run: ``python benchmarks/bench_matmul_roofline.py [--repeats 5 --threads 1]``.
"""

from __future__ import annotations

import argparse


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--threads", type=int, default=1)
    args = ap.parse_args(argv)

    from decodelab.latency_measure import measure_matmul_roofline

    r = measure_matmul_roofline(repeats=args.repeats, num_threads=args.threads)
    pred = r.predicted_ms()
    print(f"matrix {r.n}x{r.n} fp32 = {r.weight_bytes / 2**20:.0f} MiB; last-level cache {r.llc_bytes / 2**20:.0f} MiB "
          f"({r.llc_source}); {r.threads} thread(s)")
    print(f"{'B':>5} {'ms':>9} {'/ B=1':>7} {'/ roofline':>11}")
    for b, ms, p in zip(r.batch_sizes, r.ms, pred):
        print(f"{b:>5} {ms:>9.2f} {ms / r.ms[0]:>7.2f} {ms / p:>11.2f}")
    print(f"bandwidth {r.bandwidth / 1e9:.1f} GB/s, peak {r.peak_flops / 1e9:.1f} GFLOP/s, "
          f"ridge {r.ridge_point:.1f} FLOP/byte (B ~ {r.ridge_batch:.0f})")
    flat = [b for b in r.batch_sizes if 2 <= b <= max(2, r.ridge_batch)]
    last, ref = r.batch_sizes[-1], r.batch_sizes[-1] // 8
    print(f"memory-bound: t(B={flat[-1]}) / t(B=2) = {r.ratio(flat[-1]) / r.ratio(2):.2f} (flat: near 1)")
    if ref in r.batch_sizes:
        print(f"compute-bound: t(B={last}) / t(B={ref}) = {r.ratio(last) / r.ratio(ref):.1f} (grows with B: up to 8)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
