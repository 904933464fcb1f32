"""scripts/gpu_check.py's report: each phase's outcome read from its files, and the Markdown summary of them all.

`phase_result` turns a finished (or stopped) phase's output into its entry of OUT/gpu_check.json; `markdown`
writes OUT/gpu_check.md from the whole report, ready to paste into bench/README.md. Standard library only:
the report is written even where torch cannot be imported.
"""

import json
import os
import xml.etree.ElementTree as ET


def _json(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def junit(path):
    """{test name: {"outcome", "seconds", "message"}} of a pytest --junitxml file ({} if there is none)."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError):
        return {}
    out = {}
    for case in root.iter("testcase"):
        outcome, message = "passed", ""
        for kind in ("failure", "error", "skipped"):
            node = case.find(kind)
            if node is not None:
                outcome = {"failure": "failed"}.get(kind, kind)
                message = (node.get("message") or node.text or "").strip().splitlines()[0][:300] if \
                    (node.get("message") or node.text) else ""
                break
        out[case.get("name")] = {"outcome": outcome, "seconds": round(float(case.get("time") or 0), 2),
                                 "message": message}
    return out


def notes(path):
    """The GPU tests' own measurements: one JSON object per line of `path`, merged."""
    merged = {}
    try:
        with open(path) as f:
            for line in f:
                if line.strip():
                    merged.update(json.loads(line))
    except (OSError, ValueError):
        pass
    return merged


def phase_result(phase, rc, work, dry):
    """What `phase` (exit status rc; None: stopped at its limit) left in `work`, with its own verdict."""
    if phase == "tests":
        tests = junit(os.path.join(work, "tests.xml"))
        res = {"tests": tests, "notes": notes(os.path.join(work, "tests-notes.jsonl"))}
        skipped = [n for n, t in tests.items() if t["outcome"] == "skipped"]
        ok = rc == 0 and tests and not any(t["outcome"] in ("failed", "error") for t in tests.values())
        if not dry and skipped:  # on the GPU every test must run
            ok, res["problem"] = False, f"skipped on the GPU: {', '.join(skipped)}"
        return ok, res
    data = _json(os.path.join(work, f"{phase}.json")) or {}
    if phase == "methods":
        rows = data.get("methods", {})
        ok = rc == 0 and rows and all("error" not in r and r.get("moved", True) and r.get("finite", True)
                                      for r in rows.values())
    elif phase == "precision":
        rows = data.get("modes", {})
        ok = rc == 0 and len(rows) == 2 and all("error" not in r and r.get("moved") for r in rows.values())
    else:  # llm
        ok = rc == 0 and "after" in data
    return bool(ok), data


def _f(x, digits=3):
    return "" if x is None else f"{x:.{digits}f}" if isinstance(x, float) else str(x)


def markdown(report):
    """The whole report as Markdown: what ran where, each phase's status and time, and its figures."""
    env, dry = report.get("env") or {}, report.get("dry_run")
    where = "the CPU (dry run: the same steps, the device swapped, tiny budgets)" if dry else \
        f"{env.get('device', '?')} (CUDA {env.get('cuda')}, bf16 {'yes' if env.get('bf16') else 'no'})"
    calls = "; ".join(f"`{c['command']}` ({c['seconds']} s)" for c in report.get("calls", []))
    lines = [f"# GPU check on {where}", "",
             f"Python {env.get('python')}, torch {env.get('torch')}, transformers {env.get('transformers')}. "
             f"Calls: {calls}.",
             "", "| phase | status | seconds | limit |", "|---|---|---|---|"]
    for name, p in report.get("phases", {}).items():
        lines.append(f"| {name} | {p['status']}{': ' + p['reason'] if p.get('reason') else ''} | "
                     f"{_f(p.get('seconds'), 1)} | {p.get('limit', '')} |")
    phases = report.get("phases", {})
    tests = (phases.get("tests") or {}).get("result", {})
    if tests.get("tests"):
        lines += ["", "GPU tests (`tests/test_gpu.py`):", "", "| test | outcome | s |", "|---|---|---|"]
        lines += [f"| {n} | {t['outcome']}{' (' + t['message'] + ')' if t['message'] else ''} | {t['seconds']} |"
                  for n, t in tests["tests"].items()]
        if tests.get("notes"):
            lines += ["", "Measured by the tests: " + ", ".join(f"{k} = {v}" for k, v in tests["notes"].items()) + "."]
    m = (phases.get("methods") or {}).get("result") or {}
    if m.get("methods"):
        lines += ["", f"Methods on the `{m.get('preset')}` preset, {m.get('steps')} steps each from its SFT model, "
                  f"one process ({m.get('device')}):", "",
                  "| method | steps | seconds | s/step | last batch reward | weights moved | peak GB | held-out greedy |",
                  "|---|---|---|---|---|---|---|---|"]
        for name, r in m["methods"].items():
            if "error" in r:
                lines.append(f"| {name} | error: {r['error'][:120]} | | | | | | |")
            else:
                moved = "" if "moved" not in r else "yes" if r["moved"] else "NO"
                lines.append(f"| {name} | {r.get('steps')} | {_f(r.get('seconds'), 1)} | "
                             f"{_f(r.get('seconds_per_step'), 4)} | {_f(r.get('reward'))} | {moved} | "
                             f"{_f(r.get('peak_memory_gb'))} | {_f(r.get('held_out_greedy'))} |")
    pr = (phases.get("precision") or {}).get("result") or {}
    if pr.get("modes"):
        lines += ["", f"GRPO on `{pr.get('preset')}` with bf16 autocast on and off ({pr.get('steps')} steps each):", "",
                  "| mode | autocast | s/step | peak GB |", "|---|---|---|---|"]
        lines += [f"| {k} | {r.get('autocast', '')} | {_f(r.get('seconds_per_step'), 4)} | {_f(r.get('peak_memory_gb'))} |"
                  for k, r in pr["modes"].items() if "error" not in r]
    llm = (phases.get("llm") or {}).get("result") or {}
    if llm.get("before"):
        after = llm.get("after") or {}
        lines += ["", f"GRPO on {llm['model']} ({llm['task']}, {llm['preset']}, weights {llm.get('weights_dtype')}, "
                  f"LoRA r {llm['lora_r']}, {llm['prompts_per_step']} x {llm['group_size']} replies of <= "
                  f"{llm['max_new_tokens']} tokens per step), {llm['steps']} of {llm.get('steps_asked')} steps:", "",
                  "| held-out greedy before | after | reply chars before | after | s/step | peak GB |",
                  "|---|---|---|---|---|---|",
                  f"| {_f(llm['before']['greedy'])} ({llm['n_test']} questions) | {_f(after.get('greedy'))} | "
                  f"{_f(llm['before']['reply_chars'], 0)} | {_f(after.get('reply_chars'), 0)} | "
                  f"{_f(llm.get('seconds_per_step'), 2)} | {_f(llm.get('peak_memory_gb'), 2)} |"]
        if llm.get("tokenizer_aligned"):
            lines += ["", f"The converted tokenizer was repaired first: {llm['tokenizer_aligned']}."]
        if llm.get("reward_per_step"):
            lines += ["", "Batch reward per step: " + ", ".join(_f(r, 2) for r in llm["reward_per_step"]) + "."]
        if llm.get("fp32"):
            f = llm["fp32"]
            lines += ["", f"The same in float32 weights, bf16 off ({f['steps']} steps): {_f(f['seconds_per_step'], 2)} "
                      f"s/step, peak {_f(f['peak_memory_gb'], 2)} GB."]
    return "\n".join(lines) + "\n"
