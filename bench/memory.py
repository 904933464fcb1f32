"""PPO against GRPO: peak memory and seconds per step at several model widths.

    python bench/memory.py [--widths 64,256] [--steps 3]
GRPO drops PPO's value model (DeepSeekMath §4.1): no critic copy of the trunk, no optimizer state for
it, no value forward/backward. Each measurement runs in its own process, so one run's peak never
hides another's. On CPU the peak is the process's max RSS (`ru_maxrss`) above the RSS it had once
the lab was built; on CUDA it is `torch.cuda.max_memory_allocated` above the allocation at that point.
Both runs start from the same fresh policy (no SFT: memory and time do not depend on the weights).
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

N_HEAD = {64: 4, 128: 4, 256: 8, 512: 8, 1024: 16}


def worker(method, width, steps, preset="cpu"):
    """One run in this process: peak memory above the built lab's, and median seconds per step."""
    import torch

    from unified_rl.presets import get_preset
    from unified_rl.trainer import make_lab, train

    p = get_preset(preset)
    p = p.with_(model={"n_embd": width, "n_head": N_HEAD.get(width, p.model.n_head)})
    lab = make_lab(p, seed=0)
    cuda = lab.device.type == "cuda"
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        base = torch.cuda.memory_allocated()
    else:
        base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux
    run = train(method, lab=lab, steps=steps, progress=False, eval_every=0)
    if cuda:
        torch.cuda.synchronize()
        peak_mib = (torch.cuda.max_memory_allocated() - base) / 2**20
    else:
        peak_mib = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) / 1024
    t = [m["seconds"] for m in run.metrics]
    per_step = [b - a for a, b in zip(t, t[1:])] or t  # the first step also pays one-time costs
    params = sum(x.numel() for x in lab.policy.parameters())
    return {"method": method, "width": width, "policy_params": params, "peak_mib": round(peak_mib, 2),
            "seconds_per_step": round(statistics.median(per_step), 4), "device": str(lab.device)}


def _spawn(method, width, steps, preset):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", method, str(width),
                          str(steps), preset], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def measure(widths=(64, 256), steps=3, preset="cpu"):
    """Per width: PPO and GRPO runs side by side, and the PPO / GRPO ratios."""
    rows = []
    for w in widths:
        ppo, grpo = _spawn("ppo", w, steps, preset), _spawn("grpo", w, steps, preset)
        rows.append({"width": w, "policy_params": ppo["policy_params"], "device": ppo["device"],
                     "ppo": ppo, "grpo": grpo,
                     "peak_memory_ratio": round(ppo["peak_mib"] / max(grpo["peak_mib"], 1e-9), 3),
                     "step_time_ratio": round(ppo["seconds_per_step"] / grpo["seconds_per_step"], 3)})
    return rows


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        method, width, steps, preset = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
        print(json.dumps(worker(method, width, steps, preset)))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", default="64,256")
    ap.add_argument("--steps", type=int, default=3)
    ap.add_argument("--preset", default="cpu")
    args = ap.parse_args()
    print(json.dumps(measure([int(w) for w in args.widths.split(",")], args.steps, args.preset), indent=2))


if __name__ == "__main__":
    main()
