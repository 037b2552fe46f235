"""``decodelab bench NAME``: run one of the repository's benchmarks (``benchmarks/bench_NAME.py``).

Benchmarks compare two things in one run and print ratios (never absolute pass/fail timings):
``decode`` (decodelab vs transformers generate), ``speculative`` (speculative vs target-only
greedy vs transformers assisted generation), ``latency_widget`` (one slider update vs the 30 ms
budget), ``course`` (each notebook's nbval time vs the 120 s budget), ``cuda`` (on an NVIDIA GPU,
or ``--device cpu``: greedy, speculative and batched decoding checked token-identical in float32
and bfloat16, and speculative vs target-only and batch-size throughput measured there),
``memory`` (a full-size random-weight model: a decode step's weight-read bandwidth vs a read probe,
and a pass of k tokens vs one token, in fp32 and bf16).

The benchmarks are scripts of the source checkout, not part of the installed package: they are
looked for in ``$DECODELAB_BENCHMARKS`` (a folder), else in a ``benchmarks/`` folder in the
current directory or one of its parents. From an installed wheel without a checkout the command
says so and exits 2.

Every benchmark runs with a temporary answers folder (``DECODELAB_ANSWERS_DIR`` set to a fresh
temporary directory, removed afterwards), so running one never writes into the user's own
answers (``~/.decodelab/answers``); notebook kernels started by a benchmark inherit it.
"""

from __future__ import annotations

import os
import runpy
import sys
import tempfile
from pathlib import Path

__all__ = ["BENCH_ENV", "available", "find_benchmarks_dir", "main"]

BENCH_ENV = "DECODELAB_BENCHMARKS"
_ANSWERS_ENV = "DECODELAB_ANSWERS_DIR"


def find_benchmarks_dir(start: str | Path | None = None) -> Path | None:
    """The checkout's ``benchmarks/`` folder: ``$DECODELAB_BENCHMARKS``, else the first
    ``benchmarks/`` holding a ``bench_*.py`` in ``start`` (default: the current directory) or
    one of its parents; None when there is none (e.g. an installed wheel outside a checkout)."""
    if os.environ.get(BENCH_ENV):
        p = Path(os.environ[BENCH_ENV]).expanduser()
        return p if p.is_dir() else None
    here = Path(start or Path.cwd()).resolve()
    for base in (here, *here.parents):
        if any((base / "benchmarks").glob("bench_*.py")):
            return base / "benchmarks"
    return None


def available(folder: Path | None = None) -> list[str]:
    """Names of the benchmarks in ``folder`` (default: :func:`find_benchmarks_dir`); [] if none."""
    folder = folder if folder is not None else find_benchmarks_dir()
    if folder is None:
        return []
    return sorted(p.stem[len("bench_"):] for p in folder.glob("bench_*.py"))


_NO_CHECKOUT = (
    "벤치마크는 설치된 패키지가 아니라 저장소의 benchmarks/ 폴더에 있는 스크립트입니다. "
    "저장소를 내려받은 폴더(또는 그 안)에서 실행하거나, 환경 변수 DECODELAB_BENCHMARKS에 "
    "benchmarks 폴더 경로를 주세요."
)


def main(argv: list[str] | None = None) -> int:
    """``decodelab bench NAME [options]``: run ``benchmarks/bench_NAME.py`` with the options.

    Returns the benchmark's exit code (0 when it returns normally), 2 for an unknown name or
    when no ``benchmarks/`` folder is found (Korean message on stderr).
    """
    argv = list(argv or [])
    folder = find_benchmarks_dir()
    names = available(folder)
    if not argv or argv[0] in ("-h", "--help"):
        print("사용법: decodelab bench NAME [options]   (각 벤치마크의 옵션: decodelab bench NAME --help)\n"
              "벤치마크: " + (", ".join(names) if names else "(찾지 못함) " + _NO_CHECKOUT))
        return 0
    if folder is None:
        print(f"decodelab bench: {_NO_CHECKOUT}", file=sys.stderr)
        return 2
    name = argv[0].replace("-", "_")
    if name not in names:
        print(f"알 수 없는 벤치마크: {argv[0]!r}. 가능한 이름: {', '.join(names)}", file=sys.stderr)
        return 2
    saved_argv, saved_answers = sys.argv, os.environ.get(_ANSWERS_ENV)
    with tempfile.TemporaryDirectory(prefix="decodelab-bench-answers-") as answers:
        os.environ[_ANSWERS_ENV] = answers
        sys.argv = [f"decodelab bench {argv[0]}", *argv[1:]]
        try:
            runpy.run_path(str(folder / f"bench_{name}.py"), run_name="__main__")
        except SystemExit as exc:
            code = exc.code
            if code is None or isinstance(code, int):
                return code or 0
            print(code, file=sys.stderr)
            return 1
        finally:
            sys.argv = saved_argv
            if saved_answers is None:
                os.environ.pop(_ANSWERS_ENV, None)
            else:
                os.environ[_ANSWERS_ENV] = saved_answers
    return 0
