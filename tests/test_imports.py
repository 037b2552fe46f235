"""The package's source structure (import-linter's contracts in pyproject.toml, every import counted,
also those inside functions): no two modules or subpackages of a package import each other; the
subject (the top-level modules) imports nothing from teach/, assess/, classroom/ or tools/; teach/
nothing from assess/, classroom/ or tools/; assess/ no torch or transformers; tools/ nothing from
classroom/. Also: the quiz modules, the exercises and the practice report import fresh in any
order, and pyflakes finds no undefined name (e.g. a loop reading a variable of its previous pass)."""

from __future__ import annotations

import ast
import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "decodelab"


LINT = "from importlinter.cli import lint_imports_command; lint_imports_command()"

#: the imports pyproject's contract ignores (each inside a function; see the test below): none
IGNORED: list[str] = []


def _lint_imports(where: Path) -> subprocess.CompletedProcess:
    """``lint-imports`` on the package found first on ``where`` with its pyproject.toml (skipped
    without import-linter, except under CI)."""
    if importlib.util.find_spec("importlinter") is None:
        msg = "import-linter is not installed (pip install -e '.[test]')"
        pytest.fail(msg) if os.environ.get("CI", "").lower() in ("1", "true", "yes") else pytest.skip(msg)
    path = os.pathsep.join([str(where), *filter(None, [os.environ.get("PYTHONPATH")])])
    return subprocess.run([sys.executable, "-c", LINT, "--no-cache"], capture_output=True, text=True, cwd=where,
                          timeout=300, env={**os.environ, "PYTHONPATH": path})


def test_the_import_contracts_of_pyproject_are_kept():
    proc = _lint_imports(REPO)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "5 kept, 0 broken" in proc.stdout, proc.stdout


def test_the_imports_the_contract_ignores_stay_inside_functions():
    """The contract ignores only the imports listed here, each run only inside a command or a
    function: at module level it would be a real cycle (the other module imports this one at
    module level). The subject (decoding, speculative, EAGLE) has none: ``as_proposer`` lives in
    the loop's module and imports EAGLE downward."""
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    ignored = [c for contract in config["contracts"] for c in contract.get("ignore_imports", [])]
    assert ignored == IGNORED, ignored
    for rule in ignored:
        importer, imported = (part.strip() for part in rule.split("->"))
        path = REPO / (importer.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text(encoding="utf-8"))
        package = importer.rsplit(".", 1)[0]
        hits = [(n, depth) for depth, n in _imports(tree)
                if (package + "." + n.module if n.level == 1 and n.module else n.module or "") == imported
                or (n.level == 1 and n.module is None and any(f"{package}.{a.name}" == imported for a in n.names))]
        assert hits, f"{rule}: no such import in {path.name}"
        assert all(depth > 0 for _, depth in hits), f"{rule}: imported at module level in {path.name}"


def _imports(tree):
    """``(depth in functions, node)`` of every ``from ... import`` of a module."""
    def walk(node, depth):
        for child in ast.iter_child_nodes(node):
            d = depth + isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef))
            if isinstance(child, ast.ImportFrom):
                yield d, child
            yield from walk(child, d)

    return list(walk(tree, 0))


@pytest.mark.parametrize("module, added, broken", [
    # the quiz package reaching up for the gradebook (the cycle the gradebook's move removed)
    ("assess/quiz/loading.py", "from ..report import grade_folder", ".quiz -> .report"),
    # the proposers reaching up for the loop's module (the cycle as_proposer's move removed)
    ("proposers.py", "from .speculative import as_proposer", ".proposers -> .speculative"),
    # the tree reaching up for the loop's rejection rule instead of the leaf module
    ("tree.py", "from .speculative import speculative_generate", ".speculative"),
    # the loop reaching up for the experiments made with it (they import the loop)
    ("speculative.py", "from .speculative_experiments import speedup_sweep", ".speculative_experiments"),
    # the lean Llama forward (a model) reaching up for the proposer that runs it
    ("lean_llama.py", "from .proposers import DraftModelProposer", ".lean_llama"),
    # the course folder's leaf module asking the hub (the hub reads the course folder through it)
    ("classroom/course.py", "from .hub import write_config", ".hub"),
    # the subject reaching up for a widget (the token labels live in decodelab.plots for that); a
    # module the teaching layer does not import, so the only contract broken is subject-first
    ("batching.py", "from .teach.widgets.decode import tokens_html", "decodelab.batching -> decodelab.teach"),
    # a widget reaching up for the quizzes
    ("teach/build.py", "from ..assess.quiz import load_quizzes", "decodelab.teach.build -> decodelab.assess"),
    # the grading rules importing torch (assessment runs without it: a lecturer's grading process)
    ("assess/quiz/grading.py", "import torch", "decodelab.assess.quiz.grading -> torch"),
])
def test_a_contract_breaks_when_a_circle_or_an_upward_import_comes_back(tmp_path, module, added, broken):
    """Checked on a copy of the package with one upward import added inside a function."""
    copy = tmp_path / "decodelab"
    shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("__pycache__", "assets", "_course"))
    target = copy / module
    target.write_text(target.read_text(encoding="utf-8") + f"\n\ndef _up():\n    {added}\n", encoding="utf-8")
    shutil.copy(REPO / "pyproject.toml", tmp_path / "pyproject.toml")
    proc = _lint_imports(tmp_path)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "4 kept, 1 broken" in proc.stdout and broken in proc.stdout, proc.stdout


#: the layers above the subject, and what else sits at the package's top without being a module of it
LAYERS = {"teach", "assess", "classroom", "tools"}
NOT_MODULES = {"__init__", "__main__", "_course", "assets", "__pycache__", "py.typed"}


def test_every_top_level_module_is_the_subject_or_a_layer():
    """A new top-level module must be named in the subject-first contract (or go into a layer):
    otherwise the contract would not check it."""
    tomllib = pytest.importorskip("tomllib")
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["importlinter"]
    (subject,) = [c["source_modules"] for c in config["contracts"] if c["id"] == "subject-first"]
    top = {p.stem if p.suffix == ".py" else p.name for p in PACKAGE.iterdir()} - NOT_MODULES
    assert top - LAYERS == {m.removeprefix("decodelab.") for m in subject}
    assert LAYERS <= top


def test_the_quiz_modules_the_exercises_and_the_gradebook_import_fresh_one_by_one():
    names = sorted(str(f.relative_to(REPO).with_suffix("")).replace("/", ".").removesuffix(".__init__")
                   for f in (PACKAGE / "assess" / "quiz").glob("*.py") if f.stem != "widget")
    names += ["decodelab.assess.exercises", "decodelab.assess.report"]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r} + {names[::-1]!r}:\n"
        "    for k in [k for k in sys.modules if k == 'decodelab' or k.startswith('decodelab.')]:\n"
        "        del sys.modules[k]\n"
        "    importlib.import_module(name)\n"
        "print('ok')\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok"]


def test_pyflakes_finds_no_undefined_name_in_the_package():
    pytest.importorskip("pyflakes")
    from pyflakes import api, messages, reporter

    class Collect(reporter.Reporter):
        def __init__(self):
            super().__init__(sys.stdout, sys.stderr)
            self.found = []

        def flake(self, message):
            if isinstance(message, (messages.UndefinedName, messages.UndefinedLocal)):
                self.found.append(str(message))

    rep = Collect()
    api.checkRecursive([str(PACKAGE)], rep)
    assert rep.found == []
