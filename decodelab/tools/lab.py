"""`decodelab lab`: opens JupyterLab on the course's first notebook (the student's start).

Notebooks folder: ``--notebooks-dir DIR`` if given (it must exist; opened as it is, for the course's
authors); else, from a source checkout (a git clone: a ``notebooks/`` folder at or above the current
directory), the student's working copy in ``~/decodelab-notebooks`` (:func:`working_copy`), so that
opening and saving never changes the checkout's tracked files; else (an installed wheel) the
student's own copy in ``./decodelab-notebooks``, made from the notebooks bundled in the package
(:func:`student_copy`). Both copies come from :func:`copy_course`: a notebook already there (the
student's edited copy) is never overwritten, and the copies are not jupytext-paired (a pairing in a
student's copy could leave the notebook unopenable: a save killed between the ``.ipynb`` and its
text twin made the notebook newer than the twin, and jupytext then answered HTTP 400).

News: the lab is started with decodelab's Jupyter config folder in ``JUPYTER_CONFIG_PATH``
(``decodelab/assets/jupyter``): its ``labconfig/page_config.json`` turns JupyterLab's announcements
plugin off, so no "Jupyter news?" pop-up covers the first notebook. The user's own settings are
not touched.

Model pair: ``--target DIR [--draft DIR]`` sets ``DECODELAB_TARGET`` / ``DECODELAB_DRAFT`` (absolute
paths, checked to be model folders) for the JupyterLab server and so for every notebook kernel it
starts: ``decodelab.load_models()`` then loads that pair instead of the bundled one.

The server: once the folder is ready, this process becomes JupyterLab's own launcher
(``python -m jupyterlab`` with the same Python, so kernels see the installed package, the bundled
models and the widget extension; :func:`os.execve`, :func:`exec_jupyterlab`). There is no second
process: Ctrl+C, ``kill`` (SIGTERM) or a closed terminal reach JupyterLab itself, which stops its
kernels and frees the port. jupyter_server's own settings (:func:`build_command`) do the rest:

- address: ``127.0.0.1`` only (``ServerApp.ip``);
- port: without ``--port``, jupyter_server's (8888, or the next free one: ``ServerApp.port_retries``);
  with ``--port P`` exactly P (``port_retries=0``: the lecturer may have told students that address),
  and a taken P stops ``decodelab lab`` with a Korean message before anything starts;
- token: jupyter_server makes the access token and prints the addresses that carry it;
- start page: ``LabApp.default_url`` is the notebook's page (``/lab/tree/<notebook>``), so the
  address jupyter_server prints, and the browser it opens, land on the first notebook.
"""

from __future__ import annotations

import errno
import importlib.util
import json
import os
import re
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import urllib.parse
from pathlib import Path

from .._atomic import atomic_write_text
from .._check import check
from .._cli import ArgumentParser
from .._paths import ASSETS, NOTEBOOKS_DIR

__all__ = [
    "DEFAULT_PORT",
    "FIRST_NOTEBOOK",
    "PortInUseError",
    "build_command",
    "copy_course",
    "exec_jupyterlab",
    "find_notebooks_dir",
    "main",
    "notebook_url_path",
    "pair_env",
    "port_is_free",
    "student_copy",
    "unpair",
    "working_copy",
]

#: jupyter_server's own default port (``ServerApp.port``), used when ``--port`` is not given.
DEFAULT_PORT = 8888
DEFAULT_HOST = "127.0.0.1"
#: The course's first notebook, relative to the notebooks folder.
FIRST_NOTEBOOK = "01_decode_phase.ipynb"
#: Where ``decodelab lab`` puts a student's copy of the bundled notebooks when run outside a checkout.
STUDENT_DIR = "decodelab-notebooks"
#: The student's working copy when ``decodelab lab`` runs from a source checkout: ``~/<this>``.
WORK_DIR = "decodelab-notebooks"
#: decodelab's Jupyter config folder (put first in ``JUPYTER_CONFIG_PATH`` of the lab it starts).
JUPYTER_CONFIG = ASSETS / "jupyter"


class PortInUseError(RuntimeError):
    """The port given with ``--port`` is in use (the message, in Korean, says what to change)."""


def _check_port(port) -> int:
    """The one port check of ``decodelab lab`` (TypeError for a non-integer, ValueError outside 1-65535)."""
    return check("port", port, "포트(--port)", low=1, high=65535, integer=True)


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
    _check_port(port)
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


