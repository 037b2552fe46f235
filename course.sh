#!/usr/bin/env bash
# decodelab course launcher: set-up is done by the command itself and is safe to run again.
#   bash course.sh lab    -> open the course in JupyterLab (notebooks/01_decode_phase.ipynb)
#   bash course.sh test   -> run the whole test suite (unit tests, nbval on every notebook, browser test)
set -euo pipefail
cd "$(dirname "$0")"
ROOT=$(pwd)
VENV=${DECODELAB_VENV:-$ROOT/.venv}
PY=${PYTHON:-python3}

setup() {
  if [ ! -x "$VENV/bin/python" ]; then
    echo "[decodelab] 가상환경을 만듭니다: $VENV"
    "$PY" -m venv "$VENV"
  fi
  local vpy="$VENV/bin/python"
  "$vpy" -c 'import sys; assert sys.version_info >= (3, 10), "Python 3.10 이상이 필요합니다"'
  if ! "$vpy" -c 'import torch' >/dev/null 2>&1; then
    # A bare "torch" requirement would pull a multi-GB CUDA build; take the CPU build first.
    # DECODELAB_TORCH overrides the spec (e.g. to a CPU wheel index on your own machine).
    echo "[decodelab] torch를 설치합니다 (${DECODELAB_TORCH:-torch==2.13.0}; 이 강좌의 실습 기계에서는 CPU 빌드)"
    "$vpy" -m pip install -q ${DECODELAB_TORCH:-torch==2.13.0}
  fi
  local stamp="$VENV/.decodelab-installed"
  if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
    echo "[decodelab] decodelab과 의존성을 설치합니다"
    "$vpy" -m pip install -q -e ".[test]"
    touch "$stamp"
  fi
}

cmd=${1:-}
shift || true
case "$cmd" in
  lab)
    setup
    exec "$VENV/bin/decodelab" lab "$@"
    ;;
  test)
    setup
    bash scripts/install_browser.sh "$VENV/bin/python"
    export PYTHONHASHSEED=0 MPLBACKEND=Agg HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1
    exec "$VENV/bin/python" -m pytest tests notebooks --nbval-lax -p no:cacheprovider "$@"
    ;;
  *)
    echo "usage: bash course.sh lab | test" >&2
    exit 2
    ;;
esac
