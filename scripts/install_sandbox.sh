#!/usr/bin/env bash
# Install what `decodelab classroom autograde` needs to run students' code safely: Debian's
# bubblewrap (bwrap), and util-linux's setpriv and prlimit (present on Debian). Idempotent.
# Used by course.sh test when system packages are wanted (CI=true or DECODELAB_INSTALL_SYSTEM=1),
# as scripts/install_browser.sh is; needs root or password-less sudo.
#
# Env:   CI=true   a missing piece that cannot be installed is an error (exit 1); elsewhere it is a
#                  warning and the sandbox tests (tests/test_classroom_sandbox.py, the nbgrader
#                  lifecycle test) skip themselves, saying why.
set -euo pipefail
case "${CI:-}" in 1|true|TRUE|yes) ON_CI=1 ;; *) ON_CI=0 ;; esac

give_up() {
  if ((ON_CI)); then
    echo "install_sandbox.sh: ERROR: $1" >&2
    exit 1
  fi
  echo "install_sandbox.sh: warning: $1 (the autograde sandbox tests will be skipped)" >&2
  exit 0
}

if command -v bwrap >/dev/null 2>&1 && command -v setpriv >/dev/null 2>&1 && command -v prlimit >/dev/null 2>&1; then
  echo "install_sandbox.sh: present: $(bwrap --version), setpriv, prlimit"
  exit 0
fi
command -v apt-get >/dev/null 2>&1 || give_up "no apt-get here: install bubblewrap and util-linux with your package manager"
SUDO=()
if [[ "$(id -u)" != 0 ]]; then
  if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO=(sudo -n); else
    give_up "not root and no password-less sudo: run 'sudo apt-get install -y bubblewrap util-linux'"
  fi
fi
export DEBIAN_FRONTEND=noninteractive
echo "install_sandbox.sh: apt-get install bubblewrap util-linux"
if ! "${SUDO[@]}" apt-get install -y --no-install-recommends bubblewrap util-linux; then
  "${SUDO[@]}" apt-get update || give_up "apt-get update failed"
  "${SUDO[@]}" apt-get install -y --no-install-recommends bubblewrap util-linux || give_up "apt-get install bubblewrap failed"
fi
command -v bwrap >/dev/null 2>&1 || give_up "bwrap is missing after the install"
bwrap --version
