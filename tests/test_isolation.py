"""Tests never touch the user's own files: the session's answers folder is temporary (top-level
conftest.py), notebook kernels and subprocesses inherit it and one torch thread, and a suite-like
run with a real home folder leaves ``~/.decodelab`` as it was."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import torch

from decodelab.assess.quiz.store import AnswerStore, answers_root

REPO = Path(__file__).resolve().parents[1]
THIS = Path(__file__).resolve()


def test_the_session_answers_folder_is_temporary_and_inherited():
    root = Path(os.environ["DECODELAB_ANSWERS_DIR"])
    assert root.name.startswith("decodelab-test-answers-") and Path(tempfile.gettempdir()) in root.parents
    assert answers_root() == root and Path.home() not in root.parents
    AnswerStore("course").save("01-decode-definition", "c")  # the default folder, as a notebook kernel uses it
    assert (root / "course" / "01-decode-definition.json").is_file()
    child = subprocess.run([sys.executable, "-c", "import os, torch; print(os.environ['DECODELAB_ANSWERS_DIR']); "
                            "print(torch.get_num_threads())"], capture_output=True, text=True, timeout=120)
    assert child.stdout.split() == [str(root), "1"], child.stderr  # what nbval's kernels and benchmarks get
    assert torch.get_num_threads() == 1


def test_a_suite_like_run_leaves_the_users_answers_untouched(tmp_path):
    home = tmp_path / "home"
    mine = home / ".decodelab" / "answers" / "course" / "01-decode-definition.json"
    mine.parent.mkdir(parents=True)
    mine.write_text('{"question_id": "01-decode-definition", "response": "a", "attempts": 1}', encoding="utf-8")
    before = {p: p.read_bytes() for p in (home / ".decodelab").rglob("*") if p.is_file()}
    # the user exported DECODELAB_ANSWERS_DIR to their own folder: the suite must still not use it
    env = dict(os.environ, HOME=str(home), DECODELAB_ANSWERS_DIR=str(mine.parents[1]))
    proc = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q",
                           f"{THIS}::test_the_session_answers_folder_is_temporary_and_inherited"],
                          cwd=REPO, env=env, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0 and "1 passed" in proc.stdout, proc.stdout[-3000:] + proc.stderr[-2000:]
    after = {p: p.read_bytes() for p in (home / ".decodelab").rglob("*") if p.is_file()}
    assert after == before
