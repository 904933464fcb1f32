"""What a finished run folder records is the run that was trained: every metrics row, its step count."""

import json

from unified_rl.runs import load_state
from unified_rl.trainer import train


def test_the_folder_holds_every_step_of_the_run(tmp_path):
    out = tmp_path / "run"
    run = train("sft", preset="tiny", steps=3, out=str(out), progress=False, eval_every=0)
    rows = [json.loads(line) for line in open(out / "metrics.jsonl")]
    assert rows == json.loads(json.dumps(run.metrics)) and [r["step"] for r in rows] == [1, 2, 3]
    summary = json.load(open(out / "summary.json"))
    assert summary["step"] == summary["steps"] == 3 and summary["method"] == "sft"
    state = load_state(str(out))
    assert state["step"] == 3 and len(state["metrics"]) == 3
