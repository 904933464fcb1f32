"""Each preset on its own machine: samples/s of one RL batch and seconds per GRPO step.

    python bench/preset_speed.py [--presets cpu,gpu] [--repeats 5] [--steps 6]
The `cpu` preset runs on the CPU; `gpu` runs where CUDA is present (skipped, with the reason,
elsewhere), with bf16 autocast on and, for comparison, off (UNIFIED_RL_BF16=0). Both start from
the preset's cached SFT model (trained first if absent), so responses end at EOS as in the course.
Sampling draws the preset's RL batch (prompts_per_step x group_size) at temperature 1; a step is
one GRPO step of the trainer (sampling, reward, reference and policy passes, AdamW), the median
over steps with the first excluded.
"""

import argparse
import json
import os
import statistics
import time

import torch

from unified_rl.cache import sft_checkpoint
from unified_rl.presets import get_preset
from unified_rl.sampling import sample
from unified_rl.trainer import make_lab, train


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize()


def _sampling(lab, repeats):
    """Median samples/s and generated tokens/s of one RL batch."""
    cfg = lab.preset.rl
    problems = lab.rl_problems[: cfg.prompts_per_step]
    sample(lab.policy, lab.tokenizer, problems, group_size=cfg.group_size)  # warm-up
    rates, tokens = [], []
    for _ in range(repeats):
        _sync(lab.device)
        t0 = time.perf_counter()
        r = sample(lab.policy, lab.tokenizer, problems, group_size=cfg.group_size)
        _sync(lab.device)
        dt = time.perf_counter() - t0
        rates.append(len(r) / dt)
        tokens.append(float(r.mask.sum()) / dt)
    return {"batch": len(problems) * cfg.group_size, "samples_per_s": round(statistics.median(rates), 1),
            "tokens_per_s": round(statistics.median(tokens), 1)}


def _step(lab, steps):
    run = train("grpo", lab=lab, steps=steps, progress=False, eval_every=0)
    ends = [m["seconds"] for m in run.metrics]
    return round(statistics.median(b - a for a, b in zip(ends, ends[1:])), 4)


def measure_preset(name, repeats=5, steps=6):
    """samples/s and s/step of preset `name` on the device it is meant for."""
    preset = get_preset(name)
    device = "cuda" if name == "gpu" else "cpu"
    if device == "cuda" and not torch.cuda.is_available():
        return {"skipped": "no CUDA device"}
    path = sft_checkpoint(preset, progress=False)
    out = {"device": torch.cuda.get_device_name(0) if device == "cuda" else "cpu",
           "parameters": None, "digits": preset.task.digits}
    modes = [("bf16", "1"), ("fp32", "0")] if device == "cuda" else [("fp32", None)]
    for mode, flag in modes:
        old = os.environ.get("UNIFIED_RL_BF16")
        if flag is not None:
            os.environ["UNIFIED_RL_BF16"] = flag
        try:
            lab = make_lab(preset, init=path, device=device)
            out["parameters"] = sum(p.numel() for p in lab.policy.parameters())
            row = _sampling(lab, repeats)
            row["grpo_seconds_per_step"] = _step(lab, steps)
        finally:
            if old is None:
                os.environ.pop("UNIFIED_RL_BF16", None)
            else:
                os.environ["UNIFIED_RL_BF16"] = old
        out[mode] = row
    return out


def measure(presets=("cpu", "gpu"), repeats=5, steps=6):
    return {name: measure_preset(name, repeats, steps) for name in presets}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--presets", default="cpu,gpu")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--steps", type=int, default=6)
    args = ap.parse_args()
    print(json.dumps(measure(args.presets.split(","), args.repeats, args.steps), indent=2))


if __name__ == "__main__":
    main()
