"""course.sh's torch choice, with stubbed commands (nothing is installed).

The stub python answers the version check, says torch is missing, and logs every pip call; stub
``uname`` and ``nvidia-smi`` stand for the operating system and an NVIDIA GPU.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import textwrap
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
CPU = "https://download.pytorch.org/whl/cpu"

STUB_PY = textwrap.dedent("""\
    #!/usr/bin/env bash
    if [ "$1" = -c ]; then
      case "$2" in *"import torch"*) exit 1 ;; *) exit 0 ;; esac
    fi
    echo "$*" >> "$STUB_LOG"
    case "$*" in *"--index-url"*) exit "${STUB_CPU_RC:-0}" ;; esac
    exit 0
    """)


def _run(tmp_path: Path, *, system: str, gpu: bool, cpu_rc: int = 0, torch_env: str | None = None,
         command: str = "setup", args: tuple[str, ...] = (), extra_env: dict[str, str] | None = None,
         cwd: Path | None = None):
    if shutil.which("bash") is None:
        pytest.skip("bash not available")
    venv, bin_ = tmp_path / "venv", tmp_path / "bin"
    (venv / "bin").mkdir(parents=True, exist_ok=True)
    bin_.mkdir()
    py = venv / "bin" / "python"
    py.write_text(STUB_PY)
    (venv / "bin" / "decodelab").write_text('#!/usr/bin/env bash\necho "decodelab $*" >> "$STUB_LOG"\n'
                                            'if [ -n "${DECODELAB_TARGET:-}" ]; then\n'
                                            '  echo "env $DECODELAB_TARGET ${DECODELAB_DRAFT:-}" >> "$STUB_LOG"\nfi\n')
    (venv / "bin" / "decodelab").chmod(0o755)
    (bin_ / "uname").write_text(f"#!/usr/bin/env bash\necho {system}\n")
    if gpu:
        (bin_ / "nvidia-smi").write_text("#!/usr/bin/env bash\nexit 0\n")
    for f in (py, *bin_.iterdir()):
        f.chmod(0o755)
    log = tmp_path / "pip.log"
    env = {k: v for k, v in os.environ.items() if k not in ("DECODELAB_TORCH", "CI", "DECODELAB_INSTALL_SYSTEM")}
    env.update(PATH=f"{bin_}:/usr/bin:/bin", DECODELAB_VENV=str(venv), STUB_LOG=str(log), STUB_CPU_RC=str(cpu_rc))
    if torch_env is not None:
        env["DECODELAB_TORCH"] = torch_env
    env.update(extra_env or {})
    # a PATH without the real nvidia-smi (if this machine has one): only the stub counts
    proc = subprocess.run(["bash", str(REPO / "course.sh"), command, *args], env=env, capture_output=True, text=True,
                          timeout=60, cwd=cwd)
    assert proc.returncode == 0, proc.stderr
    return log.read_text().splitlines(), proc.stdout


def test_linux_without_gpu_takes_the_cpu_build_with_a_short_timeout(tmp_path):
    calls, out = _run(tmp_path, system="Linux", gpu=False)
    assert calls[0] == f"-m pip install -q --timeout 5 --retries 0 torch==2.13.0 --index-url {CPU}"
    assert calls[1] == "-m pip install -q -e .[test]"
    assert len(calls) == 2 and "CPU 빌드" in out


def test_unreachable_cpu_index_falls_back_to_the_plain_requirement(tmp_path):
    calls, out = _run(tmp_path, system="Linux", gpu=False, cpu_rc=1)
    assert calls[:2] == [f"-m pip install -q --timeout 5 --retries 0 torch==2.13.0 --index-url {CPU}",
                         "-m pip install -q torch==2.13.0"]
    assert "기본 색인" in out and "설치하지 못했습니다" in out  # pip's own error, above it, says why


@pytest.mark.parametrize("system,gpu", [("Darwin", False), ("Linux", True), ("MINGW64_NT-10.0", False)])
def test_macos_windows_and_nvidia_keep_the_default(tmp_path, system, gpu):
    calls, _ = _run(tmp_path, system=system, gpu=gpu)
    assert calls[0] == "-m pip install -q torch==2.13.0"


def test_decodelab_torch_overrides_the_choice(tmp_path):
    calls, _ = _run(tmp_path, system="Linux", gpu=False, torch_env="torch==2.13.0 --index-url https://example.invalid/x")
    assert calls[0] == "-m pip install -q torch==2.13.0 --index-url https://example.invalid/x"


def test_lab_installs_the_lab_extra_and_test_the_test_extra(tmp_path):
    calls, out = _run(tmp_path / "a", system="Darwin", gpu=False, command="lab")
    assert calls == ["-m pip install -q torch==2.13.0", "-m pip install -q -e .[lab]", "decodelab lab"]
    assert "(.[lab])" in out
    calls, _ = _run(tmp_path / "b", system="Darwin", gpu=False, command="setup")
    assert calls[1:] == ["-m pip install -q -e .[test]"]


def test_pyproject_splits_the_dependencies_by_use():
    tomllib = pytest.importorskip("tomllib")  # Python 3.11+

    project = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    names = {d.split(">")[0].split("[")[0].split("=")[0].strip().lower() for d in project["dependencies"]}
    assert {"torch", "transformers", "numpy", "matplotlib", "ipywidgets", "pydantic", "pyyaml", "tqdm"} <= names
    assert not names & {"jupyterlab", "jupytext", "jupyterlab-rise", "jupyterlab-deck", "openai", "httpx",
                        "prometheus_client", "pytest", "nbval", "playwright", "beautifulsoup4"}
    extras = project["optional-dependencies"]
    assert "decodelab[serving]" in extras["lab"]
    # transformers[serving] in the serving extra keeps the library's range (5.24: the cache= argument)
    from packaging.requirements import Requirement

    lib = [Requirement(d) for d in project["dependencies"] if d.startswith("transformers")]
    serving = [Requirement(d) for d in extras["serving"] if d.startswith("transformers")]
    assert [r.extras for r in serving] == [{"serving"}] and serving[0].specifier == lib[0].specifier
    assert not lib[0].specifier.contains("5.23.0") and lib[0].specifier.contains("5.24.0")
    assert any(d.startswith("jupyterlab>=") for d in extras["lab"])
    assert extras["test"][0] == "decodelab[lab,serving,classroom,train]"


def test_test_runs_the_whole_suite_and_quick_leaves_out_the_browser_and_classroom_lanes(tmp_path):
    """What ``bash course.sh test [--quick]`` hands pytest (a stub configurable-http-proxy in the venv:
    scripts/install_hub.sh finds it and installs nothing)."""
    def pytest_call(where: Path, *args: str) -> str:
        chp = where / "venv" / "bin" / "configurable-http-proxy"
        chp.parent.mkdir(parents=True)
        chp.write_text("#!/usr/bin/env bash\necho 5.3.0\n")
        chp.chmod(0o755)
        calls, _ = _run(where, system="Darwin", gpu=False, command="test", args=args,
                        extra_env={"DECODELAB_TEST_WORKERS": "2"})
        return calls[-1]

    loadgroup = "-p no:cacheprovider -n 2 --dist loadgroup"
    assert pytest_call(tmp_path / "a") == f"-m pytest tests notebooks --nbval-lax {loadgroup}"
    assert pytest_call(tmp_path / "b", "--quick") == f"-m pytest tests -m not browser and not classroom and not notebooks {loadgroup}"
    assert pytest_call(tmp_path / "c", "-x", "--quick") == (
        f"-m pytest tests -m not browser and not classroom and not notebooks {loadgroup} -x")
    assert pytest_call(tmp_path / "d", "--quick", "-n", "0") == (
        "-m pytest tests -m not browser and not classroom and not notebooks -p no:cacheprovider -n 0")


@pytest.mark.parametrize("args", [[], ["nope"]])
def test_an_unknown_command_shows_the_three_commands_in_korean(args):
    proc = subprocess.run(["bash", str(REPO / "course.sh"), *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("사용법: bash course.sh lab | test [--quick] | setup") and "강좌 열기" in proc.stderr
    assert ("알 수 없는 명령입니다: nope" in proc.stderr) == (args == ["nope"])


OLD_PY = textwrap.dedent("""\
    #!/usr/bin/env bash
    if [ "$1" = --version ]; then echo "Python 3.9.18"; exit 0; fi
    if [ "$1" = -c ]; then exit 1; fi  # the version check: sys.version_info < (3, 10)
    echo "$*" >> "$STUB_LOG"
    mkdir -p "$3/bin"
    exit 0
    """)


@pytest.mark.parametrize("made", [False, True])
def test_a_python_older_than_3_10_is_refused_in_korean_and_leaves_no_venv(tmp_path, made):
    """A Python below 3.10 (PYTHON=..., or the one a .venv was made with) stops course.sh with a
    Korean line that says what to do (name another Python with PYTHON; remove the old .venv), exit 2,
    and no virtualenv is made from it."""
    old = tmp_path / "python3.9"
    old.write_text(OLD_PY)
    old.chmod(0o755)
    venv, log = tmp_path / "venv", tmp_path / "calls.log"
    if made:  # a .venv made earlier with that Python
        (venv / "bin").mkdir(parents=True)
        shutil.copy(old, venv / "bin" / "python")
    env = {k: v for k, v in os.environ.items() if k not in ("DECODELAB_TORCH", "CI", "DECODELAB_INSTALL_SYSTEM")}
    env.update(PYTHON=str(old), DECODELAB_VENV=str(venv), STUB_LOG=str(log))
    proc = subprocess.run(["bash", str(REPO / "course.sh"), "lab"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "Python 3.10 이상" in proc.stderr or "3.10보다 낮습니다" in proc.stderr, proc.stderr
    assert "3.9.18" in proc.stderr and "PYTHON=python3.12 bash course.sh lab" in proc.stderr, proc.stderr
    if made:
        assert f"rm -rf {venv}" in proc.stderr
    else:
        assert not venv.exists() and not log.exists()  # no virtualenv was made from it


def test_lab_reads_relative_model_folders_from_where_the_command_was_typed(tmp_path):
    """course.sh runs in the repository; ``--target``/``--draft``/``--notebooks-dir`` (both spellings)
    and ``$DECODELAB_TARGET``/``$DECODELAB_DRAFT`` given relative to the folder the command was typed
    in reach ``decodelab lab`` as that folder's paths; absolute ones and other arguments unchanged."""
    here = tmp_path / "here"
    here.mkdir()
    calls, _ = _run(tmp_path, system="Linux", gpu=False, command="lab", cwd=here,
                    args=("--target", "models/t", "--draft=models/d", "--notebooks-dir", "/abs/nb", "--port", "8890"),
                    extra_env={"DECODELAB_TARGET": "env/t", "DECODELAB_DRAFT": "/abs/d"})
    (lab,) = [c for c in calls if c.startswith("decodelab lab")]
    assert lab == f"decodelab lab --target {here}/models/t --draft={here}/models/d --notebooks-dir /abs/nb --port 8890"
    assert f"env {here}/env/t /abs/d" in calls
