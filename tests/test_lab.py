"""`decodelab lab`: port choice, the JupyterLab command line and address, stopping by signal.

Only ``test_sigterm_stops_jupyterlab_and_frees_the_port`` starts a real JupyterLab (a few
seconds; skipped if JupyterLab cannot start here); the other signal tests use a tiny stand-in.
"""

from __future__ import annotations

import http.client
import json
import os
import shlex
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from decodelab.tools import lab


@pytest.fixture
def listening():
    """A socket listening on a free loopback port (as a running Jupyter server would)."""
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    sock.listen(1)
    yield sock.getsockname()[1]
    sock.close()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_port_is_free(listening):
    assert lab.port_is_free(listening) is False
    free = _free_port()
    assert lab.port_is_free(free) is True
    with pytest.raises(ValueError, match="--port"):
        lab.port_is_free(70000)


def test_free_port_is_kept():
    free = _free_port()
    assert lab.choose_port(free) == (free, None)
    assert lab.choose_port(free, explicit=True) == (free, None)


def test_taken_default_port_moves_on_and_says_so(listening, monkeypatch):
    taken = {listening, listening + 1}
    monkeypatch.setattr(lab, "port_is_free", lambda port, host="127.0.0.1": port not in taken)
    port, message = lab.choose_port(listening)
    assert port == listening + 2
    assert f"포트 {listening}번은 이미 사용 중" in message
    assert f"{listening + 2}번 포트" in message
    assert "--port" in message


def test_taken_explicit_port_is_an_error_suggesting_port(listening):
    with pytest.raises(lab.PortInUseError) as info:
        lab.choose_port(listening, explicit=True)
    msg = str(info.value)
    assert f"포트 {listening}번은 이미" in msg
    suggested = int(msg.rsplit("--port", 1)[1])
    assert suggested > listening
    assert lab.port_is_free(suggested)


def test_no_free_port_in_span(monkeypatch):
    monkeypatch.setattr(lab, "port_is_free", lambda port, host="127.0.0.1": port > 9000)
    with pytest.raises(lab.PortInUseError, match="8888~8898번이 모두 사용 중"):
        lab.choose_port(8888, span=10)


def _course(tmp_path: Path) -> Path:
    nb = tmp_path / "course" / "notebooks"
    nb.mkdir(parents=True)
    (nb / lab.FIRST_NOTEBOOK).write_text("{}", encoding="utf-8")
    (tmp_path / "course" / "sub").mkdir()
    return nb


def test_find_notebooks_dir_from_repo_and_subfolder(tmp_path):
    nb = _course(tmp_path)
    assert lab.find_notebooks_dir(tmp_path / "course") == nb
    assert lab.find_notebooks_dir(tmp_path / "course" / "sub") == nb
    assert lab.find_notebooks_dir(nb) == nb


def _a_free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_find_notebooks_dir_outside_a_checkout_is_none(tmp_path):
    assert lab.find_notebooks_dir(tmp_path) is None


def test_student_copy_adds_the_bundled_notebooks_and_keeps_the_students_own(tmp_path):
    mine = tmp_path / "nb" / lab.FIRST_NOTEBOOK
    mine.parent.mkdir()
    mine.write_text("내 풀이", encoding="utf-8")
    dest, copied = lab.student_copy(tmp_path / "nb")
    bundled = sorted(p.name for p in lab.NOTEBOOKS_DIR.glob("[0-9][0-9]*_*.ipynb"))
    assert len(bundled) >= 7 and lab.FIRST_NOTEBOOK in bundled
    assert copied == [n for n in bundled if n != lab.FIRST_NOTEBOOK]
    assert mine.read_text(encoding="utf-8") == "내 풀이"
    # the same notebook, without its jupytext pairing (a student's copy is never paired)
    ours = json.loads((lab.NOTEBOOKS_DIR / "04_speculative_decoding.ipynb").read_text(encoding="utf-8"))
    theirs = json.loads((dest / "04_speculative_decoding.ipynb").read_text(encoding="utf-8"))
    assert "formats" in ours["metadata"]["jupytext"] and "jupytext" not in theirs["metadata"]
    del ours["metadata"]["jupytext"]
    assert theirs == ours
    # the diagrams the notebooks link to (figures/NAME.svg) and RISE's rise.css come along
    svgs = sorted(p.name for p in (lab.NOTEBOOKS_DIR / "figures").glob("*.svg"))
    assert len(svgs) >= 5 and sorted(p.name for p in (dest / "figures").glob("*.svg")) == svgs
    assert (dest / "rise.css").read_bytes() == (lab.NOTEBOOKS_DIR / "rise.css").read_bytes()
    assert lab.student_copy(dest)[1] == []


