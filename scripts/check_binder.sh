#!/usr/bin/env bash
# Build a fresh virtual environment from binder/'s package list and run the whole course in it:
# what Binder will do, checked locally. Usage: scripts/check_binder.sh [VENV_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${1:-build/binder-venv}
rm -rf "$venv"
python3 -m venv "$venv"
"$venv/bin/pip" install -q --upgrade pip
# the CPU wheel index may be unreachable here: take torch==2.13.0 (a CPU build) from pip's default
grep -v -e '^--extra-index-url' -e '^torch==' binder/requirements.txt > "$venv/requirements.txt"
"$venv/bin/pip" install -q torch==2.13.0 -r "$venv/requirements.txt"
PATH="$PWD/$venv/bin:$PATH" bash binder/postBuild  # as Binder runs it: pip install --no-deps -e .
"$venv/bin/pip" install -q nbval pytest
"$venv/bin/python" -c "import unified_rl, torch; print('unified_rl', unified_rl.__version__, 'torch', torch.__version__)"
"$venv/bin/pytest" -q --nbval-lax --nbval-cell-timeout=600 course/
