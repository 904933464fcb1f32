#!/usr/bin/env bash
# Build a fresh virtual environment from binder/'s package list, with the Python binder/runtime.txt
# names, and run the whole course in it: what Binder will do, checked locally.
#   scripts/check_binder.sh [--dry-run] [VENV_DIR]   (PYTHON=/path/to/python3.X to choose the interpreter)
# VENV_DIR (default build/binder-venv in the repository) may be absolute or relative to the current
# folder. Everything is installed into VENV_DIR with its own pip, and the notebooks run on a kernel
# registered inside VENV_DIR whose Python is checked to be VENV_DIR's: nothing is installed outside
# it, and a pass says that Binder's environment runs the course. An existing VENV_DIR is replaced
# only if this script built it (it holds .check_binder). --dry-run prints the steps and runs none.
set -euo pipefail
dry=0
if [ "${1:-}" = "--dry-run" ]; then dry=1; shift; fi
[ $# -le 1 ] || { echo "check_binder: usage: scripts/check_binder.sh [--dry-run] [VENV_DIR]" >&2; exit 2; }
venv=${1:-}
case "$venv" in
  "") venv="$(cd "$(dirname "$0")/.." && pwd)/build/binder-venv" ;;
  /*) ;;
  *) venv="$PWD/$venv" ;;  # relative to where the script was started, before the cd below
esac
cd "$(dirname "$0")/.."
kernel=unified-rl-binder-check
run() { if [ "$dry" = 1 ]; then printf '+ %s\n' "$*"; else "$@"; fi; }

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
echo "check_binder: Python $want ($py), environment $venv"
if [ -e "$venv" ] || [ -L "$venv" ]; then
  if [ -L "$venv" ] || [ ! -f "$venv/.check_binder" ]; then
    echo "check_binder: $venv exists and was not built by this script; give a new folder" >&2
    exit 1
  fi
  run rm -rf "$venv"
fi
run "$py" -m venv "$venv"
run touch "$venv/.check_binder"
pip=("$venv/bin/python" -m pip)
run "${pip[@]}" install -q --upgrade pip
# binder/requirements.txt as Binder reads it: the CPU wheel index for torch, PyPI for the rest
run "${pip[@]}" install -q -r binder/requirements.txt
# postBuild as Binder runs it (a bare `pip install --no-deps -e .`): its pip must be the environment's
if [ "$dry" = 0 ] && [ "$(PATH="$venv/bin:$PATH" command -v pip)" != "$venv/bin/pip" ]; then
  echo "check_binder: postBuild's pip would not be $venv/bin/pip; stopping before it installs elsewhere" >&2
  exit 1
fi
run env PATH="$venv/bin:$PATH" bash binder/postBuild
run "${pip[@]}" install -q nbval pytest
run "$venv/bin/python" -c "import unified_rl, sys; assert unified_rl.__file__.startswith('$PWD/'), unified_rl.__file__; print('unified_rl', unified_rl.__version__, 'in', sys.prefix)"
# the notebooks' kernel: registered inside the environment, its Python checked to be the environment's
run "$venv/bin/python" -m ipykernel install --sys-prefix --name "$kernel" --display-name "Binder check"
run "$venv/bin/python" - "$kernel" <<'EOF'
import os, sys
from jupyter_client.manager import start_new_kernel
km, kc = start_new_kernel(kernel_name=sys.argv[1])
try:
    msg_id = kc.execute("import sys; print(sys.executable)")
    out = ""
    while True:
        msg = kc.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "stream":
            out += msg["content"]["text"]
        if msg["parent_header"].get("msg_id") == msg_id and msg.get("content", {}).get("execution_state") == "idle":
            break
finally:
    kc.stop_channels()
    km.shutdown_kernel(now=True)
inside, here = os.path.realpath(out.strip()), os.path.realpath(sys.executable)
if inside != here:
    sys.exit(f"check_binder: the kernel runs {inside}, not the environment's {here}")
print("check_binder: kernel Python", inside)
EOF
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} run "$venv/bin/python" -m pytest -q --nbval-lax --nbval-cell-timeout=600 \
  --nbval-kernel-name "$kernel" course/