def _require_free(port: int, host: str = DEFAULT_HOST) -> None:
    """Raise :class:`PortInUseError` (Korean) when the port given with ``--port`` is taken: jupyter_server
    would stop with an English line, and the lecturer should learn which option to change."""
    if not port_is_free(port, host):
        raise PortInUseError(
            f"포트 {port}번은 이미 다른 프로그램(아마 다른 Jupyter 서버)이 쓰고 있습니다. 다른 포트를 지정하거나"
            f"(예: decodelab lab --port 9000) --port 를 빼면 JupyterLab이 {DEFAULT_PORT}번부터 빈 포트를 찾아 씁니다."
        )


def find_notebooks_dir(start: str | Path | None = None) -> Path | None:
    """The course's ``notebooks/`` folder of a source checkout at or above ``start``, if any.

    Looks in ``start`` (default: the current directory) and each of its parents for a
    ``notebooks/`` folder (or the folder itself) holding the first notebook.

    Returns:
        The absolute path of the folder, or None when there is none (then :func:`student_copy`
        makes the student's own copy of the bundled notebooks).
    """
    here = Path(start or Path.cwd()).resolve()
    for base in (here, *here.parents):
        for folder in (base / "notebooks", base):
            if (folder / FIRST_NOTEBOOK).is_file():
                return folder
    return None


def unpair(path: str | Path) -> bool:
    """Turn off the jupytext pairing of the notebook at ``path`` (its ``metadata.jupytext``), keeping
    every cell and output: the notebook then opens from the ``.ipynb`` alone, whatever its text twin
    (``src/NN_*.md``) says or how old it is. The file is rewritten atomically (its permission bits
    kept).

    Returns:
        True when a pairing was removed; False when there was none, or the file is not a notebook
        JSON (then it is left untouched).
    """
    path = Path(path)
    if not path.is_file():  # a folder, a FIFO (reading it would wait forever), a device: not a notebook
        return False
    try:
        nb = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, ValueError):
        return False
    meta = nb.get("metadata") if isinstance(nb, dict) else None
    if not isinstance(meta, dict) or "jupytext" not in meta:
        return False
    del meta["jupytext"]
    atomic_write_text(path, json.dumps(nb, indent=1, ensure_ascii=False) + "\n")
    return True


def course_files(src: str | Path) -> tuple[list[Path], list[Path]]:
    """What a student's copy of the course holds, in the folder ``src``: the notebooks
    (``NN_*.ipynb``) and the files beside them that they use (the diagrams ``figures/*.svg`` and
    ``rise.css``), each list sorted; only files that exist."""
    src = Path(src)
    notebooks = sorted(p for p in src.glob("[0-9][0-9]*_*.ipynb") if p.is_file())
    extras = [p for p in [*sorted((src / "figures").glob("*.svg")), src / "rise.css"] if p.is_file()]
    return notebooks, extras


def copy_course(src: str | Path, dest: str | Path) -> list[str]:
    """Give ``dest`` the course notebooks of ``src`` that it lacks (``NN_*.ipynb``), without pairing.

    A notebook already in ``dest`` (the student's, perhaps edited) is never overwritten; if it still
    carries a jupytext pairing it is unpaired in place (:func:`unpair`), so a notebook left newer than
    its twin by an interrupted save opens again. A new copy is written unpaired. The diagrams the
    notebooks embed (``figures/*.svg``) and ``rise.css`` are copied beside them the same way (never
    overwritten); :func:`course_files` says which files.

    Returns:
        The names of the notebooks copied now.
    """
    src, dest = Path(src), Path(dest)
    dest.mkdir(parents=True, exist_ok=True)
    copied = []
    notebooks, extras = course_files(src)
    for nb in notebooks:
        target = dest / nb.name
        if target.exists():
            unpair(target)
            continue
        shutil.copyfile(nb, target)
        unpair(target)
        copied.append(nb.name)
    for item in extras:
        target = dest / item.relative_to(src)
        if not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(item, target)
    return copied


