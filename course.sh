#!/usr/bin/env bash
# decodelab course launcher: set-up is done by the command itself and is safe to run again.
#   bash course.sh lab     -> open the course in JupyterLab (notebooks/01_decode_phase.ipynb)
#   bash course.sh test    -> run the whole test suite (unit tests; every notebook top to bottom under nbval and, when
#                             Chromium is here, in JupyterLab in the browser; the classroom's JupyterHub and nbgrader),
#                             in parallel (pytest-xdist, --dist loadgroup; DECODELAB_TEST_WORKERS=N sets the worker
#                             count, 0: one process)
#   bash course.sh test --quick -> the contributors' lane: tests/ without the browser, classroom and whole-notebook tests
#                             (-m "not browser and not classroom and not notebooks": no whole-notebook runs)
#   bash course.sh setup   -> only the set-up (virtualenv .venv, torch, decodelab and everything the course uses)
# `lab` installs decodelab with its lab extra (JupyterLab, slides, the serving tools notebook 07 uses);
# `test` and `setup` install the test extra (every extra plus pytest, pytest-xdist, nbval, playwright).
# `test` also installs configurable-http-proxy from npm into .venv/bin (scripts/install_hub.sh) and the
# Zero to JupyterHub chart's hub versions into .venv-chart-hub (scripts/install_chart_hub.sh), for
# the JupyterHub test; Node.js comes from apt when it is missing and system packages are wanted.
# Asks nothing. System packages (chromium and a Hangul font, for the browser test) are installed
# only when told: CI=true or DECODELAB_INSTALL_SYSTEM=1 (scripts/install_browser.sh, needs root;
# bubblewrap for the autograde sandbox: scripts/install_sandbox.sh).
#
# torch: on Linux without an NVIDIA GPU (no nvidia-smi) the CPU build is taken from PyTorch's CPU
# index; where that index cannot be reached (offline mirrors, CI) pip gives up within seconds
# (--timeout 5 --retries 0) and the plain requirement is installed instead. macOS, Windows and
# machines with an NVIDIA GPU get the plain requirement. DECODELAB_TORCH overrides it all
# (e.g. DECODELAB_TORCH="torch==2.13.0 --index-url https://download.pytorch.org/whl/cu128").
set -euo pipefail
CALLER=$(pwd)  # where the command was typed: relative model paths given to `lab` are read from here
cd "$(dirname "$0")"
ROOT=$(pwd)
VENV=${DECODELAB_VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}
TORCH_REQ="torch==2.13.0"
CPU_INDEX="https://download.pytorch.org/whl/cpu"

install_torch() {  # $1: the virtualenv's python
  local vpy=$1
  if [ -n "${DECODELAB_TORCH:-}" ]; then
    echo "[decodelab] torch를 설치합니다: $DECODELAB_TORCH (DECODELAB_TORCH)"
    # shellcheck disable=SC2086  # the spec may hold several pip arguments
    "$vpy" -m pip install -q $DECODELAB_TORCH
    return
  fi
  if [ "$(uname -s)" = Linux ] && ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "[decodelab] NVIDIA GPU가 없는 Linux: torch CPU 빌드를 설치합니다 ($CPU_INDEX)"
    if "$vpy" -m pip install -q --timeout 5 --retries 0 "$TORCH_REQ" --index-url "$CPU_INDEX"; then
      return
    fi
    echo "[decodelab] CPU 빌드 색인에서 설치하지 못했습니다(위 pip 오류: 색인에 닿지 않거나 거기에 없는 의존 패키지). 기본 색인에서 $TORCH_REQ 를 설치합니다"
  else
    echo "[decodelab] torch를 설치합니다 ($TORCH_REQ)"
  fi
  "$vpy" -m pip install -q "$TORCH_REQ"
}

setup() {  # $1: the extra to install: lab or test (default)
  local extra=${1:-test}
  if [ ! -x "$VENV/bin/python" ]; then
    # the Python checked before the virtualenv is made from it: a too old one leaves no .venv behind
    if ! "$PY" -c 'import sys; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1; then
      echo "[decodelab] 오류: $PY ($("$PY" --version 2>&1 || echo '실행할 수 없음'))로는 설치할 수 없습니다: Python 3.10 이상이 필요합니다." >&2
      echo "[decodelab] 3.10 이상의 Python을 PYTHON으로 알려 주세요. 예: PYTHON=python3.12 bash course.sh ${cmd:-lab}" >&2
      exit 2
    fi
    echo "[decodelab] 가상환경을 만듭니다: $VENV"
    "$PY" -m venv "$VENV"
  fi
  local vpy="$VENV/bin/python"
  if ! "$vpy" -c 'import sys; sys.exit(sys.version_info < (3, 10))' >/dev/null 2>&1; then
    echo "[decodelab] 오류: $VENV 의 Python($("$vpy" --version 2>&1))은 3.10보다 낮습니다: 그 폴더를 지우고" \
         "3.10 이상의 Python으로 다시 만드세요. 예: rm -rf $VENV && PYTHON=python3.12 bash course.sh ${cmd:-lab}" >&2
    exit 2
  fi
  if ! "$vpy" -c 'import torch' >/dev/null 2>&1; then
    install_torch "$vpy"
  fi
  # the test extra holds the lab extra: a venv set up for `test` needs nothing more for `lab`
  local stamp="$VENV/.decodelab-installed-$extra"
  if [ "$extra" = lab ] && [ -f "$VENV/.decodelab-installed-test" ] && ! [ pyproject.toml -nt "$VENV/.decodelab-installed-test" ]; then
    stamp="$VENV/.decodelab-installed-test"
  fi
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "[decodelab] decodelab과 의존성을 설치합니다 (.[$extra])"
    "$vpy" -m pip install -q -e ".[$extra]"
    touch "$stamp"
  fi
}

