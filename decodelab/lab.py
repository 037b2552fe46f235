"""`decodelab lab`: the lecturer's command. Opens JupyterLab on the course's first notebook.

Runs JupyterLab's own launcher (``python -m jupyterlab``) with the same Python that runs
decodelab, so the kernel sees the installed package, the bundled models and the widget
extension. The server listens on ``127.0.0.1`` only.

Port rule: with the default port (8888) taken, the next free port is chosen and the lecturer is
told so in Korean; with a port given explicitly (``--port 9000``) and taken, the command stops
with a Korean message that suggests another ``--port``.
"""

from __future__ import annotations

import argparse
import errno
import os
import shlex
import socket
import subprocess
import sys
from pathlib import Path

__all__ = [
    "DEFAULT_PORT",
    "FIRST_NOTEBOOK",
    "PortInUseError",
    "build_command",
    "choose_port",
    "find_notebooks_dir",
    "main",
    "port_is_free",
]

DEFAULT_PORT = 8888
DEFAULT_HOST = "127.0.0.1"
#: The course's first notebook, relative to the notebooks folder.
FIRST_NOTEBOOK = "01_decode_phase.ipynb"
#: How many ports after the default one are tried before giving up.
PORT_SEARCH_SPAN = 20


class PortInUseError(RuntimeError):
    """The requested port is in use (the message, in Korean, says which option to change)."""


def port_is_free(port: int, host: str = DEFAULT_HOST) -> bool:
    """Whether a TCP server could listen on ``host:port`` right now.

    Binds a throwaway socket the way Tornado (JupyterLab's web server) does, with
    ``SO_REUSEADDR``, so a port left in TIME_WAIT by a server that just stopped counts as free and
    a port another server is listening on counts as taken.

    Args:
        port: TCP port, 1-65535.
        host: address to bind, e.g. ``"127.0.0.1"``.

    Returns:
        True if the bind succeeded.

    Raises:
        ValueError: if ``port`` is outside 1-65535.
    """
    if not 1 <= int(port) <= 65535:
        raise ValueError(f"port={port!r}: 포트(--port)는 1~65535 사이의 정수여야 합니다.")
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as sock:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, int(port)))
        except OSError as exc:
            if exc.errno in (errno.EADDRINUSE, errno.EACCES):
                return False
            raise
    return True


def choose_port(
    requested: int = DEFAULT_PORT,
    *,
    explicit: bool = False,
    host: str = DEFAULT_HOST,
    span: int = PORT_SEARCH_SPAN,
) -> tuple[int, str | None]:
    """Pick the port JupyterLab will listen on.

    Args:
        requested: the wanted port (default 8888).
        explicit: True when the user typed ``--port``: then a taken port is an error, because
            the lecturer may have told students that exact address.
        host: address the server will bind.
        span: how many following ports to try when ``explicit`` is False.

    Returns:
        ``(port, message)``: ``message`` is None when ``requested`` was free, otherwise a Korean
        sentence saying which port is used instead.

    Raises:
        PortInUseError: ``explicit`` and the port is taken, or no free port among
            ``requested .. requested + span``; the message suggests ``--port``.
        ValueError: ``requested`` outside 1-65535.
    """
    if port_is_free(requested, host):
        return requested, None
    if explicit:
        raise PortInUseError(
            f"포트 {requested}번은 이미 다른 프로그램(아마 다른 Jupyter 서버)이 쓰고 있습니다. "
            f"다른 포트를 지정하세요. 예: decodelab lab --port {_suggest(requested, host)}"
        )
    for port in range(requested + 1, min(requested + span, 65535) + 1):
        if port_is_free(port, host):
            return port, (
                f"포트 {requested}번은 이미 사용 중이라 {port}번 포트로 JupyterLab을 엽니다. "
                f"(특정 포트를 쓰려면: decodelab lab --port 번호)"
            )
    raise PortInUseError(
        f"포트 {requested}~{requested + span}번이 모두 사용 중입니다. "
        f"빈 포트를 직접 지정하세요. 예: decodelab lab --port {_suggest(requested + span, host)}"
    )


