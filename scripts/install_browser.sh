#!/usr/bin/env bash
# Install what the browser tests (tests/browserkit.py) need: Debian's chromium, a Hangul font for the browser UI,
# and the playwright Python package in the project's Python. Idempotent: installs only what is
# missing, runs `apt-get update` only when a package cannot be found or installed without it.
#
# Playwright's own browser download (`playwright install`) is NOT used: the test drives the system
# browser (/usr/bin/chromium) through playwright's `executable_path`.
#
# Why a font: JupyterLab renders the notebooks' Korean markdown with the browser's system fonts.
# A bare Debian image has only DejaVu (no Hangul), so headings show as empty boxes in the
# screenshots. A student's own laptop browser has CJK fonts; this is for CI / containers only.
#
# Usage: scripts/install_browser.sh [PYTHON]     (default: .venv/bin/python, else python3)
# Env:   DECODELAB_BROWSER_FONT_PKG   apt font package (default fonts-nanum, ~ 10 MB download;
#                                     fonts-noto-cjk works too, ~ 57 MB)
#        CI=true                      a missing piece that cannot be installed is an error (exit 1);
#                                     elsewhere (a laptop without apt or root) it is a warning and
#                                     the browser tests skip themselves.
set -euo pipefail

cd "$(dirname "$0")/.."
PY="${1:-}"
if [[ -z "$PY" ]]; then
  if [[ -x .venv/bin/python ]]; then PY=.venv/bin/python; else PY=python3; fi
fi
FONT_PKG="${DECODELAB_BROWSER_FONT_PKG:-fonts-nanum}"
case "${CI:-}" in 1|true|TRUE|yes) ON_CI=1 ;; *) ON_CI=0 ;; esac

give_up() {  # message: fatal under CI, a warning elsewhere
  if ((ON_CI)); then
    echo "install_browser.sh: ERROR: $1" >&2
    exit 1
  fi
  echo "install_browser.sh: warning: $1 (the browser test will be skipped)" >&2
  exit 0
}
APT_PKGS=(chromium "$FONT_PKG" fonts-noto-color-emoji fontconfig)

SUDO=()
if [[ "$(id -u)" != 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else SUDO=(none); fi
fi

missing=()
for pkg in "${APT_PKGS[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$pkg")
  fi
done

if ((${#missing[@]})); then
  if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-query >/dev/null 2>&1; then
    give_up "no apt-get here: install ${missing[*]} (Debian names) with your package manager"
  fi
  if [[ "${SUDO[*]}" == none ]]; then
    give_up "not root and no password-less sudo: run 'sudo apt-get install -y ${missing[*]}'"
  fi
  export DEBIAN_FRONTEND=noninteractive
  echo "install_browser.sh: apt-get install ${missing[*]}"
  if ! "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"; then
    # package lists missing or stale: update once, then retry
    "${SUDO[@]}" apt-get update || give_up "apt-get update failed"
    "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}" || give_up "apt-get install ${missing[*]} failed"
  fi
  if command -v fc-cache >/dev/null 2>&1; then fc-cache -f >/dev/null 2>&1 || true; fi
else
  echo "install_browser.sh: apt packages present: ${APT_PKGS[*]}"
fi

[[ -x /usr/bin/chromium ]] || give_up "/usr/bin/chromium is missing after the install"

if "$PY" -c "import playwright.sync_api" >/dev/null 2>&1; then
  echo "install_browser.sh: playwright present in $PY"
else
  echo "install_browser.sh: pip install playwright into $PY"
  "$PY" -m pip install --quiet "playwright>=1.40" || give_up "pip install playwright failed"
fi

/usr/bin/chromium --version 2>/dev/null || true
"$PY" -c "import importlib.metadata as m; print('playwright', m.version('playwright'))"
