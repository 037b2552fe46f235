"""Beyond one server: ``classroom/config.yaml`` (Zero to JupyterHub) and ``classroom/Dockerfile``.

Neither Kubernetes nor image builds run on these machines, so what can be checked is checked:

- the YAML parses, names the image the Dockerfile's build line tags, copies the notebooks from
  the folder the Dockerfile fills, opens a notebook that exists, and sizes each student as the
  lecturer guide says;
- the Dockerfile's install steps (``classroom/install-singleuser.sh``) run in a plain virtualenv
  on a freshly built wheel, offline (``--no-index``: every dependency the wheel declares must be
  there already; the test's own packages are made visible to the virtualenv by a ``.pth`` line, so
  nothing downloads): decodelab then imports from the wheel, not from this checkout, the hub's
  single-user server imports, the seven notebooks land in the target folder, and no file of the
  graded exam bank (``classroom/exam/``) is in the wheel.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[1]
CLASSROOM = REPO / "classroom"
GUIDE = REPO / "lecturer" / "classroom.md"


def _dockerfile() -> str:
    return (CLASSROOM / "Dockerfile").read_text(encoding="utf-8")


def test_config_yaml_matches_the_image_and_the_guide():
    values = yaml.safe_load((CLASSROOM / "config.yaml").read_text(encoding="utf-8"))
    single = values["singleuser"]
    image = f"{single['image']['name']}:{single['image']['tag']}"
    assert f"-t {image} " in _dockerfile()  # the build line in the Dockerfile's header tags this image
    # the notebooks the image holds are where the pod's start hook copies them from
    dest = re.search(r"install-singleuser\.sh python \S+ (\S+)", _dockerfile())[1]
    assert f"{dest}/*.ipynb" in " ".join(single["lifecycleHooks"]["postStart"]["exec"]["command"])
    first = single["defaultUrl"].removeprefix("/lab/tree/")
    assert (REPO / "notebooks" / first).is_file()
    assert values["hub"]["config"]["NativeAuthenticator"]["open_signup"] is False
    # the hub pod gets decodelab/classroom/auth.py as the module extraConfig names
    mount = Path(values["hub"]["extraFiles"]["decodelab-auth"]["mountPath"])
    snippet = values["hub"]["extraConfig"]["decodelab-auth"]
    assert f'sys.path.insert(0, "{mount.parent}")' in snippet
    assert f'authenticator_class = "{mount.stem}.NativeAuthenticator"' in snippet
    assert "--set-file hub.extraFiles.decodelab-auth.stringData=decodelab/classroom/auth.py" in GUIDE.read_text(encoding="utf-8")
    assert values["cull"]["enabled"] is True
    # the sizes the guide derives from the benchmark are the ones deployed
    guide = GUIDE.read_text(encoding="utf-8")
    for key in ("guarantee", "limit"):
        assert f"memory.{key}: {single['memory'][key]}" in guide, key
        assert f"cpu.{key}: {single['cpu'][key]}" in guide, key


def test_auth_module_is_standalone_and_lti_class_path_is_real():
    """auth.py runs in the chart's hub image (no decodelab there): it imports only nativeauthenticator;
    the LTI 1.3 class named in the config comments exists with the options they set."""
    import importlib

    source = (REPO / "decodelab" / "classroom" / "auth.py").read_text(encoding="utf-8")
    imports = set(re.findall(r"^(?:from|import) (\S+)", source, re.MULTILINE))
    assert imports == {"__future__", "nativeauthenticator"}, imports
    for text in ((CLASSROOM / "config.yaml").read_text(), (REPO / "decodelab" / "classroom" / "hub.py").read_text()):
        (path,) = set(re.findall(r"(ltiauthenticator\.\S+LTI13Authenticator)", text))
        module, name = path.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        for option in ("issuer", "authorize_url", "jwks_endpoint", "client_id", "username_key"):
            assert cls.class_traits(config=True).get(option) is not None, option


def _wheel(tmp: Path) -> Path:
    """Build the decodelab wheel from a copy of this checkout (the build writes build/ and
    *.egg-info, which must not land in the checkout)."""
    src = tmp / "src"
    shutil.copytree(REPO, src, ignore=shutil.ignore_patterns(".git", ".venv", "artifacts", "build", "dist", "*.egg-info",
                                                              "__pycache__", ".pytest_cache", ".ipynb_checkpoints"))
    out = tmp / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(out), str(src)],
                   check=True, capture_output=True, timeout=600)
    (wheel,) = out.glob("decodelab-*.whl")
    return wheel


@pytest.mark.slow
def test_dockerfile_install_steps_in_a_plain_venv(tmp_path):
    if shutil.which("bash") is None:
        pytest.skip("bash not available")
    wheel = _wheel(tmp_path)
    names = zipfile.ZipFile(wheel).namelist()
    # no file of the graded exam bank is in what students get
    exam = [p for p in (CLASSROOM / "exam").rglob("*") if p.is_file()] if (CLASSROOM / "exam").is_dir() else []
    digests = {hashlib.sha256(p.read_bytes()).hexdigest() for p in exam}
    with zipfile.ZipFile(wheel) as z:
        inside = {hashlib.sha256(z.read(n)).hexdigest() for n in names if not n.endswith("/")}
    assert not digests & inside, "a file of classroom/exam/ is in the wheel"
    assert not [n for n in names if n.startswith("classroom/")]

    venv = tmp_path / "venv"
    base = getattr(sys, "_base_executable", sys.executable)
    subprocess.run([base, "-m", "venv", str(venv)], check=True, timeout=120)
    py = venv / "bin" / "python"
    purelib = Path(subprocess.check_output([str(py), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                                           text=True).strip())
    # the test's packages (torch, transformers, jupyterlab, ...) visible after the venv's own
    (purelib / "zz-test-packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    # the venv's own (older) setuptools would hide the test's: torch requires a newer one
    subprocess.run([str(py), "-m", "pip", "uninstall", "-y", "-q", "setuptools"], capture_output=True, timeout=120)
    dest = tmp_path / "srv" / "notebooks"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL")}
    env.update(DECODELAB_TORCH="", PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
    proc = subprocess.run(["bash", str(CLASSROOM / "install-singleuser.sh"), str(py), str(wheel), str(dest)],
                          env=env, capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert sorted(p.name for p in dest.glob("*.ipynb")) == sorted(p.name for p in (REPO / "notebooks").glob("[0-9][0-9]_*.ipynb"))
    probe = ("import decodelab, jupyterhub.singleuser, jupyterlab; from decodelab.classroom.hub import course_notebooks_dir; "
             "print(decodelab.__file__); print(course_notebooks_dir())")
    out = subprocess.run([str(py), "-c", probe], env=env, capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert out.returncode == 0, out.stderr[-2000:]
    module, notebooks = out.stdout.split()
    assert Path(module).is_relative_to(purelib), module  # the wheel's copy, not this checkout
    assert Path(notebooks).is_relative_to(purelib), notebooks  # the notebooks come with the package