def _suggest(after: int, host: str) -> int:
    """A free port above ``after`` to put in an error message (any free port if none nearby)."""
    for port in range(after + 1, min(after + 100, 65535) + 1):
        if port_is_free(port, host):
            return port
    with socket.socket() as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def find_notebooks_dir(start: str | Path | None = None) -> Path:
    """Locate the course's ``notebooks/`` folder.

    Looks, in order, in ``start`` (default: the current directory) and each of its parents, for a
    ``notebooks/`` folder holding the first notebook, then in the source checkout this package
    was installed from (``<repo>/notebooks``).

    Returns:
        The absolute path of the folder.

    Raises:
        FileNotFoundError: none found; the Korean message names ``--notebooks-dir``.
    """
    here = Path(start or Path.cwd()).resolve()
    candidates = [here, *here.parents, Path(__file__).resolve().parent.parent]
    for base in candidates:
        for folder in (base / "notebooks", base):
            if (folder / FIRST_NOTEBOOK).is_file():
                return folder
    raise FileNotFoundError(
        f"강좌 노트북 폴더(notebooks/, 첫 노트북 {FIRST_NOTEBOOK})를 찾지 못했습니다 "
        f"(찾아본 곳: {here} 와 그 상위 폴더). 저장소 폴더에서 실행하거나 "
        f"--notebooks-dir 로 폴더를 지정하세요."
    )


def build_command(
    notebooks_dir: Path,
    port: int,
    *,
    open_browser: bool = True,
    notebook: str = FIRST_NOTEBOOK,
    host: str = DEFAULT_HOST,
    python: str = sys.executable,
) -> list[str]:
    """The ``python -m jupyterlab`` command line that serves ``notebooks_dir`` and opens ``notebook``.

    ``--ServerApp.port_retries=0`` makes JupyterLab use exactly ``port`` (the choice and its
    message are :func:`choose_port`'s job), and the notebook path is given relative to the root
    so JupyterLab opens it at ``/lab/tree/<notebook>``.
    """
    cmd = [
        python,
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={notebooks_dir}",
        f"--ServerApp.ip={host}",
        f"--ServerApp.port={port}",
        "--ServerApp.port_retries=0",
    ]
    if not open_browser:
        cmd.append("--no-browser")
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")  # containers and lab machines often run as root
    cmd.append(str(notebooks_dir / notebook))
    return cmd


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="decodelab lab",
        description="강좌의 첫 노트북(notebooks/01_decode_phase.ipynb)을 JupyterLab에서 엽니다.",
    )
    p.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"JupyterLab 포트 (기본 {DEFAULT_PORT}; 기본 포트가 사용 중이면 다음 빈 포트를 씁니다)",
    )
    p.add_argument("--no-browser", action="store_true", help="브라우저를 자동으로 열지 않습니다 (주소만 출력)")
    p.add_argument("--notebooks-dir", type=Path, default=None, help="노트북 폴더 (기본: 현재 폴더에서 찾은 notebooks/)")
    p.add_argument("--notebook", default=FIRST_NOTEBOOK, help=f"처음 열 노트북 파일 이름 (기본 {FIRST_NOTEBOOK})")
    p.add_argument("--dry-run", action="store_true", help="실행할 명령만 출력하고 JupyterLab은 시작하지 않습니다")
    return p


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``decodelab lab``; returns the process exit code.

    Exit codes: JupyterLab's own code (0 after it is stopped with Ctrl+C), 2 for a usage problem (taken explicit port,
    no notebooks folder, unknown notebook), with a Korean message on stderr.
    """
    args = _parser().parse_args(argv)
    try:
        folder = args.notebooks_dir.resolve() if args.notebooks_dir else find_notebooks_dir()
        if not (folder / args.notebook).is_file():
            raise FileNotFoundError(
                f"노트북 {folder / args.notebook} 이(가) 없습니다. --notebook 으로 있는 파일 이름을 주세요 "
                f"(있는 노트북: {', '.join(sorted(p.name for p in folder.glob('*.ipynb'))) or '없음'})."
            )
        port, note = choose_port(args.port or DEFAULT_PORT, explicit=args.port is not None)
    except (PortInUseError, FileNotFoundError, ValueError) as exc:
        print(f"decodelab lab: {exc}", file=sys.stderr)
        return 2
    if note:
        print(note, file=sys.stderr)
    cmd = build_command(folder, port, open_browser=not args.no_browser, notebook=args.notebook)
    if args.dry_run:
        print(shlex.join(cmd))
        return 0
    print(
        f"JupyterLab을 {port}번 포트에서 시작합니다. 브라우저가 열리지 않으면 아래 로그에 나오는 "
        f"http://{DEFAULT_HOST}:{port}/lab?token=... 주소를 여세요. 끝내려면 Ctrl+C를 두 번 누르세요.",
        file=sys.stderr,
    )
    proc = subprocess.Popen(cmd, cwd=folder, env=os.environ.copy())
    while True:
        try:
            code = proc.wait()
        except KeyboardInterrupt:
            # JupyterLab gets the same Ctrl+C and handles it (asks to confirm; a second Ctrl+C
            # quits); keep waiting so its shutdown messages are not cut off.
            continue
        return 0 if code in (-2, 130) else code


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
