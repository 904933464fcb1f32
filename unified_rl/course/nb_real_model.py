"""Helpers for the real-model notebook (course/12_real_model.ipynb): tables of measurements, of the
Figure 7 comparison per K (descriptive) and of the verdicts (`experiments.verdicts`, notebook 07 shows
them too), a deliberately wrong coefficient for the oracle to catch, and our settings written as TRL's
configs.

The measurements are `experiments.real_model`'s (`greedy`, `measure`, the shipped result); nothing here
trains or evaluates.
"""

import contextlib
import dataclasses
import importlib.util

from .. import methods as _methods
from ..text import Text
from .i18n import t

# (measured key, message key of its row's label): the labels follow the language (#: nb_real_model)
ROWS = tuple((key, f"nb.real.{key}") for key in ("greedy", "greedy_cut", "sampled_cut", "maj_at_k", "pass_at_k",
                                                  "reply_chars", "strict_share", "lenient_only_share",
                                                  "unparsed_share"))


def _value(m, key):
    v = m[key]
    return v[-1] if isinstance(v, list) else v


def comparison_markdown(columns, k=None):
    """A Markdown table: one row per quantity the first measurement has, one column per {name: measurement}."""
    if not columns:
        raise ValueError("nothing to compare")
    head = "| | " + " | ".join(columns) + " |\n|---|" + "---|" * len(columns) + "\n"
    rows = []
    first = next(iter(columns.values()))
    for key, label in ROWS:
        if key not in first:
            continue
        label = t(label).replace("@K", f"@{k}") if k else t(label)  # the label in the current language
        cells = [f"{_value(m, key):.3f}" if key != "reply_chars" else f"{_value(m, key):.1f}" for m in columns.values()]
        rows.append(f"| {label} | " + " | ".join(cells) + " |")
    return head + "\n".join(rows)


def _ci(c, key):
    return f"[{c[key][0]:+.3f}, {c[key][1]:+.3f}]"


