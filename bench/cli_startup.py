"""How fast the command line answers: whole-process seconds of `--help`, `methods` and an argument error.

    python bench/cli_startup.py [--runs 10] [--imports] [--out bench/cli_startup.json]

Each command (`python -m unified_rl --help`, `methods`, `train gpro`) is started as its own process,
timed from its start to its exit (time.perf_counter around subprocess.run), once as a warm-up and then
--runs times; min, median and max are printed, with the interpreter alone (`python -c pass`) as the
floor. Each is also run once under a probe (runpy, then sys.modules) that names whatever it imported
of torch, transformers, NumPy or the registries: none is expected. --imports also times
`python -c "import unified_rl.methods, unified_rl.worlds, unified_rl.experiments, transformers"`: what the
command line imported before parsing when it read the registries themselves.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time

COMMANDS = {"--help": ["--help"], "methods": ["methods"], "train gpro": ["train", "gpro"]}
EXIT = {"--help": 0, "methods": 0, "train gpro": 2}
HEAVY = ("torch", "transformers", "numpy", "huggingface_hub")
REGISTRIES = ("unified_rl.methods", "unified_rl.presets", "unified_rl.experiments", "unified_rl.worlds",
              "unified_rl.trainer")
PROBE = """
import json, runpy, sys
record, sys.argv = sys.argv[1], ["unified_rl", *sys.argv[2:]]
try:
    runpy.run_module("unified_rl", run_name="__main__", alter_sys=True)
finally:
    with open(record, "w") as f:
        json.dump(sorted(sys.modules), f)
"""


def seconds(argv, runs, code=None):
    """Wall seconds of `argv` as a whole process: one warm-up, then `runs` timed runs."""
    times = []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        r = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=600)
        if i:
            times.append(time.perf_counter() - t0)
        if code is not None and r.returncode != code:
            raise SystemExit(f"{' '.join(argv)} exited {r.returncode}, not {code}")
    return {"min": min(times), "median": statistics.median(times), "max": max(times), "runs": runs}


def heavy_imports(args):
    """What of torch, transformers, NumPy or the registries `python -m unified_rl ARGS` imports."""
    with tempfile.TemporaryDirectory() as tmp:
        record = os.path.join(tmp, "modules.json")
        subprocess.run([sys.executable, "-c", PROBE, record, *args], capture_output=True, timeout=600)
        with open(record) as f:
            return [m for m in json.load(f) if m.split(".")[0] in HEAVY or m in REGISTRIES]


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=10, help="timed runs per command [10]")
    p.add_argument("--imports", action="store_true", help="also time importing the registries and transformers")
    p.add_argument("--out", help="write the figures as JSON here")
    a = p.parse_args()
    result = {"python": platform.python_version(), "cores": os.cpu_count(),
              "load_average_before": os.getloadavg()[0] if hasattr(os, "getloadavg") else None,
              "interpreter": seconds([sys.executable, "-c", "pass"], a.runs), "commands": {}}
    for name, args in COMMANDS.items():
        result["commands"][name] = {**seconds([sys.executable, "-m", "unified_rl", *args], a.runs, EXIT[name]),
                                    "heavy_imports": heavy_imports(args)}
    if a.imports:
        result["registries_and_transformers"] = seconds(
            [sys.executable, "-c", "import unified_rl.methods, unified_rl.worlds, unified_rl.experiments, "
                                   "transformers.utils.logging"], max(1, a.runs // 3))
    result["load_average_after"] = os.getloadavg()[0] if hasattr(os, "getloadavg") else None
    rows = [("python -c pass", result["interpreter"])]
    rows += [(f"python -m unified_rl {n}", r) for n, r in result["commands"].items()]
    if a.imports:
        rows.append(("import the registries + transformers", result["registries_and_transformers"]))
    print(f"{'whole process, wall s':<40} {'min':>7} {'median':>7} {'max':>7}  imports torch & co.")
    for label, r in rows:
        imported = r.get("heavy_imports")
        print(f"{label:<40} {r['min']:7.3f} {r['median']:7.3f} {r['max']:7.3f}  "
              + ("" if imported is None else ", ".join(imported) or "none"))
    print(f"load average {result['load_average_before']} before, {result['load_average_after']} after")
    if a.out:
        with open(a.out, "w") as f:
            json.dump(result, f, indent=2)
    if any(r["heavy_imports"] for r in result["commands"].values()):
        sys.exit("a command imported torch, transformers, NumPy or a registry (see the last column)")


if __name__ == "__main__":
    main()
