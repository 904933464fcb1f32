"""Notebook 12's helpers: the 1 %-wrong coefficient it shows the oracle catching is registered only
inside its block, the tables read real_model.measure's keys, and our settings are accepted by TRL's
GRPOConfig / DPOConfig where TRL is installed (the bench extra)."""

import tempfile
import warnings

import pytest
import torch

from unified_rl.course import nb_real_model as nb12
from unified_rl.experiments import real_model
from unified_rl.methods import METHODS
from unified_rl.verify import ORACLE_KEYS


def test_the_wrong_coefficient_exists_only_inside_its_block():
    with pytest.raises(RuntimeError):
        with nb12.wrong_coefficient("grpo", 1.01) as name:
            assert name in METHODS and name in ORACLE_KEYS
            assert METHODS[name].objective is METHODS["grpo"].objective  # only the coefficient changed
            raise RuntimeError("a failing oracle cell")
    assert "grpo-wrong" not in METHODS and "grpo-wrong" not in ORACLE_KEYS


def _measurement(greedy):
    return {"greedy": greedy, "maj_at_k": [0.1, 0.2], "pass_at_k": [0.1, 0.4], "reply_chars": 30.0,
            "strict_share": 0.0, "lenient_only_share": 0.75, "unparsed_share": 0.25,
            "examples": [{"question": "What is 1 + 2?", "answer": "3", "reply": "1 + 2 = 3\nok", "right": True}]}


def test_tables_show_every_measured_quantity_per_column():
    md = nb12.comparison_markdown({"before": _measurement(0.25), "after": _measurement(0.5)}, k=2)
    lines = md.splitlines()
    shown = sum(key in _measurement(0.25) for key, _ in nb12.ROWS)  # rows of quantities it was not given are left out
    assert len(lines) == 2 + shown and shown == 7 and "| Pass@2 | 0.400 | 0.400 |" in md
    assert "| greedy accuracy | 0.250 | 0.500 |" in md
    assert "⏎" in nb12.examples_markdown(_measurement(0.25))  # a newline in a reply stays visible
    with pytest.raises(ValueError):
        nb12.comparison_markdown({})


def test_trl_settings_are_ours_and_trl_accepts_them():
    p = real_model.world(real_model.BUDGETS["cpu"])
    g, d = nb12.trl_grpo_settings(p, 10), nb12.trl_dpo_settings(p, 10)
    assert (g["beta"], g["num_generations"], g["learning_rate"]) == (p.rl.beta, p.rl.group_size, p.rl.lr)
    assert g["per_device_train_batch_size"] == p.rl.prompts_per_step * p.rl.group_size
    assert g["max_completion_length"] == p.task.max_new_tokens and d["beta"] == p.rl.dpo_beta
    assert g["bf16"] is False and g["use_cpu"] is (not torch.cuda.is_available())  # float32 weights
    pytest.importorskip("trl", reason="TRL is in the bench extra")
    from trl import DPOConfig, GRPOConfig
    with tempfile.TemporaryDirectory() as out, warnings.catch_warnings():
        warnings.simplefilter("error")  # no deprecated name (a FutureWarning in the notebook's output)
        config = GRPOConfig(output_dir=out, report_to="none", **g)
        DPOConfig(output_dir=out, report_to="none", **d)
    assert config.loss_type == "grpo" and config.use_bias_correction_kl is False
    assert d["loss_type"] == "sigmoid_norm"  # eq 12 averages each reply's log-ratio over its tokens


def test_trl_warmup_is_ours_one_step_behind_and_none_below_20_steps():
    """transformers' constant_with_warmup against loop._warmup, step by step."""
    from transformers import get_scheduler

    from unified_rl.loop import _warmup
    for steps in (12, 100):
        w = nb12.trl_warmup(steps)
        opt = torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=1.0)
        sched = get_scheduler(w["lr_scheduler_type"], opt, num_warmup_steps=w["warmup_steps"], num_training_steps=steps)
        theirs = []
        for _ in range(steps):
            theirs.append(opt.param_groups[0]["lr"])
            opt.step()
            sched.step()
        ours = [_warmup(it, steps) for it in range(steps)]
        if steps < 20:
            assert theirs == ours == [1.0] * steps
        else:
            assert theirs[0] == 0.0 and theirs[1:] == pytest.approx(ours[:-1]) and ours[0] == 0.1


def test_trl_lora_carries_rank_alpha_and_targets():
    p = real_model.world(real_model.BUDGETS["gpu"])
    assert nb12.trl_lora(p) == {"r": 16, "lora_alpha": 32, "lora_dropout": 0.0, "target_modules": "all-linear",
                                "task_type": "CAUSAL_LM"}
    assert nb12.trl_lora(real_model.world(real_model.BUDGETS["cpu"])) is None  # full fine-tuning


def test_tables_and_exercises_follow_the_language():
    """In Chinese the row labels, the example lines and the exercises' texts are Chinese (Pass@K still
    becomes Pass@k, the numbers and the reply unchanged); back in English they are today's text again."""
    from unified_rl.course.ex import nb12_real_model as ex
    from unified_rl.course.i18n import set_language
    cols = {"before": _measurement(0.25)}
    english = (nb12.comparison_markdown(cols, k=2), nb12.examples_markdown(cols["before"]), ex.q1.title, ex.q2.hints)
    try:
        set_language("zh")
        md, examples = nb12.comparison_markdown(cols, k=2), nb12.examples_markdown(cols["before"])
        assert "| 贪心解码准确率 | 0.250 |" in md and "| Pass@2 | 0.400 |" in md and "@K" not in md
        assert len(md.splitlines()) == 2 + 7
        assert examples == "- *What is 1 + 2?*（答案 3）→ `1 + 2 = 3 ⏎ ok` ✓"
        assert ex.q1.title.startswith("Q1：") and "`x @ weight.T`" in ex.q2.hints[0] and "冻结" in ex.q2.hints[0]
    finally:
        set_language("en")
    assert (nb12.comparison_markdown(cols, k=2), nb12.examples_markdown(cols["before"]), ex.q1.title,
            ex.q2.hints) == english
    assert english[1] == "- *What is 1 + 2?* (answer 3) → `1 + 2 = 3 ⏎ ok` ✓"


@pytest.mark.parametrize("steps", [1, 2, 10])
def test_the_live_runs_step_axis_has_room_and_whole_steps(steps):
    """One step is a point at 1 on an axis from 0.5 to 1.5 (matplotlib alone spans 0.96 to 1.04)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots()
    ax.plot(range(1, steps + 1), [0.5] * steps, "o-")
    nb12.step_axis(ax, steps)
    fig.canvas.draw()
    ticks = [t for t in ax.get_xticks() if 0.5 <= t <= steps + 0.5]
    assert ax.get_xlim() == (0.5, steps + 0.5) and 1 in ticks and all(t == int(t) for t in ticks)
    plt.close(fig)
