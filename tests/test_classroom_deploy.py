"""Beyond one server: ``classroom/config.yaml`` (Zero to JupyterHub) and ``classroom/Dockerfile``.

Neither Kubernetes nor image builds run on these machines, so what can be checked is checked:

- the YAML parses, names the image the Dockerfile's build line tags, copies the notebooks from
  the folder the Dockerfile fills, opens a notebook that exists, and sizes each student as the
  lecturer guide says;
- the hub module the chart's hub pod mounts imports only the standard library and nativeauthenticator (never decodelab), and the LTI 1.3
  class the configs name exists with the options they set.

The Dockerfile's install steps (``classroom/install-singleuser.sh``) run in a plain virtualenv in
``tests/test_classroom_hub.py``, whose hub spawns the students' servers from that virtualenv.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

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
    """auth.py runs in the chart's hub image (no decodelab there): besides the standard library it
    imports only nativeauthenticator, never decodelab (no relative import either); the LTI 1.3 class
    named in the config comments exists with the options they set."""
    import importlib

    source = (REPO / "decodelab" / "classroom" / "auth.py").read_text(encoding="utf-8")
    imports = set(re.findall(r"^\s*(?:from|import) (\S+)", source, re.MULTILINE))
    tops = {name.split(".")[0] for name in imports}
    assert "nativeauthenticator" in tops, imports
    assert not any(name.startswith(".") for name in imports), imports  # no `from . import ...`
    outside = tops - set(sys.stdlib_module_names) - {"__future__", "nativeauthenticator"}
    assert outside == set(), outside  # e.g. {'decodelab'} would break the chart's hub image
    for text in ((CLASSROOM / "config.yaml").read_text(), (REPO / "decodelab" / "classroom" / "hub.py").read_text()):
        (path,) = set(re.findall(r"(ltiauthenticator\.\S+LTI13Authenticator)", text))
        module, name = path.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        for option in ("issuer", "authorize_url", "jwks_endpoint", "client_id", "username_key"):
            assert cls.class_traits(config=True).get(option) is not None, option
