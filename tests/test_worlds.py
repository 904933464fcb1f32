"""The two worlds (worlds.py): chosen once from the preset, the only place that tells the lab's GPT-2 from a
pretrained chat model; a run's summary records its world and task, and its preset is rebuilt from it."""

import ast
import os
import shutil

import pytest

import unified_rl
from unified_rl import worlds
from unified_rl.presets import PRESETS, LLMConfig, get_preset
from unified_rl.task import TaskConfig
from unified_rl.trainer import llm_preset, train
from unified_rl.words import GSM8KTask, WordsTask

PACKAGE = os.path.dirname(unified_rl.__file__)


def test_each_preset_has_one_world():
    kinds = {name: worlds.world_of(p).kind for name, p in PRESETS.items()}
    assert kinds == {"cpu": "lab", "gpu": "lab", "tiny": "lab", "llm-cpu": "pretrained", "llm-gpu": "pretrained"}
    lab, llm = worlds.world_of("tiny"), worlds.world_of("llm-cpu")
    assert (lab.response_only, lab.micro_batch, lab.start) == (False, 0, None)
    assert (llm.response_only, llm.micro_batch, llm.start) == (True, 8, "smollm2")


@pytest.mark.parametrize("module", ["trainer", "cli", "lab", "wiring", "loop"])
def test_no_module_but_the_worlds_asks_which_world_it_is_in(module):
    """`preset.llm` is read in worlds.py (and llm.py, presets.py), not branched on through the trainer."""
    tree = ast.parse(open(os.path.join(PACKAGE, f"{module}.py")).read())
    reads = [node.lineno for node in ast.walk(tree) if isinstance(node, ast.Attribute) and node.attr == "llm"]
    assert not reads, f"{module}.py reads .llm on lines {reads}"


@pytest.mark.parametrize("task", [TaskConfig(digits=3), WordsTask(digits=2, max_new_tokens=7),
                                  GSM8KTask(path="data/train.jsonl", max_new_tokens=64)])
def test_a_recorded_task_is_rebuilt_with_its_type(task):
    assert worlds.untyped(worlds.typed(task), "here") == task


def test_a_recorded_task_names_only_the_tasks_types():
    with pytest.raises(ValueError, match="task type 'Popen' is not one this version has"):
        worlds.untyped({"type": "Popen", "args": ["rm"]}, "here")
    with pytest.raises(ValueError, match="task type 'ModelConfig'"):  # a dataclass, but not of a task module
        worlds.untyped({"type": "ModelConfig"}, "here")


def test_a_runs_preset_is_rebuilt_from_its_summary():
    p = llm_preset("llm-cpu", model="some/folder", task="gsm8k:train.jsonl", llm={"lora_r": 4}).with_(n_test=7)
    lab = get_preset("tiny").with_(rl={"lr": 3e-4}, task={"digits": 3})
    for preset in (p, lab):
        summary = {"preset": preset.name, **_summary_of(preset)}
        assert worlds.preset_of_run(summary, "here") == preset
    with pytest.raises(ValueError, match="preset 'nope' is not one this version has"):
        worlds.preset_of_run({"preset": "nope", **_summary_of(lab)}, "here")


def _summary_of(preset):
    import dataclasses
    return {"config": dataclasses.asdict(preset), **worlds.run_record(preset)}


def test_switching_lora_on_or_off_switches_the_learning_rate():
    cfg = LLMConfig()
    assert llm_preset("llm-cpu", llm={"lora_r": 8}).rl.lr == cfg.lora_lr
    assert llm_preset("llm-cpu", llm={"lora_r": 8}).sft.lr == cfg.lora_lr
    assert llm_preset("llm-gpu", llm={"lora_r": 0}).rl.lr == cfg.full_lr
    assert llm_preset("llm-cpu").rl.lr == PRESETS["llm-cpu"].rl.lr  # no switch: the preset's own
    assert llm_preset("llm-gpu", llm={"lora_r": 4}).rl.lr == PRESETS["llm-gpu"].rl.lr


def test_the_run_summary_records_its_world(tmp_path):
    run = train("sft", preset="tiny", steps=1, progress=False, out=str(tmp_path / "r"))
    assert run.summary["world"] == {"kind": "lab"} and run.summary["task"]["type"] == "TaskConfig"
    preset, how = worlds.evaluation_preset(tmp_path / "r" / "checkpoint")
    assert preset == run.lab.preset and how == "its run's summary"
    with pytest.raises(ValueError, match="was trained with preset tiny"):
        worlds.evaluation_preset(tmp_path / "r" / "checkpoint", "cpu")
    bare = tmp_path / "bare"  # the checkpoint alone, no summary beside it: judged by its kind
    shutil.copytree(tmp_path / "r" / "checkpoint", bare)
    with pytest.raises(ValueError, match="is a lab model and preset llm-cpu"):
        worlds.evaluation_preset(bare, "llm-cpu")
    assert worlds.evaluation_preset(bare)[0].name == "cpu"


def test_a_damaged_summary_is_one_line_and_the_sft_cache_says_its_preset(tmp_path):
    from unified_rl import cache
    entry = cache.sft_checkpoint(get_preset("tiny"), 0, progress=False)
    assert worlds.evaluation_preset(entry)[0] == get_preset("tiny")
    run = tmp_path / "r"
    shutil.copytree(os.path.dirname(entry), run)
    (run / "summary.json").write_text("[1, 2")
    with pytest.raises(ValueError, match=r"summary.json cannot be read \(JSONDecodeError\): a damaged run folder"):
        worlds.evaluation_preset(run / "checkpoint")
