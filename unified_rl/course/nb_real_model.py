"""Helpers for the real-model notebook (course/12_real_model.ipynb): tables of measurements, a
deliberately wrong coefficient for the oracle to catch, and our settings written as TRL's configs.

The measurements are `experiments.real_model.measure`'s; nothing here trains or evaluates.
"""

import contextlib
import dataclasses
import importlib.util

from .. import methods as _methods
from .i18n import t

# (measured key, message key of its row's label): the labels follow the language (messages/nb_real_model.py)
ROWS = tuple((key, f"nb.real.{key}") for key in ("greedy", "maj_at_k", "pass_at_k", "reply_chars", "strict_share",
                                                  "lenient_only_share", "unparsed_share"))


def _value(m, key):
    v = m[key]
    return v[-1] if isinstance(v, list) else v


def comparison_markdown(columns, k=None):
    """A Markdown table: one row per measured quantity, one column per {name: measurement}."""
    if not columns:
        raise ValueError("nothing to compare")
    head = "| | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns) + "\n"
    rows = []
    for key, label in ROWS:
        label = t(label).replace("@K", f"@{k}") if k else t(label)  # the label in the current language
        cells = [f"{_value(m, key):.3f}" if key != "reply_chars" else f"{_value(m, key):.1f}" for m in columns.values()]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return head + "\n".join(rows)


def examples_markdown(measurement):
    """The recorded example replies as a Markdown list (right or wrong, by the lenient rule)."""
    lines = []
    for e in measurement["examples"]:
        reply = e["reply"].replace("\n", " ⏎ ").replace("|", "\\|")
        lines.append(t("nb.real.example", question=e["question"], answer=e["answer"], reply=reply,
                       mark="✓" if e["right"] else "✗"))
    return "\n".join(lines)


@contextlib.contextmanager
def wrong_coefficient(base="grpo", scale=1.01):
    """Register METHODS[f"{base}-wrong"]: `base` with its coefficient scaled by `scale` (a 1 % slip),
    for as long as the block runs, so that the model oracle can be shown catching it."""
    m = _methods.METHODS[base]
    name = f"{base}-wrong"
    _methods.METHODS[name] = dataclasses.replace(m, name=name, coefficient=lambda step: scale * m.coefficient(step))
    try:
        yield name
    finally:
        del _methods.METHODS[name]


def step_axis(ax, steps):
    """An x axis of whole steps 1..`steps` with half a step to spare on each side, so a short live run
    (one step) shows as a point at step 1, not alone on an axis matplotlib spans from 0.96 to 1.04."""
    from matplotlib.ticker import MaxNLocator

    ax.set_xlim(0.5, max(1, steps) + 0.5)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True, min_n_ticks=1))
    return ax


def trl_installed() -> bool:
    return importlib.util.find_spec("trl") is not None


def _precision(preset):
    """TRL's precision flags for our weights' dtype (TRL defaults to bf16, which a CPU run refuses)."""
    import torch

    from ..llm import resolve_dtype

    cuda = torch.cuda.is_available()
    dtype = resolve_dtype(preset.llm.dtype if preset.llm is not None else "float32", "cuda" if cuda else "cpu")
    return {"bf16": dtype == torch.bfloat16, "fp16": dtype == torch.float16, "use_cpu": not cuda}


def trl_grpo_settings(preset, steps):
    """Our GRPO run's settings as keyword arguments of TRL's `GRPOConfig` (TRL >= 1.0 names).

    TRL's defaults that differ from ours are set explicitly: loss_type "grpo" (each reply averaged
    over its tokens, eq 19), no importance weight on the KL (use_bias_correction_kl=False, eq 21),
    no top-k / top-p truncation, a constant learning rate after no warm-up of TRL's own.
    """
    cfg, task = preset.rl, preset.task
    return {"max_steps": steps, "learning_rate": cfg.lr, "beta": cfg.beta, "epsilon": cfg.clip_eps,
            "num_generations": cfg.group_size, "per_device_train_batch_size": cfg.prompts_per_step * cfg.group_size,
            "gradient_accumulation_steps": 1, "num_iterations": cfg.epochs,
            "max_completion_length": task.max_new_tokens, "temperature": cfg.temperature, "top_k": 0, "top_p": 1.0,
            "loss_type": "grpo", "scale_rewards": "group", "use_bias_correction_kl": False, "max_grad_norm": 1.0,
            "weight_decay": 0.0, "lr_scheduler_type": "constant", "gradient_checkpointing": bool(
                preset.llm is not None and preset.llm.grad_checkpointing), **_precision(preset)}


def trl_dpo_settings(preset, steps):
    """Our DPO run's settings as keyword arguments of TRL's `DPOConfig` (its sigmoid loss).

    Two differences remain, and the notebook says them: TRL's sigmoid loss sums each reply's
    log-ratios where eq 12 here averages them over the reply's tokens (`coefficients.dpo`), and
    TRL's DPOTrainer reads a fixed preference dataset, so on-policy pairs must be regenerated
    between rounds of training.
    """
    cfg = preset.rl
    return {"max_steps": steps, "learning_rate": cfg.lr, "beta": cfg.dpo_beta, "loss_type": "sigmoid",
            "per_device_train_batch_size": cfg.prompts_per_step, "gradient_accumulation_steps": 1,
            "max_grad_norm": 1.0, "weight_decay": 0.0, "lr_scheduler_type": "constant", **_precision(preset)}
