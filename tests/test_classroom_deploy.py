"""Beyond one server: ``classroom/config.yaml`` (Zero to JupyterHub 4.4.0) and ``classroom/Dockerfile``.

Neither Kubernetes nor image builds run on these machines, so what can be checked is checked:

- every ``helm upgrade --install`` of lecturer/classroom.md §7 and of the values files' headers pins
  the chart release whose files tests/fixtures/z2jh-4.4.0/ holds, and the values Helm would hand
  the chart (its defaults + our files + ``--set``/``--set-file``, :mod:`chartkit`) pass the chart's
  own values.schema.yaml; HTTPS, the closed egress and the private first install are in them;
- the YAML names the image the Dockerfile's build line tags, its start hook (run here by ``sh``)
  makes the one-server copy of the notebooks, it opens a notebook that exists, and sizes each
  student as the lecturer guide says;
- the image takes the hub's JupyterHub major version from a dated base tag, with a build context
  of the wheel and the install script only (every COPY source among them); its install steps with
  the image's ``singleuser`` extra give that major version, the single-user server, nbgrader,
  ngshare-exchange and the notebooks (slow: a wheel build and a pip install);
- the hub module the chart's hub pod mounts imports only the standard library and
  nativeauthenticator (never decodelab), and the LTI 1.3 class the configs name exists with the
  options they set.

ngshare's and the class poll's manifests (classroom/k8s/) match the values and run unprivileged.

The hub under the chart's own versions runs on loopback in ``tests/test_classroom_chart_hub.py``;
the Dockerfile's install steps (``classroom/install-singleuser.sh``) run in a plain virtualenv in
``tests/test_classroom_hub.py``, whose hub spawns the students' servers from that virtualenv.
"""

from __future__ import annotations

import os
import re
import sys
from pathlib import Path

import pytest
import yaml

import chartkit

REPO = Path(__file__).resolve().parents[1]
CLASSROOM = REPO / "classroom"
GUIDE = REPO / "lecturer" / "classroom.md"
ENROL = REPO / "decodelab" / "classroom" / "enrol.py"


def _dockerfile() -> str:
    return (CLASSROOM / "Dockerfile").read_text(encoding="utf-8")


def test_config_yaml_matches_the_image_and_the_guide():
    values = yaml.safe_load((CLASSROOM / "config.yaml").read_text(encoding="utf-8"))
    single = values["singleuser"]
    image = f"{single['image']['name']}:{single['image']['tag']}"
    assert f"-t {image} " in _dockerfile()  # the build line in the Dockerfile's header tags this image
    # the notebooks the image holds are where the pod's start hook copies them from, with the
    # one-server copy code (unpaired, figures and rise.css with them)
    dest = re.search(r"install-singleuser\.sh python \S+ (\S+)", _dockerfile())[1]
    hook = " ".join(single["lifecycleHooks"]["postStart"]["exec"]["command"])
    assert f"from decodelab.tools.lab import copy_course; copy_course('{dest}', '/home/jovyan')" in hook
    assert single["lifecycleHooks"]["postStart"]["exec"]["command"][:2] == ["sh", "-c"] and hook.endswith("|| true")
    first = single["defaultUrl"].removeprefix("/lab/tree/")
    assert (REPO / "notebooks" / first).is_file()
    assert values["hub"]["config"]["NativeAuthenticator"]["open_signup"] is False
    assert values["hub"]["config"]["Spawner"]["disable_user_config"] is True  # never the student's ~/.jupyter
    # the hub pod gets decodelab/classroom/auth.py in the chart's config folder, which the chart's
    # jupyterhub_config.py puts on sys.path, under the module name authenticator_class names
    mount = Path(values["hub"]["extraFiles"]["decodelab-auth"]["mountPath"])
    assert mount.parent == Path("/usr/local/etc/jupyterhub")
    assert values["hub"]["config"]["JupyterHub"]["authenticator_class"] == f"{mount.stem}.NativeAuthenticator"
    assert values["cull"]["enabled"] is True
    # the sizes the guide derives from the benchmark are the ones deployed
    guide = GUIDE.read_text(encoding="utf-8")
    for key in ("guarantee", "limit"):
        assert f"memory.{key}: {single['memory'][key]}" in guide, key
        assert f"cpu.{key}: {single['cpu'][key]}" in guide, key


