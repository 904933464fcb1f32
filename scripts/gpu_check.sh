#!/usr/bin/env bash
# The GPU checks in one go (about 8 minutes on one H200): the `gpu` tests, then every method trained
# with the gpu preset; writes OUT/gpu_check.json with seconds and held-out accuracy per method.
#   scripts/gpu_check.sh [OUT]        (default OUT: build/gpu_check)
# Needs a CUDA build of torch in .venv (install it first; constraints.txt pins a CPU build).
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PY:-.venv/bin/python}
OUT=${1:-build/gpu_check}
# RL steps per method: the preset's 100 would not fit every method in 8 minutes
STEPS=${GPU_CHECK_STEPS:-40}
METHODS=${GPU_CHECK_METHODS:-"sft rft online-rft dpo ppo grpo grpo-process"}

if ! "$PY" -c 'import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)'; then
  echo "gpu_check: CUDA is not available to $PY (torch $("$PY" -c 'import torch; print(torch.__version__)')); nothing run." >&2
  exit 2
fi
mkdir -p "$OUT"
export UNIFIED_RL_CACHE=${UNIFIED_RL_CACHE:-$OUT/cache}
"$PY" -c 'import torch; print("gpu_check on", torch.cuda.get_device_name(0), "torch", torch.__version__)'

t0=$(date +%s)
tests_rc=0
"$PY" -m pytest -q -m gpu tests || tests_rc=$?
tests_s=$(( $(date +%s) - t0 ))

for m in $METHODS; do
  s0=$(date +%s)
  steps_arg=()
  if [ "$m" != sft ]; then
    steps_arg=(--steps "$STEPS")  # sft runs its preset budget
    # start RL from the SFT model just trained, rather than training the cached one a second time
    [ -f "$OUT/sft/checkpoint/config.json" ] && steps_arg+=(--init "$OUT/sft/checkpoint")
  fi
  rc=0
  "$PY" -m unified_rl train "$m" --preset gpu --quiet --out "$OUT/$m" "${steps_arg[@]}" || rc=$?
  echo "{\"rc\": $rc, \"wall_seconds\": $(( $(date +%s) - s0 ))}" > "$OUT/$m.wall.json"
done

"$PY" - "$OUT" "$tests_rc" "$tests_s" $METHODS <<'PYEOF'
import json, os, sys
out, tests_rc, tests_s, methods = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4:]
import torch
res = {"device": torch.cuda.get_device_name(0), "torch": torch.__version__,
       "gpu_tests": {"rc": tests_rc, "seconds": tests_s}, "methods": {}}
for m in methods:
    row = json.load(open(os.path.join(out, f"{m}.wall.json")))
    summary = os.path.join(out, m, "summary.json")
    if os.path.exists(summary):
        s = json.load(open(summary))
        ev = s.get("eval", {})
        row.update(steps=s["steps"], train_seconds=s["seconds"], accuracy=ev.get("accuracy"),
                   pass_at_k=ev.get("pass_at_k"), maj_at_k=ev.get("maj_at_k"))
    res["methods"][m] = row
json.dump(res, open(os.path.join(out, "gpu_check.json"), "w"), indent=2)
for m, r in res["methods"].items():
    print(f"{m:13s} rc={r['rc']} {r['wall_seconds']:5d} s  accuracy={r.get('accuracy')}")
failed = tests_rc != 0 or any(r["rc"] != 0 for r in res["methods"].values())
print(f"-> {out}/gpu_check.json" + ("  (FAILURES above)" if failed else ""))
sys.exit(1 if failed else 0)
PYEOF
