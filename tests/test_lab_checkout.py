"""Opening the course never changes a git checkout, and a student's copy always opens (issue 32, deliver 6).

- ``decodelab lab`` run from a clone serves a working copy in ``~/decodelab-notebooks`` (HOME is a
  temporary folder here): a save through the real Jupyter contents API, with jupytext installed and
  enabled as it is for students, leaves ``git status`` clean;
- a student's copy that still carries a jupytext pairing and was left newer than its text twin by
  an interrupted save (jupytext refuses it with HTTP 400) opens again once the copy is refreshed, with
  the student's cells kept;
- the lab runs without the news pop-up (JupyterLab's announcements plugin off through decodelab's
  own ``labconfig/page_config.json``, never through the user's settings).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

from decodelab.tools import lab

REPO = Path(__file__).resolve().parent.parent
FIRST = lab.FIRST_NOTEBOOK
GIT = shutil.which("git")


def _git(cwd: Path, *args: str) -> str:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@example.org", "GIT_CONFIG_GLOBAL": os.devnull, "GIT_CONFIG_NOSYSTEM": "1"}
    return subprocess.run(["git", *args], cwd=cwd, env=env, check=True, capture_output=True, text=True).stdout


def _clone(tmp_path: Path) -> Path:
    """A git checkout shaped like the course's: notebooks/01 with its jupytext twin, committed."""
    repo = tmp_path / "clone"
    (repo / "notebooks" / "src").mkdir(parents=True)
    (repo / "notebooks" / "figures").mkdir()
    shutil.copyfile(REPO / "notebooks" / FIRST, repo / "notebooks" / FIRST)
    shutil.copyfile(REPO / "notebooks" / "src" / FIRST.replace(".ipynb", ".md"),
                    repo / "notebooks" / "src" / FIRST.replace(".ipynb", ".md"))
    for svg in sorted((REPO / "notebooks" / "figures").glob("01_*.svg")):
        shutil.copyfile(svg, repo / "notebooks" / "figures" / svg.name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "course")
    return repo


