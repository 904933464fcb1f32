"""Every benchmark in one run: writes bench/results.json and prints a short table.

    python bench/run.py [--only trl,memory,sampling,presets,distributed,llm-trl,llm-roof,llm-memory] [--course] [--out bench/results.json]
Each figure is a ratio measured side by side in this run (medians over repeats), so a busy machine
slows both sides alike; the load average is recorded with the results all the same.

| key                          | what                                                          | file              |
|------------------------------|---------------------------------------------------------------|-------------------|
| grpo_step_speedup_vs_trl     | TRL GRPOTrainer s/step / ours, same model, batch and settings | trl_compare.py    |
| trl_agreement                | max relative gradient difference to TRL's loss, same batch    | trl_compare.py    |
| ppo_over_grpo_peak_memory    | PPO / GRPO peak memory of a training run, per model width     | memory.py         |
| ppo_over_grpo_step_time      | PPO / GRPO seconds per step, per model width                  | memory.py         |
| sampling_speedup_vs_generate | our sampler's tokens/s / `model.generate`'s                   | sampling_speed.py |
| preset_speed                 | samples/s and s per GRPO step of cpu (and gpu, on CUDA)       | preset_speed.py   |
| llm_grpo_step_speedup_vs_trl | the same on SmolLM2-135M-Instruct, per mode (lora, full)      | trl_smollm2.py    |
| llm_grpo_step_speedup_interval_90 | its 90 % bootstrap interval over 7 alternating rounds    | trl_smollm2.py    |
| llm_trl_agreement            | the gradient agreement with TRL on SmolLM2, float32           | trl_smollm2.py    |
| llm_roof                     | each phase of our SmolLM2 step: GFLOP, s, roof s, fraction    | llm_roof.py       |
| llm_lora_over_full_peak_memory | LoRA (adapter-off pi_ref) / full FT (pi_ref copy) peak RSS  | llm_memory.py     |
| llm_phases (--only llm-phases) | each phase, ours and TRL's, on one SmolLM2 batch            | llm_phases.py     |
| llm_cpu_bf16 (--only llm-bf16) | each phase in float32 and under CPU bf16 autocast, and what bf16 changes | llm_cpu_bf16.py |
| distributed_two_over_one_step_time | 2 gloo ranks / 1 rank seconds per GRPO step (cpu preset) | distributed_step.py |
| distributed_collective_share | share of a 2-rank run's time inside the collectives            | distributed_step.py |
| course_cpu_seconds           | seconds and peak kernel memory per notebook (--course only)   | this file         |
"""

import argparse
import glob
import json
import os
import platform
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("OMP_NUM_THREADS", "1")  # tiny models: one thread per process is fastest

import torch  # noqa: E402

BENCHES = ("sampling", "presets", "memory", "distributed", "trl", "llm-trl", "llm-roof", "llm-memory")
OPT_IN = ("llm-phases", "llm-bf16")  # run only when named in --only: our phases and TRL's on one SmolLM2
# batch; bf16 autocast against float32 on the CPU


# Run in a child process per notebook: the kernel is that child's child, so once it has exited,
# RUSAGE_CHILDREN's ru_maxrss is the kernel's peak resident memory (the larger of it and nbclient's own).
_ONE_NOTEBOOK = """
import json, os, resource, sys, time
import nbformat
from nbclient import NotebookClient
path, timeout = sys.argv[1], int(sys.argv[2])
nb = nbformat.read(path, as_version=4)
t0 = time.perf_counter()
NotebookClient(nb, timeout=timeout, kernel_name="python3", resources={"metadata": {"path": os.path.dirname(path)}}).execute()
print(json.dumps({"seconds": round(time.perf_counter() - t0, 1),
                  "kernel_peak_rss_mb": round(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024)}))
"""


def course_seconds(pattern="course/*.ipynb", timeout=1800):
    """Execute each notebook in a fresh kernel (the SFT cache warmed first): seconds and peak kernel memory."""
    import subprocess

    from unified_rl.cache import sft_checkpoint
    from unified_rl.presets import get_preset

    t0 = time.perf_counter()
    sft_checkpoint(get_preset("auto"), progress=False)
    out = {"sft_cache_seconds": round(time.perf_counter() - t0, 1), "notebooks": {}, "kernel_peak_rss_mb": {}}
    for path in sorted(glob.glob(pattern)):
        name = os.path.basename(path)
        p = subprocess.run([sys.executable, "-c", _ONE_NOTEBOOK, path, str(timeout)], capture_output=True, text=True)
        if p.returncode == 0:
            r = json.loads(p.stdout.strip().splitlines()[-1])
            out["notebooks"][name], out["kernel_peak_rss_mb"][name] = r["seconds"], r["kernel_peak_rss_mb"]
        else:  # record the failure and keep timing the others
            out["notebooks"][name] = {"error": p.stderr.strip()[-300:]}
        print(f"  {name}: {out['notebooks'][name]} s, peak {out['kernel_peak_rss_mb'].get(name)} MB", flush=True)
    out["total"] = round(sum(v for v in out["notebooks"].values() if isinstance(v, float)), 1)
    return out


