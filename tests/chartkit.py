"""The Zero to JupyterHub chart as Helm sees our values, and its hub config run on loopback.

Not a test module. Shared by tests/test_classroom_deploy.py (the values against the chart's
schema) and tests/test_classroom_chart_hub.py (the hub under the chart's versions).

- :func:`helm_commands`: the ``helm upgrade --install`` commands of lecturer/classroom.md §7 and of
  the values files' headers, each as its ``--version``, ``--values`` files and ``--set-file``/``--set``
  pairs;
- :func:`merged_values`: what Helm hands the chart for one such command: the user's values files
  merged in order (a later file's key wins, maps merge, lists are replaced), the ``--set``/``--set-file``
  values on top, then coalesced onto the chart's ``values.yaml`` (a null deletes the key: Helm's
  rule for removing a default);
- :data:`LOOPBACK_CONFIG`: a ``jupyterhub_config.py`` that applies merged values in the order of the
  chart's own ``jupyterhub_config.py`` (release 4.4.0, lines 499-542: each ``hub.config`` section,
  then ``hub.services`` and ``hub.loadRoles``, then ``hub.extraConfig`` by sorted key;
  ``singleuser.extraEnv`` as the spawner's environment), with ``hub.extraFiles`` written
  under a local root, and a local spawner and proxy in place of Kubernetes.
"""

from __future__ import annotations

import copy
import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]
CHART_VERSION = "4.4.0"
CHART = REPO / "tests" / "fixtures" / f"z2jh-{CHART_VERSION}"
GUIDE = REPO / "lecturer" / "classroom.md"


@dataclass
class HelmCommand:
    text: str
    version: str | None
    values: list[str] = field(default_factory=list)
    set_file: list[tuple[str, str]] = field(default_factory=list)
    set: list[tuple[str, str]] = field(default_factory=list)


def _parse(command: str) -> HelmCommand:
    words = shlex.split(command)
    out = HelmCommand(command, None)
    it = iter(words)
    for w in it:
        if w == "--version":
            out.version = next(it)
        elif w.startswith("--version="):
            out.version = w.split("=", 1)[1]
        elif w in ("--values", "-f"):
            out.values.append(next(it))
        elif w in ("--set-file", "--set"):
            key, _, value = next(it).partition("=")
            (out.set_file if w == "--set-file" else out.set).append((key, value))
    return out


def helm_commands(text: str) -> list[HelmCommand]:
    """Every ``helm upgrade``/``helm install`` command of ``text`` (continued lines joined; a
    leading ``#`` of a comment line dropped)."""
    lines = [re.sub(r"^\s*#\s?", "", line) for line in text.splitlines()]
    joined = re.sub(r"\\\n\s*", " ", "\n".join(lines))
    return [_parse(m.group(0)) for m in re.finditer(r"helm (?:upgrade|install) [^\n]*", joined)]


