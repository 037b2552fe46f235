"""The installed widget packages are a matching pair.

A kernel-side ``ipywidgets`` whose browser-side JupyterLab extension (``jupyterlab_widgets``) is of
another generation shows "Error displaying widget: model not found" in JupyterLab instead of a
slider. ipywidgets 8.x pairs with jupyterlab_widgets 3.x and widgetsnbextension 4.x (ipywidgets 7.x
with 1.x and 3.x); ipywidgets pins the exact compatible range in its own metadata, checked here.
"""

from __future__ import annotations

import importlib.metadata as md
import json
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.version import Version

# ipywidgets major -> (jupyterlab_widgets major, widgetsnbextension major), from the ipywidgets
# changelog / migration guide ("Migrating custom widget libraries" for 8.0).
PAIRS = {7: (1, 3), 8: (3, 4)}
# Widget model protocol served by @jupyter-widgets/controls 5.x and base 6.x (ipywidgets 8).
MODEL_VERSIONS_8 = {"@jupyter-widgets/controls": "2.0.0", "@jupyter-widgets/base": "2.0.0", "@jupyter-widgets/output": "1.0.0"}
LAB_EXTENSION = "@jupyter-widgets/jupyterlab-manager"


def _requirements(dist: str) -> dict[str, Requirement]:
    reqs = {}
    for line in md.requires(dist) or []:
        req = Requirement(line)
        if req.marker is None or req.marker.evaluate({"extra": ""}):
            reqs[req.name.lower().replace("-", "_")] = req
    return reqs


def test_ipywidgets_metadata_requirements_are_satisfied():
    reqs = _requirements("ipywidgets")
    for name in ("jupyterlab_widgets", "widgetsnbextension"):
        assert name in reqs, f"ipywidgets no longer declares {name}: {sorted(reqs)}"
        installed = Version(md.version(name))
        assert reqs[name].specifier.contains(installed, prereleases=True), (
            f"{name} {installed} does not satisfy ipywidgets {md.version('ipywidgets')}'s "
            f"requirement '{reqs[name]}': pip install -U ipywidgets {name}"
        )


def test_major_versions_pair_up():
    ipw = Version(md.version("ipywidgets")).major
    assert ipw in PAIRS, f"unexpected ipywidgets major version {ipw}"
    lab_major, nbext_major = PAIRS[ipw]
    assert Version(md.version("jupyterlab_widgets")).major == lab_major
    assert Version(md.version("widgetsnbextension")).major == nbext_major


def _lab_extension_dirs() -> list[Path]:
    from jupyter_core.paths import jupyter_path

    return [Path(p) / LAB_EXTENSION for p in jupyter_path("labextensions") if (Path(p) / LAB_EXTENSION).is_dir()]


def test_lab_extension_is_where_jupyterlab_looks_and_unique():
    import jupyterlab_widgets

    (entry,) = jupyterlab_widgets._jupyter_labextension_paths()
    shipped = Path(entry["src"])
    assert entry["dest"] == LAB_EXTENSION
    dirs = _lab_extension_dirs()
    assert dirs, "JupyterLab finds no @jupyter-widgets/jupyterlab-manager extension: pip install jupyterlab_widgets"
    assert dirs[0].resolve() == shipped.resolve(), f"JupyterLab would load {dirs[0]}, not the installed {shipped}"
    # A second, different copy further down the path (e.g. a system-wide install) must not exist.
    versions = {json.loads((d / "package.json").read_text())["version"] for d in dirs}
    assert len(versions) == 1, f"several jupyterlab-manager versions on the JupyterLab path: {versions}"


def test_lab_extension_speaks_the_kernels_widget_protocol():
    import ipywidgets

    if Version(ipywidgets.__version__).major != 8:
        pytest.skip("protocol table written for ipywidgets 8")
    pkg = json.loads((_lab_extension_dirs()[0] / "package.json").read_text())
    deps = pkg["dependencies"]
    # npm majors of the browser widget packages that implement model protocol 2.0.0
    assert deps["@jupyter-widgets/controls"].lstrip("^~").split(".")[0] == "5"
    assert deps["@jupyter-widgets/base"].lstrip("^~").split(".")[0] == "6"
    slider, out = ipywidgets.IntSlider(), ipywidgets.Output()
    try:
        assert (slider._model_module, slider._model_module_version) == (
            "@jupyter-widgets/controls",
            MODEL_VERSIONS_8["@jupyter-widgets/controls"],
        )
        assert (out._model_module, out._model_module_version) == (
            "@jupyter-widgets/output",
            MODEL_VERSIONS_8["@jupyter-widgets/output"],
        )
    finally:
        slider.close()
        out.close()
