"""Each patched third-party package is checked at import against the version its patch was
written for (issue 44, item 7), and lecturer/patches.md lists the same patches."""

from __future__ import annotations

import importlib
import importlib.util
import re
import sys
from pathlib import Path

import pytest

pytest.importorskip("nbgrader")
if importlib.util.find_spec("ngshare_exchange") is None:  # importing it needs $USER: the plugin sets it
    pytest.skip("ngshare-exchange is not installed (scripts/install_hub.sh)", allow_module_level=True)

from decodelab.classroom import pins  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
#: the module of each patch, and the package a wrong version of which it must refuse
MODULES = {
    "decodelab.classroom.exchange_plugin": "ngshare-exchange",
    "decodelab.classroom.checksums": "nbgrader",
    "decodelab.classroom.auth": "jupyterhub-nativeauthenticator",
}


def test_the_installed_versions_are_the_ones_the_patches_fit():
    for dist in pins.PATCHES:
        assert pins.require(dist)


@pytest.mark.parametrize("module,dist", sorted(MODULES.items()))
def test_a_patched_module_refuses_another_version_at_import_in_korean(monkeypatch, module, dist):
    real = pins._installed
    monkeypatch.setattr(pins, "_installed", lambda d: "9.9.9" if d == dist else real(d))
    import importlib.metadata as md

    real_version = md.version  # auth.py runs without decodelab (the chart's hub image): it asks importlib itself
    monkeypatch.setattr(md, "version", lambda d: "9.9.9" if d == dist else real_version(d))
    saved = sys.modules.pop(module, None)
    try:
        with pytest.raises(ImportError) as e:
            importlib.import_module(module)
    finally:
        sys.modules.pop(module, None)
        if saved is not None:
            sys.modules[module] = saved
    text = str(e.value)
    assert dist in text and "9.9.9" in text and pins.PATCHES[dist].versions[0] in text and "설치된" in text


def test_ngshare_service_refuses_another_sqlalchemy(monkeypatch):
    from decodelab.classroom import ngshare_service

    real = pins._installed
    monkeypatch.setattr(pins, "_installed", lambda d: "1.4.52" if d == "SQLAlchemy" else real(d))
    with pytest.raises(pins.PatchedVersionError, match="SQLAlchemy.*1.4.52"):
        ngshare_service.main(["--help"])


def test_versions_match_by_prefix_only_where_the_table_says_so():
    assert pins.PATCHES["nbgrader"].fits("0.9.6") and not pins.PATCHES["nbgrader"].fits("0.10.0")
    assert pins.PATCHES["ngshare-exchange"].fits("0.5.3") and not pins.PATCHES["ngshare-exchange"].fits("0.5.30")
    assert not pins.PATCHES["jupyterhub"].fits("60.0")


def test_the_lecturers_table_lists_every_patch_with_its_pin_and_upstream():
    text = (ROOT / "lecturer" / "patches.md").read_text(encoding="utf-8")
    rows = {m[1]: [c.strip() for c in m[2].split("|")] for m in re.finditer(r"^\| ([\w.-]+) \|(.*)\|$", text, re.M)
            if m[1] != "패키지"}
    assert set(rows) == set(pins.PATCHES)
    for dist, p in pins.PATCHES.items():
        version, where, _what, upstream = rows[dist]
        assert version == " ".join(p.versions) and where == f"`{p.where}`" and upstream == p.upstream, dist


def test_the_standalone_auth_module_keeps_the_same_pins_and_name_rule():
    """auth.py cannot import decodelab (it runs alone in the chart's hub image): its copies of the
    pins and of the user-name rule are the ones of pins.py and course.py."""
    from decodelab.classroom import auth, course

    for dist, versions in auth.PINS.items():
        assert pins.PATCHES[dist].versions == versions, dist
    assert auth.USERNAME.pattern == course.USERNAME.pattern
    from decodelab.classroom import accounts

    assert (auth.RESERVED_NAMES, auth.RESERVED_PREFIX) == (accounts.RESERVED_NAMES, accounts.RESERVED_PREFIX)
    for name in ("root", "nobody", "bin", "decodelab-grader", "formgrader", "dlx-student"):
        assert auth.reserved_name(name) == accounts.reserved_name(name), name
