#!/usr/bin/env bash
# A virtualenv with the Zero to JupyterHub chart's hub versions (the pinned chart's hub image:
# tests/fixtures/z2jh-4.4.0/requirements.txt, JupyterHub 5.5.0 with jupyterhub-nativeauthenticator
# 1.3.0, jupyterhub-ltiauthenticator 1.6.3, SQLAlchemy 2.0.50, tornado 6.5.7 and the image's exact
# versions of their dependencies), plus jupyter-server for the students' servers that hub spawns
# on loopback (the user image's side, on the hub's major version). tests/test_classroom_chart_hub.py
# runs classroom/config.yaml's hub config in it as the chart's hub pod would (it skips, saying
# this command, where the virtualenv is missing). About 30 s and 60 MB from the package index;
# `bash course.sh test` runs it.
# Idempotent: does nothing when the virtualenv already has the pinned JupyterHub.
#
# Usage: scripts/install_chart_hub.sh [VENV]     (default: .venv-chart-hub, git-ignored; where other
#        users cannot enter the checkout, e.g. a clone in root's home, /tmp/decodelab-chart-hub, since
#        the test's hub runs as user nobody when it is root)
# Env:   PYTHON   the Python to make it from (default /usr/bin/python3 where it exists, else python3;
#                 3.10+; the test runs the hub as user nobody when it is root, so a Python in root's
#                 home, e.g. pyenv's, will not do)
#        CI=true  a failure is an error (exit 1); elsewhere a warning, and the test skips
set -euo pipefail
cd "$(dirname "$0")/.."
default_venv() {  # .venv-chart-hub where every folder above the checkout lets others through
  local d=$PWD
  while [[ "$d" != / ]]; do
    if (( (8#$(stat -c %a "$d") & 1) == 0 )); then echo /tmp/decodelab-chart-hub; return; fi
    d=$(dirname "$d")
  done
  echo .venv-chart-hub
}
VENV="${1:-$(default_venv)}"
REQ=tests/fixtures/z2jh-4.4.0/requirements.txt
case "${CI:-}" in 1|true|TRUE|yes) ON_CI=1 ;; *) ON_CI=0 ;; esac

give_up() {
  if ((ON_CI)); then echo "install_chart_hub.sh: ERROR: $1" >&2; exit 1; fi
  echo "install_chart_hub.sh: warning: $1 (tests/test_classroom_chart_hub.py will be skipped)" >&2
  exit 0
}

want=$(sed -n 's/^jupyterhub==\([^ ]*\).*/\1/p' "$REQ")
if [[ -x "$VENV/bin/python" ]] && [[ "$("$VENV/bin/python" -c 'import jupyterhub, jupyter_server; print(jupyterhub.__version__)' 2>/dev/null)" == "$want" ]]; then
  echo "install_chart_hub.sh: JupyterHub $want present in $VENV"
  exit 0
fi
BASE=${PYTHON:-$( [[ -x /usr/bin/python3 ]] && echo /usr/bin/python3 || echo python3 )}
"$BASE" -m venv "$VENV" || give_up "python3 -m venv $VENV failed"
# the chart's hub packages this course uses, every dependency at the hub image's version (-c)
"$VENV/bin/python" -m pip install -q -c "$REQ" jupyterhub jupyterhub-nativeauthenticator \
  jupyterhub-ltiauthenticator sqlalchemy tornado \
  || give_up "pip install of the chart's hub packages ($REQ) failed"
# the students' side (jupyterhub-singleuser needs jupyter-server), leaving the hub's pins as they are
"$VENV/bin/python" -m pip install -q -c "$REQ" "jupyter-server>=2.14,<3" \
  || give_up "pip install jupyter-server failed"
echo "install_chart_hub.sh: $("$VENV/bin/python" -c 'import jupyterhub, nativeauthenticator, jupyter_server; print("JupyterHub", jupyterhub.__version__, "jupyter-server", jupyter_server.__version__)') in $VENV"
