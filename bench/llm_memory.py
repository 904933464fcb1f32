"""Peak memory of GRPO on a real chat model (SmolLM2-135M-Instruct, CPU): LoRA against full fine-tuning,
each with and without gradient checkpointing.

    python bench/llm_memory.py [--model smollm2] [--steps 2] [--modes full,full-ckpt,lora,lora-ckpt]
Full fine-tuning holds pi_ref as a second copy of the weights (beta > 0, so the reference is used),
plus gradients and AdamW's two moments for every weight; LoRA's pi_ref is the policy's own model
with its adapter disabled (llm.AdapterDisabled), and only the adapters have gradients and optimizer
state. Each mode runs `train("grpo", ...)` for a few steps in its own process (one run's peak never
hides another's), with the settings of trl_smollm2.py (2 prompts x 4 samples of <= 16 tokens,
float32, no micro-batches). Peak is the process's peak RSS (VmHWM; `ru_maxrss` where there is no
/proc: Linux carries ru_maxrss over fork and exec, so under a large parent it reads the parent's
peak); `run_peak_mib` is that
peak above the RSS once torch, transformers, peft and the package are imported (the model, its
reference, gradients, optimizer state and activations), `process_peak_mib` the whole process's.
"""

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

MODES = ("full", "full-ckpt", "lora", "lora-ckpt")


def _rss_mib():
    """This process's peak resident memory in MiB: VmHWM, the high-water mark of its own address
    space, where /proc has it. ru_maxrss is the fallback only: Linux carries it over fork and exec,
    so a worker started by a large parent (run.py after the TRL runs) would report the parent's peak."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024  # kB
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def worker(model, mode, steps):
    """One GRPO run in this process: its peak RSS, its pi_ref's kind, its trainable parameters."""
    import peft  # noqa: F401 (imported before the baseline in every mode alike)
    import torch  # noqa: F401

    from trl_smollm2 import our_preset
    from unified_rl.llm import pretrained_folder
    from unified_rl.trainer import train

    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r}; choose from {', '.join(MODES)}")
    folder = pretrained_folder(model)
    base = _rss_mib()
    preset = our_preset(folder, lora=mode.startswith("lora"), checkpointing=mode.endswith("-ckpt"))
    run = train("grpo", preset=preset, steps=steps, progress=False, eval_every=0)
    peak = _rss_mib()
    t = [m["seconds"] for m in run.metrics]
    per_step = [b - a for a, b in zip(t, t[1:])] or t
    return {"mode": mode, "process_peak_mib": round(peak), "imports_mib": round(base),
            "run_peak_mib": round(peak - base), "reference": type(run.lab.ref).__name__,
            "reference_params": sum(p.numel() for p in run.lab.ref.parameters()),
            "trainable_params": sum(p.numel() for p in run.policy.parameters() if p.requires_grad),
            "seconds_per_step": round(statistics.median(per_step), 3), "steps": steps}


def _spawn(model, mode, steps):
    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--worker", model, mode, str(steps)],
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError(f"{mode}: {out.stderr.strip()[-400:]}")
    return json.loads(out.stdout.strip().splitlines()[-1])


def _ratio(a, b):
    """a / b, or None where b is 0 (a model so small its run never passes the imports' peak)."""
    return round(a / b, 3) if b > 0 else None


def measure(model="smollm2", steps=2, modes=MODES):
    """Each mode in a fresh process, and the ratios to full fine-tuning with a second reference copy."""
    try:
        from unified_rl.llm import pretrained_folder

        pretrained_folder(model)  # the model is there (converted once) before any worker starts
    except ValueError as e:
        return {"model": model, "reason": str(e), "lora_over_full_peak_memory": None}
    rows = {m: _spawn(model, m, steps) for m in modes}
    out = {"model": model, "steps": steps, "rows": rows,
           "peak": "VmHWM (peak RSS of the worker process); run_peak_mib: above the RSS after imports", "lora_over_full_peak_memory": None}
    if "full" in rows:
        full = rows["full"]
        out["over_full"] = {m: {"run": _ratio(r["run_peak_mib"], full["run_peak_mib"]),
                                "process": _ratio(r["process_peak_mib"], full["process_peak_mib"])}
                            for m, r in rows.items() if m != "full"}
        if "lora" in rows:
            out["lora_over_full_peak_memory"] = out["over_full"]["lora"]["run"]
    return out


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        print(json.dumps(worker(sys.argv[2], sys.argv[3], int(sys.argv[4]))))
        return
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default="smollm2", help="alias or local folder [smollm2]")
    ap.add_argument("--steps", type=int, default=2)
    ap.add_argument("--modes", default=",".join(MODES))
    args = ap.parse_args()
    modes = [m for m in args.modes.split(",") if m]
    bad = [m for m in modes if m not in MODES]
    if bad:
        sys.exit(f"error: unknown mode(s) {bad}; choose from {', '.join(MODES)}")
    try:
        res = measure(args.model, args.steps, modes)
    except RuntimeError as e:
        sys.exit(f"error: {str(e).splitlines()[-1]}")
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
