"""The package as a user installs it: a wheel that carries the course, read with importlib.resources.

The wheel is built from a copy of the checkout (as a fresh clone has it), installed into a fresh
virtualenv without the checkout on the path (``--no-deps``; the dependencies come from this
interpreter's site-packages, added as a plain path so the editable install's finder is not
loaded), and then: the bundled notebooks are copied as ``decodelab lab`` does for a student,
notebook 01 runs under nbval, and a quiz answer is graded with the wheel's own quiz bank.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import yaml

pytestmark = pytest.mark.xdist_group("wheel")  # its tests share the module's wheel build

REPO = Path(__file__).resolve().parents[1]
IGNORED = shutil.ignore_patterns(".git", ".venv", "build", "dist", "*.egg-info", "__pycache__", ".ipynb_checkpoints",
                                 ".pytest_cache", "artifacts", ".work", "decodelab-models")


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """The decodelab wheel built from a copy of this checkout (no build isolation: offline)."""
    src = tmp_path_factory.mktemp("clone") / "decodelab"
    shutil.copytree(REPO, src, symlinks=True, ignore=IGNORED)
    out = tmp_path_factory.mktemp("wheel")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                           "-w", str(out), str(src)], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    (whl,) = out.glob("decodelab-*.whl")
    return whl


def test_the_wheel_carries_the_course_and_not_the_exam_bank(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    expect = {f"decodelab/_course/quizzes/{p.name}" for p in (REPO / "quizzes").glob("[0-9][0-9]*.yaml")}
    expect |= {f"decodelab/_course/quizzes/exercises/{p.name}" for p in (REPO / "quizzes" / "exercises").glob("*.yaml")}
    expect |= {f"decodelab/_course/notebooks/{p.name}" for p in (REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb")}
    expect |= {f"decodelab/_course/notebooks/figures/{p.name}" for p in (REPO / "notebooks" / "figures").glob("*.svg")}
    expect |= {"decodelab/_course/notebooks/rise.css"}
    assert len(expect) >= 7 + 6 + 6 + 5
    expect |= {"decodelab/py.typed", "decodelab/assets/presets.csv", "decodelab/assets/models/target/config.json",
               "decodelab/assets/models/draft/config.json", "decodelab/assets/models/target/model.safetensors",
               "decodelab/assets/models/eagle/config.json", "decodelab/assets/models/eagle/model.safetensors"}
    assert expect <= names, sorted(expect - names)
    assert not [n for n in names if "exam" in n.lower() and not n.startswith("decodelab/assess/quiz/")], \
        "the lecturer-only exam bank (classroom/exam/) must not be in the wheel"
    assert not [n for n in names if n.startswith(("classroom/", "benchmarks/", "tests/", "notebooks/", "quizzes/"))
                or "/benchmarks/" in n or n.endswith("/COVERAGE.md") or "/src/" in n]
    with zipfile.ZipFile(wheel) as z:
        assert z.read("decodelab/_course/quizzes/01.yaml") == (REPO / "quizzes" / "01.yaml").read_bytes()
        # the notebook the next test runs under nbval is this checkout's
        nb = "01_decode_phase.ipynb"
        assert z.read(f"decodelab/_course/notebooks/{nb}") == (REPO / "notebooks" / nb).read_bytes()


def _fresh_venv(tmp_path: Path, wheel: Path) -> Path:
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    site = Path(subprocess.run([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                               capture_output=True, text=True, check=True).stdout.strip())
    # this interpreter's packages (torch, transformers, nbval, ...) as a plain path: their .pth files,
    # the editable install of the checkout among them, are not run
    (site / "course-deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    # --target: installed into the fresh venv even though this interpreter has the editable install
    proc = subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return py


@pytest.mark.slow
@pytest.mark.notebooks
def test_the_installed_wheel_runs_notebook_01_and_grades_a_quiz(wheel, tmp_path):
    py = _fresh_venv(tmp_path, wheel)
    work, home = tmp_path / "student", tmp_path / "home"
    work.mkdir(), home.mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "DECODELAB_QUIZZES", "DECODELAB_TARGET",
                                                            "DECODELAB_DRAFT", "DECODELAB_BENCHMARKS")}
    env.update(HOME=str(home), DECODELAB_ANSWERS_DIR=str(tmp_path / "answers"), JUPYTER_PLATFORM_DIRS="1",
               PATH=f"{py.parent}{os.pathsep}{env.get('PATH', '')}")

    def run(*cmd, timeout=300):
        return subprocess.run(list(cmd), cwd=work, env=env, capture_output=True, text=True, timeout=timeout)

    where = run(str(py), "-c", "import decodelab, decodelab._paths as p, decodelab.tools.lab as lab; "
                "print(decodelab.__file__); print(p.QUIZZES_DIR.is_symlink()); print(lab.student_copy('nb')[1])")
    assert where.returncode == 0, where.stderr[-3000:]
    file, linked, copied = where.stdout.splitlines()
    assert Path(file).is_relative_to(tmp_path / "venv") and linked == "False"
    assert copied.startswith("['01_decode_phase.ipynb'") and "07_real_server.ipynb" in copied

    q = next(q for q in yaml.safe_load((REPO / "quizzes" / "01.yaml").read_text(encoding="utf-8"))["questions"]
             if q["kind"] == "single")
    wrong = next(c["id"] for c in q["choices"] if c["id"] != q["answer"])
    graded = run(str(py), "-c", f"from decodelab.assess.quiz import grade; print(grade({q['id']!r}, {q['answer']!r}), "
                 f"grade({q['id']!r}, {wrong!r}))")
    assert graded.returncode == 0, graded.stderr[-3000:]
    assert graded.stdout.split() == ["1.0", "0.0"]

    # the very notebook of this checkout
    # ... as a student's copy: unpaired (decodelab.tools.lab.copy_course), every cell as in the checkout
    copy = json.loads((work / "nb" / "01_decode_phase.ipynb").read_text(encoding="utf-8"))
    ours = json.loads((REPO / "notebooks" / "01_decode_phase.ipynb").read_text(encoding="utf-8"))
    assert "jupytext" not in copy["metadata"] and copy["cells"] == ours["cells"]
    nbval = run(str(py), "-m", "pytest", "--nbval-lax", "-p", "no:cacheprovider", "-q", "nb/01_decode_phase.ipynb",
                timeout=600)
    assert nbval.returncode == 0, nbval.stdout[-5000:] + nbval.stderr[-2000:]
    assert " passed" in nbval.stdout and not (home / ".decodelab").exists()
