"""Two phases of the GPU check, each one process: a few methods on one preset, and GRPO with bf16 autocast on and off.

    python bench/gpu_phases.py methods --out FILE [--preset gpu] [--methods sft,grpo,ppo,dpo,gdpo] [--steps 8]
    python bench/gpu_phases.py precision --out FILE [--preset gpu] [--steps 6]
scripts/gpu_check.py runs both, each under its own time limit; its --dry-run runs them on the CPU with the
`scoring` preset (below). `methods` starts every RL method from the preset's SFT model (the SFT method
itself, with the preset's budget, built once into the model cache) and records, per method: seconds per
step, the last step's batch reward, whether every weight stayed finite and some moved, peak memory and
greedy accuracy on held-out questions afterwards. FILE is rewritten after each method (each mode), so a
phase stopped at its limit still says what finished.
"""

import argparse
import json
import os
import resource
import statistics
import sys
import time
import traceback

import torch

from unified_rl import sampling
from unified_rl.cache import entry, sft_checkpoint
from unified_rl.evaluation import greedy_accuracy
from unified_rl.presets import get_preset
from unified_rl.runs import is_complete
from unified_rl.task import TaskConfig
from unified_rl.trainer import make_lab, seed_everything, train

# The tiny model after 40 SFT steps on single-digit sums: it answers 0.2-0.5 of its samples right (seeds
# 0-2), so GRPO's groups differ (a non-zero gradient) and DPO's samples give pairs; the untrained tiny
# model scores 0 everywhere, which moves no weight and finds no pair.
SCORING = get_preset("tiny").with_(
    task=TaskConfig(digits=1), model={"n_positions": 64}, sft={"steps": 40, "batch_size": 32, "lr": 1e-2},
    rl={"prompts_per_step": 8, "group_size": 4, "frozen_samples": 4}, eval_every=20)  # SFT evaluated twice
METHODS = ("sft", "grpo", "ppo", "dpo", "gdpo")


def preset_named(name):
    """`scoring` (above) or a preset of presets.py."""
    return SCORING if name == "scoring" else get_preset(name)


def scoring_lab(device, seed=0):
    """A lab of the `scoring` preset whose policy (and pi_ref) had its 40 SFT steps: it scores on some samples."""
    seed_everything(seed)
    lab = make_lab(SCORING, seed=seed, device=device)
    train("sft", lab=lab, steps=SCORING.sft.steps, seed=seed, progress=False, eval_every=0)
    lab.ref.load_state_dict(lab.policy.state_dict())  # pi_ref = pi_sft, as a run from the SFT model has
    return lab


def write_json(path, obj):
    """Write `obj` to `path` whole or not at all (a phase may be stopped at any moment)."""
    tmp = f"{path}.tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=2, allow_nan=False)
    os.replace(tmp, path)


def sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def reset_peak(device):
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def peak_gb(device):
    """Peak GPU memory since `reset_peak` (CUDA), else the process's peak RSS so far (not reset)."""
    if device.type == "cuda":
        return round(torch.cuda.max_memory_allocated(device) / 2**30, 3)
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20, 3)  # KiB on Linux


def seconds_per_step(metrics):
    """Median seconds between steps, the first step excluded (it includes warm-up); None with < 2 steps."""
    t = [m["seconds"] for m in metrics]
    gaps = [b - a for a, b in zip(t, t[1:])]
    return round(statistics.median(gaps), 4) if gaps else None


def _weights(policy):
    return [p.detach().clone() for p in policy.parameters()]


def _moved(before, policy):
    """(largest change of any weight, every weight finite)."""
    after = [p.detach() for p in policy.parameters()]
    change = max(float((a - b.to(a.device)).abs().max()) for a, b in zip(after, before))
    return change, all(bool(torch.isfinite(p).all()) for p in after)


def _error(e):
    return {"error": f"{type(e).__name__}: {e}", "traceback": traceback.format_exc().splitlines()[-6:]}


def one_method(name, preset, init, device, steps, eval_n):
    """Train `name` for `steps` steps from `init` on `device`; what it did, as a dict (greedy accuracy on
    `eval_n` held-out questions afterwards; none with 0)."""
    lab = make_lab(preset, init=init, device=device)
    before = _weights(lab.policy)
    reset_peak(device)
    sync(device)
    t0 = time.perf_counter()
    run = train(name, lab=lab, steps=steps, progress=False, eval_every=0)
    sync(device)
    wall = time.perf_counter() - t0
    change, finite = _moved(before, lab.policy)
    last = run.metrics[-1]
    return {"steps": len(run.metrics), "seconds": round(wall, 2), "seconds_per_step": seconds_per_step(run.metrics),
            "reward": last.get("reward"), "accuracy_of_batch": last.get("accuracy"),
            "max_weight_change": change, "finite": finite, "moved": change > 0, "peak_memory_gb": peak_gb(device),
            "held_out_greedy": greedy_accuracy(lab.policy, lab.tokenizer, lab.test_problems[:eval_n]) if eval_n else None}


