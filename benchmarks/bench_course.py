"""How long the course takes under nbval: each notebook's seconds, and the total against the budget.

Runs ``python -m pytest --nbval-lax --nbval-current-env <notebook>`` once per notebook (in a fresh
process, as CI does), measures wall-clock seconds, and prints a table plus the total as a ratio of
the course budget (issue 6: the whole course, top to bottom, in <= 120 s on 2 cores).

Times are measured on this computer and vary with load; nothing here asserts a time. The exit
status is 1 only when a notebook fails under nbval.

Usage:
    python benchmarks/bench_course.py                      # all notebooks/*.ipynb
    python benchmarks/bench_course.py notebooks/01_decode_phase.ipynb --budget 120 --json out.json
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import time
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BUDGET_S = 120.0  # issue 6, "Speed of the course"
SLOWEST = 3  # cells listed per notebook
# pytest --durations line, e.g. "41.20s call     notebooks/01_decode_phase.ipynb::Cell 8"
DURATION = re.compile(r"^\s*([\d.]+)s call\s+\S+::(.+?)\s*$", re.MULTILINE)


@dataclass
class Timing:
    notebook: str
    seconds: float
    passed: bool
    summary: str
    slowest_cells: list[tuple[str, float]]


def run_notebook(path: Path, python: str, timeout_s: float) -> Timing:
    """Run one notebook under nbval in a fresh pytest process; return its wall-clock seconds."""
    cmd = [python, "-m", "pytest", "--nbval-lax", "--nbval-current-env", "-q", "-p", "no:cacheprovider",
           f"--durations={SLOWEST}", "--durations-min=0.5", str(path)]
    start = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=timeout_s)
        seconds = time.perf_counter() - start
        lines = [l for l in proc.stdout.strip().splitlines() if l.strip()]
        summary = lines[-1] if lines else proc.stderr.strip()[-200:]
        passed = proc.returncode == 0
        slowest = [(m.group(2), float(m.group(1))) for m in DURATION.finditer(proc.stdout)]
        if not passed:
            sys.stderr.write(proc.stdout[-3000:] + proc.stderr[-2000:])
    except subprocess.TimeoutExpired:
        seconds, passed, summary = time.perf_counter() - start, False, f"timed out after {timeout_s:g} s"
        slowest = []
    return Timing(path.name, seconds, passed, summary, slowest)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description="각 노트북의 nbval 실행 시간과 강좌 전체 시간(예산 대비 비율)을 잽니다.")
    p.add_argument("notebooks", nargs="*", type=Path, help="노트북 파일 (기본: notebooks/*.ipynb)")
    p.add_argument("--budget", type=float, default=BUDGET_S, help=f"강좌 전체 시간 예산, 초 (기본 {BUDGET_S:g})")
    p.add_argument("--python", default=sys.executable, help="nbval을 돌릴 파이썬 (기본: 지금 파이썬)")
    p.add_argument("--timeout", type=float, default=600, help="노트북 하나의 제한 시간, 초 (기본 600)")
    p.add_argument("--json", type=Path, default=None, help="결과를 JSON으로도 저장할 경로")
    args = p.parse_args(argv)

    notebooks = args.notebooks or sorted((REPO / "notebooks").glob("*.ipynb"))
    if not notebooks:
        print("노트북이 없습니다: notebooks/*.ipynb", file=sys.stderr)
        return 2
    try:
        from tqdm.auto import tqdm
    except ImportError:  # pragma: no cover
        tqdm = None

    timings: list[Timing] = []
    bar = tqdm(notebooks, desc="nbval", unit="nb") if tqdm else notebooks
    for nb in bar:
        if tqdm:
            bar.set_postfix_str(nb.name)
        timings.append(run_notebook(nb.resolve(), args.python, args.timeout))
    if tqdm:
        bar.close()

    total = sum(t.seconds for t in timings)
    width = max(len(t.notebook) for t in timings)
    print(f"{'notebook':<{width}}  {'seconds':>8}  {'share':>6}  result")
    for t in timings:
        share = t.seconds / total if total else 0.0
        print(f"{t.notebook:<{width}}  {t.seconds:8.1f}  {share:6.1%}  {'ok' if t.passed else 'FAIL'}  ({t.summary})")
        for cell, secs in t.slowest_cells:
            print(f"{'':<{width}}  {secs:8.1f}          slowest: {cell}")
    ratio = total / args.budget
    print(f"{'total':<{width}}  {total:8.1f}  s of budget {args.budget:g} s -> ratio {ratio:.2f} "
          f"({'within' if ratio <= 1 else 'OVER'} budget; measured on this computer, {len(timings)} notebooks)")
    if args.json:
        args.json.write_text(
            json.dumps({"budget_s": args.budget, "total_s": total, "ratio": ratio, "notebooks": [asdict(t) for t in timings]},
                       ensure_ascii=False, indent=2),
            encoding="utf-8",
        )
    return 0 if all(t.passed for t in timings) else 1


if __name__ == "__main__":
    raise SystemExit(main())
