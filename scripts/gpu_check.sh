#!/usr/bin/env bash
# The GPU checks in one go: the `gpu` tests (a skip counts as a failure), the gpu preset's speed
# (bench/preset_speed.py, bf16 on and off), then every registered method trained with the gpu
# preset; writes OUT/gpu_check.json (seconds and held-out accuracy per method) and OUT/gpu.md (the
# same as a table, with the command, ready to commit as bench/gpu.md).
#   scripts/gpu_check.sh [OUT]              (default OUT: build/gpu_check)
#   scripts/gpu_check.sh --dry-run [OUT]    the same plumbing on the CPU: the cpu preset, 2 RL steps
# Needs a CUDA build of torch in .venv (README, "On a GPU"). Exits non-zero, loudly, if CUDA is
# missing or anything fails. GPU_CHECK_STEPS (default 30) RL steps per method, GPU_CHECK_METHODS
# (default: every method in unified_rl.methods.METHODS), PY (default .venv/bin/python).
set -euo pipefail
cd "$(dirname "$0")/.."
COMMAND="scripts/gpu_check.sh $*"
DRY=0
if [ "${1:-}" = "--dry-run" ]; then DRY=1; shift; fi
PY=${PY:-.venv/bin/python}
OUT=${1:-build/gpu_check}
STEPS=${GPU_CHECK_STEPS:-30}
PRESET=gpu
[ "$DRY" = 1 ] && { PRESET=cpu; STEPS=2; OUT=${1:-build/gpu_check_dry}; }

"$PY" -c 'import unified_rl' || { echo "gpu_check: FAILED: $PY cannot import unified_rl (make lab first)" >&2; exit 2; }
if [ "$DRY" = 0 ]; then
  if ! "$PY" - <<'EOF'
import sys, torch
if torch.version.cuda is None:
    sys.exit(f"gpu_check: FAILED: torch {torch.__version__} is a CPU build; install a CUDA torch (README, 'On a GPU')")
if not torch.cuda.is_available():
    sys.exit(f"gpu_check: FAILED: torch {torch.__version__} (CUDA {torch.version.cuda}) sees no GPU; check the driver (nvidia-smi)")
print("gpu_check on", torch.cuda.get_device_name(0), "| torch", torch.__version__, "| CUDA", torch.version.cuda,
      "| bf16", torch.cuda.is_bf16_supported())
EOF
  then exit 2; fi
fi
METHODS=${GPU_CHECK_METHODS:-$("$PY" -c 'from unified_rl.methods import METHODS; print(" ".join(METHODS))')}
rm -rf "$OUT"
mkdir -p "$OUT"
export UNIFIED_RL_CACHE=${UNIFIED_RL_CACHE:-$OUT/cache}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1}

t0=$(date +%s)
tests_rc=0
if [ "$DRY" = 0 ]; then
  # UNIFIED_RL_REQUIRE_GPU=1: a missing GPU fails the tests instead of skipping them
  UNIFIED_RL_REQUIRE_GPU=1 "$PY" -m pytest -q -rs -m gpu tests/test_gpu.py 2>&1 | tee "$OUT/tests.log" || tests_rc=$?
  if grep -q "skipped" "$OUT/tests.log"; then echo "gpu_check: a GPU test skipped (see above)" >&2; fi
else
  "$PY" -m pytest -q -m gpu tests/test_gpu.py 2>&1 | tee "$OUT/tests.log" || tests_rc=$?  # skips here: no CUDA
fi
tests_s=$(( $(date +%s) - t0 ))

speed_rc=0
if [ "$DRY" = 0 ]; then
  "$PY" bench/preset_speed.py --presets cpu,gpu > "$OUT/preset_speed.json" || speed_rc=$?
else
  "$PY" bench/preset_speed.py --presets cpu --repeats 1 --steps 3 > "$OUT/preset_speed.json" || speed_rc=$?
fi

for m in $METHODS; do
  s0=$(date +%s)
  args=(--preset "$PRESET" --quiet --out "$OUT/$m")
  if [ "$m" != sft ]; then
    args+=(--steps "$STEPS")  # sft runs its preset budget
    # start RL from the SFT model just trained, rather than training the cached one a second time
    [ -f "$OUT/sft/checkpoint/config.json" ] && args+=(--init "$OUT/sft/checkpoint")
  fi
  rc=0
  "$PY" -m unified_rl train "$m" "${args[@]}" > "$OUT/$m.log" 2>&1 || rc=$?
  [ "$rc" = 0 ] || tail -n 5 "$OUT/$m.log" >&2
  echo "{\"rc\": $rc, \"wall_seconds\": $(( $(date +%s) - s0 ))}" > "$OUT/$m.wall.json"
  echo "  $m: rc=$rc"
done

"$PY" bench/gpu_report.py "$OUT" "$tests_rc" "$tests_s" "$speed_rc" "$DRY" "$COMMAND" $METHODS