def test_lab_outside_a_checkout_opens_the_students_copy(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    seen = {}
    monkeypatch.setattr(lab, "_run_jupyterlab", lambda cmd, cwd, **kw: seen.update(cmd=cmd, cwd=cwd) or 0)
    assert lab.main(["--no-browser", "--port", str(_a_free_port())]) == 0
    assert seen["cwd"] == tmp_path / lab.STUDENT_DIR
    assert (tmp_path / lab.STUDENT_DIR / lab.FIRST_NOTEBOOK).is_file()
    assert f"{len(list(lab.NOTEBOOKS_DIR.glob('[0-9][0-9]*_*.ipynb')))}개를" in capsys.readouterr().err


def test_lab_missing_notebooks_dir_says_the_folder_is_missing(tmp_path, capsys):
    assert lab.main(["--notebooks-dir", str(tmp_path / "nosuch"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "노트북 폴더" in err and "없습니다" in err and "nosuch" in err and "--notebook 으로" not in err
    assert f"저장소 안에서는 ~/{lab.WORK_DIR}" in err


@pytest.mark.parametrize("argv, korean", [(["--port", "abc"], "대신 정수 값을 주세요"), (["--bogus"], "알 수 없는 인자")])
def test_lab_usage_errors_are_korean(argv, korean, capsys):
    with pytest.raises(SystemExit) as exc:
        lab.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert korean in err and "사용법:" in err and "invalid" not in err and "unrecognized" not in err


def test_build_command(tmp_path, monkeypatch):
    monkeypatch.setattr(lab.os, "geteuid", lambda: 1000)
    cmd = lab.build_command(tmp_path, 8899, open_browser=False, python="py")
    assert cmd == [
        "py",
        "-m",
        "jupyterlab",
        f"--ServerApp.root_dir={tmp_path}",
        "--ServerApp.ip=127.0.0.1",
        "--ServerApp.port=8899",
        "--ServerApp.port_retries=0",
        "--no-browser",
        str(tmp_path / "01_decode_phase.ipynb"),
    ]
    monkeypatch.setattr(lab.os, "geteuid", lambda: 0)
    assert "--allow-root" in lab.build_command(tmp_path, 8899)
    with_token = lab.build_command(tmp_path, 8899, python="py", token="c0ffee")
    assert with_token[7] == "--IdentityProvider.token=c0ffee"
    assert with_token[-1] == str(tmp_path / "01_decode_phase.ipynb")


def test_lab_url_opens_the_notebook_with_the_token():
    assert lab.lab_url(8888, "abc123") == "http://127.0.0.1:8888/lab/tree/01_decode_phase.ipynb?token=abc123"
    assert lab.lab_url(9001, "t", notebook="02_prefill_vs_decode.ipynb") == (
        "http://127.0.0.1:9001/lab/tree/02_prefill_vs_decode.ipynb?token=t"
    )
    # spaces and Hangul in a notebook name are percent-encoded (UTF-8)
    assert lab.lab_url(8888, "t", notebook="내 노트.ipynb") == (
        "http://127.0.0.1:8888/lab/tree/%EB%82%B4%20%EB%85%B8%ED%8A%B8.ipynb?token=t"
    )
    assert lab.lab_url(8888, "t", host="::1").startswith("http://[::1]:8888/lab/tree/")
    with pytest.raises(ValueError, match="--port"):
        lab.lab_url(0, "t")
    assert lab.url_line(lab.lab_url(8888, "t", notebook="내 노트.ipynb")).startswith(
        "이 주소를 브라우저에서 열면 노트북 내 노트.ipynb 이(가) 바로 열립니다: http://127.0.0.1:8888/lab/tree/%EB"
    )


def test_new_token_is_random_hex():
    a, b = lab.new_token(), lab.new_token()
    assert len(a) == 48 and int(a, 16) >= 0 and a != b


def test_main_dry_run_and_errors(tmp_path, capsys, listening, monkeypatch):
    nb = _course(tmp_path)
    monkeypatch.chdir(tmp_path / "course" / "sub")
    assert lab.main(["--dry-run", "--no-browser", "--port", str(_a_free_port())]) == 0
    out = capsys.readouterr().out
    assert out.startswith(sys.executable) or out.startswith("'" + sys.executable)
    assert f"--ServerApp.root_dir={nb}" in out and "--no-browser" in out

    assert lab.main(["--dry-run", "--port", str(listening)]) == 2
    assert "--port" in capsys.readouterr().err

    assert lab.main(["--dry-run", "--notebook", "99_nope.ipynb"]) == 2
    err = capsys.readouterr().err
    assert "--notebook" in err and lab.FIRST_NOTEBOOK in err


def test_dry_run_prints_the_notebook_address_with_the_token_it_passes(tmp_path, capsys, monkeypatch):
    nb = _course(tmp_path)
    monkeypatch.chdir(nb)
    monkeypatch.setattr(lab, "new_token", lambda: "f" * 48)
    port = _free_port()
    assert lab.main(["--dry-run", "--no-browser", "--port", str(port)]) == 0
    command, address = capsys.readouterr().out.splitlines()
    assert f"--IdentityProvider.token={'f' * 48}" in shlex.split(command)
    assert address == (
        "이 주소를 브라우저에서 열면 노트북 01_decode_phase.ipynb 이(가) 바로 열립니다: "
        f"http://127.0.0.1:{port}/lab/tree/01_decode_phase.ipynb?token={'f' * 48}"
    )


@pytest.mark.parametrize("port", ["0", "-1", "65536"])
def test_port_outside_range_is_rejected_not_replaced(tmp_path, capsys, monkeypatch, port):
    _course(tmp_path)
    monkeypatch.chdir(tmp_path / "course")
    assert lab.main(["--dry-run", "--port", port]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""  # no command: 0 must not silently become 8888
    assert f"port={port}" in captured.err and "포트(--port)" in captured.err and "65535 이하인 정수" in captured.err


# ------------------------------------------------------------------------------------------
# stopping by signal

REPO = Path(__file__).resolve().parent.parent

#: Stand-in for JupyterLab: reports its pid, then waits; on SIGTERM writes "stopped" and exits 0
#: (like JupyterLab's clean shutdown), unless told to ignore SIGTERM (a hung server).
FAKE_SERVER = textwrap.dedent(
    """
    import os, signal, sys, time
    state = sys.argv[1]
    def stop(signum, frame):
        with open(state, "a") as fh:
            fh.write(f"stopped by {signum}\\n")
        sys.exit(0)
    signal.signal(signal.SIGTERM, signal.SIG_IGN if sys.argv[2] == "hang" else stop)
    with open(state, "a") as fh:
        fh.write(f"{os.getpid()}\\n")
    time.sleep(120)
    """
)


def _wait_for(predicate, timeout_s: float, step_s: float = 0.05) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _start_wrapper(tmp_path: Path, mode: str) -> tuple[subprocess.Popen, int, Path]:
    state = tmp_path / "state.txt"
    server = tmp_path / "fake_server.py"
    server.write_text(FAKE_SERVER, encoding="utf-8")
    runner = (
        "import sys; from pathlib import Path; from decodelab.tools.lab import _run_jupyterlab; "
        f"sys.exit(_run_jupyterlab([sys.executable, {str(server)!r}, {str(state)!r}, {mode!r}], Path('.')))"
    )
    wrapper = subprocess.Popen([sys.executable, "-c", runner], cwd=REPO)
    assert _wait_for(lambda: state.is_file() and state.read_text().endswith("\n"), 60), "stand-in did not start"
    return wrapper, int(state.read_text().split()[0]), state


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGTERM, getattr(signal, "SIGHUP", signal.SIGTERM)])
def test_stop_signal_is_forwarded_as_sigterm_and_awaited(tmp_path, sig):
    wrapper, child, state = _start_wrapper(tmp_path, "clean")
    try:
        wrapper.send_signal(sig)
        assert wrapper.wait(timeout=30) == 0  # clean stop -> exit code 0
        assert not _alive(child)  # reaped by decodelab, not orphaned
        assert state.read_text().splitlines()[1] == f"stopped by {int(signal.SIGTERM)}"
    finally:
        wrapper.kill()
        if _alive(child):
            os.kill(child, signal.SIGKILL)


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
def test_second_signal_kills_a_server_that_ignores_sigterm(tmp_path):
    wrapper, child, state = _start_wrapper(tmp_path, "hang")
    try:
        wrapper.send_signal(signal.SIGTERM)
        with pytest.raises(subprocess.TimeoutExpired):
            wrapper.wait(timeout=1)  # still waiting for the (hung) server, not orphaning it
        assert _alive(child)
        wrapper.send_signal(signal.SIGTERM)
        assert wrapper.wait(timeout=30) == 128 + signal.SIGKILL
        assert not _alive(child)
    finally:
        wrapper.kill()
        if _alive(child):
            os.kill(child, signal.SIGKILL)


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    if path.is_file():
        return [int(c) for c in path.read_text().split()]
    psutil = pytest.importorskip("psutil", reason="needs /proc or psutil to find JupyterLab's pid")
    return [c.pid for c in psutil.Process(pid).children()]


def _http_status(port: int, target: str) -> int:
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.request("GET", target)
        return conn.getresponse().status
    finally:
        conn.close()


@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
def test_sigterm_stops_jupyterlab_and_frees_the_port(tmp_path):
    pytest.importorskip("jupyterlab")
    port = _free_port()
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONUNBUFFERED": "1",
           "HOME": str(tmp_path / "home")}  # from this checkout: the working copy goes to ~/decodelab-notebooks
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("wb") as fo, err.open("wb") as fe:
        proc = subprocess.Popen(
            [sys.executable, "-m", "decodelab", "lab", "--no-browser", "--port", str(port)],
            cwd=REPO, env=env, stdout=fo, stderr=fe,
        )
    jupyter: list[int] = []
    try:
        _wait_for(lambda: lab._port_open(port) or proc.poll() is not None, 60, 0.25)
        if proc.poll() is not None or not lab._port_open(port):
            pytest.skip(f"JupyterLab did not start here: {err.read_text(errors='replace')[-800:]}")
        jupyter = _children(proc.pid)
        assert len(jupyter) == 1
        url_line = f"http://127.0.0.1:{port}/lab/tree/01_decode_phase.ipynb?token="
        assert _wait_for(lambda: url_line in out.read_text(encoding="utf-8"), 10)
        token = out.read_text(encoding="utf-8").split("?token=")[1].split()[0]
        assert _http_status(port, f"/lab/tree/01_decode_phase.ipynb?token={token}") == 200
        assert _http_status(port, "/lab/tree/01_decode_phase.ipynb?token=wrong") == 302  # to the login page

        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 0
        assert not _alive(jupyter[0]), "JupyterLab outlived decodelab"
        assert _wait_for(lambda: lab.port_is_free(port), 5)
    finally:
        if proc.poll() is None:
            proc.kill()
        for pid in jupyter:
            if _alive(pid):
                os.kill(pid, signal.SIGKILL)


# ------------------------------------------------------------------------------------------
# --target / --draft: the model pair every notebook uses


def _model_folder(path: Path) -> Path:
    path.mkdir(parents=True)
    (path / "config.json").write_text("{}")
    return path


def test_target_and_draft_reach_the_jupyterlab_environment(tmp_path, capsys, monkeypatch):
    nb = _course(tmp_path)
    monkeypatch.chdir(nb)
    t, d = _model_folder(tmp_path / "big"), _model_folder(tmp_path / "small")
    seen = {}

    def fake_run(cmd, cwd, announce=None, env=None):
        seen["env"] = env
        return 0

    monkeypatch.setattr(lab, "_run_jupyterlab", fake_run)
    monkeypatch.chdir(tmp_path)  # relative paths are made absolute for the server
    assert lab.main(["--notebooks-dir", str(nb), "--no-browser", "--port", str(_a_free_port()),
                     "--target", "big", "--draft", "small"]) == 0
    assert seen["env"] == {"DECODELAB_TARGET": str(t.resolve()), "DECODELAB_DRAFT": str(d.resolve()), **lab.lab_env()}
    assert "DECODELAB_TARGET=" in capsys.readouterr().err
    # without the options nothing is set: the notebooks load the bundled pair
    assert lab.main(["--notebooks-dir", str(nb), "--no-browser", "--port", str(_a_free_port())]) == 0
    assert seen["env"] == lab.lab_env()
    # dry run: the assignments come first, as a shell prefix
    assert lab.main(["--dry-run", "--notebooks-dir", str(nb), "--port", str(_a_free_port()), "--target", str(t)]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first == f"DECODELAB_TARGET={shlex.quote(str(t.resolve()))}"


def test_the_environment_is_passed_to_the_child_process(tmp_path):
    out = tmp_path / "env.txt"
    cmd = [sys.executable, "-c", f"import os; open({str(out)!r}, 'w').write(os.environ['DECODELAB_TARGET'])"]
    assert lab._run_jupyterlab(cmd, tmp_path, env={"DECODELAB_TARGET": "/models/t"}) == 0
    assert out.read_text() == "/models/t"


def test_bad_target_or_draft_is_a_usage_error(tmp_path, capsys, monkeypatch):
    nb = _course(tmp_path)
    args = ["--dry-run", "--notebooks-dir", str(nb), "--port", str(_a_free_port())]
    assert lab.main(args + ["--target", str(tmp_path / "missing")]) == 2
    assert "찾을 수 없습니다" in capsys.readouterr().err
    assert lab.main(args + ["--target", str(tmp_path)]) == 2  # a folder without config.json
    assert "config.json" in capsys.readouterr().err
    assert lab.main(args + ["--draft", str(_model_folder(tmp_path / "d"))]) == 2
    assert "--target" in capsys.readouterr().err


def _notebook(path: Path, *code: str) -> None:
    cells = [{"cell_type": "code", "metadata": {}, "source": c, "outputs": [], "execution_count": None} for c in code]
    path.write_text(json.dumps({"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")


def test_copies_made_by_an_older_decodelab_are_named_with_what_to_do(tmp_path, monkeypatch, capsys):
    """A student's copy from before the package's layout (``from decodelab import exercises``,
    ``decodelab.widgets``) stops at its first cell; it is never overwritten, so lab says so."""
    _notebook(tmp_path / "01_decode_phase.ipynb", "import decodelab\nfrom decodelab import exercises as ex")
    _notebook(tmp_path / "02_prefill_vs_decode.ipynb", "from decodelab.widgets.latency import plot_roofline")
    _notebook(tmp_path / "03_agent_loops.ipynb", "import decodelab.quiz")
    _notebook(tmp_path / "04_speculative_decoding.ipynb",
              "from decodelab import generate, load_models  # the lazy API\n"
              "from decodelab.assess import exercises as ex\nfrom decodelab import latency as lat\n"
              "from decodelab.teach.widgets.decode import (\n    show_tokens,\n)")
    (tmp_path / "05_chips.ipynb").write_text("{not json", encoding="utf-8")
    assert lab.stale_notebooks(tmp_path) == ["01_decode_phase.ipynb", "02_prefill_vs_decode.ipynb", "03_agent_loops.ipynb"]
    assert lab.stale_notebooks(lab.NOTEBOOKS_DIR) == []  # the course's own notebooks import what exists
    monkeypatch.setattr(lab, "_run_jupyterlab", lambda *a, **k: 0)
    assert lab.main(["--notebooks-dir", str(tmp_path), "--no-browser"]) == 0
    err = capsys.readouterr().err
    assert "01_decode_phase.ipynb, 02_prefill_vs_decode.ipynb, 03_agent_loops.ipynb" in err and "이름을 바꾸거나" in err


def test_lab_without_jupyterlab_says_what_to_install(monkeypatch, capsys):
    real = lab.importlib.util.find_spec
    monkeypatch.setattr(lab.importlib.util, "find_spec", lambda name, *a: None if name == "jupyterlab" else real(name, *a))
    assert lab.main(["--no-browser"]) == 2
    err = capsys.readouterr().err
    assert "JupyterLab이 설치되어 있지 않습니다" in err and 'decodelab[lab]' in err


def test_jupyter_starts_without_compiling_the_iri_grammar():
    """jsonschema 4.25+ imports rfc3987-syntax, which compiles about 35 Lark parsers on import (some
    2.5 CPU-seconds in every JupyterLab, student server, hub and nbgrader command); the lab extra
    keeps jsonschema below 4.25 (pyproject.toml), so what Jupyter imports to validate notebooks and
    events never loads it."""
    pytest.importorskip("jupyter_events")
    code = ("import sys, nbformat, jupyter_events.validators\n"
            "print(sorted(m for m in sys.modules if m.split('.')[0] == 'rfc3987_syntax'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "[]", out.stdout