def methods_phase(preset, methods, steps, device, out, label=None):
    """Each method on `preset` (`label` names it in the record) in this one process; writes `out` after each."""
    eval_n = min(preset.eval_problems, preset.n_test)
    res = {"phase": "methods", "preset": label or preset.name, "device": _device_name(device), "steps": steps,
           "eval_problems": eval_n, "methods": {}}
    write_json(out, res)
    t0, cached = time.perf_counter(), is_complete(entry(preset))
    try:
        init = sft_checkpoint(preset, progress=False)  # the SFT method at the preset's own budget, cached
    except Exception as e:  # noqa: BLE001 - the report says what failed
        res["methods"]["sft"] = _error(e)
        write_json(out, res)
        return 1
    lab = make_lab(preset, init=init, device=device)
    res["methods"]["sft"] = {"steps": preset.sft.steps, "seconds": round(time.perf_counter() - t0, 2),
                             "cached": cached, "checkpoint": init, "held_out_greedy": greedy_accuracy(
                                 lab.policy, lab.tokenizer, lab.test_problems[:eval_n])}
    del lab
    write_json(out, res)
    failed = 0
    for name in [m for m in methods if m != "sft"]:
        try:
            res["methods"][name] = one_method(name, preset, init, device, steps, eval_n)
            failed += not (res["methods"][name]["moved"] and res["methods"][name]["finite"])
        except Exception as e:  # noqa: BLE001 - one method's failure must not hide the others'
            res["methods"][name] = _error(e)
            failed += 1
        write_json(out, res)
        print(f"methods: {name} {json.dumps(res['methods'][name])[:300]}", flush=True)
    return 1 if failed else 0


def precision_phase(preset, steps, device, out, label=None):
    """GRPO from the preset's SFT model with bf16 autocast on, then off: seconds per step and peak memory."""
    res = {"phase": "precision", "preset": label or preset.name, "device": _device_name(device), "steps": steps,
           "modes": {}}
    write_json(out, res)
    init = sft_checkpoint(preset, progress=False)
    failed = 0
    for mode, flag in (("bf16", "1"), ("fp32", "0")):
        old = os.environ.get("UNIFIED_RL_BF16")
        os.environ["UNIFIED_RL_BF16"] = flag
        try:
            ctx = sampling.autocast(device)
            row = one_method("grpo", preset, init, device, steps, eval_n=0)
            row["autocast"] = str(ctx.fast_dtype) if isinstance(ctx, torch.autocast) else "off"
            row["samples_per_step"] = preset.rl.prompts_per_step * preset.rl.group_size
            res["modes"][mode] = row
        except Exception as e:  # noqa: BLE001
            res["modes"][mode] = _error(e)
            failed += 1
        finally:
            if old is None:
                os.environ.pop("UNIFIED_RL_BF16", None)
            else:
                os.environ["UNIFIED_RL_BF16"] = old
        write_json(out, res)
        print(f"precision: {mode} {json.dumps(res['modes'][mode])[:300]}", flush=True)
    b, f = res["modes"].get("bf16", {}), res["modes"].get("fp32", {})
    if b.get("seconds_per_step") and f.get("seconds_per_step"):
        res["fp32_over_bf16_step_time"] = round(f["seconds_per_step"] / b["seconds_per_step"], 3)
        write_json(out, res)
    return 1 if failed else 0


def _device_name(device):
    return torch.cuda.get_device_name(device) if device.type == "cuda" else "cpu"


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("phase", choices=("methods", "precision"))
    ap.add_argument("--out", required=True, help="JSON file to (re)write")
    ap.add_argument("--preset", default="gpu", help="gpu, cpu, tiny or scoring")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--steps", type=int, default=8)
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args(argv)
    try:
        preset = preset_named(a.preset)
        device = torch.device(a.device)
        if device.type == "cuda" and not torch.cuda.is_available():
            raise ValueError(f"device {a.device} asked for, but torch {torch.__version__} sees no CUDA device")
        if a.steps < 2:
            raise ValueError(f"--steps must be >= 2 (seconds per step leaves the first out), got {a.steps}")
    except ValueError as e:
        sys.exit(f"gpu_phases: {e}")
    if a.phase == "methods":
        return methods_phase(preset, [m.strip() for m in a.methods.split(",") if m.strip()], a.steps, device, a.out,
                             a.preset)
    return precision_phase(preset, a.steps, device, a.out, a.preset)


if __name__ == "__main__":
    sys.exit(main())