system_packages_wanted() {
  case "${CI:-}${DECODELAB_INSTALL_SYSTEM:-}" in
    *true*|*TRUE*|*1*|*yes*) return 0 ;;
    *) return 1 ;;
  esac
}

cmd=${1:-}
shift || true
case "$cmd" in
  setup)
    setup
    ;;
  lab)
    setup lab
    # folders given relative to where the command was typed (course.sh runs in the repository)
    args=()
    prev=""
    for arg in "$@"; do
      given=$arg
      case "$prev" in
        --target|--draft|--notebooks-dir) case "$arg" in /*) ;; *) arg="$CALLER/$arg" ;; esac ;;
      esac
      case "$arg" in
        --target=*|--draft=*|--notebooks-dir=*)
          case "${arg#*=}" in /*) ;; *) arg="${arg%%=*}=$CALLER/${arg#*=}" ;; esac ;;
      esac
      args+=("$arg")
      prev=$given
    done
    for var in DECODELAB_TARGET DECODELAB_DRAFT; do
      val=${!var:-}
      if [ -n "$val" ] && [ "${val#/}" = "$val" ]; then export "$var=$CALLER/$val"; fi
    done
    exec "$VENV/bin/decodelab" lab ${args[@]+"${args[@]}"}
    ;;
  test)
    # pytest-xdist workers: one more than the CPUs (the browser and classroom tests spend much of
    # their time waiting on a kernel, a page or a hub), at most 8; --dist loadgroup keeps the tests
    # that share a server (pytest.mark.xdist_group) on one worker. DECODELAB_TEST_WORKERS=N sets N
    # (0: one process). Arguments that choose the workers themselves or need one process (-n, --pdb,
    # -p no:xdist) are passed on without -n.
    # --quick: tests/ only, -m "not browser and not classroom and not notebooks" (no JupyterLab, hub or
    # whole-notebook run); every other argument goes to pytest.
    lane=(tests notebooks --nbval-lax)
    rest=()
    for arg in "$@"; do
      if [ "$arg" = --quick ]; then lane=(tests -m "not browser and not classroom and not notebooks"); else rest+=("$arg"); fi
    done
    set -- ${rest[@]+"${rest[@]}"}
    if [ -n "${DECODELAB_TEST_WORKERS:-}" ]; then
      workers=$DECODELAB_TEST_WORKERS
      case "$workers" in
        ''|*[!0-9]*) echo "[decodelab] DECODELAB_TEST_WORKERS는 0 이상의 정수여야 합니다 (지금: '$workers')" >&2; exit 2 ;;
      esac
      if [ "${#workers}" -gt 3 ]; then
        echo "[decodelab] DECODELAB_TEST_WORKERS가 너무 큽니다 (지금: $workers): 999 이하로 주세요" >&2; exit 2
      fi
      workers=$((10#$workers))
    else
      workers=$(( $(nproc 2>/dev/null || echo 2) + 1 ))
      if [ "$workers" -gt 8 ]; then workers=8; fi
    fi
    parallel=(-n "$workers" --dist loadgroup)
    for arg in "$@"; do
      case "$arg" in
        -n|-n[0-9]*|--numprocesses*|--pdb|--trace|no:xdist) parallel=() ;;
      esac
    done
    setup test
    # configurable-http-proxy (npm) for the JupyterHub test, into $VENV/bin; a warning when it cannot
    bash scripts/install_hub.sh "$VENV"
    # the Zero to JupyterHub chart's hub versions (JupyterHub 5.5.0 ...) in .venv-chart-hub, for
    # tests/test_classroom_chart_hub.py (about 15 s of CPU from the package index; a warning when it cannot)
    bash scripts/install_chart_hub.sh
    if system_packages_wanted; then
      bash scripts/install_browser.sh "$VENV/bin/python"
      bash scripts/install_sandbox.sh  # bubblewrap: nbgrader autograde runs students' code in it
    else
      echo "[decodelab] 시스템 패키지(chromium, 한글 글꼴)는 설치하지 않습니다: 없으면 브라우저 테스트는 건너뜁니다 (설치: DECODELAB_INSTALL_SYSTEM=1)"
    fi
    export PYTHONHASHSEED=0 MPLBACKEND=Agg HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
    exec "$VENV/bin/python" -m pytest "${lane[@]}" -p no:cacheprovider ${parallel[@]+"${parallel[@]}"} "$@"
    ;;
  *)
    echo "사용법: bash course.sh lab | test [--quick] | setup  (lab: 강좌 열기, test: 전체 테스트, test --quick: 브라우저·수업용 테스트를 뺀 빠른 테스트, setup: 설치만)" >&2
    if [ -n "$cmd" ]; then echo "알 수 없는 명령입니다: $cmd" >&2; fi
    exit 2
    ;;
esac
