"""One student's autograde run is bounded as a whole (issue 44, item 4).

Attacks from a student's notebook, run by nbgrader's sandboxed ``Execute`` step as autograde runs
it (as root here: bubblewrap, the grader account, the run's :class:`~decodelab.classroom.sandbox.Budget`):

- three children that each hold more than a third of the memory budget (memory per process was
  limited, not per student: 3 x 2.48 GB held at once);
- filling the sandbox's ``/tmp`` (a RAM-backed tmpfs as large as half the machine);
- starting processes until the limit (245 were allowed);
- many slow cells (the time limit was per cell only: 2 x 110 s passed, a 10,000-cell notebook was
  graded);
- killing the kernel (its throwaway folder with the student's copy was left in ``/tmp``).

Where the machine has no cgroup the run can use, the fallback (an address-space limit per
process and a process limit whose product is the budget) is checked on its own.
"""

from __future__ import annotations

import glob
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import nbformat
import pytest

pytest.importorskip("nbgrader")

from nbclient.exceptions import DeadKernelError  # noqa: E402
from traitlets.config import Config  # noqa: E402

from decodelab.classroom import sandbox  # noqa: E402
from decodelab.classroom.sandbox import BOX_PREFIX, Budget, Limits, SandboxedExecute  # noqa: E402

pytestmark = [pytest.mark.slow, pytest.mark.classroom]

ROOT = Path(__file__).resolve().parents[1]

HOLD = """\
import subprocess, sys, time
code = ("import sys, time\\nb = bytearray({mb} << 20)\\nb[::4096] = b'x' * len(b[::4096])\\n"
        "print('held', flush=True)\\ntime.sleep(20)")
kids = [subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE) for _ in range(3)]
said = [k.stdout.readline().strip() == b"held" for k in kids]
time.sleep(2)  # a child that said "held" may be OOM-killed once the next one allocates
held = sum(1 for k, s in zip(kids, said) if s and k.poll() is None)  # holding now, at the same time
for k in kids:
    k.kill()
print("HELD", held, "SAID", sum(said))
"""
FILL_TMP = """\
import os
written = 0
try:
    with open("/tmp/fill", "wb") as f:
        for _ in range({mb}):
            f.write(b"x" * (1 << 20))
            f.flush()
            written += 1
except OSError as e:
    print("TMP_FULL", written, e.errno)
else:
    print("TMP_WROTE", written)
os.remove("/tmp/fill")
"""
FORK = """\
import subprocess
kids = []
try:
    for _ in range(200):
        kids.append(subprocess.Popen(["sleep", "30"]))
except OSError as e:
    print("FORK_REFUSED", len(kids), e.errno)
else:
    print("FORK_ALL", len(kids))
for k in kids:
    k.kill()
    k.wait()
"""


def _sandbox_or_skip():
    from test_classroom_sandbox import sandbox_or_skip

    return sandbox_or_skip()


def _notebook(*sources: str):
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    return nb


def _run(nb, folder: Path, **config):
    c = Config()
    for key, value in config.items():
        cls, name = key.split("__")
        setattr(getattr(c, cls), name, value)
    ex = SandboxedExecute(config=c)
    folder.mkdir(parents=True, exist_ok=True)
    return ex.preprocess(nb, {"metadata": {"path": str(folder)}})[0]


def _text(cell) -> str:
    return "".join(o.get("text", "") for o in cell.outputs if o.get("output_type") == "stream")


def _leftovers(before: set[str]) -> set[str]:
    return set(glob.glob(os.path.join(tempfile.gettempdir(), BOX_PREFIX + "*"))) - before


@pytest.fixture
def env(monkeypatch):
    _sandbox_or_skip()
    monkeypatch.setenv("PYTHONPATH", f"{ROOT}{os.pathsep}{os.environ.get('PYTHONPATH', '')}")
    return monkeypatch


def test_a_students_processes_share_one_memory_budget_and_tmp_and_process_limits(env, tmp_path):
    budget = Budget(Limits(memory_mb=600))
    budget.close()
    if not budget.cgroup:
        if os.environ.get("CI", "").lower() in ("1", "true", "yes") and os.geteuid() == 0:
            pytest.fail("no cgroup for the autograde budget on this machine (root): see Budget")
        pytest.skip("no cgroup for the run here: the rlimit fallback is tested below")
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), BOX_PREFIX + "*")))
    nb = _run(_notebook(HOLD.format(mb=300), FILL_TMP.format(mb=64), FORK), tmp_path / "work",
              SandboxKernelManager__memory_mb=600, SandboxKernelManager__tmp_mb=32,
              SandboxKernelManager__processes=64, Execute__timeout=120)
    held, tmp, fork = (_text(c) for c in nb.cells)
    # 3 x 300 MiB held at once is over the 600 MiB budget of the run: the cgroup's OOM killer ends one
    # ...and at least one child did allocate its 300 MiB (else the limit was never tested)
    assert "HELD" in held and int(held.split("HELD")[1].split()[0]) <= 1, held
    assert int(held.split("SAID")[1].split()[0]) >= 1, held
    assert "TMP_FULL" in tmp and int(tmp.split()[1]) <= 32, tmp  # /tmp is 32 MiB: ENOSPC (28)
    assert "FORK_REFUSED" in fork and int(fork.split()[1]) < 64, fork
    assert not _leftovers(before)