def guide_section(number: int) -> str:
    """The text of lecturer/classroom.md's section ``## number.`` (up to the next ``## ``)."""
    text = GUIDE.read_text(encoding="utf-8")
    m = re.search(rf"^## {number}\. .*?(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert m, f"lecturer/classroom.md has no section {number}"
    return m.group(0)


def _merge(dst: dict, src: dict) -> dict:
    """``src`` onto ``dst`` (both user values): maps merge, anything else (lists too) is replaced;
    a null is kept, for :func:`_coalesce` to delete."""
    for key, value in src.items():
        if isinstance(value, dict) and isinstance(dst.get(key), dict):
            _merge(dst[key], value)
        else:
            dst[key] = copy.deepcopy(value)
    return dst


def _coalesce(user: dict, defaults: dict) -> dict:
    """The user's values over the chart's defaults: a user null deletes the key."""
    out = copy.deepcopy(defaults)
    for key, value in user.items():
        if value is None:
            out.pop(key, None)
        elif isinstance(value, dict) and isinstance(out.get(key), dict):
            out[key] = _coalesce(value, out[key])
        elif isinstance(value, dict):
            out[key] = _coalesce(value, {})
        else:
            out[key] = copy.deepcopy(value)
    return out


def _set_path(values: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    node = values
    for key in parents:
        node = node.setdefault(key, {})
    node[last] = value


def chart_defaults() -> dict:
    return yaml.safe_load((CHART / "values.yaml").read_text(encoding="utf-8"))


def chart_schema() -> dict:
    return yaml.safe_load((CHART / "values.schema.yaml").read_text(encoding="utf-8"))


def merged_values(cmd: HelmCommand) -> dict:
    """The values the chart renders with for ``cmd`` (paths relative to the repository root)."""
    user: dict = {}
    for path in cmd.values:
        _merge(user, yaml.safe_load((REPO / path).read_text(encoding="utf-8")) or {})
    for key, path in cmd.set_file:
        _set_path(user, key, (REPO / path).read_text(encoding="utf-8"))
    for key, value in cmd.set:
        _set_path(user, key, yaml.safe_load(value) if value not in ("",) else "")
    return _coalesce(user, chart_defaults())


LOOPBACK_CONFIG = r'''
# The chart's hub config (jupyterhub_config.py of Zero to JupyterHub 4.4.0) reduced to what our
# values touch, run on loopback: written by tests/chartkit.py.
import json, os, sys
from pathlib import Path

ROOT = Path(os.environ["CHART_HUB_ROOT"])
CONF_DIR = ROOT / "usr/local/etc/jupyterhub"  # the hub pod's /usr/local/etc/jupyterhub
values = json.loads((ROOT / "values.json").read_text())
hub = values["hub"]
# the chart puts its config folder on sys.path (its line 15); hub.extraFiles are mounted there
sys.path.insert(0, str(CONF_DIR))
for key, f in (hub.get("extraFiles") or {}).items():
    target = ROOT / f["mountPath"].lstrip("/")
    target.parent.mkdir(parents=True, exist_ok=True)
    target.write_text(f["stringData"])
# hub.config, section by section (its lines 499-526)
for section, cfg in (hub.get("config") or {}).items():
    if section == "JupyterHub":
        for k in ("proxy_auth_token", "cookie_secret", "services"):
            cfg.pop(k, None)
    assert section[:1].isupper(), section
    c[section].update(cfg)
# hub.services (its lines 422-432): api_token from the chart's secret, here from the environment
c.JupyterHub.services = []
for key, service in (hub.get("services") or {}).items():
    service.setdefault("name", key)
    service.pop("apiToken", None)
    service["api_token"] = os.environ["CHART_HUB_SERVICE_TOKEN_" + key.upper().replace("-", "_")]
    c.JupyterHub.services.append(service)
# hub.loadRoles (its lines 434-439): a dict of roles by name
c.JupyterHub.load_roles = []
for key, role in (hub.get("loadRoles") or {}).items():
    role.setdefault("name", key)
    c.JupyterHub.load_roles.append(role)
# singleuser.extraEnv (its line 175, KubeSpawner.environment): the plain values (a valueFrom needs Kubernetes)
c.Spawner.environment.update({k: v for k, v in (values["singleuser"].get("extraEnv") or {}).items()
                              if isinstance(v, str)})
# hub.extraConfig by sorted key (its lines 539-542), the pod's config folder standing for ours
for key, config_py in sorted((hub.get("extraConfig") or {}).items()):
    exec(config_py.replace("/usr/local/etc/jupyterhub", str(CONF_DIR)))
if values["singleuser"].get("defaultUrl"):
    c.Spawner.default_url = values["singleuser"]["defaultUrl"]

# loopback in place of Kubernetes
c.JupyterHub.bind_url = "http://127.0.0.1:%s" % os.environ["CHART_HUB_PORT"]
c.JupyterHub.hub_ip = "127.0.0.1"
c.JupyterHub.hub_port = int(os.environ["CHART_HUB_HUB_PORT"])
c.ConfigurableHTTPProxy.api_url = "http://127.0.0.1:%s" % os.environ["CHART_HUB_API_PORT"]
c.ConfigurableHTTPProxy.command = [os.environ["CHART_HUB_PROXY"]]
c.JupyterHub.db_url = "sqlite:///" + str(ROOT / "jupyterhub.sqlite")
c.JupyterHub.cookie_secret_file = str(ROOT / "cookie_secret")
c.JupyterHub.pid_file = str(ROOT / "jupyterhub.pid")
c.JupyterHub.spawner_class = "simple"
c.Spawner.default_url = "/tree"  # jupyter-server's own page (no JupyterLab in this virtualenv)
c.SimpleLocalProcessSpawner.home_dir_template = str(ROOT / "homes" / "{username}")  # removed with ROOT
c.Spawner.start_timeout = 120
c.Spawner.http_timeout = 120
'''