def per_k_markdown(result, arm):
    """Markdown, descriptive: per K, Pass@K and Maj@K of the base model and of `arm`, their difference (mean
    over seeds and questions) with its 95 % intervals over seeds and over questions (experiments.paired), and
    how many questions the base model leaves room to rise in Pass@K (`result["headroom"]`). No verdicts."""
    head = t("nb.real.per_k_head", arm=arm)
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    room = result["headroom"]
    for i, k in enumerate(result["k"]):
        cells = [str(k)]
        for key in ("pass_at_k", "maj_at_k"):
            c = result["change"][arm][key][i]
            cells += [f"{result['mean']['base'][key][i]:.3f}", f"{result['mean'][arm][key][i]:.3f}",
                      f"{c['mean']:+.3f}", _ci(c, "seeds_ci"), _ci(c, "questions_ci")]
            if key == "pass_at_k":
                cells.append(f"{room['can_rise'][i]} / {room['questions']}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines)


def verdict_markdown(rows):
    """Markdown: one row per verdict ({label: an entry of `verdicts.family`}): the per-seed differences, their
    mean, the simultaneous interval with its level, and the verdict."""
    head = t("nb.real.verdict_head")
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for label, v in rows.items():
        lines.append(f"| {label} | {', '.join(f'{d:+.3f}' for d in v['per_seed'])} | {v['mean']:+.3f} | "
                     f"[{v['interval'][0]:+.3f}, {v['interval'][1]:+.3f}] ({v['level']:.2%}, m = {v['family']}) | "
                     f"{Text(v['verdict'])} |")
    return "\n".join(lines)


def one_seed(result, arm, seed, k):
    """What one seed alone says of `arm` - base at Pass@k: its difference and the 95 % bootstrap interval over
    the questions (`paired.question_interval`), from the stored counts of right answers."""
    from ..experiments import paired, verdicts
    from ..experiments.real_model_report import right_counts

    n = result["budget"]["samples"]
    base, trained = (verdicts.pass_per_question(right_counts(result, m)[[seed]], n, k)[0] for m in ("base", arm))
    d = trained - base  # (Q,)
    return {"mean": float(d.mean()), "questions_ci": list(paired.question_interval(d, result["budget"]["bootstrap"]))}


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


def trl_warmup(steps):
    """TRL's (transformers') warm-up steps for ours: `loop._warmup` scales the lr by (step + 1) / W over
    W = steps // 10 steps when W >= 2 (no warm-up below 20 steps); transformers' "constant_with_warmup"
    scales it by step / W, so its warm-up runs one step behind ours (its first step has lr 0)."""
    w = steps // 10
    return {"lr_scheduler_type": "constant_with_warmup", "warmup_steps": w} if w >= 2 else \
        {"lr_scheduler_type": "constant", "warmup_steps": 0}


def trl_lora(preset):
    """peft's LoraConfig arguments for TRL's `peft_config` (llm.add_lora's), or None for full fine-tuning."""
    llm_cfg = preset.llm
    if llm_cfg is None or not llm_cfg.lora_r:
        return None
    from ..llm import LORA_TARGETS

    return {"r": llm_cfg.lora_r, "lora_alpha": llm_cfg.lora_alpha, "lora_dropout": 0.0,
            "target_modules": LORA_TARGETS, "task_type": "CAUSAL_LM"}


def _checkpointing_name():
    """transformers' name for recomputing activations: `activation_checkpointing` where its TrainingArguments has it
    (5.x, where `gradient_checkpointing` is a deprecated alias that warns), else `gradient_checkpointing`."""
    try:
        from transformers import TrainingArguments
    except ImportError:
        return "gradient_checkpointing"
    names = {f.name for f in dataclasses.fields(TrainingArguments)}
    return "activation_checkpointing" if "activation_checkpointing" in names else "gradient_checkpointing"


def trl_grpo_settings(preset, steps):
    """Our GRPO run's settings as keyword arguments of TRL's `GRPOConfig` (TRL >= 1.0 names).

    TRL's defaults that differ from ours are set explicitly: loss_type "grpo" (each reply averaged
    over its tokens, eq 19), no importance weight on the KL (use_bias_correction_kl=False, eq 21),
    no top-k / top-p truncation, our warm-up (`trl_warmup`). What cannot be set is named in
    `TRL_DIFFERENCES`; LoRA goes to the trainer as `peft_config` (`trl_lora`).
    """
    cfg, task = preset.rl, preset.task
    return {"max_steps": steps, "learning_rate": cfg.lr, "beta": cfg.beta, "epsilon": cfg.clip_eps,
            "num_generations": cfg.group_size, "per_device_train_batch_size": cfg.prompts_per_step * cfg.group_size,
            "gradient_accumulation_steps": 1, "steps_per_generation": 1, "num_iterations": cfg.epochs,
            "max_completion_length": task.max_new_tokens, "temperature": cfg.temperature, "top_k": 0, "top_p": 1.0,
            "loss_type": "grpo", "scale_rewards": "group", "use_bias_correction_kl": False, "max_grad_norm": 1.0,
            "weight_decay": 0.0, **trl_warmup(steps), _checkpointing_name(): bool(
                preset.llm is not None and preset.llm.grad_checkpointing), **_precision(preset)}


def trl_dpo_settings(preset, steps):
    """Our DPO run's settings as keyword arguments of TRL's `DPOConfig`.

    loss_type "sigmoid_norm" is eq 12 as this package computes it: each reply's log-ratio averaged
    over its tokens (`coefficients.dpo`); TRL's default "sigmoid" sums them. One difference remains
    (`TRL_DIFFERENCES`): TRL's DPOTrainer reads a fixed preference dataset, so on-policy pairs must be
    regenerated between rounds of training.
    """
    cfg = preset.rl
    return {"max_steps": steps, "learning_rate": cfg.lr, "beta": cfg.dpo_beta, "loss_type": "sigmoid_norm",
            "per_device_train_batch_size": cfg.prompts_per_step, "gradient_accumulation_steps": 1,
            "max_grad_norm": 1.0, "weight_decay": 0.0, **trl_warmup(steps), _checkpointing_name(): bool(
                preset.llm is not None and preset.llm.grad_checkpointing), **_precision(preset)}


TRL_DIFFERENCES = {
    "advantage eps": "ours 1e-6 in (r - mean) / (std + eps) (eq 21, coefficients.grpo); TRL 1.16's 1e-4 is "
                     "fixed in its code",
    "warm-up": "transformers' warm-up is one step behind ours (trl_warmup); none below 20 steps on either side",
    "positions": "TRL passes no position ids, so a left-padded prompt's positions count its padding; ours skip "
                 "it (sampling.token_logp); the attention mask, which both pass, is what keeps padding out",
    "on-policy DPO": "TRL's DPOTrainer reads a fixed dataset: pairs of the current policy are regenerated "
                     "between rounds, not every step as data.PolicyPairs draws them",
}
"""What TRL's configs cannot carry over, each with what it changes (the notebook shows the measurements)."""
