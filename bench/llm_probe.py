"""A probe, not a result: GRPO on SmolLM2-135M-Instruct (sums in words), one seed, on the CPU.

Measures the load (first: GGUF dequantised and cached; then: the cached folder), greedy accuracy on
held-out questions before and after `--steps` steps of the llm-cpu preset, the mean reply length,
and seconds per step. Writes everything, with the command, to --out (JSON).

    python bench/llm_probe.py --steps 20 --out bench/llm_probe.json
"""

import argparse
import json
import os
import sys
import tempfile
import time

import torch

from unified_rl import llm
from unified_rl.presets import get_preset
from unified_rl.rewards import rule_reward
from unified_rl.sampling import sample
from unified_rl.trainer import train


def load_times():
    """Seconds to load SmolLM2 from the GGUF file (into an empty cache) and then from the cache."""
    with tempfile.TemporaryDirectory() as cache:
        old = os.environ.get("UNIFIED_RL_CACHE")
        os.environ["UNIFIED_RL_CACHE"] = cache
        try:
            t = time.time()
            llm.load_pretrained("smollm2")
            first = time.time() - t
            t = time.time()
            llm.load_pretrained("smollm2")
            cached = time.time() - t
        finally:
            if old is None:
                os.environ.pop("UNIFIED_RL_CACHE")
            else:
                os.environ["UNIFIED_RL_CACHE"] = old
    return {"first_load_s": round(first, 1), "cached_load_s": round(cached, 2)}


def replies(policy, tokenizer, problems):
    r = sample(policy, tokenizer, problems, greedy=True)  # what evaluation.greedy_accuracy scores
    return {"accuracy": rule_reward(r.problems, r.texts).mean().item(),
            "mean_reply_chars": round(sum(map(len, r.texts)) / len(r.texts), 1), "examples": r.texts[:4]}


def _write(path, obj):
    with open(path, "w") as f:
        json.dump(obj, f, indent=2)


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--method", default="grpo")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--lora-r", type=int, default=0)
    p.add_argument("--skip-load", action="store_true", help="do not measure the first (converting) load")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    out = {"command": " ".join([sys.executable.rsplit("/", 1)[-1], *sys.argv]), "kind": "probe (one seed)",
           "threads": torch.get_num_threads(), "load": None if args.skip_load else load_times()}
    preset = get_preset("llm-cpu").with_(llm={"lora_r": args.lora_r})
    run = train(args.method, preset=preset, steps=0, seed=args.seed, progress=False)
    test = run.lab.test_problems[: preset.eval_problems]
    t = time.time()
    out["before"] = replies(run.policy, run.tokenizer, test)
    out["eval_seconds"] = round(time.time() - t, 1)
    _write(args.out, out)  # what is measured so far, should the run be stopped
    t = time.time()
    run = train(args.method, preset=preset, steps=args.steps, seed=args.seed, lab=run.lab, progress=False,
                eval_every=0)
    out["train_seconds"] = round(time.time() - t, 1)
    out["seconds_per_step"] = round(out["train_seconds"] / max(1, args.steps), 2)
    out["after"] = replies(run.policy, run.tokenizer, test)
    out["reward_per_step"] = [round(r.get("reward", float("nan")), 3) for r in run.metrics]
    out["settings"] = {"method": args.method, "steps": args.steps, "seed": args.seed, "preset": "llm-cpu",
                       "held_out": len(test), "rl": run.summary["config"]["rl"],
                       "llm": run.summary["config"]["llm"], "task": run.summary["config"]["task"]}
    _write(args.out, out)
    print(json.dumps({k: out[k] for k in ("load", "seconds_per_step", "before", "after")}, indent=2))


if __name__ == "__main__":
    main()
