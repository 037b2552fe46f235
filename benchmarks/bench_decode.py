"""Benchmark: ms per token of decodelab.generate vs transformers' model.generate, same run.

Both decode greedily with a KV cache on the bundled target, on the same prompts, interleaved
(so machine noise hits both alike). Reports medians and their ratio, plus the "bandwidth
achieved" (weight bytes x decode tokens/s, as gpt-fast prints it) next to this machine's
memory bandwidth measured by a large numpy copy (``decodelab.profiles.measure_this_computer``, the
one place the course measures it).

Run: ``decodelab bench decode`` or ``python benchmarks/bench_decode.py [--tokens 64 --repeats 3]``.
"""

from __future__ import annotations

import statistics as st
import time

import torch

# prompts on which the bundled target writes long answers (few early EOS), so per-token times are comparable
PROMPTS = ["대한민국은 민주공화국이다.", "데비안 패키지는", "국회는 법률을", "셀 서식을 바꾸려면", "대통령은"]

COPY_MIB = 512  # far beyond any CPU cache: main-memory bandwidth


def main(argv=None) -> int:
    from decodelab._cli import ArgumentParser, positive_int

    ap = ArgumentParser(prog="decodelab bench decode",
                        description="decodelab.generate와 transformers generate의 토큰당 ms를 같은 실행에서 비교합니다.")
    ap.add_argument("--tokens", type=positive_int, default=64, metavar="N",
                    help="프롬프트마다 새로 만들 최대 토큰 수, 1 이상 (기본 64)")
    ap.add_argument("--repeats", type=positive_int, default=3, metavar="N",
                    help="프롬프트 5개를 몇 번 돌릴지, 1 이상 (기본 3; 결과는 중앙값)")
    args = ap.parse_args(argv)

    import decodelab
    from decodelab import profiles
    from decodelab.models import bundled

    pair = bundled()
    model, tok = pair.target, pair.tokenizer
    n = args.tokens
    ours_call, theirs_call, ours_tpot, lengths = [], [], [], []
    decodelab.generate(model, tok, PROMPTS[0], 8)  # warm-up
    for _ in range(args.repeats):
        for prompt in PROMPTS:
            t = time.perf_counter()
            r = decodelab.generate(model, tok, prompt, n)
            ours_call.append((time.perf_counter() - t) * 1000 / len(r.token_ids))
            ours_tpot.append(r.tpot_ms)
            ids = torch.tensor([r.prompt_ids])
            t = time.perf_counter()
            with torch.inference_mode():
                out = model.generate(ids, attention_mask=torch.ones_like(ids), max_new_tokens=n, do_sample=False)
            theirs_call.append((time.perf_counter() - t) * 1000 / (out.shape[1] - ids.shape[1]))
            assert out[0, ids.shape[1]:].tolist() == r.token_ids, "greedy outputs differ"
            lengths.append(len(r.token_ids))

    weight_bytes = sum(p.numel() * p.element_size() for p in model.parameters())
    bw = profiles.measure_this_computer(copy_mib=COPY_MIB).bandwidth / 1e9  # GB/s, best of 5 copies
    tps = 1000 / st.median(ours_tpot)
    print(f"bundled target: {sum(p.numel() for p in model.parameters()) / 1e6:.2f} M parameters, "
          f"{weight_bytes / 1e6:.1f} MB in {next(model.parameters()).dtype}; up to {n} new tokens "
          f"(median {st.median(lengths):.0f}, both stop at EOS) x "
          f"{len(PROMPTS)} prompts x {args.repeats} repeats; torch threads {torch.get_num_threads()}")
    print()
    print("| what | median ms/token |")
    print("|---|---|")
    print(f"| decodelab.generate (whole call / tokens) | {st.median(ours_call):.2f} |")
    print(f"| transformers model.generate(do_sample=False) | {st.median(theirs_call):.2f} |")
    print(f"| decodelab TPOT (decode steps only) | {st.median(ours_tpot):.2f} |")
    print()
    print(f"ratio transformers / decodelab (whole call): {st.median(theirs_call) / st.median(ours_call):.2f}x "
          f"(>1 means decodelab is faster)")
    achieved = weight_bytes * tps / 1e9
    print(f"bandwidth achieved: {weight_bytes / 1e6:.1f} MB x {tps:.0f} tokens/s = {achieved:.2f} GB/s; "
          f"machine copy bandwidth (numpy, {COPY_MIB} MiB): {bw:.1f} GB/s; ratio {achieved / bw:.3f}")
    print("(a ratio far below 1 means decode here is bound by per-call overhead, not memory bandwidth)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
