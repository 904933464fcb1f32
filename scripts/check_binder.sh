#!/usr/bin/env bash
# Build a fresh virtual environment from binder/'s package list, with the Python binder/runtime.txt
# names, and run the whole course in it: what Binder will do, checked locally.
#   scripts/check_binder.sh [VENV_DIR]      (PYTHON=/path/to/python3.X to choose the interpreter)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/binder-venv}
want=$(sed -n 's/^python-\([0-9]*\.[0-9]*\).*/\1/p' binder/runtime.txt)
[ -n "$want" ] || { echo "check_binder: binder/runtime.txt should read python-3.X" >&2; exit 1; }
py=${PYTHON:-}
if [ -z "$py" ]; then  # pythonX.Y on PATH, else a pyenv install of X.Y
  py=$(command -v "python$want" || ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/"$want".*/bin/python 2>/dev/null | tail -1 || true)
fi
got=$("${py:-false}" -c 'import sys; print("%d.%d" % sys.version_info[:2])' 2>/dev/null || true)
if [ "$got" != "$want" ]; then
  echo "check_binder: binder/runtime.txt asks for Python $want; none found (set PYTHON=/path/to/python$want)" >&2
  exit 1
fi
echo "check_binder: Python $want ($py)"
rm -rf "$venv"
"$py" -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
# binder/requirements.txt as Binder reads it: the CPU wheel index for torch, PyPI for the rest
"$venv/bin/pip" install -q -r binder/requirements.txt
PATH="$PWD/$venv/bin:$PATH" bash binder/postBuild  # as Binder runs it: pip install --no-deps -e .
"$venv/bin/pip" install -q nbval pytest
"$venv/bin/python" -c "import unified_rl, torch; print('unified_rl', unified_rl.__version__, 'torch', torch.__version__)"
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$venv/bin/pytest" -q --nbval-lax --nbval-cell-timeout=600 course/
