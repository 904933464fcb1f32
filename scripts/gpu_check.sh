#!/usr/bin/env bash
# The GPU check (scripts/gpu_check.py, whose docstring says what it runs): the machine's own python3 (PY
# to choose another) with this repository on PYTHONPATH, nothing installed from the network.
#   scripts/gpu_check.sh --assets .gpu-assets/1 --phases tests,methods,precision OUT   # call 1 on a lent GPU
#   scripts/gpu_check.sh --assets .gpu-assets/2 --phases llm OUT                       # call 2, right after
#   scripts/gpu_check.sh --dry-run [--assets DIR/1] [OUT]                              # the same steps on the CPU
cd "$(dirname "$0")/.." || exit 2
exec "${PY:-python3}" scripts/gpu_check.py "$@"
