"""Each rank of a data-parallel GRPO run: seconds per step, time inside the package's collectives, peak memory.

    torchrun --standalone --nproc_per_node N bench/distributed_step.py --preset cpu --steps 6 --out OUT.json
    torchrun --standalone --nproc_per_node N bench/distributed_step.py --model smollm2 --task words:1 \\
        --dtype bfloat16 --modes ddp,fsdp --steps 10 --out OUT.json
bench/run.py (`--only distributed`: `measure`) runs the first on 1 and 2 CPU ranks; scripts/gpu_check.sh the second
on every visible GPU, DDP and FSDP2. Seconds per step: the median of the differences of the metrics'
clock, the first step excluded. "Collectives" is the time spent in distributed.py's collectives (the
gradient all-reduce, the global counts and statistics, the gathered metrics and pairs): on gloo these
block, so it is communication plus waiting for the slower rank; FSDP2's own all-gathers and
reduce-scatters run inside the forward and backward passes and are not in it. Peak memory:
`torch.cuda.max_memory_allocated` on a GPU, the process's peak RSS on the CPU (for every mode run so
far in the process). Rank 0 writes one JSON object, with one entry per mode (ddp: every rank holds the
whole model; fsdp: FSDP2 shards it).
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
os.environ.setdefault("OMP_NUM_THREADS", "1")

import torch  # noqa: E402

from llm_gpu import peak_memory_gb, step_seconds  # noqa: E402
from unified_rl import distributed  # noqa: E402
from unified_rl.trainer import train  # noqa: E402

SPENT = [0.0]


def _timed(real):
    def guard(fn, *args, **kwargs):
        t = time.perf_counter()
        try:
            return real(fn, *args, **kwargs)
        finally:
            SPENT[0] += time.perf_counter() - t
    return guard


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", default=None, help="a lab preset (cpu, gpu), or with --model an llm preset")
    ap.add_argument("--model", default=None, help="a pretrained model (smollm2, a folder, a hub name)")
    ap.add_argument("--task", default=None, help="with --model: words, words:DIGITS, gsm8k")
    ap.add_argument("--dtype", default=None, help="with --model: the weights' dtype")
    ap.add_argument("--modes", default="ddp", help="with --model: ddp, fsdp or both (ddp,fsdp), one after the other")
    ap.add_argument("--lora-r", type=int, default=0, help="with --model: LoRA rank (0: full fine-tuning)")
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--prompts-per-step", type=int, default=None)
    ap.add_argument("--group-size", type=int, default=None)
    ap.add_argument("--micro-batch", type=int, default=None)
    ap.add_argument("--max-new-tokens", type=int, default=None)
    ap.add_argument("--out", required=True)
    args = ap.parse_args(argv)
    distributed._guard = _timed(distributed._guard)
    kw = {k: v for k, v in (("prompts_per_step", args.prompts_per_step), ("group_size", args.group_size))
          if v is not None}
    modes = args.modes.split(",") if args.model is not None else ["ddp"]
    if args.model is not None:
        kw.update(model=args.model, task=args.task)
        if args.max_new_tokens is not None:
            import dataclasses

            from unified_rl.trainer import llm_preset
            p = llm_preset(args.preset or "auto", args.model, args.task)
            kw["task"] = dataclasses.replace(p.task, max_new_tokens=args.max_new_tokens)
    cuda = torch.cuda.is_available()
    report = {"modes": {}}
    for mode in modes:
        if args.model is not None:
            llm = {"lora_r": args.lora_r, "fsdp": mode == "fsdp"}
            llm.update({k: v for k, v in (("dtype", args.dtype), ("micro_batch", args.micro_batch)) if v is not None})
            kw["llm"] = llm
        if cuda:
            torch.cuda.reset_peak_memory_stats()
        SPENT[0], t0 = 0.0, time.perf_counter()
        run = train("grpo", preset=args.preset or "auto", steps=args.steps, eval_every=0, progress=False, **kw)
        wall = time.perf_counter() - t0
        world = distributed.current()
        mine = {"rank": world.rank if world else 0, "seconds_per_step": step_seconds(run.metrics),
                "run_seconds": run.summary["seconds"], "collective_seconds": round(SPENT[0], 3),
                "collective_share": round(SPENT[0] / max(run.summary["seconds"], 1e-9), 3),
                "peak_memory_gb": round(peak_memory_gb(cuda), 3), "wall_seconds": round(wall, 1)}
        report["modes"][mode] = {"fsdp": bool((run.summary.get("distributed") or {}).get("fsdp")),
                                 "dtype": str(next(run.lab.policy.parameters()).dtype),
                                 "accuracy": [m.get("accuracy") for m in run.metrics], "ranks": distributed.gather(mine)}
        del run
    if distributed.is_main():
        world = distributed.current()
        report.update({"world_size": world.size if world else 1, "device": "cuda" if cuda else "cpu",
                       "preset": args.preset, "model": args.model, "task": args.task, "lora_r": args.lora_r,
                       "steps": args.steps, "load_average": os.getloadavg()})
        report.update(report["modes"].get("ddp", next(iter(report["modes"].values()))))  # the first mode's, flat
        with open(args.out, "w") as f:
            json.dump(report, f, indent=2)


def measure(rounds=2, steps=8, preset="cpu"):
    """1 and 2 CPU ranks (gloo) under torchrun, alternating, `rounds` each: the median seconds per step
    of each world size, their ratio, and the 2-rank runs' share of time in collectives."""
    import statistics
    import subprocess
    import tempfile

    from unified_rl.cache import sft_checkpoint
    from unified_rl.presets import get_preset

    sft_checkpoint(get_preset(preset), progress=False)  # built once, outside the timed runs
    runs = {1: [], 2: []}
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(rounds):
            for n in (1, 2):
                out = os.path.join(tmp, f"{n}-{r}.json")
                subprocess.run([sys.executable, "-m", "torch.distributed.run", "--standalone", "--nproc_per_node",
                                str(n), os.path.abspath(__file__), "--preset", preset, "--steps", str(steps),
                                "--out", out], check=True, capture_output=True, text=True)
                with open(out) as f:
                    runs[n].append(json.load(f))
    step = {n: statistics.median(rk["seconds_per_step"] for run in rs for rk in run["ranks"]) for n, rs in runs.items()}
    share = statistics.median(rk["collective_share"] for run in runs[2] for rk in run["ranks"])
    return {"preset": preset, "steps": steps, "rounds": rounds, "seconds_per_step": {str(n): s for n, s in step.items()},
            "two_over_one_step_time": round(step[2] / step[1], 3), "collective_share_two_ranks": share,
            "runs": {str(n): rs for n, rs in runs.items()}}


if __name__ == "__main__":
    main()
