"""`decodelab lab`: port choice and the JupyterLab command line, without starting a server."""

from __future__ import annotations

import socket
import sys
from pathlib import Path

import pytest

from decodelab import lab


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


def test_find_notebooks_dir_missing(tmp_path, monkeypatch):
    monkeypatch.setattr(lab, "__file__", str(tmp_path / "pkg" / "lab.py"))
    with pytest.raises(FileNotFoundError, match="--notebooks-dir"):
        lab.find_notebooks_dir(tmp_path)


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


def test_main_dry_run_and_errors(tmp_path, capsys, listening, monkeypatch):
    nb = _course(tmp_path)
    monkeypatch.chdir(tmp_path / "course" / "sub")
    assert lab.main(["--dry-run", "--no-browser", "--port", str(_free_port())]) == 0
    out = capsys.readouterr().out
    assert out.startswith(sys.executable) or out.startswith("'" + sys.executable)
    assert f"--ServerApp.root_dir={nb}" in out and "--no-browser" in out

    assert lab.main(["--dry-run", "--port", str(listening)]) == 2
    assert "--port" in capsys.readouterr().err

    assert lab.main(["--dry-run", "--notebook", "99_nope.ipynb"]) == 2
    err = capsys.readouterr().err
    assert "--notebook" in err and lab.FIRST_NOTEBOOK in err
