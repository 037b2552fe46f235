"""``decodelab bench NAME``: run one of the repository's benchmarks (``benchmarks/bench_NAME.py``).

Benchmarks compare two things in one run and print ratios (never absolute pass/fail timings):
``decode`` (decodelab vs transformers generate), ``speculative`` (speculative vs target-only
greedy vs transformers assisted generation), ``latency_widget`` (one slider update vs the 30 ms
budget), ``course`` (each notebook's nbval time vs the 120 s budget).
"""

from __future__ import annotations

import runpy
import sys
from pathlib import Path

BENCH_DIR = Path(__file__).resolve().parents[1] / "benchmarks"


def available() -> list[str]:
    """Names of the benchmarks found in ``benchmarks/`` (needs a source checkout)."""
    return sorted(p.stem[len("bench_"):] for p in BENCH_DIR.glob("bench_*.py"))


def main(argv: list[str] | None = None) -> int:
    """``decodelab bench NAME [options]``: run ``benchmarks/bench_NAME.py`` with the options.

    Returns 0 (the benchmark's own exit code on failure), 2 for an unknown name.
    """
    argv = list(argv or [])
    names = available()
    if not argv or argv[0] in ("-h", "--help"):
        print("사용법: decodelab bench NAME [options]\n벤치마크: " + (", ".join(names) or "(benchmarks/ 폴더가 없습니다: 저장소 체크아웃에서 실행하세요)"))
        return 0
    name = argv[0].replace("-", "_")
    if name not in names:
        print(f"알 수 없는 벤치마크: {argv[0]!r}. 가능한 이름: {', '.join(names)}", file=sys.stderr)
        return 2
    sys.argv = [f"bench_{name}.py", *argv[1:]]
    runpy.run_path(str(BENCH_DIR / f"bench_{name}.py"), run_name="__main__")
    return 0
