"""The ``decodelab`` command: ``decodelab lab | measure | grade | quiz view | bench | train | classroom | card``.

Each subcommand delegates to a ``main(argv)`` function of the module that owns the work, imported
only when that subcommand runs (so ``decodelab --help`` is instant and needs no torch).
"""

from __future__ import annotations

import importlib
import sys

#: name -> (module:function, one-line Korean help)
COMMANDS = {
    "lab": ("decodelab.tools.lab:main", "JupyterLab에서 강좌 첫 노트북을 엽니다 (학생의 시작점; --target/--draft로 내 모델 쌍)"),
    "measure": ("decodelab.serving:main", "OpenAI 호환 서버의 TTFT·TPOT·ITL을 잽니다: decodelab measure --endpoint URL"),
    "grade": ("decodelab.assess.report:main", "연습 답 내보내기 파일 폴더로 연습 보고서 CSV를 만듭니다 (성적이 아님: 성적은 decodelab classroom): decodelab grade DIR -o report.csv"),
    "quiz": ("decodelab.assess.quiz.cli:quiz_main", "퀴즈 도구: decodelab quiz view QID KEY (학생이 본 선택지 순서와 번호)"),
    "bench": ("decodelab.tools.bench:main", "저장소의 벤치마크를 실행합니다 (decodelab bench --help: 목록)"),
    "train": ("decodelab.tools.train:main", "대상/초안 모델 쌍을 다시 학습합니다 (기본 저장 폴더 ./decodelab-models; beautifulsoup4와 apt-get 필요). decodelab train eagle: EAGLE 초안 머리 (내려받기 없음)"),
    "classroom": ("decodelab.classroom.cli:main", "수업용: JupyterHub와 nbgrader로 강좌를 엽니다 (decodelab classroom init DIR)"),
    "card": ("decodelab.tools.card:main", "모델 카드(MODEL_CARD.md)를 다시 측정해 보여 줍니다 (번들 모델, 또는 --folder: decodelab train이 만든 폴더; --write: 파일에 씀)"),
}


def usage(prog: str, commands: dict) -> str:
    """The Korean usage text of a command table ``{name: (module:function, help)}``."""
    width = max(map(len, commands))
    lines = [f"사용법: {prog} <명령> [옵션]", "", "명령:"]
    lines += [f"  {name:<{width}} {text}" for name, (_, text) in commands.items()]
    lines += ["", f"각 명령의 옵션: {prog} <명령> --help"]
    return "\n".join(lines)


def dispatch(prog: str, commands: dict, argv: list[str]) -> int:
    """Run ``argv[0]`` of ``commands`` (``{name: ("module:function", help)}``) with the rest of
    ``argv``; the function is imported only then. Returns its exit code: 0 after printing the
    usage for no argument or ``-h``, 2 for an unknown command."""
    if not argv or argv[0] in ("-h", "--help", "help"):
        print(usage(prog, commands))
        return 0
    name, rest = argv[0], argv[1:]
    if name not in commands:
        print(f"알 수 없는 명령입니다: {name!r}\n\n{usage(prog, commands)}", file=sys.stderr)
        return 2
    module, func = commands[name][0].split(":")
    return int(getattr(importlib.import_module(module), func)(rest) or 0)


def main(argv: list[str] | None = None) -> int:
    """Entry point of the ``decodelab`` console script. Returns the process exit code."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in ("--version", "-V"):
        from .. import __version__

        print(__version__)
        return 0
    return dispatch("decodelab", COMMANDS, argv)


if __name__ == "__main__":
    raise SystemExit(main())