def run(only=BENCHES, course=False, repeats=5, steps=5, llm_steps=3, llm_modes=("lora", "full"),
        llm_model="smollm2", llm_rounds=7):
    res = {"machine": {"python": platform.python_version(), "torch": torch.__version__,
                       "device": "cuda" if torch.cuda.is_available() else "cpu",
                       "cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(),
                       "load_average_at_start": os.getloadavg()},
           "started": time.strftime("%Y-%m-%d %H:%M:%S")}
    if "sampling" in only:
        import sampling_speed

        s = res["sampling"] = sampling_speed.measure(repeats=repeats)
        res["sampling_speedup_vs_generate"] = s["speedup_vs_generate"]
    if "presets" in only:
        import preset_speed

        res["preset_speed"] = preset_speed.measure(("cpu", "gpu"), repeats=repeats)
    if "memory" in only:
        import memory

        rows = res["ppo_vs_grpo"] = memory.measure()
        res["ppo_over_grpo_peak_memory"] = {str(r["width"]): r["peak_memory_ratio"] for r in rows}
        res["ppo_over_grpo_step_time"] = {str(r["width"]): r["step_time_ratio"] for r in rows}
    if "distributed" in only:
        import distributed_step

        d = res["distributed"] = distributed_step.measure()
        res["distributed_two_over_one_step_time"] = d["two_over_one_step_time"]
        res["distributed_collective_share"] = d["collective_share_two_ranks"]
    if "trl" in only:
        import trl_compare

        try:
            t = res["trl"] = trl_compare.measure(steps=steps)
            res["grpo_step_speedup_vs_trl"] = t.get("grpo_step_speedup_vs_trl")
            res["grpo_step_speedup_vs_trl_by_width"] = t.get("grpo_step_speedup_vs_trl_by_width")
            agree = t.get("trl_agreement")
            res["trl_agreement"] = agree and agree["max_rel_diff_kl_correction_off_same_eps"]
            if "reason" in t:
                res["trl_missing_reason"] = t["reason"]
        except Exception as e:  # a TRL release that changed its internals must not sink the rest
            res["grpo_step_speedup_vs_trl"] = res["trl_agreement"] = None
            res["trl_missing_reason"] = f"{type(e).__name__}: {str(e)[:300]}"
    if "llm-trl" in only:
        import trl_smollm2

        try:
            t = res["llm_trl"] = trl_smollm2.measure(llm_model, steps=llm_steps, rounds=llm_rounds, modes=llm_modes)
            res["llm_grpo_step_speedup_vs_trl"] = t.get("grpo_step_speedup_vs_trl")
            res["llm_grpo_step_speedup_interval_90"] = t.get("speedup_interval_90")
            agree = t.get("trl_agreement")
            res["llm_trl_agreement"] = agree and agree["max_rel_diff_kl_correction_off_same_eps"]
            if "reason" in t:
                res["llm_trl_missing_reason"] = t["reason"]
        except Exception as e:
            res["llm_grpo_step_speedup_vs_trl"] = res["llm_trl_agreement"] = None
            res["llm_trl_missing_reason"] = f"{type(e).__name__}: {str(e)[:300]}"
    if "llm-roof" in only:
        import llm_roof

        try:
            res["llm_roof"] = {m: llm_roof.measure(llm_model, lora=m == "lora", repeats=2) for m in llm_modes}
        except Exception as e:  # no llm extra or no model: the rest still runs
            res["llm_roof"] = {"reason": f"{type(e).__name__}: {str(e)[:300]}"}
    if "llm-memory" in only:
        import llm_memory

        try:
            m = res["llm_memory"] = llm_memory.measure(llm_model)
            res["llm_lora_over_full_peak_memory"] = m.get("lora_over_full_peak_memory")
        except Exception as e:  # a worker that failed: its one-line reason, and the rest still runs
            res["llm_lora_over_full_peak_memory"] = None
            res["llm_memory_missing_reason"] = f"{type(e).__name__}: {str(e)[:300]}"
    if "llm-phases" in only:
        import llm_phases

        try:
            res["llm_phases"] = {m: llm_phases.measure(llm_model, lora=m == "lora") for m in llm_modes}
        except Exception as e:
            res["llm_phases"] = {"reason": f"{type(e).__name__}: {str(e)[:300]}"}
    res["course_cpu_seconds"] = course_seconds() if course else None  # None: not run (pass --course)
    if "llm-bf16" in only:
        import llm_cpu_bf16

        try:
            res["llm_cpu_bf16"] = {m: llm_cpu_bf16.measure(llm_model, lora=m == "lora") for m in llm_modes}
        except Exception as e:  # no llm extra or no model: the rest still runs
            res["llm_cpu_bf16"] = {"reason": f"{type(e).__name__}: {str(e)[:300]}"}
    res["load_average_at_end"] = os.getloadavg()
    return res


