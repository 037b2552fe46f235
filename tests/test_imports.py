"""The package's source structure: module-level imports between decodelab's modules form no
cycle, the quiz modules and the exercises import in any order, the gradebook's dependency on the
exercise definitions is a module-level import (one way: gradebook -> exercises -> quiz modules),
and pyflakes finds no undefined name (e.g. a loop reading a variable of its previous pass)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "decodelab"


def _modules() -> dict[str, tuple[Path, bool]]:
    """``{dotted name: (file, is a package)}`` for every module of decodelab."""
    out = {}
    for f in sorted(PACKAGE.rglob("*.py")):
        parts = list(f.relative_to(REPO).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        out[".".join(parts[:-1] if is_package else parts)] = (f, is_package)
    return out


def _load_time_imports(body: list[ast.stmt]) -> list[ast.Import | ast.ImportFrom]:
    """The import statements that run when the module is imported: not those in functions, nor
    under ``if TYPE_CHECKING:``."""
    found = []
    for node in body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            found.append(node)
        elif isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            found += _load_time_imports(node.orelse)
        else:
            for block in ("body", "orelse", "finalbody"):
                found += _load_time_imports(getattr(node, block, None) or [])
            for handler in getattr(node, "handlers", None) or []:
                found += _load_time_imports(handler.body)
    return found


def _imported(name: str, is_package: bool, node: ast.Import | ast.ImportFrom, known) -> set[str]:
    """The decodelab modules one import statement of module ``name`` runs (with their packages)."""
    if isinstance(node, ast.Import):
        targets = {a.name for a in node.names}
    else:
        if node.level:
            base = name.split(".") if is_package else name.split(".")[:-1]
            base = base[:len(base) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
        else:
            module = node.module or ""
        targets = {module} | {f"{module}.{a.name}" for a in node.names if f"{module}.{a.name}" in known}
    out = set()
    for t in targets:
        parts = t.split(".")
        for i in range(1, len(parts) + 1):
            p = ".".join(parts[:i])
            # a module's own packages run before it: not an edge
            if p in known and p != name and not name.startswith(p + "."):
                out.add(p)
    return out


def import_graph() -> dict[str, set[str]]:
    """``{module: decodelab modules its import runs}`` from the source (module level only)."""
    known = _modules()
    return {name: set().union(*[_imported(name, is_package, n, known)
                                for n in _load_time_imports(ast.parse(f.read_text(encoding="utf-8")).body)])
            for name, (f, is_package) in known.items()}


def _cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    state: dict[str, int] = {}
    path: list[str] = []
    found = []

    def visit(u):
        state[u] = 1
        path.append(u)
        for v in sorted(graph.get(u, ())):
            if state.get(v) == 1:
                found.append(path[path.index(v):] + [v])
            elif v not in state:
                visit(v)
        path.pop()
        state[u] = 2

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return found


def test_the_cycle_finder_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c", "a"]]
    assert _cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_cycle_between_the_package_modules():
    graph = import_graph()
    assert "decodelab.exercises" in graph["decodelab.quiz.gradebook"]
    assert "decodelab.quiz" in graph["decodelab.exercises"]  # through decodelab.quiz.loading
    assert _cycles(graph) == []


def test_the_gradebook_imports_the_exercises_at_module_level_only():
    """No function of decodelab.quiz imports decodelab.exercises (a dependency hidden in a body)."""
    for f in sorted((PACKAGE / "quiz").glob("*.py")):
        tree = ast.parse(f.read_text(encoding="utf-8"))
        load_time = {id(n) for n in _load_time_imports(tree.body)}
        late = [n.lineno for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and id(n) not in load_time
                and (n.module or "").split(".")[-1] == "exercises"]
        assert not late, f"{f.name}: decodelab.exercises imported inside a function (lines {late})"


def test_the_quiz_modules_and_the_exercises_import_fresh_one_by_one():
    names = sorted(n for n in _modules() if n.startswith("decodelab.quiz") and n != "decodelab.quiz.widget")
    names += ["decodelab.exercises"]
    code = (
        "import importlib, sys\n"
        f"for name in {names!r} + {names[::-1]!r}:\n"
        "    for k in [k for k in sys.modules if k == 'decodelab' or k.startswith('decodelab.')]:\n"
        "        del sys.modules[k]\n"
        "    importlib.import_module(name)\n"
        "from decodelab.quiz import grade_folder, Gradebook\n"
        "print('ok', grade_folder.__module__, Gradebook.__module__)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["ok", "decodelab.quiz.gradebook", "decodelab.quiz.gradebook"]


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
