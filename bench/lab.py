"""The lab's acceptance numbers on this machine: SFT time-to-accuracy, and for each RL method the
held-out greedy accuracy gained from the SFT model with its default budget, with seconds per step.

    python bench/lab.py [--seed 0] [--out bench/lab_results.json]
Held-out accuracy is greedy on the preset's 500 test questions, measured before and after.
"""

import argparse
import json
import os
import tempfile

import torch

from unified_rl.cache import sft_checkpoint
from unified_rl.evaluation import greedy_accuracy
from unified_rl.presets import get_preset
from unified_rl.trainer import train

RL_METHODS = ("rft", "online-rft", "dpo", "ppo", "grpo", "grpo-process")


def sft_time_to_accuracy(preset, seed, target=0.30):
    run = train("sft", preset=preset, seed=seed, eval_every=10, progress=False)
    hit = next((m for m in run.metrics if m.get("eval_accuracy", 0) >= target), None)
    final = greedy_accuracy(run.policy, run.tokenizer, run.lab.test_problems)
    return {"steps": len(run.metrics), "seconds": run.summary["seconds"], "final_accuracy": final,
            "seconds_to_target": hit["seconds"] if hit else None, "target": target,
            "curve": [(m["step"], m["seconds"], m["eval_accuracy"]) for m in run.metrics if "eval_accuracy" in m]}


def rl_gain(method, preset, seed, init):
    """Train with the method's default budget from the SFT model, then evaluate before/after."""
    run = train(method, preset=preset, seed=seed, init=init, eval_every=0, progress=False)
    before = greedy_accuracy(run.lab.ref, run.tokenizer, run.lab.test_problems)
    after = greedy_accuracy(run.policy, run.tokenizer, run.lab.test_problems)
    steps = run.summary["steps"]
    return {"steps": steps, "seconds": run.summary["seconds"], "seconds_per_step": run.summary["seconds"] / steps,
            "before": before, "after": after, "gain_points": 100 * (after - before)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--methods", default=",".join(RL_METHODS))
    ap.add_argument("--out", default="bench/lab_results.json")
    args = ap.parse_args()
    os.environ.setdefault("UNIFIED_RL_CACHE", tempfile.mkdtemp(prefix="url-bench-"))
    preset = get_preset("auto")
    result = {"preset": preset.name, "device": "cuda" if torch.cuda.is_available() else "cpu",
              "threads": torch.get_num_threads(), "sft": sft_time_to_accuracy(preset, args.seed)}
    s = result["sft"]
    print(f"sft: {s['final_accuracy']:.3f} after {s['steps']} steps / {s['seconds']:.1f} s; "
          f">= {s['target']:.0%} at {s['seconds_to_target']} s", flush=True)
    init = sft_checkpoint(preset, seed=args.seed, progress=False)
    for method in args.methods.split(","):
        r = result[method] = rl_gain(method, preset, args.seed, init)
        print(f"{method:12s} {r['before']:.3f} -> {r['after']:.3f} ({r['gain_points']:+.1f} points) "
              f"in {r['steps']} steps / {r['seconds']:.0f} s ({r['seconds_per_step']:.2f} s/step)", flush=True)
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
