"""How long the course's language layer takes to import: `import unified_rl.course.i18n` in a fresh process.

    python bench/i18n_import.py [--runs 20]

Each run is its own interpreter. It imports `unified_rl.text` first (the core's Text, which every course module
reaches anyway), then times `import unified_rl.course.i18n` in-process (time.perf_counter around the import:
reading the catalogue and building its views, without the interpreter's own start), then `set_language("zh")`
with matplotlib kept out (its font switch is not what is measured), then one `t()` and one `tr()`. The whole
process is timed too, with `python -c "import unified_rl.text"` as its floor. One warm-up, then --runs runs;
min, median and max are printed (milliseconds).
"""

import argparse
import json
import statistics
import subprocess
import sys
import time

CHILD = """
import json, sys, time
sys.modules["matplotlib"] = None  # the font switch of set_language is not what is timed
import unified_rl.text
t0 = time.perf_counter()
import unified_rl.course.i18n as i18n
t1 = time.perf_counter()
i18n.set_language("zh")
t2 = time.perf_counter()
i18n.t("check.correct"), i18n.tr("not in the catalogue")
print(json.dumps({"import_ms": 1e3 * (t1 - t0), "set_zh_ms": 1e3 * (t2 - t1), "entries": len(i18n.CATALOGUE) + len(i18n.SENTENCES)}))
"""


def stats(values):
    return {"min": round(min(values), 2), "median": round(statistics.median(values), 2), "max": round(max(values), 2)}


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--runs", type=int, default=20)
    runs = p.parse_args().runs
    if runs < 1:
        sys.exit("--runs must be at least 1")
    inner, whole, floor = [], [], []
    for i in range(runs + 1):
        t0 = time.perf_counter()
        r = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=600)
        dt = 1e3 * (time.perf_counter() - t0)
        if r.returncode:
            sys.exit(f"the child failed: {r.stderr.strip().splitlines()[-1]}")
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import unified_rl.text"], check=True, timeout=600)
        if i:
            inner.append(json.loads(r.stdout))
            whole.append(dt)
            floor.append(1e3 * (time.perf_counter() - t0))
    print(json.dumps({"runs": runs, "entries": inner[0]["entries"],
                      "import_i18n_ms": stats([x["import_ms"] for x in inner]),
                      "set_language_zh_ms": stats([x["set_zh_ms"] for x in inner]),
                      "whole_process_ms": stats(whole), "floor_process_ms": stats(floor)}, indent=1))


if __name__ == "__main__":
    main()
