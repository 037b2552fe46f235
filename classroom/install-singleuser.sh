#!/usr/bin/env bash
# The install steps of the single-user image (classroom/Dockerfile runs this script; so do
# tests/test_classroom_deploy.py with the image's singleuser extra, and tests/test_classroom_hub.py,
# into a plain virtualenv its hub then spawns the students' servers from; lecturer/classroom.md uses
# it for the students' environment on one server): the decodelab
# wheel with its classroom extra (JupyterLab, the hub's single-user server, nbgrader), ngshare-exchange, then the
# course notebooks copied out of the installed package.
#
# Usage: install-singleuser.sh PYTHON WHEEL NOTEBOOKS_DEST
# Env:   DECODELAB_TORCH  torch requirement and pip options (default: the CPU build from PyTorch's
#                         CPU index; "" skips torch, for a Python that has it already)
#        DECODELAB_EXTRA  the wheel's extra to install (default classroom: one server's hub and its
#                         students; classroom/Dockerfile sets singleuser, the student side on the
#                         Zero to JupyterHub chart's JupyterHub major version)
set -euo pipefail
PY=$1
WHEEL=$2
DEST=$(realpath -m "$3")  # absolute: the copy below runs from /
EXTRA=${DECODELAB_EXTRA:-classroom}
TORCH=${DECODELAB_TORCH-"torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu"}
if [[ -n "$TORCH" ]]; then
  # shellcheck disable=SC2086  # the spec may hold several pip arguments
  "$PY" -m pip install --no-cache-dir $TORCH
fi
# the wheel itself first (replacing any other decodelab), then its classroom (or singleuser) extra:
# JupyterLab, the hub's single-user server, nbgrader (the Assignments tab)
"$PY" -m pip install --no-cache-dir --no-deps --force-reinstall "$WHEEL"
"$PY" -m pip install --no-cache-dir "${WHEEL}[${EXTRA}]"
# nbgrader's side of the hub's ngshare exchange (each student's nbgrader_config.py uses it): without
# its dependencies, whose jupyter-core<4.11.2 pin JupyterLab 4 cannot meet (scripts/install_hub.sh)
"$PY" -m pip install --no-cache-dir --no-deps "ngshare-exchange==0.5.3"
# the installed wheel's notebooks: from / with -I, never a decodelab/ of the folder this runs in (a
# checkout, whose notebooks are the repository's)
(cd / && "$PY" -I - "$DEST") <<'PY'
import shutil, sys
from decodelab.classroom.hub import course_notebooks_dir

src = course_notebooks_dir()
shutil.copytree(src, sys.argv[1], dirs_exist_ok=True, ignore=shutil.ignore_patterns("src", ".ipynb_checkpoints"))
print(f"install-singleuser.sh: course notebooks {src} -> {sys.argv[1]}")
PY