def table(res):
    rows = [("grpo_step_speedup_vs_trl", res.get("grpo_step_speedup_vs_trl_by_width")
             or res.get("grpo_step_speedup_vs_trl"), ">= 1.2"),
            ("trl_agreement", res.get("trl_agreement"), "float error"),
            ("ppo_over_grpo_peak_memory", res.get("ppo_over_grpo_peak_memory"), "> 1"),
            ("ppo_over_grpo_step_time", res.get("ppo_over_grpo_step_time"), "> 1"),
            ("sampling_speedup_vs_generate", res.get("sampling_speedup_vs_generate"), ""),
            ("llm_grpo_step_speedup_vs_trl", res.get("llm_grpo_step_speedup_vs_trl"), ">= 1.2"),
            ("llm_grpo_step_speedup_interval_90", res.get("llm_grpo_step_speedup_interval_90"), "90 % bootstrap"),
            ("llm_trl_agreement", res.get("llm_trl_agreement"), "float error"),
            ("llm_lora_over_full_peak_memory", res.get("llm_lora_over_full_peak_memory"), "<= 0.6"),
            ("distributed_two_over_one_step_time", res.get("distributed_two_over_one_step_time"), "(2 cores)"),
            ("distributed_collective_share", res.get("distributed_collective_share"), ""),
            ("course_cpu_seconds", (res.get("course_cpu_seconds") or {}).get("total"), "")]
    lines = [f"{'key':30s} {'value':40s} target"]
    for k, v, target in rows:
        if isinstance(v, float):
            v = f"{v:.3g}"
        lines.append(f"{k:30s} {str(v if v is not None else 'not measured'):40s} {target}")
    for w, row in (res.get("trl") or {}).get("by_width", {}).items():
        lines.append(f"width {w}: our GRPO step phases (s): {row['ours_phases']}")
    for mode, row in (res.get("llm_trl") or {}).get("by_mode", {}).items():
        lines.append(f"SmolLM2 {mode}: {row['grpo_step_speedup_vs_trl']}x TRL's step rate, 90 % interval "
                     f"{row['speedup_interval_90']}, rounds {row['per_round_ratio']}; ours "
                     f"{row['per_round']['ours']} s, TRL {row['per_round']['trl']} s per step")
    for mode, row in (res.get("llm_roof") or {}).items():
        if isinstance(row, dict) and "phases" in row:
            fractions = {k: v["fraction_of_roof"] for k, v in row["phases"].items() if "fraction_of_roof" in v}
            lines.append(f"SmolLM2 {mode}: each phase's fraction of the roof {fractions}")
    for mode, row in (res.get("llm_memory") or {}).get("rows", {}).items():
        lines.append(f"SmolLM2 {mode}: peak {row['run_peak_mib']} MiB above imports ({row['process_peak_mib']} MiB in all)")
    for name, row in (res.get("preset_speed") or {}).items():
        lines.append(f"preset {name}: {row}")
    lines.append(f"load average {res['machine']['load_average_at_start']} -> {res['load_average_at_end']}")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", default=",".join(BENCHES),
                    help=f"comma-separated subset of {','.join(BENCHES + OPT_IN)} ({', '.join(OPT_IN)}: only when named)")
    ap.add_argument("--course", action="store_true", help="also execute every notebook (slow: tens of minutes)")
    ap.add_argument("--repeats", type=int, default=5, help="sampling repeats [5]")
    ap.add_argument("--steps", type=int, default=5, help="GRPO steps per trainer and round for the TRL comparison [5]")
    ap.add_argument("--llm-steps", type=int, default=3, help="GRPO steps per trainer and round on SmolLM2 [3]")
    ap.add_argument("--llm-rounds", type=int, default=7, help="alternating rounds per mode on SmolLM2 [7]")
    ap.add_argument("--llm-modes", default="lora,full", help="SmolLM2 comparison modes: lora, full [lora,full]")
    ap.add_argument("--out", default="bench/results.json")
    args = ap.parse_args()
    only = [b for b in args.only.split(",") if b]
    unknown = sorted(set(only) - set(BENCHES) - set(OPT_IN))
    if unknown:
        sys.exit(f"error: unknown benchmark(s) {unknown}; choose from {', '.join(BENCHES + OPT_IN)}")
    res = run(only, args.course, args.repeats, args.steps, args.llm_steps,
              tuple(m for m in args.llm_modes.split(",") if m), llm_rounds=args.llm_rounds)
    if set(only) != set(BENCHES) and os.path.exists(args.out):  # a partial run updates the last full one
        with open(args.out) as f:
            res = {**json.load(f), **{k: v for k, v in res.items() if v is not None or k not in ("course_cpu_seconds",)}}
    with open(args.out, "w") as f:
        json.dump(res, f, indent=2)
    print(table(res))
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
