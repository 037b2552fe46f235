"""`decodelab lab`: the port rule, the JupyterLab command line (jupyter_server's own settings), and
stopping it: ``test_a_signal_to_decodelab_lab_stops_jupyterlab`` starts a real JupyterLab (a few
seconds each; skipped if JupyterLab cannot start here).
"""

from __future__ import annotations

import http.client
import json
import os
import re
import shlex
import signal
import socket
import subprocess
import sys
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


def test_a_taken_explicit_port_is_a_korean_usage_error(listening, tmp_path, capsys):
    nb = _course(tmp_path)
    assert lab.main(["--dry-run", "--notebooks-dir", str(nb), "--port", str(listening)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert f"포트 {listening}번은 이미" in captured.err and "--port 를 빼면" in captured.err
    assert lab.main(["--dry-run", "--notebooks-dir", str(nb), "--port", str(_free_port())]) == 0


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
    monkeypatch.setattr(lab, "exec_jupyterlab", lambda cmd, cwd, env=None: seen.update(cmd=cmd, cwd=cwd) or 0)
    assert lab.main(["--no-browser", "--port", str(_a_free_port())]) == 0
    assert seen["cwd"] == tmp_path / lab.STUDENT_DIR
    assert (tmp_path / lab.STUDENT_DIR / lab.FIRST_NOTEBOOK).is_file()
    assert f"{len(list(lab.NOTEBOOKS_DIR.glob('[0-9][0-9]*_*.ipynb')))}개를" in capsys.readouterr().err


def test_lab_missing_notebooks_dir_says_the_folder_is_missing(tmp_path, capsys):
    assert lab.main(["--notebooks-dir", str(tmp_path / "nosuch"), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "노트북 폴더" in err and "없습니다" in err and "nosuch" in err and "--notebook 으로" not in err
    assert f"저장소 안에서는 ~/{lab.WORK_DIR}" in err
    (tmp_path / "README.md").write_text("x")
    assert lab.main(["--notebooks-dir", str(tmp_path / "README.md"), "--dry-run"]) == 2
    assert "폴더가 아니라 파일입니다" in capsys.readouterr().err


@pytest.mark.parametrize("argv, korean", [(["--port", "abc"], "대신 정수 값을 주세요"), (["--bogus"], "알 수 없는 인자")])
def test_lab_usage_errors_are_korean(argv, korean, capsys):
    with pytest.raises(SystemExit) as exc:
        lab.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert korean in err and "사용법:" in err and "invalid" not in err and "unrecognized" not in err


def test_build_command_hands_port_token_and_start_page_to_jupyter_server(tmp_path, monkeypatch):
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
        "--LabApp.default_url=/lab/tree/01_decode_phase.ipynb",
        "--no-browser",
    ]
    # without --port: jupyter_server's own port and retries; never a token of ours
    plain = lab.build_command(tmp_path, python="py", notebook="02_prefill_vs_decode.ipynb")
    assert not any(a.startswith("--ServerApp.port") or "token" in a.lower() for a in plain)
    assert "--LabApp.default_url=/lab/tree/02_prefill_vs_decode.ipynb" in plain and "--no-browser" not in plain
    monkeypatch.setattr(lab.os, "geteuid", lambda: 0)
    assert "--allow-root" in lab.build_command(tmp_path, 8899)
    with pytest.raises(ValueError, match="--port"):
        lab.build_command(tmp_path, 0)


def test_notebook_url_path_is_percent_encoded():
    assert lab.notebook_url_path() == "/lab/tree/01_decode_phase.ipynb"
    # spaces and Hangul in a notebook name are percent-encoded (UTF-8)
    assert lab.notebook_url_path("내 노트.ipynb") == "/lab/tree/%EB%82%B4%20%EB%85%B8%ED%8A%B8.ipynb"


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


def test_dry_run_prints_the_command_and_starts_nothing(tmp_path, capsys, monkeypatch):
    nb = _course(tmp_path)
    monkeypatch.chdir(nb)
    monkeypatch.setattr(lab, "exec_jupyterlab", lambda *a, **k: pytest.fail("--dry-run started JupyterLab"))
    port = _free_port()
    assert lab.main(["--dry-run", "--no-browser", "--port", str(port)]) == 0
    (command,) = capsys.readouterr().out.splitlines()
    assert shlex.split(command) == lab.build_command(nb, port, open_browser=False)


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


def _wait_for(predicate, timeout_s: float, step_s: float = 0.25) -> bool:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(step_s)
    return predicate()


def _http_status(port: int, target: str, refused_s: float = 15) -> int:
    """The HTTP status of GET ``target`` on 127.0.0.1:``port``; a refused connection is tried again
    for ``refused_s`` seconds (a loaded machine: one clean-clone run saw the first connection refused
    just after JupyterLab printed its address), then raises."""
    deadline = time.monotonic() + refused_s
    while True:
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
        try:
            conn.request("GET", target)
            return conn.getresponse().status
        except ConnectionRefusedError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.5)
        finally:
            conn.close()


def _jupyter_processes(marker: str) -> list:
    """The processes on this machine whose command line mentions ``marker`` (this test's own folder)."""
    psutil = pytest.importorskip("psutil")
    found = []
    for p in psutil.process_iter(["cmdline"]):
        try:
            if p.is_running() and p.status() != psutil.STATUS_ZOMBIE and marker in " ".join(p.info["cmdline"] or ()):
                found.append(p)
        except psutil.Error:
            continue
    return found


@pytest.mark.slow
@pytest.mark.skipif(not hasattr(signal, "SIGHUP"), reason="POSIX signals")
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM], ids=["SIGINT", "SIGTERM"])
def test_a_signal_to_decodelab_lab_stops_jupyterlab(tmp_path, sig):
    """``decodelab lab`` (no terminal: Ctrl+C's confirmation is for a terminal) is JupyterLab itself:
    its address carries jupyter_server's own token and opens the first notebook, and SIGINT or
    SIGTERM sent to decodelab's pid stops the server: no process of it is left, the port is free.
    Started with SIGINT ignored, as a script's background job (or a pytest-xdist worker's child) is."""
    pytest.importorskip("jupyterlab")
    port = _free_port()
    home = tmp_path / "home"
    env = {**os.environ, "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "PYTHONUNBUFFERED": "1",
           "HOME": str(home)}  # from this checkout: the working copy goes to ~/decodelab-notebooks
    err = tmp_path / "stderr.txt"
    with err.open("wb") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "decodelab", "lab", "--no-browser", "--port", str(port)],
                                cwd=REPO, env=env, stdin=subprocess.DEVNULL, stdout=fe, stderr=subprocess.STDOUT,
                                preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_IGN))
    address = f"http://127.0.0.1:{port}/lab/tree/01_decode_phase.ipynb?token="
    try:
        _wait_for(lambda: address in err.read_text(encoding="utf-8") or proc.poll() is not None, 90)
        said = err.read_text(encoding="utf-8")
        if address not in said:
            pytest.skip(f"JupyterLab did not start here: {said[-800:]}")
        assert "끝내려면 Ctrl+C" in said and "내 작업 폴더" in said
        assert [p.pid for p in _jupyter_processes(str(home))] == [proc.pid]  # no second process
        token = re.search(re.escape(address) + r"([0-9a-f]+)", said).group(1)  # jupyter_server's own token
        assert len(token) >= 32
        assert _http_status(port, f"/lab/tree/01_decode_phase.ipynb?token={token}") == 200
        assert _http_status(port, "/lab/tree/01_decode_phase.ipynb?token=wrong") == 302  # to the login page

        proc.send_signal(sig)
        assert proc.wait(timeout=60) == 0
        assert _jupyter_processes(str(home)) == [], "a JupyterLab process outlived decodelab lab"
        assert _wait_for(lambda: lab.port_is_free(port), 5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for p in _jupyter_processes(str(home)):
            p.kill()


def test_exec_jupyterlab_becomes_the_command_with_the_environment_and_folder(tmp_path):
    """The command replaces the process that calls exec_jupyterlab (same pid), in ``cwd``, with ``env``."""
    report = tmp_path / "report.json"
    child = ("import json, os; json.dump([os.getpid(), os.environ['DECODELAB_TARGET'], os.getcwd()], "
             f"open({str(report)!r}, 'w'))")
    runner = ("import os, sys; from pathlib import Path; from decodelab.tools.lab import exec_jupyterlab; "
              "print(os.getpid()); "
              f"exec_jupyterlab([sys.executable, '-c', {child!r}], Path({str(tmp_path)!r}), "
              "{'DECODELAB_TARGET': '/models/t'}); print('still here')")
    proc = subprocess.run([sys.executable, "-c", runner], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    pid, target, cwd = json.loads(report.read_text())
    assert proc.stdout.split() == [str(pid)]  # the caller's pid, printed before the exec; nothing after it
    assert (target, Path(cwd).resolve()) == ("/models/t", tmp_path.resolve())


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

    def fake_exec(cmd, cwd, env=None):
        seen["env"] = env
        return 0

    monkeypatch.setattr(lab, "exec_jupyterlab", fake_exec)
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


def test_bad_target_or_draft_is_a_usage_error(tmp_path, capsys, monkeypatch):
    nb = _course(tmp_path)
    args = ["--dry-run", "--notebooks-dir", str(nb), "--port", str(_a_free_port())]
    assert lab.main(args + ["--target", str(tmp_path / "missing")]) == 2
    assert "찾을 수 없습니다" in capsys.readouterr().err
    assert lab.main(args + ["--target", str(tmp_path)]) == 2  # a folder without config.json
    assert "config.json" in capsys.readouterr().err
    assert lab.main(args + ["--draft", str(_model_folder(tmp_path / "d"))]) == 2
    assert "--target" in capsys.readouterr().err
    # the same pair named by the environment (README: the two ways say the same) is checked before the start too
    monkeypatch.setenv("DECODELAB_TARGET", str(tmp_path / "missing"))
    assert lab.main(args) == 2
    assert "환경 변수 DECODELAB_TARGET에 적은 대상(target) 모델 폴더를 찾을 수 없습니다" in capsys.readouterr().err
    monkeypatch.setenv("DECODELAB_TARGET", str(_model_folder(tmp_path / "t")))
    monkeypatch.setenv("DECODELAB_DRAFT", str(tmp_path))
    assert lab.main(args) == 2
    assert "config.json" in capsys.readouterr().err
    monkeypatch.setenv("DECODELAB_DRAFT", str(_model_folder(tmp_path / "d2")))
    assert lab.main(args) == 0


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
    monkeypatch.setattr(lab, "exec_jupyterlab", lambda *a, **k: 0)
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