def student_copy(dest: str | Path = STUDENT_DIR) -> tuple[Path, list[str]]:
    """Copy the course notebooks bundled in the package into ``dest`` (created if missing).

    The notebooks are read from :data:`decodelab._paths.NOTEBOOKS_DIR` (``importlib.resources``),
    so an installed wheel gives a student the same notebooks as the repository; they are copied by
    :func:`copy_course` (never overwriting the student's own, unpaired, with their diagrams and
    ``rise.css``).

    Returns:
        ``(absolute dest, names of the notebooks copied now)``.

    Raises:
        FileNotFoundError: the package holds no notebooks (Korean message).
    """
    if not NOTEBOOKS_DIR.is_dir() or not any(NOTEBOOKS_DIR.glob("[0-9][0-9]*_*.ipynb")):
        raise FileNotFoundError(
            f"패키지에 강좌 노트북이 없습니다({NOTEBOOKS_DIR}). decodelab을 다시 설치하거나 "
            f"--notebooks-dir 로 노트북 폴더를 지정하세요."
        )
    dest = Path(dest).resolve()
    return dest, copy_course(NOTEBOOKS_DIR, dest)


#: the decodelab imports a notebook's code makes: ``from decodelab.x import ...``, ``import decodelab.x``
_IMPORT = re.compile(r"^\s*(?:from\s+(decodelab(?:\.\w+)*)\s+import\s+([\w\s,()]+?)\s*(?:#.*)?$"
                     r"|import\s+(decodelab(?:\.\w+)+))", re.MULTILINE)


def stale_notebooks(folder: str | Path) -> list[str]:
    """The course notebooks in ``folder`` (``NN_*.ipynb``) whose code imports a decodelab module
    this installation does not have: copies made by an older decodelab (e.g. ``from decodelab import
    exercises`` before the package's layout put it in ``decodelab.assess``), which would stop at their
    first cell with an English ImportError. :func:`copy_course` never overwrites them (they are the
    student's); :func:`main` says what to do. A notebook that cannot be read is left out.

    Returns:
        Their file names, sorted.
    """
    import decodelab

    known = set(dir(decodelab))

    def missing(module: str) -> bool:
        try:
            return importlib.util.find_spec(module) is None
        except (ImportError, ValueError):
            return True

    stale = []
    for nb in sorted(Path(folder).glob("[0-9][0-9]*_*.ipynb")):
        try:
            cells = json.loads(nb.read_text(encoding="utf-8")).get("cells", [])
            code = "\n".join("".join(c.get("source", "")) for c in cells if c.get("cell_type") == "code")
        except (OSError, ValueError, AttributeError, TypeError):
            continue
        for m in _IMPORT.finditer(code):
            module, names, plain = m.group(1), m.group(2), m.group(3)
            if plain and missing(plain):
                break
            if module and module != "decodelab" and missing(module):
                break
            if module == "decodelab":
                words = [w.split(" as ")[0].strip() for w in names.strip("() ").split(",") if w.strip()]
                if any(w not in known and missing(f"decodelab.{w}") for w in words):
                    break
        else:
            continue
        stale.append(nb.name)
    return stale


def _stale_note(folder: Path, stale: list[str]) -> str:
    return (f"주의: {folder} 의 노트북 {', '.join(stale)} 은(는) 예전 decodelab에 맞춰 복사된 것이라 첫 셀에서 "
            "멈춥니다(ImportError). 그 파일의 이름을 바꾸거나(예: 01_decode_phase-예전.ipynb) 지운 뒤 다시 "
            "decodelab lab 을 실행하면 새 노트북이 복사됩니다. 예측·답은 ~/.decodelab/answers 에 그대로 남습니다.")


def _in_git_checkout(folder: Path) -> bool:
    """Whether ``folder`` lies in a git work tree (a ``.git`` folder or file at or above it)."""
    return any((p / ".git").exists() for p in (folder, *folder.parents))


def working_copy(checkout_notebooks: str | Path, home: str | Path | None = None) -> tuple[Path, list[str]]:
    """The student's working copy of a checkout's notebooks: ``<home>/decodelab-notebooks``
    (``home``: default the user's home folder), filled by :func:`copy_course` from
    ``checkout_notebooks``. The checkout's tracked files are only read.

    Returns:
        ``(absolute folder, names of the notebooks copied now)``.
    """
    dest = (Path(home) if home is not None else Path.home()) / WORK_DIR
    return dest.resolve(), copy_course(checkout_notebooks, dest)