def test_the_pods_start_hook_makes_the_one_server_copy(tmp_path):
    """config.yaml's postStart command, run here by sh on a copy of the course's notebooks folder
    (the image's /srv/decodelab/notebooks) and an empty home (the pod's /home/jovyan): the notebooks
    arrive unpaired from jupytext, with figures/*.svg and rise.css; a notebook the student changed
    stays as it is."""
    import json
    import shutil
    import subprocess

    values = yaml.safe_load((CLASSROOM / "config.yaml").read_text(encoding="utf-8"))
    command = values["singleuser"]["lifecycleHooks"]["postStart"]["exec"]["command"]
    srv, home = tmp_path / "srv", tmp_path / "home"
    shutil.copytree(REPO / "notebooks", srv, ignore=shutil.ignore_patterns("src", ".ipynb_checkpoints"))
    home.mkdir()
    (home / "01_decode_phase.ipynb").write_text('{"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}')
    script = command[2].replace("/srv/decodelab/notebooks", str(srv)).replace("/home/jovyan", str(home))
    script = script.replace("python -c", f"{sys.executable} -c")
    subprocess.run([*command[:2], script], check=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    paired = [p.name for p in srv.glob("*.ipynb") if "jupytext" in json.loads(p.read_text())["metadata"]]
    assert paired, "the course's notebooks are jupytext-paired: this test would show nothing"
    for nb in srv.glob("*.ipynb"):
        assert (home / nb.name).is_file(), nb.name
        assert "jupytext" not in json.loads((home / nb.name).read_text())["metadata"], nb.name
    assert json.loads((home / "01_decode_phase.ipynb").read_text())["cells"] == []  # the student's own kept
    svgs = sorted(p.name for p in (srv / "figures").glob("*.svg"))
    assert svgs and sorted(p.name for p in (home / "figures").glob("*.svg")) == svgs
    assert (home / "rise.css").is_file()


def _install_commands():
    """Every helm install command of the guide's §7 and of the values files' headers."""
    cmds = chartkit.helm_commands(chartkit.guide_section(7))
    for name in ("config.yaml", "config-lti.yaml"):
        cmds += chartkit.helm_commands((CLASSROOM / name).read_text(encoding="utf-8"))
    return cmds


def test_every_install_command_pins_the_chart_and_validates_against_its_schema():
    """Each ``helm upgrade --install`` of the guide and of the values files' headers names the chart
    release whose schema and defaults tests/fixtures holds, and the values Helm would hand that
    chart (its defaults + our files + --set-file, in Helm's merge order) pass the chart's
    values.schema.yaml. The install without the --set-file of auth.py would not: the chart needs
    exactly one of data/stringData/binaryData per extraFiles entry."""
    import jsonschema

    cmds = _install_commands()
    assert len(cmds) >= 4, [c.text for c in cmds]  # guide: ClusterIP first, public, LTI; and the headers
    validator = jsonschema.Draft7Validator(chartkit.chart_schema())
    for cmd in cmds:
        assert cmd.version == chartkit.CHART_VERSION, cmd.text
        assert "classroom/config.yaml" in cmd.values, cmd.text
        values = chartkit.merged_values(cmd)
        errors = sorted(validator.iter_errors(values), key=lambda e: list(e.path))
        assert not errors, (cmd.text, [f"{list(e.path)}: {e.message}" for e in errors[:5]])
        auth = values["hub"]["config"]["JupyterHub"]["authenticator_class"]
        if auth.endswith("NativeAuthenticator"):
            assert values["hub"]["extraFiles"]["decodelab-auth"]["stringData"].startswith('"""NativeAuthenticator')
        else:  # LTI: no leftover auth.py entry, no NativeAuthenticator section
            assert "decodelab-auth" not in values["hub"]["extraFiles"], cmd.text
            assert "NativeAuthenticator" not in values["hub"]["config"], cmd.text
        # every hub (LTI too) gets the enrolment module its hub.extraConfig imports
        assert values["hub"]["extraFiles"]["decodelab-enrol"]["stringData"] == ENROL.read_text(encoding="utf-8"), cmd.text
    # the schema is the real check: the same values without auth.py's and enrol.py's text fail it
    broken = chartkit.merged_values(chartkit.HelmCommand("", "4.4.0", ["classroom/config.yaml"]))
    paths = sorted(list(e.path) for e in validator.iter_errors(broken))
    assert paths == [["hub", "extraFiles", "decodelab-auth"], ["hub", "extraFiles", "decodelab-enrol"]], paths


def test_https_egress_and_first_admin_defaults():
    """HTTPS on by default (Let's Encrypt), the students' pods cut off from the internet and the
    cluster's private addresses, and the first install not public (the lecturer signs up first)."""
    cmds = chartkit.helm_commands(chartkit.guide_section(7))
    public = [c for c in cmds if not c.set and "classroom/config-lti.yaml" not in c.values]
    assert len(public) == 1, [c.text for c in cmds]
    values = chartkit.merged_values(public[0])
    https = values["proxy"]["https"]
    assert https["enabled"] is True and https["type"] == "letsencrypt" and https["hosts"], https
    rules = values["singleuser"]["networkPolicy"]["egressAllowRules"]
    assert values["singleuser"]["networkPolicy"]["enabled"] is True
    assert rules["nonPrivateIPs"] is False and rules["privateIPs"] is False and rules["cloudMetadataServer"] is False, rules
    first = cmds[0]  # the guide's first install: no public address until the lecturer has signed up
    assert ("proxy.service.type", "ClusterIP") in first.set and ("proxy.https.enabled", "false") in first.set, first.text
    assert chartkit.merged_values(first)["proxy"]["service"]["type"] == "ClusterIP"


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
    for text in ((CLASSROOM / "config-lti.yaml").read_text(), (REPO / "decodelab" / "classroom" / "hub.py").read_text()):
        (path,) = set(re.findall(r"(ltiauthenticator\.\S+LTI13Authenticator)", text))
        module, name = path.rsplit(".", 1)
        cls = getattr(importlib.import_module(module), name)
        for option in ("issuer", "authorize_url", "jwks_endpoint", "client_id", "username_key"):
            assert cls.class_traits(config=True).get(option) is not None, option


def test_image_runs_the_hubs_major_version_from_a_dated_base_and_a_small_context():
    """The user image installs the wheel's singleuser extra, whose JupyterHub takes the chart hub's
    version (tests/fixtures/z2jh-4.4.0/requirements.txt) and the same major only; its base is a
    dated Docker Stacks tag (never rebuilt), not a moving one; .dockerignore passes the wheel and the
    install script only (no .git, virtualenvs, classroom/exam/)."""
    import fnmatch
    import tomllib

    from packaging.requirements import Requirement
    from packaging.version import Version

    hub = Version(next(line.split("==")[1].strip() for line in (chartkit.CHART / "requirements.txt").read_text().splitlines()
                       if line.startswith("jupyterhub==")))
    extras = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["optional-dependencies"]
    (spec,) = [Requirement(d).specifier for d in extras["singleuser"] if Requirement(d).name == "jupyterhub"]
    assert spec.contains(hub) and not spec.contains(Version(f"{hub.major + 1}.0")) and not spec.contains(Version(f"{hub.major - 1}.99"))
    assert "RUN DECODELAB_EXTRA=singleuser bash /tmp/install-singleuser.sh" in _dockerfile()
    (base,) = re.findall(r"^FROM (\S+)", _dockerfile(), re.MULTILINE)
    assert re.fullmatch(r"quay\.io/jupyter/base-notebook:20\d\d-\d\d-\d\d(@sha256:[0-9a-f]{64})?", base), base
    # the build context: what .dockerignore lets through, among the files of this checkout
    rules = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines() if line.strip() and not line.startswith("#")]

    def sent(path: str) -> bool:
        keep = True
        for rule in rules:
            negate = rule.startswith("!")
            if fnmatch.fnmatch(path, rule.lstrip("!")):
                keep = negate
        return keep

    assert sent("dist/decodelab-0.1.0-py3-none-any.whl") and sent("classroom/install-singleuser.sh")
    for path in (".git", ".venv", "classroom/exam", "classroom/exam/bank.json", "tests/fixtures/z2jh-4.4.0/values.yaml", "decodelab/classroom/auth.py"):
        assert not sent(path), path