def test_the_whole_notebook_has_a_time_limit_beside_each_cell(env, tmp_path):
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), BOX_PREFIX + "*")))
    cells = ["import time; time.sleep(2); print('one')", "import time; time.sleep(60); print('two')",
             *(["x = 1"] * 2000), "print('last')"]
    nb = _run(_notebook(*cells), tmp_path / "work", Execute__timeout=100, SandboxedExecute__notebook_timeout=5)
    assert _text(nb.cells[0]) == "one\n"
    assert "CellTimeoutError" in [o.ename for o in nb.cells[1].outputs if o.output_type == "error"]
    assert "two" not in _text(nb.cells[1])
    last = nb.cells[-1]
    assert _text(last) == "" and [o.ename for o in last.outputs] == ["NotebookTimeoutError"]
    assert not _leftovers(before)


def test_a_dead_kernel_leaves_no_box_and_no_cgroup(env, tmp_path):
    before = set(glob.glob(os.path.join(tempfile.gettempdir(), BOX_PREFIX + "*")))
    with pytest.raises(DeadKernelError):
        _run(_notebook("import os, signal; os.kill(os.getpid(), signal.SIGKILL)", "print('after')"),
             tmp_path / "work", Execute__timeout=60)
    assert not _leftovers(before)
    assert not sandbox._MADE
    for controller in ("memory", None):
        own = sandbox._own_cgroup(controller)
        if own:
            folder = Path(own[0]) / own[1].lstrip("/")
            assert not list(folder.glob(BOX_PREFIX + "*")), folder


def test_without_a_cgroup_the_process_limit_times_the_address_space_is_the_budget(env, monkeypatch):
    """The fallback: each process may map budget / FALLBACK_PROCESSES, and no more than that many
    processes (and threads) run, so all of them together stay within the budget."""
    _sandbox_or_skip()
    monkeypatch.setenv("DECODELAB_AUTOGRADE_BUDGET", "rlimit")
    limits = Limits(cpu_s=20, memory_mb=1024, nproc=64, tmp_mb=16)
    budget = Budget(limits)
    assert budget.how == "rlimit" and not budget.cgroup
    args = budget.prlimit_args(True)
    per = int(next(a for a in args if a.startswith("--as=")).split("=")[1])
    procs = int(next(a for a in args if a.startswith("--nproc=")).split("=")[1])
    assert per * procs == 1024 << 20 and procs == sandbox.FALLBACK_PROCESSES
    py = os.path.realpath(getattr(sys, "_base_executable", None) or sys.executable)
    code = ("import sys\ntry:\n    b = bytearray(200 << 20)\n    print('BIG')\nexcept MemoryError:\n    print('NOBIG')\n")
    cmd = sandbox.command([py, "-I", "-S", "-c", code], ro=sandbox.python_binds(py, packages=False),
                          env=sandbox._env({}, py), limits=limits, budget=budget)
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=60)
    assert r.stdout.strip() == "NOBIG", r.stdout + r.stderr  # 200 MiB > 1024 / 8 MiB of one process


def test_the_lecturer_sets_the_budgets_in_init(tmp_path, capsys):
    """``init --grade-*`` writes the limits into the course's nbgrader_config.py, which nbgrader loads;
    a value that cannot work is refused in Korean before anything is written."""
    from traitlets.config.loader import PyFileConfigLoader

    from hubkit import student_python

    from decodelab.classroom.cli import init_command

    course = tmp_path / "course"
    py = ["--python", student_python()]  # one an unprivileged user can run (init checks it)
    assert init_command([str(course), "--grade-memory", "100"]) == 2
    assert "256 MiB 이상" in capsys.readouterr().err and not course.exists()
    assert init_command([str(course), "--grade-cell-time", "300", "--grade-notebook-time", "200"]) == 2
    assert "노트북 전체 시간" in capsys.readouterr().err
    assert init_command([str(course), *py, "--grade-memory", "1024", "--grade-processes", "32", "--grade-tmp", "64",
                         "--grade-cell-time", "60", "--grade-notebook-time", "600"]) == 0, capsys.readouterr().err
    cfg = PyFileConfigLoader("nbgrader_config.py", path=str(course)).load_config()
    assert (cfg.SandboxKernelManager.memory_mb, cfg.SandboxKernelManager.processes, cfg.SandboxKernelManager.tmp_mb,
            cfg.Execute.timeout, cfg.SandboxedExecute.notebook_timeout) == (1024, 32, 64, 60, 600)
    ex = SandboxedExecute(config=cfg)
    assert (ex.timeout, ex.notebook_timeout) == (60, 600)
    defaults = sandbox.DEFAULT_LIMITS
    assert (SandboxedExecute().timeout, SandboxedExecute().notebook_timeout) == (defaults["cell_s"], defaults["notebook_s"])