def _request(url: str, token: str, method: str = "GET", body: dict | None = None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method,
                                 headers={"Authorization": f"token {token}", "Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as resp:
        return resp.status, resp.read().decode("utf-8")


def _sources(path: Path) -> list[str]:
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return ["".join(c["source"]) if isinstance(c["source"], list) else c["source"] for c in cells]


def _free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
@pytest.mark.skipif(GIT is None, reason="needs git")
@pytest.mark.skipif(not hasattr(signal, "SIGTERM"), reason="POSIX signals")
def test_opening_the_lab_from_a_clone_and_saving_leaves_git_status_clean(tmp_path):
    pytest.importorskip("jupyterlab")
    pytest.importorskip("jupytext")
    repo = _clone(tmp_path)
    home = tmp_path / "home"
    home.mkdir()
    port = _free_port()
    env = {**os.environ, "HOME": str(home), "PYTHONUNBUFFERED": "1",
           "JUPYTER_RUNTIME_DIR": str(tmp_path / "runtime"), "JUPYTER_CONFIG_DIR": str(tmp_path / "config"),
           "JUPYTER_DATA_DIR": str(tmp_path / "data"), "JUPYTERLAB_SETTINGS_DIR": str(tmp_path / "settings"),
           "JUPYTERLAB_WORKSPACES_DIR": str(tmp_path / "workspaces"), "DECODELAB_ANSWERS_DIR": str(tmp_path / "answers")}
    out, err = tmp_path / "stdout.txt", tmp_path / "stderr.txt"
    with out.open("wb") as fo, err.open("wb") as fe:
        proc = subprocess.Popen([sys.executable, "-m", "decodelab", "lab", "--no-browser", "--port", str(port)],
                                cwd=repo / "notebooks", env=env, stdout=fo, stderr=fe)
    try:
        deadline = time.monotonic() + 90
        address = re.compile(rf"http://127\.0\.0\.1:{port}/lab/tree/{FIRST}\?token=([0-9a-f]+)")  # jupyter_server's log
        while not address.search(err.read_text(encoding="utf-8")) and proc.poll() is None and time.monotonic() < deadline:
            time.sleep(0.25)
        if not address.search(err.read_text(encoding="utf-8")):
            pytest.skip(f"JupyterLab did not start here: {err.read_text(errors='replace')[-800:]}")
        said = err.read_text(encoding="utf-8")
        work = home / lab.WORK_DIR
        assert f"내 작업 폴더 {work}" in said and "git 저장소는 바뀌지 않습니다" in said, said
        token = address.search(said).group(1)
        base = f"http://127.0.0.1:{port}"

        # what the student sees: the working copy, with the diagrams beside it
        status, body = _request(f"{base}/api/contents/{FIRST}?content=1", token)
        model = json.loads(body)
        assert status == 200 and model["type"] == "notebook"
        assert (work / "figures").is_dir() and any((work / "figures").glob("*.svg"))
        # a save as JupyterLab makes it (autosave, Ctrl+S): an edited cell and an output
        nb = model["content"]
        code = next(c for c in nb["cells"] if c["cell_type"] == "code")
        code["source"] = "print('내가 고친 셀')"
        code["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "내가 고친 셀\n"}]
        code["execution_count"] = 1
        status, _ = _request(f"{base}/api/contents/{FIRST}", token, "PUT",
                             {"type": "notebook", "format": "json", "content": nb})
        assert status in (200, 201)
        assert "print('내가 고친 셀')" in _sources(work / FIRST)
        assert not (work / "src").exists(), "the student's copy is paired: jupytext wrote a text twin"
        assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""

        # no news pop-up: the announcements plugin is disabled in the page the browser loads
        status, page = _request(f"{base}/lab/tree/{FIRST}?token={token}", token)
        config = json.loads(page.split('id="jupyter-config-data"', 1)[1].split(">", 1)[1].split("</script>", 1)[0])
        assert "@jupyterlab/apputils-extension:announcements" in config["disabledExtensions"]
        assert "@jupyter/nbgrader" in config["disabledExtensions"]  # the test extra's nbgrader: no menu here
        assert not (tmp_path / "settings" / "@jupyterlab").exists()  # no user setting was written for it

        # opening again keeps the student's edit
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=60) == 0
        dest, copied = lab.working_copy(repo / "notebooks", home)
        assert (dest, copied) == (work.resolve(), [])
        assert "print('내가 고친 셀')" in _sources(work / FIRST)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def _paired_copy_newer_than_its_twin(folder: Path) -> Path:
    """A student's copy as an older decodelab left it: paired with src/*.md, then a save killed after
    the .ipynb was written and before its twin was (the .ipynb holds an edit the twin lacks)."""
    import jupytext

    folder.mkdir(parents=True)
    nb_path = folder / FIRST
    shutil.copyfile(REPO / "notebooks" / FIRST, nb_path)
    nb = json.loads(nb_path.read_text(encoding="utf-8"))
    assert nb["metadata"]["jupytext"]["formats"] == "ipynb,src//md:myst"
    (folder / "src").mkdir()
    jupytext.write(jupytext.read(nb_path), folder / "src" / FIRST.replace(".ipynb", ".md"), fmt="md:myst")
    nb["cells"][0]["source"] = "내가 고친 첫 셀"
    nb_path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    later = time.time() + 120
    os.utime(nb_path, (later, later))
    return nb_path


def test_a_copy_newer_than_its_twin_opens_after_the_copy_is_refreshed(tmp_path):
    jupytext = pytest.importorskip("jupytext")
    from tornado.web import HTTPError

    home = tmp_path / "home"
    nb_path = _paired_copy_newer_than_its_twin(home)
    cm = jupytext.TextFileContentsManager(root_dir=str(home))
    with pytest.raises(HTTPError) as info:  # what a student met on the hub: HTTP 400, the notebook unopenable
        cm.get(FIRST)
    assert info.value.status_code == 400

    copied = lab.copy_course(REPO / "notebooks", home)  # what `decodelab lab` and the hub's spawn do
    assert FIRST not in copied
    model = jupytext.TextFileContentsManager(root_dir=str(home)).get(FIRST)
    assert model["content"]["cells"][0]["source"] == "내가 고친 첫 셀"  # resolved by the notebook: the edit is kept
    assert "jupytext" not in json.loads(nb_path.read_text(encoding="utf-8"))["metadata"]


def test_unpair_leaves_other_files_and_unpaired_notebooks_alone(tmp_path):
    text = tmp_path / "notes.ipynb"
    text.write_text("not json", encoding="utf-8")
    assert lab.unpair(text) is False and text.read_text(encoding="utf-8") == "not json"
    plain = tmp_path / "plain.ipynb"
    plain.write_text(json.dumps({"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}), encoding="utf-8")
    before = plain.read_bytes()
    assert lab.unpair(plain) is False and plain.read_bytes() == before


def test_from_a_clone_main_opens_the_working_copy_and_says_where_it_is(tmp_path, monkeypatch, capsys):
    if GIT is None:
        pytest.skip("needs git")
    repo = _clone(tmp_path)
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.chdir(repo)
    seen = {}
    monkeypatch.setattr(lab, "exec_jupyterlab", lambda cmd, cwd, env: seen.update(cmd=cmd, cwd=cwd, env=env) or 0)
    assert lab.main(["--no-browser", "--port", str(_free_port())]) == 0
    work = (tmp_path / "home" / lab.WORK_DIR).resolve()
    assert seen["cwd"] == work and f"--ServerApp.root_dir={work}" in seen["cmd"]
    assert seen["env"]["JUPYTER_CONFIG_PATH"].split(os.pathsep)[0] == str(lab.JUPYTER_CONFIG)
    err = capsys.readouterr().err
    assert f"내 작업 폴더 {work}" in err and "1개를 새로 복사" in err
    assert _git(repo, "status", "--porcelain", "--untracked-files=all") == ""
    # the authors' way in: --notebooks-dir opens the checkout's notebooks as they are
    assert lab.main(["--no-browser", "--port", str(_free_port()), "--notebooks-dir", "notebooks"]) == 0
    assert seen["cwd"] == (repo / "notebooks").resolve()
    # and --help says where a clone's notebooks open
    assert f"~/{lab.WORK_DIR}에" in " ".join(lab._parser().format_help().split())


def test_the_hub_spawn_unpairs_a_students_copy_left_newer_than_its_twin(tmp_path, monkeypatch):
    """The hub's pre-spawn hook refreshes a student's home with the same copy rule (issue 32: on the
    hub a notebook left newer than its twin answered HTTP 400 and stayed unopenable)."""
    jupytext = pytest.importorskip("jupytext")
    pytest.importorskip("jupyterhub")
    import logging
    import types

    from decodelab.classroom import hub

    monkeypatch.setenv("NBGRADER_EXCHANGE_ROOT", str(tmp_path / "exchange"))
    home = tmp_path / "homes" / "alice"
    _paired_copy_newer_than_its_twin(home)
    spawner = types.SimpleNamespace(user=types.SimpleNamespace(name="alice"), home_dir=str(home),
                                    log=logging.getLogger("test"), environment={})
    hub.pre_spawn_hook(REPO / "notebooks", system_users=False)(spawner)
    model = jupytext.TextFileContentsManager(root_dir=str(home)).get(FIRST)
    assert model["content"]["cells"][0]["source"] == "내가 고친 첫 셀"
    assert (home / "figures").is_dir() and (home / "02_prefill_vs_decode.ipynb").is_file()
    assert "jupytext" not in json.loads((home / "02_prefill_vs_decode.ipynb").read_text(encoding="utf-8"))["metadata"]
