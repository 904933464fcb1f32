"""Assemble scripts/gpu_check.sh's results: OUT/gpu_check.json and OUT/gpu.md (for bench/gpu.md).

    python bench/gpu_report.py OUT TESTS_RC TESTS_SECONDS SPEED_RC DRY COMMAND METHOD...
Exits 1 if the tests, the speed benchmark or any method failed, or a method left no summary.
"""

import json
import os
import sys

import torch


def collect(out, tests_rc, tests_s, speed_rc, dry, command, methods):
    cuda = torch.cuda.is_available()
    res = {"command": command, "dry_run": dry,
           "device": torch.cuda.get_device_name(0) if cuda else "cpu",
           "torch": torch.__version__, "cuda": torch.version.cuda,
           "bf16": bool(cuda and torch.cuda.is_bf16_supported()),
           "gpu_tests": {"rc": tests_rc, "seconds": tests_s}, "methods": {}}
    speed = os.path.join(out, "preset_speed.json")
    try:
        with open(speed) as f:
            res["preset_speed"] = json.load(f)
    except (OSError, ValueError) as e:
        res["preset_speed"] = {"error": f"{type(e).__name__}: {e}"}
        speed_rc = speed_rc or 1
    res["preset_speed_rc"] = speed_rc
    res["real_models"] = {}
    for name in sorted(os.listdir(out)):  # bench/llm_gpu.py's results
        if name.startswith("llm-") and name.endswith(".json"):
            with open(os.path.join(out, name)) as f:
                res["real_models"][name[4:-5]] = json.load(f)
    res["real_models_rc"] = int(os.environ.get("GPU_CHECK_LLM_RC", "0"))
    res["real_models_skipped"] = os.environ.get("GPU_CHECK_REAL_MODELS", "1") == "0"
    if res["real_models_rc"] == 0 and "smollm2" not in res["real_models"] and not res["real_models_skipped"]:
        res["real_models_rc"] = 1  # the offline model always runs
    res["distributed_rc"] = int(os.environ.get("GPU_CHECK_DIST_RC", "0"))
    res["distributed_note"] = os.environ.get("GPU_CHECK_DIST_NOTE", "not run")
    try:  # bench/distributed_step.py under torchrun: per mode (ddp, fsdp), per rank
        with open(os.path.join(out, "distributed.json")) as f:
            res["distributed"] = json.load(f)
    except OSError:
        res["distributed"] = None
        if res["distributed_note"].startswith("rc="):  # it ran and left no result
            res["distributed_rc"] = res["distributed_rc"] or 1
    for m in methods:
        with open(os.path.join(out, f"{m}.wall.json")) as f:
            row = json.load(f)
        summary = os.path.join(out, m, "summary.json")
        if os.path.exists(summary):
            with open(summary) as f:
                s = json.load(f)
            ev = s.get("eval") or {}
            row.update(preset=s.get("preset"), steps=s.get("steps"), train_seconds=s.get("seconds"),
                       device=s.get("device"), accuracy=ev.get("accuracy"),
                       pass_at_k=ev.get("pass_at_k"), maj_at_k=ev.get("maj_at_k"))
        elif row["rc"] == 0:
            row["rc"], row["error"] = 1, "no summary.json"
        res["methods"][m] = row
    return res


def markdown(res):
    def ks(d):
        return ", ".join(f"{k}: {v:.3f}" for k, v in d.items()) if isinstance(d, dict) else ""

    title = "Dry run on the CPU (cpu preset, 2 RL steps): plumbing only" if res["dry_run"] else \
        f"The gpu preset on {res['device']}"
    lines = [f"# {title}", "",
             f"`{res['command']}` (torch {res['torch']}, CUDA {res['cuda']}, bf16 autocast "
             f"{'on' if res['bf16'] else 'off: no native bf16'}). GPU tests: rc {res['gpu_tests']['rc']}, "
             f"{res['gpu_tests']['seconds']} s.", "",
             "| method | rc | steps | train s | wall s | held-out greedy accuracy | pass@k | maj@k |",
             "|---|---|---|---|---|---|---|---|"]
    for m, r in res["methods"].items():
        acc = r.get("accuracy")
        lines.append(f"| {m} | {r['rc']} | {r.get('steps')} | {r.get('train_seconds')} | {r['wall_seconds']} | "
                     f"{'' if acc is None else f'{acc:.3f}'} | {ks(r.get('pass_at_k'))} | {ks(r.get('maj_at_k'))} |")
    if res.get("real_models"):
        lines += ["", "Real chat models, GRPO through `train()` (`bench/llm_gpu.py`):", "",
                  "| model | task | preset, dtype, LoRA r | steps | s/step | peak memory GB | greedy before | after | "
                  "reply chars before | after |", "|---|---|---|---|---|---|---|---|---|---|"]
        for r in res["real_models"].values():
            lines.append(f"| {r['model']} | {r['task']} | {r['preset']}, {r['dtype']}, {r['lora_r']} | {r['steps']} | "
                         f"{r['seconds_per_step']:.2f} | {r['peak_memory_gb']:.2f} ({r['peak_memory_kind']}) | "
                         f"{r['before']['greedy']:.3f} | {r['after']['greedy']:.3f} | "
                         f"{r['before']['reply_chars']:.0f} | {r['after']['reply_chars']:.0f} |")
    dist = res.get("distributed")
    lines += ["", f"Data-parallel GRPO under torchrun (`bench/distributed_step.py`): {res.get('distributed_note')}."]
    if dist:
        lines += ["", f"{dist['model']} on {dist['world_size']} ranks ({dist['device']}), {dist['steps']} steps, "
                  f"LoRA r {dist['lora_r']}:", "",
                  "| mode | dtype | rank | s/step | peak memory GB | s in the package's collectives |",
                  "|---|---|---|---|---|---|"]
        for mode, r in dist["modes"].items():
            for rank in r["ranks"]:
                lines.append(f"| {mode} | {r['dtype']} | {rank['rank']} | {rank['seconds_per_step']} | "
                             f"{rank['peak_memory_gb']} | {rank['collective_seconds']} |")
    lines += ["", "Speed (`bench/preset_speed.py`):", "", "```json", json.dumps(res["preset_speed"], indent=2), "```", ""]
    return "\n".join(lines)


def main(argv):
    out, tests_rc, tests_s, speed_rc, dry, command = argv[:6]
    res = collect(out, int(tests_rc), int(tests_s), int(speed_rc), dry == "1", command, argv[6:])
    with open(os.path.join(out, "gpu_check.json"), "w") as f:
        json.dump(res, f, indent=2)
    with open(os.path.join(out, "gpu.md"), "w") as f:
        f.write(markdown(res))
    for m, r in res["methods"].items():
        print(f"{m:13s} rc={r['rc']} {r['wall_seconds']:5d} s  accuracy={r.get('accuracy')}")
    failed = [m for m, r in res["methods"].items() if r["rc"] != 0]
    failed += ["gpu tests"] if res["gpu_tests"]["rc"] != 0 else []
    failed += ["preset_speed"] if res["preset_speed_rc"] != 0 else []
    failed += ["real models"] if res["real_models_rc"] != 0 else []
    failed += ["data-parallel"] if res["distributed_rc"] != 0 else []
    print(f"-> {out}/gpu_check.json, {out}/gpu.md" + (f"  FAILED: {', '.join(failed)}" if failed else "  (all passed)"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