def lab_env() -> dict[str, str]:
    """The environment additions of the lab that ``decodelab lab`` starts: ``JUPYTER_CONFIG_PATH`` with
    :data:`JUPYTER_CONFIG` first (its ``labconfig/page_config.json`` turns off the announcements
    plugin: no news pop-up; and nbgrader's lab extension, which a venv set up for the tests holds:
    no "Nbgrader" menu or "Create Assignment" panel in a student's lab; the hub's student servers and
    formgrader do not use this folder), followed by any ``JUPYTER_CONFIG_PATH`` already set."""
    rest = os.environ.get("JUPYTER_CONFIG_PATH")
    return {"JUPYTER_CONFIG_PATH": os.pathsep.join([str(JUPYTER_CONFIG), *([rest] if rest else [])])}


def notebook_url_path(notebook: str = FIRST_NOTEBOOK) -> str:
    """JupyterLab's page of ``notebook`` (a path relative to the server's root folder):
    ``/lab/tree/<notebook>``, percent-encoded (UTF-8), so a name with spaces or Hangul still works.

    Example: ``notebook_url_path("내 노트.ipynb") == "/lab/tree/%EB%82%B4%20%EB%85%B8%ED%8A%B8.ipynb"``.
    """
    return "/lab/tree/" + urllib.parse.quote(Path(notebook).as_posix())


def build_command(
    notebooks_dir: Path,
    port: int | None = None,
    *,
    open_browser: bool = True,
    notebook: str = FIRST_NOTEBOOK,
    host: str = DEFAULT_HOST,
    python: str = sys.executable,
) -> list[str]:
    """The ``python -m jupyterlab`` command line that serves ``notebooks_dir`` and starts on ``notebook``.

    Settings of jupyter_server and JupyterLab: ``ServerApp.root_dir``, ``ServerApp.ip``; with
    ``port``, ``ServerApp.port`` and ``ServerApp.port_retries=0`` (exactly that port), without it
    jupyter_server's own choice; ``LabApp.default_url`` = :func:`notebook_url_path` (the page the
    printed addresses and the opened browser land on); ``--no-browser``; ``--allow-root``
    when run as root (containers and lab machines often are). No token is given: jupyter_server
    makes one and prints it in its addresses.

    Raises:
        ValueError: ``port`` outside 1-65535.
    """
    cmd = [python, "-m", "jupyterlab", f"--ServerApp.root_dir={notebooks_dir}", f"--ServerApp.ip={host}"]
    if port is not None:
        cmd += [f"--ServerApp.port={_check_port(port)}", "--ServerApp.port_retries=0"]
    cmd.append(f"--LabApp.default_url={notebook_url_path(notebook)}")
    if not open_browser:
        cmd.append("--no-browser")  # jupyter_server's flag: ServerApp.open_browser and the extension's
    if hasattr(os, "geteuid") and os.geteuid() == 0:
        cmd.append("--allow-root")
    return cmd


def exec_jupyterlab(cmd: list[str], cwd: Path, env: dict[str, str] | None = None) -> int:
    """Become JupyterLab: run ``cmd`` (from :func:`build_command`) in this process (:func:`os.execve`),
    in the folder ``cwd``, with ``env`` added to the environment and SIGINT and SIGTERM at their
    default actions (even where the caller ignored them). Returns only where a process cannot be
    replaced (Windows): there ``cmd`` runs as a child and its exit code is returned.

    Raises:
        OSError: ``cmd[0]`` cannot be executed.
    """
    full_env = {**os.environ, **(env or {})}
    sys.stdout.flush()
    sys.stderr.flush()
    if os.name == "nt":  # pragma: no cover - no exec there
        return subprocess.call(cmd, cwd=cwd, env=full_env)
    # an ignored signal stays ignored across exec (a script's background job starts with SIGINT
    # ignored): JupyterLab gets the default actions, so Ctrl+C and kill stop it
    for sig in (signal.SIGINT, signal.SIGTERM):
        signal.signal(sig, signal.SIG_DFL)
    os.chdir(cwd)
    os.execve(cmd[0], cmd, full_env)
    raise AssertionError("unreachable")  # pragma: no cover