def _egress_rule(values: dict, labels: dict) -> dict:
    """The one rule of the students' egress that selects pods labelled ``labels``."""
    rules = [r for r in values["singleuser"]["networkPolicy"]["egress"]
             if r["to"][0]["podSelector"]["matchLabels"].items() <= labels.items()]
    assert len(rules) == 1, (labels, values["singleuser"]["networkPolicy"]["egress"])
    assert len(rules[0]["to"]) == 1  # no other peer slipped into the same rule
    return rules[0]


def test_ngshare_manifests_match_the_values_and_run_unprivileged():
    """classroom/k8s/ngshare.yaml parses into a PVC, a Deployment and a Service that match
    config.yaml: the hub's URL-only service points at the Service's name and port, the students'
    egress rule selects the Deployment's pods, the pods carry the label the chart's hub policy
    admits, the token comes from the chart's Secret, the data sits on the claim; the container runs
    as a non-root user, without privilege escalation or capabilities, on a read-only root file
    system. The students' nbgrader config that config.yaml mounts is the one-server text for the
    same ngshare URL (decodelab.classroom.exchange.student_config_text)."""
    from decodelab.classroom.exchange import student_config_text

    docs = {(d["kind"], d["metadata"]["name"]): d
            for d in yaml.safe_load_all((CLASSROOM / "k8s" / "ngshare.yaml").read_text(encoding="utf-8"))}
    assert set(docs) == {("PersistentVolumeClaim", "ngshare"), ("Deployment", "ngshare"), ("Service", "ngshare")}
    values = yaml.safe_load((CLASSROOM / "config.yaml").read_text(encoding="utf-8"))
    service, deploy = docs[("Service", "ngshare")], docs[("Deployment", "ngshare")]
    (port,) = service["spec"]["ports"]
    assert values["hub"]["services"]["ngshare"] == {"url": f"http://{service['metadata']['name']}:{port['port']}"}
    pod = deploy["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert labels["hub.jupyter.org/network-access-hub"] == "true"
    rule = _egress_rule(values, labels)
    assert rule["ports"] == [{"port": port["port"], "protocol": "TCP"}]
    (container,) = pod["spec"]["containers"]
    assert container["image"] == f"{values['singleuser']['image']['name']}:{values['singleuser']['image']['tag']}"
    assert {"containerPort": port["port"], "name": port["targetPort"]} in container["ports"]
    env = {e["name"]: e for e in container["env"]}
    assert env["JUPYTERHUB_SERVICE_URL"]["value"] == f"http://0.0.0.0:{port['port']}"
    assert env["JUPYTERHUB_API_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "hub", "key": "hub.services.ngshare.apiToken"}
    assert env["JUPYTERHUB_SERVICE_PREFIX"]["value"] == "/services/ngshare/"
    # ngshare's admins: the lecturer and the hub's token-only service that enrols the students
    # (test_the_chart_hub_enrols_with_the_one_server_code)
    (admins,) = [a.removeprefix("--admins=").split(",") for a in container["command"] if a.startswith("--admins=")]
    assert sorted(admins) == sorted([values["hub"]["config"]["Authenticator"]["admin_users"][0], "decodelab-enrol"]), admins
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    claims = {v["name"]: v.get("persistentVolumeClaim", {}).get("claimName") for v in pod["spec"]["volumes"]}
    assert claims["data"] == "ngshare" and mounts["data"] == "/srv/ngshare"
    assert all(a.split("/srv/ngshare")[0] in ("--database=sqlite:///", "--storage=") for a in container["command"] if "/srv/" in a)
    pod_sc, sc = pod["spec"]["securityContext"], container["securityContext"]
    assert pod_sc["runAsNonRoot"] is True and pod_sc["runAsUser"] != 0
    assert sc == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}
    assert deploy["spec"]["replicas"] == 1 and deploy["spec"]["strategy"]["type"] == "Recreate"  # one SQLite writer

    apply = "kubectl --namespace decodelab apply -f classroom/k8s/ngshare.yaml"
    assert apply in chartkit.guide_section(7) and apply in (CLASSROOM / "k8s" / "ngshare.yaml").read_text(encoding="utf-8")

    mounted = values["singleuser"]["extraFiles"]["nbgrader-config"]
    assert mounted["mountPath"] == "/etc/jupyter/nbgrader_config.py"
    url = f"http://{service['metadata']['name']}:{port['port']}/services/ngshare"
    code = lambda text: [line for line in text.splitlines() if line and not line.startswith("#")]  # noqa: E731
    assert code(mounted["stringData"]) == code(student_config_text("decodelab", url))


def test_class_poll_manifests_match_the_values_and_run_unprivileged():
    """classroom/k8s/class-poll.yaml parses into a PVC, a Deployment and a Service that match
    config.yaml and the one-server poll (decodelab.classroom.polls): the hub's URL-only service
    has the service's name (SERVICE, which the students' access scope names) and points at the
    Service; the chart's Secret key is that name's; the roles and the students' server token
    scopes are those of one server (hub_services); the kernels' DECODELAB_POLLS_URL is the
    Service's URL under the service's prefix, which the widget accepts; the students' egress rule
    selects the poll's pods on its port only; the pods carry the label the chart's hub policy
    admits; the container runs ``python -m decodelab.classroom.polls --listen-all`` with its
    database on the claim, as a non-root user, without privilege escalation or capabilities, on a
    read-only root file system, seccomp RuntimeDefault, one replica replaced whole (SQLite)."""
    from decodelab.assess.exercises.classpoll import hub_endpoint
    from decodelab.classroom.polls import ACCESS_SCOPE, SERVICE, hub_services

    text = (CLASSROOM / "k8s" / "class-poll.yaml").read_text(encoding="utf-8")
    docs = {(d["kind"], d["metadata"]["name"]): d for d in yaml.safe_load_all(text)}
    assert set(docs) == {("PersistentVolumeClaim", SERVICE), ("Deployment", SERVICE), ("Service", SERVICE)}
    values = chartkit.merged_values(chartkit.HelmCommand("", "4.4.0", ["classroom/config.yaml"]))
    service, deploy = docs[("Service", SERVICE)], docs[("Deployment", SERVICE)]
    (port,) = service["spec"]["ports"]
    base = f"http://{service['metadata']['name']}:{port['port']}"
    assert values["hub"]["services"][SERVICE] == {"url": base}

    one_server = hub_services("/srv/course")
    roles = {r["name"]: {k: v for k, v in r.items() if k != "name"} for r in one_server["roles"]}
    assert values["hub"]["loadRoles"] == roles
    assert ACCESS_SCOPE in values["hub"]["loadRoles"]["user"]["scopes"] and "self" in values["hub"]["loadRoles"]["user"]["scopes"]
    assert values["hub"]["config"]["Spawner"]["server_token_scopes"] == one_server["server_token_scopes"]
    url = values["singleuser"]["extraEnv"]["DECODELAB_POLLS_URL"]
    assert url == f"{base}/services/{SERVICE}"
    assert hub_endpoint({"DECODELAB_POLLS_URL": url, "JUPYTERHUB_API_TOKEN": "t"}) == (url, "t")

    pod = deploy["spec"]["template"]
    labels = pod["metadata"]["labels"]
    assert service["spec"]["selector"].items() <= labels.items()
    assert deploy["spec"]["selector"]["matchLabels"].items() <= labels.items()
    assert labels["hub.jupyter.org/network-access-hub"] == "true"
    assert _egress_rule(values, labels)["ports"] == [{"port": port["port"], "protocol": "TCP"}]
    # the ngshare rule selects no poll pod, nor the poll rule an ngshare pod
    ngshare = next(yaml.safe_load_all((CLASSROOM / "k8s" / "ngshare.yaml").read_text(encoding="utf-8")))
    assert not labels.items() >= _egress_rule(values, ngshare["metadata"]["labels"])["to"][0]["podSelector"]["matchLabels"].items()

    (container,) = pod["spec"]["containers"]
    assert container["image"] == f"{values['singleuser']['image']['name']}:{values['singleuser']['image']['tag']}"
    assert {"containerPort": port["port"], "name": port["targetPort"]} in container["ports"]
    env = {e["name"]: e for e in container["env"]}
    assert env["JUPYTERHUB_SERVICE_URL"]["value"] == f"http://0.0.0.0:{port['port']}"
    assert env["JUPYTERHUB_SERVICE_PREFIX"]["value"] == f"/services/{SERVICE}/"
    assert env["JUPYTERHUB_API_URL"]["value"] == "http://hub:8081/hub/api"
    assert env["JUPYTERHUB_API_TOKEN"]["valueFrom"]["secretKeyRef"] == {"name": "hub", "key": f"hub.services.{SERVICE}.apiToken"}
    assert container["command"][:4] == ["python", "-m", "decodelab.classroom.polls", "--listen-all"]
    (db,) = [a.removeprefix("--db=") for a in container["command"] if a.startswith("--db=")]
    mounts = {m["name"]: m["mountPath"] for m in container["volumeMounts"]}
    claims = {v["name"]: v.get("persistentVolumeClaim", {}).get("claimName") for v in pod["spec"]["volumes"]}
    assert claims["data"] == docs[("PersistentVolumeClaim", SERVICE)]["metadata"]["name"]
    assert Path(db).parent == Path(mounts["data"])  # the database (and its WAL files) on the claim
    pod_sc, sc = pod["spec"]["securityContext"], container["securityContext"]
    assert pod_sc["runAsNonRoot"] is True and pod_sc["runAsUser"] not in (0, None)
    assert pod_sc["seccompProfile"] == {"type": "RuntimeDefault"}
    assert sc == {"allowPrivilegeEscalation": False, "readOnlyRootFilesystem": True, "capabilities": {"drop": ["ALL"]}}
    assert deploy["spec"]["replicas"] == 1 and deploy["spec"]["strategy"]["type"] == "Recreate"  # one SQLite writer

    apply = "kubectl --namespace decodelab apply -f classroom/k8s/class-poll.yaml"
    assert apply in chartkit.guide_section(7) and apply in text
    # the guide's 7.6 names the container's command, the Service's URL and the Secret's key as they are
    guide = chartkit.guide_section(7)
    assert f"`{' '.join(container['command'])}`" in guide
    assert f"`{base}`" in guide and f"`{url}`" in guide and f"`hub.services.{SERVICE}.apiToken`" in guide


def test_the_one_server_templates_lti_lines_let_the_lms_launches_in():
    """The commented LTI 1.3 lines of the one-server ``jupyterhub_config.py`` (decodelab/classroom/hub.py),
    uncommented as lecturer/classroom.md §8 says, give an LTI13Authenticator that lets in whom the
    LMS launches: ``allow_all`` (JupyterHub 5+ lets nobody in without it or a roster, and
    ltiauthenticator sets neither), as classroom/config-lti.yaml does on the chart."""
    from traitlets.config import Config

    from decodelab.classroom import hub

    block = hub._CLASS[hub._CLASS.index("# LTI 1.3 launch"):]
    lines = [line[2:] for line in block.splitlines() if line.startswith("# c.")]
    assert any("LTI13Authenticator" in line for line in lines), block
    c = Config()
    exec("\n".join(lines), {"c": c})  # noqa: S102 (our own template)
    module, name = c.JupyterHub.authenticator_class.rsplit(".", 1)
    import importlib

    auth = getattr(importlib.import_module(module), name)(config=c)
    assert auth.allow_all is True, lines
    assert auth.check_allowed("a-student-the-lms-launched", None) is True
    lti = yaml.safe_load((CLASSROOM / "config-lti.yaml").read_text(encoding="utf-8"))["hub"]["config"]["Authenticator"]
    assert lti["allow_all"] is True


def test_the_chart_hub_enrols_with_the_one_server_code():
    """The chart's hub enrols each student in ngshare at spawn with the one-server hub's code:
    config.yaml's hub.extraConfig imports the module mounted from decodelab/classroom/enrol.py
    (which decodelab.classroom.exchange.pre_spawn_hook calls on one server) and passes it the token
    of a token-only hub service (no URL, no command: nothing runs) that ngshare.yaml names among
    ngshare's admins, a name no student can take (the sign-up form refuses it, config-lti.yaml
    blocks it). enrol.py, like auth.py, runs without decodelab: the standard library and tornado
    (JupyterHub's own dependency) only, no relative import. The hook runs at spawn in the chart's
    hub: tests/test_classroom_chart_hub.py."""
    from decodelab.classroom import auth, exchange

    values = yaml.safe_load((CLASSROOM / "config.yaml").read_text(encoding="utf-8"))
    hub = values["hub"]
    mount = Path(hub["extraFiles"]["decodelab-enrol"]["mountPath"])
    assert mount.parent == Path("/usr/local/etc/jupyterhub")
    snippet = hub["extraConfig"]["decodelab-enrol"]
    assert f"import {mount.stem}\n" in snippet and "pre_spawn_hook" in snippet
    (service,) = [name for name, s in hub["services"].items() if not s]  # `{}`: the chart makes its token
    assert f'_services["{service}"]["api_token"]' in snippet and '_services["ngshare"]["url"]' in snippet
    assert auth.reserved_name(service)
    lti = yaml.safe_load((CLASSROOM / "config-lti.yaml").read_text(encoding="utf-8"))
    assert service in lti["hub"]["config"]["Authenticator"]["blocked_users"]
    docs = list(yaml.safe_load_all((CLASSROOM / "k8s" / "ngshare.yaml").read_text(encoding="utf-8")))
    (container,) = [d for d in docs if d["kind"] == "Deployment"][0]["spec"]["template"]["spec"]["containers"]
    assert any(a.startswith("--admins=") and service in a.split("=", 1)[1].split(",") for a in container["command"])

    source = ENROL.read_text(encoding="utf-8")
    imports = set(re.findall(r"^\s*(?:from|import) (\S+)", source, re.MULTILINE))
    assert not any(name.startswith(".") for name in imports), imports
    outside = {name.split(".")[0] for name in imports} - set(sys.stdlib_module_names) - {"__future__", "tornado"}
    assert outside == set(), outside
    # one home: the one-server hook enrols through the same function
    assert exchange.enrol.__module__ == "decodelab.classroom.enrol"


IMAGE_PROBE = """
import json, decodelab, decodelab.classroom.exchange_plugin, jupyterhub, nbgrader, ngshare_exchange
print(json.dumps({"jupyterhub": jupyterhub.__version__, "jupyterhub_file": jupyterhub.__file__,
                  "decodelab": decodelab.__file__, "nbgrader": nbgrader.__version__}))
"""


@pytest.mark.slow
@pytest.mark.classroom
@pytest.mark.xdist_group("classroom_image")
def test_the_images_install_steps_with_the_singleuser_extra(tmp_path):
    """classroom/Dockerfile's install step as it runs it (``DECODELAB_EXTRA=singleuser``), on a
    freshly built wheel into a plain virtualenv (no image builds here: hubkit.singleuser_env; torch
    is this Python's): the virtualenv runs JupyterHub of the chart hub's major version
    (tests/fixtures/z2jh-4.4.0/requirements.txt), its ``jupyterhub-singleuser --version`` runs,
    nbgrader, ngshare-exchange and the wheel's own decodelab exchange plugin import from it, the
    notebooks with figures/*.svg and rise.css are where the image keeps them, and the wheel holds no
    file of classroom/ (the graded exam bank)."""
    import json
    import subprocess
    import zipfile

    import hubkit
    from packaging.version import Version

    (dest,) = re.findall(r"DECODELAB_EXTRA=singleuser bash /tmp/install-singleuser\.sh python \S+ (\S+)", _dockerfile())
    try:
        env = hubkit.singleuser_env(tmp_path, extra="singleuser")
    except RuntimeError as e:
        if "Could not find a version that satisfies" in str(e) or "No matching distribution" in str(e):
            hubkit.unavailable("the singleuser install", f"the package index has no JupyterHub 5 here: {str(e)[-500:]}")
        raise
    hub = Version(next(line.split("==")[1].strip() for line in (chartkit.CHART / "requirements.txt").read_text().splitlines()
                       if line.startswith("jupyterhub==")))
    clean = {"PATH": f"{env.python.parent}:/usr/bin:/bin", "HOME": str(tmp_path), "LANG": "C.UTF-8"}
    r = subprocess.run([str(env.python), "-I", "-c", IMAGE_PROBE], cwd="/", env=clean, capture_output=True, text=True,
                       timeout=300)
    assert r.returncode == 0, r.stderr[-3000:]
    got = json.loads(r.stdout.strip().splitlines()[-1])
    assert Version(got["jupyterhub"]).major == hub.major, (got, str(hub))
    assert Path(got["jupyterhub_file"]).is_relative_to(env.purelib), got  # the virtualenv's own, not this Python's 6
    assert Path(got["decodelab"]).is_relative_to(env.purelib), got  # the wheel's, not this checkout
    r = subprocess.run([str(env.python.parent / "jupyterhub-singleuser"), "--version"], cwd="/", env=clean,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0 and r.stdout.strip() == got["jupyterhub"], (r.stdout[-2000:], r.stderr[-3000:])

    assert dest == "/srv/decodelab/notebooks"  # where config.yaml's postStart copies from
    notebooks = sorted(p.name for p in (REPO / "notebooks").glob("[0-9][0-9]*_*.ipynb"))
    assert len(notebooks) >= 7 and sorted(p.name for p in env.notebooks.glob("*.ipynb")) == notebooks
    svgs = sorted(p.name for p in (REPO / "notebooks" / "figures").glob("*.svg"))
    assert svgs and sorted(p.name for p in (env.notebooks / "figures").glob("*.svg")) == svgs
    assert (env.notebooks / "rise.css").read_bytes() == (REPO / "notebooks" / "rise.css").read_bytes()
    assert not (env.notebooks / "src").exists()
    with zipfile.ZipFile(env.wheel) as z:
        names = z.namelist()
    assert any(n.startswith("decodelab/") for n in names)
    assert not [n for n in names if n.startswith("classroom/") or "/exam/" in n or n.endswith("/exam")], names[:20]


def _dockerignore_sends(path: str, rules: list[str]) -> bool:
    """Whether Docker's build context holds ``path`` under ``.dockerignore``'s ``rules`` (moby's
    patternmatcher: a rule matches a path or a folder above it, ``*``/``?`` never cross ``/``, a
    ``!`` rule takes back what earlier rules left out; the last matching rule wins)."""
    def matches(rule: str) -> bool:
        regex = "".join("[^/]*" if ch == "*" else "[^/]" if ch == "?" else re.escape(ch) for ch in rule.strip("/"))
        parts = path.split("/")
        return any(re.fullmatch(regex, "/".join(parts[:i])) for i in range(1, len(parts) + 1))

    sent = True
    for rule in rules:
        if matches(rule.lstrip("!")):
            sent = rule.startswith("!")
    return sent


def test_every_copy_source_of_the_dockerfile_is_in_the_build_context():
    """Each COPY source of classroom/Dockerfile (its ARG defaults filled in) is a path .dockerignore
    lets into the build context (else ``docker build`` fails: "not found"), and the default wheel
    name is the one ``pip wheel .`` makes of this checkout's version (the guide's 7.1 build line)."""
    import tomllib

    text = _dockerfile()
    args = dict(re.findall(r"^ARG (\w+)=(\S+)", text, re.MULTILINE))
    version = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))["project"]["version"]
    assert args["WHEEL"] == f"decodelab-{version}-py3-none-any.whl", args
    assert f"--build-arg WHEEL={args['WHEEL']}" in text and f"--build-arg WHEEL={args['WHEEL']}" in GUIDE.read_text(encoding="utf-8")
    rules = [line.strip() for line in (REPO / ".dockerignore").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    copies = re.findall(r"^(?:COPY|ADD)\s+(.+)$", text, re.MULTILINE)
    assert copies, text
    for line in copies:
        words = [w for w in line.split() if not w.startswith("--")]
        assert not any(w.startswith("--from") for w in line.split()), line
        for source in words[:-1]:
            path = re.sub(r"\$\{(\w+)\}|\$(\w+)", lambda m: args[m[1] or m[2]], source)
            assert _dockerignore_sends(path, rules), (line, path, rules)
            if not path.startswith("dist/"):  # the wheel is built first (7.1)
                assert (REPO / path).is_file(), path
    # the matcher itself: what the context must not hold is left out
    for path in (".git/config", ".venv/bin/python", "classroom/exam/items.yaml", "classroom/config.yaml", "dist/other.tar.gz"):
        assert not _dockerignore_sends(path, rules), path
