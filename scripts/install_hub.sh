#!/usr/bin/env bash
# Install what `decodelab classroom hub` needs besides the classroom extra: ngshare-exchange (pip,
# without its dependencies: see below), Node.js and configurable-http-proxy (the proxy JupyterHub
# starts), from the npm registry, into the virtualenv's own prefix: VENV/bin/configurable-http-proxy
# (no root needed for that part).
# Idempotent: does nothing when the pinned version is already there.
#
# Usage: scripts/install_hub.sh [VENV]      (default: .venv)
# Env:   DECODELAB_CHP_VERSION   configurable-http-proxy version (default 5.3.0, needs Node.js >= 20)
#        DECODELAB_NGSHARE_EXCHANGE_VERSION  ngshare-exchange version (default 0.5.3)
#        CI=true                 a missing piece that cannot be installed is an error (exit 1);
#                                elsewhere it is a warning and tests/test_classroom_hub.py skips.
# Node.js itself: when `node`/`npm` are missing and system packages are wanted (CI=true or
# DECODELAB_INSTALL_SYSTEM=1, as for scripts/install_browser.sh), Debian's nodejs + npm are installed
# with apt-get (root or password-less sudo); elsewhere install Node.js 20 LTS from https://nodejs.org.
set -euo pipefail
cd "$(dirname "$0")/.."
VENV="${1:-.venv}"
VERSION="${DECODELAB_CHP_VERSION:-5.3.0}"
case "${CI:-}" in 1|true|TRUE|yes) ON_CI=1 ;; *) ON_CI=0 ;; esac
case "${CI:-}${DECODELAB_INSTALL_SYSTEM:-}" in *true*|*TRUE*|*1*|*yes*) SYSTEM_OK=1 ;; *) SYSTEM_OK=0 ;; esac

give_up() {
  if ((ON_CI)); then
    echo "install_hub.sh: ERROR: $1" >&2
    exit 1
  fi
  echo "install_hub.sh: warning: $1 (the classroom hub test will be skipped)" >&2
  exit 0
}

[[ -d "$VENV" ]] || give_up "no virtualenv at $VENV (run 'bash course.sh setup' first)"

# ngshare-exchange (nbgrader's side of the hub's ngshare service, decodelab/classroom/exchange_plugin.py):
# with --no-deps, since its metadata pins jupyter-core<4.11.2, which JupyterLab 4 and nbgrader 0.9
# cannot use (pip would backtrack for ever); its code runs on jupyter-core 5, its other needs
# (nbgrader, rapidfuzz, traitlets) come with decodelab[classroom].
NGX_VERSION="${DECODELAB_NGSHARE_EXCHANGE_VERSION:-0.5.3}"
if [[ "$("$VENV/bin/python" -c 'import importlib.metadata as m; print(m.version("ngshare-exchange"))' 2>/dev/null)" == "$NGX_VERSION" ]]; then
  echo "install_hub.sh: ngshare-exchange $NGX_VERSION present in $VENV"
else
  echo "install_hub.sh: pip install --no-deps ngshare-exchange==$NGX_VERSION into $VENV"
  "$VENV/bin/python" -m pip install -q --no-deps "ngshare-exchange==$NGX_VERSION" \
    || give_up "pip install --no-deps ngshare-exchange==$NGX_VERSION failed"
fi

CHP="$VENV/bin/configurable-http-proxy"
if [[ -x "$CHP" ]] && [[ "$("$CHP" --version 2>/dev/null)" == "$VERSION" ]]; then
  echo "install_hub.sh: configurable-http-proxy $VERSION present in $VENV/bin"
  exit 0
fi

if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
  ((SYSTEM_OK)) || give_up "node/npm missing: install Node.js 20 (https://nodejs.org), or rerun with DECODELAB_INSTALL_SYSTEM=1 for apt-get"
  SUDO=()
  if [[ "$(id -u)" != 0 ]]; then
    if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
      give_up "node/npm missing and not root: install Node.js 20 (https://nodejs.org) or 'sudo apt-get install -y nodejs npm'"
    fi
  fi
  command -v apt-get >/dev/null 2>&1 || give_up "node/npm missing and no apt-get: install Node.js 20 with your package manager"
  export DEBIAN_FRONTEND=noninteractive
  pkgs=()
  command -v node >/dev/null 2>&1 || pkgs+=(nodejs)
  command -v npm >/dev/null 2>&1 || pkgs+=(npm)
  echo "install_hub.sh: apt-get install ${pkgs[*]}"
  if ! "${SUDO[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}"; then
    "${SUDO[@]}" apt-get update || give_up "apt-get update failed"
    "${SUDO[@]}" apt-get install -y --no-install-recommends "${pkgs[@]}" || give_up "apt-get install ${pkgs[*]} failed"
  fi
fi

echo "install_hub.sh: node $(node --version); npm install configurable-http-proxy@$VERSION into $VENV"
npm install --global --prefix "$VENV" --no-audit --no-fund --loglevel=error "configurable-http-proxy@$VERSION" \
  || give_up "npm install configurable-http-proxy@$VERSION failed"
"$CHP" --version >/dev/null || give_up "$CHP does not run"
echo "install_hub.sh: configurable-http-proxy $("$CHP" --version) in $VENV/bin"