def _parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="decodelab lab",
        description="강좌의 첫 노트북(notebooks/01_decode_phase.ipynb)을 JupyterLab에서 엽니다.",
    )
    p.add_argument(
        "--port",
        type=int,
        default=None,
        help=f"JupyterLab 포트 (기본: {DEFAULT_PORT}, 쓰이고 있으면 JupyterLab이 다음 빈 포트를 고릅니다; 정하면 그 포트만 씁니다)",
    )
    p.add_argument("--no-browser", action="store_true", help="브라우저를 자동으로 열지 않습니다 (주소만 출력)")
    p.add_argument("--notebooks-dir", type=Path, default=None, help=f"노트북 폴더 (기본: 현재 폴더나 그 위의 notebooks/. git 저장소 안이면 그 노트북을 ~/{WORK_DIR}에 "
                   f"복사해 복사본을 엽니다. notebooks/가 없으면 ./{STUDENT_DIR}에 패키지의 노트북을 복사)")
    p.add_argument("--notebook", default=FIRST_NOTEBOOK, help=f"처음 열 노트북 파일 이름 (기본 {FIRST_NOTEBOOK})")
    p.add_argument("--target", type=Path, default=None,
                   help="대상 모델 폴더 (모든 노트북이 이 모델을 씀; DECODELAB_TARGET으로 전달)")
    p.add_argument("--draft", type=Path, default=None,
                   help="초안 모델 폴더 (같은 토크나이저; 없으면 대상 모델이 자기 초안; DECODELAB_DRAFT로 전달)")
    p.add_argument("--dry-run", action="store_true", help="실행할 명령만 출력하고 JupyterLab은 시작하지 않습니다")
    return p


def pair_env(target: Path | None, draft: Path | None) -> dict[str, str]:
    """The environment variables that point the notebooks at ``--target`` / ``--draft``.

    Returns:
        ``{"DECODELAB_TARGET": abs path, "DECODELAB_DRAFT": abs path}`` (draft only when given),
        or ``{}`` when neither is given (the notebooks use the pair of ``$DECODELAB_TARGET`` /
        ``$DECODELAB_DRAFT``, checked here too, else the bundled pair).

    Raises:
        ValueError: ``--draft`` without ``--target``.
        FileNotFoundError: a folder is missing or has no config.json.
    """
    from ..models import ENV_DRAFT, ENV_TARGET, check_folder

    if target is None:
        if draft is not None:
            raise ValueError("--draft만 주었습니다: 초안 모델은 대상 모델과 함께 쓰니 --target 폴더도 주세요.")
        # the same pair named by the environment instead (docs/models.md: the two ways say the same): checked
        # here too, so that a wrong folder is said before JupyterLab starts, not in a notebook's cell 1
        for var, role in ((ENV_TARGET, "대상(target)"), (ENV_DRAFT, "초안(draft)")):
            if os.environ.get(var):
                check_folder(Path(os.environ[var]), f"환경 변수 {var}에 적은 {role}")
        return {}
    env = {ENV_TARGET: str(check_folder(target, "대상(target)").resolve())}
    if draft is not None:
        env[ENV_DRAFT] = str(check_folder(draft, "초안(draft)").resolve())
    return env


def _working_copy_note(source: Path, folder: Path, copied: list[str]) -> str:
    """The Korean lines that tell a student where their working copy lives."""
    added = f"강좌 노트북 {len(copied)}개를 새로 복사했습니다. " if copied else ""
    return (f"내 노트북은 내 작업 폴더 {folder} 에 있습니다. {added}이미 있던 내 노트북은 덮어쓰지 않습니다.\n"
            f"저장소의 {source} 는 읽기만 하므로, 노트북을 고치고 저장해도 git 저장소는 바뀌지 않습니다. "
            f"강좌의 새 판으로 처음부터 하려면 작업 폴더의 그 노트북을 지우거나 이름을 바꾼 뒤 다시 여세요. "
            f"(강좌를 고치는 사람은 --notebooks-dir {source} 로 저장소의 노트북을 직접 엽니다.)")


def _start_note(notebook: str, port: int | None) -> str:
    """The Korean lines said just before JupyterLab starts: where its address will be, and how to stop it."""
    where = (f"{port}번 포트" if port is not None
             else f"{DEFAULT_PORT}번 포트(쓰이고 있으면 JupyterLab이 고른 다음 빈 포트)")
    return (f"JupyterLab을 {where}에서 시작합니다. 아래 JupyterLab 기록의 "
            f"http://127.0.0.1:포트{notebook_url_path(notebook)}?token=... 주소를 브라우저에서 열면 "
            f"노트북 {notebook} 이(가) 바로 열립니다. 끝내려면 Ctrl+C를 두 번 누르세요.")


def main(argv: list[str] | None = None) -> int:
    """Entry point of ``decodelab lab``: prepares the notebooks folder, then becomes JupyterLab
    (:func:`exec_jupyterlab`), so its exit code is JupyterLab's.

    Returns (without starting JupyterLab) 0 after ``--dry-run`` (the ``DECODELAB_*=...`` assignments
    of ``--target``/``--draft``, then the command line, on stdout), and 2 for a usage problem
    (``--port`` outside 1-65535 or taken, no notebooks folder, unknown notebook,
    ``--target``/``--draft`` not a model folder, ``--draft`` without ``--target``, JupyterLab not
    installed: the ``lab`` extra), with a Korean message on stderr. Course notebooks copied by an
    older decodelab (:func:`stale_notebooks`) get a Korean warning that says how to get the new ones.
    """
    args = _parser().parse_args(argv)
    if not args.dry_run and importlib.util.find_spec("jupyterlab") is None:
        print("decodelab lab: JupyterLab이 설치되어 있지 않습니다. 강좌에 쓰는 것을 함께 설치하세요: "
              f'{shlex.quote(sys.executable)} -m pip install "decodelab[lab]" (저장소에서는 bash course.sh lab 이 '
              "알아서 설치합니다).", file=sys.stderr)
        return 2
    try:
        if args.port is not None:
            _require_free(_check_port(args.port))
        if args.notebooks_dir is not None:
            folder = args.notebooks_dir.resolve()
            if not folder.is_dir():
                raise FileNotFoundError(
                    f"노트북 폴더 {folder} 이(가) {'폴더가 아니라 파일입니다' if folder.exists() else '없습니다'}. "
                    "--notebooks-dir 에 노트북들이 든 폴더를 주거나, "
                    f"이 옵션을 빼면 강좌 노트북의 복사본을 엽니다 (저장소 안에서는 ~/{WORK_DIR}, 밖에서는 ./{STUDENT_DIR})."
                )
        else:
            folder = find_notebooks_dir()
            if folder is not None and folder.name not in (STUDENT_DIR, WORK_DIR) and _in_git_checkout(folder):
                # a git clone: work on a copy, so that opening and saving never change the tracked files
                source = folder
                folder = (Path.home() / WORK_DIR).resolve()
                if args.dry_run:
                    print(f"(--dry-run: {source} 의 강좌 노트북을 내 작업 폴더 {folder} 에 복사할 것입니다)", file=sys.stderr)
                else:
                    folder, copied = working_copy(source)
                    print(_working_copy_note(source, folder, copied), file=sys.stderr)
            elif folder is None and args.dry_run:
                folder = Path(STUDENT_DIR).resolve()
                print(f"(--dry-run: 패키지의 강좌 노트북을 {folder} 에 복사할 것입니다)", file=sys.stderr)
            elif folder is None:
                folder, copied = student_copy(STUDENT_DIR)
                if copied:
                    print(f"강좌 노트북 {len(copied)}개를 {folder} 에 복사했습니다 (내 노트북은 덮어쓰지 않습니다).",
                          file=sys.stderr)
        if not (folder / args.notebook).is_file() and not (args.dry_run and (NOTEBOOKS_DIR / args.notebook).is_file()):
            raise FileNotFoundError(
                f"노트북 {folder / args.notebook} 이(가) 없습니다. --notebook 으로 있는 파일 이름을 주세요 "
                f"(있는 노트북: {', '.join(sorted(p.name for p in folder.glob('*.ipynb'))) or '없음'})."
            )
        env = pair_env(args.target, args.draft)
    except (PortInUseError, FileNotFoundError, ValueError) as exc:
        print(f"decodelab lab: {exc}", file=sys.stderr)
        return 2
    stale = stale_notebooks(folder) if folder.is_dir() else []
    if stale:
        print(_stale_note(folder, stale), file=sys.stderr)
    cmd = build_command(folder, args.port, open_browser=not args.no_browser, notebook=args.notebook)
    if args.dry_run:
        if env:
            print(" ".join(f"{k}={shlex.quote(v)}" for k, v in env.items()))
        print(shlex.join(cmd))
        return 0
    if env:
        print("노트북이 쓸 모델 쌍: " + ", ".join(f"{k}={v}" for k, v in env.items()), file=sys.stderr)
    print(_start_note(args.notebook, args.port), file=sys.stderr)
    return exec_jupyterlab(cmd, folder, {**lab_env(), **env})


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
