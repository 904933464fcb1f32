"""On-policy distillation on the lab: a stronger lab teacher's per-token log-ratio as the reward, against GRPO and
against SFT on the teacher's samples, at one budget.

Per seed, from the same SFT model (stopped early at `sft_steps`, figure7's start, so that there is room to learn):
1. the teacher: GRPO from that model for `teacher_steps` steps, its own question stream and sampling seed
   (1000 + seed), then frozen. It is the stronger model because it trained longer with the same method;
2. three arms of `rl_steps` steps each from the SFT model (seed s), each drawing prompts_per_step x group_size
   replies per step: `grpo` (the policy's samples, the rule's reward); `opd` (METHODS' opd: the policy's samples,
   each token's sg(log pi_teacher - log pi_theta) as its advantage, the teacher in memory); `sft-teacher` (SFT on the
   teacher's samples: the same number of replies per step drawn by the teacher at temperature 1, every token's
   coefficient 1, right or wrong: sequence-level distillation, self-distill's composition on the teacher's rows);
3. every model's greedy answer to each of the `n_test` held-out questions, and each arm's greedy accuracy on the
   preset's eval questions every `eval_every` steps beside the tokens it had sampled by then (accuracy per step and
   per sampled token). OPD also runs the teacher over each batch (one forward pass); sft-teacher's tokens are the
   teacher's samples; the teacher's own GRPO steps are the same sunk cost for opd and sft-teacher.
Decided (the course's rule, `field_arms`): opd - grpo and opd - sft-teacher; every arm - start, teacher - start and
sft-teacher - grpo are descriptive.
"""

import dataclasses
from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from ..data import FrozenPolicySamples
from ..methods import METHODS
from ..text import Text
from ..trainer import train
from . import common, field_arms


@dataclass(frozen=True)
class Budget:
    """Sizes of the lab's distillation comparison."""

    sft_steps: Optional[int] = 175
    """SFT steps of the starting model (figure7's early stop: mid-range accuracy)"""
    teacher_steps: int = 120
    """GRPO steps of the teacher"""
    rl_steps: int = 60
    """steps of each arm"""
    eval_every: int = 10
    """steps between greedy evaluations on the preset's eval questions during each arm"""
    n_test: int = 500
    """held-out questions every model answers at the end"""
    bootstrap: int = 2000
    """bootstrap resamples of the questions"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(sft_steps=None, teacher_steps=200, rl_steps=100, n_test=1000),
    "tiny": Budget(sft_steps=None, teacher_steps=2, rl_steps=2, eval_every=1, n_test=8, bootstrap=50),
}
ARMS = ("grpo", "opd", "sft-teacher")
MODELS = ("start", "teacher", *ARMS)
COMPARISONS = tuple((f"{m} - start", "start", m) for m in ("teacher", *ARMS)) + (
    ("sft-teacher - grpo", "grpo", "sft-teacher"), ("opd - grpo", "grpo", "opd"), ("opd - sft-teacher", "sft-teacher", "opd"))
DECIDED = ("opd - grpo", "opd - sft-teacher")
SFT_ON_TEACHER = dataclasses.replace(METHODS["self-distill"], name="sft-teacher", data_source=FrozenPolicySamples)
"""SFT on pi_ref's samples, unfiltered; the arm's lab holds the teacher as pi_ref (the composition reads no pi_ref)."""


def curve(r, rows):
    """Per evaluation: the step, the greedy accuracy on the eval questions, and the tokens sampled up to it."""
    tokens, out = 0.0, []
    for m in r.metrics:
        tokens += m["response_len"] * rows
        if "eval_accuracy" in m:
            out.append({"step": m["step"], "eval_accuracy": m["eval_accuracy"], "sampled_tokens": tokens})
    return out


def run_arm(arm, lab, teacher, b, seed, test, progress):
    """Train one arm from the seed's SFT model; its answers, curve and cost."""
    clock, cfg = common.Clock(), lab.preset.rl
    rows = cfg.prompts_per_step * cfg.group_size
    if arm == "opd":
        r = train("opd", lab=dataclasses.replace(lab, teacher=teacher), steps=b.rl_steps, seed=seed,
                  progress=progress, eval_every=b.eval_every)
    elif arm == "sft-teacher":
        r = train(SFT_ON_TEACHER, lab=dataclasses.replace(lab, ref=teacher), steps=b.rl_steps, seed=seed,
                  progress=progress, eval_every=b.eval_every, frozen_samples=cfg.group_size)
    else:
        r = train(arm, lab=lab, steps=b.rl_steps, seed=seed, progress=progress, eval_every=b.eval_every)
    return {"right": field_arms.greedy_right(r.policy, r.tokenizer, test), "curve": curve(r, rows),
            "sampled_tokens": float(sum(m["response_len"] for m in r.metrics) * rows), **clock.read()}


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the comparison; write OUT/teachers.json and .png; return the result."""
    exp = common.begin("teachers", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say = exp.preset, exp.budget, exp.say
    if min(b.teacher_steps, b.rl_steps, b.eval_every) < 1 or b.n_test < 2:
        raise ValueError(f"teacher_steps, rl_steps and eval_every must be >= 1 and n_test >= 2, got {b}")
    sp, per_seed = exp.sft, []
    for seed, init, lab in exp.seed_labs():
        test = lab.test_problems[: b.n_test]
        row = {"seed": seed, "right": {"start": field_arms.greedy_right(lab.policy, lab.tokenizer, test)}, "runs": {}}
        t = train("grpo", lab=lab, steps=b.teacher_steps, seed=1000 + seed, progress=progress, eval_every=0)
        teacher = t.policy.eval().requires_grad_(False)
        row["right"]["teacher"] = field_arms.greedy_right(teacher, t.tokenizer, test)
        row["runs"]["teacher"] = {"sampled_tokens": float(sum(m["response_len"] for m in t.metrics)
                                                          * sp.rl.prompts_per_step * sp.rl.group_size),
                                  "wall_s": t.summary["seconds"]}
        for arm in ARMS:
            x = run_arm(arm, common.lab_on(sp, seed, init), teacher, b, seed, test, progress)
            row["right"][arm] = x.pop("right")
            row["runs"][arm] = x
        per_seed.append(row)
        say(f"teachers seed {seed}: " + ", ".join(f"{m} {np.mean(row['right'][m]):.3f}" for m in MODELS))
    result = {"experiment": "teachers", "preset": preset.name, "seeds": seeds, "budget": asdict(b),
              "arms": list(MODELS), "rows_per_step": sp.rl.prompts_per_step * sp.rl.group_size,
              "per_seed": per_seed, "seconds": exp.clock.read()}
    return exp.finish(derive(result), plot)


def derive(result):
    """`result` with the accuracies, comparisons, verdicts, the accuracy per step and per sampled token, and the
    headline recomputed from its stored per-seed answers and curves."""
    per_seed = result["per_seed"]
    derived, head = field_arms.summary(per_seed, list(MODELS), COMPARISONS, DECIDED, result["budget"]["bootstrap"])
    result.update(derived)
    acc = derived["accuracy"]
    result["curves"] = {a: {k: np.mean([[p[k] for p in s["runs"][a]["curve"]] for s in per_seed], 0).tolist()
                            for k in ("step", "eval_accuracy", "sampled_tokens")} for a in ARMS}
    result["sampled_tokens"] = {a: common.stats([s["runs"][a]["sampled_tokens"] for s in per_seed])
                                for a in ("teacher", *ARMS)}
    result["gain_per_1k_tokens"] = {
        a: common.stats([(x - y) / s["runs"][a]["sampled_tokens"] * 1000
                         for x, y, s in zip(acc[a]["per_seed"], acc["start"]["per_seed"], per_seed)]) for a in ARMS}
    for a in ARMS:
        c = result["curves"][a]
        head[f"{a}: eval accuracy by step"] = ", ".join(f"{int(s)}: {v:.3f}" for s, v in zip(c["step"], c["eval_accuracy"]))
        head[f"{a}: sampled tokens, gain per 1000"] = (f"{result['sampled_tokens'][a]['mean']:.0f}, "
                                                       f"{common.fmt(result['gain_per_1k_tokens'][a], 4)}")
    head["teacher: sampled tokens"] = f"{result['sampled_tokens']['teacher']['mean']:.0f}"
    head.update(seeds=result["seeds"], wall_s=result["seconds"]["wall_s"], cpu_s=result["seconds"]["cpu_s"])
    result["headline"] = head
    return result


def revive(result):
    """A loaded result with its derived parts rebuilt from its stored numbers (`field_arms.revive`)."""
    return field_arms.revive(result, derive)


def plot(result):
    """Left: accuracy against sampled tokens (mean over seeds; the teacher and the start as lines). Right: each
    comparison with its interval over seeds."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    for i, a in enumerate(ARMS):
        c = result["curves"][a]
        ax1.plot(c["sampled_tokens"], c["eval_accuracy"], marker="o", ms=3, color=f"C{i}", label=a)
    for m, ls, name in (("teacher", "--", Text("teacher, held-out questions")),
                        ("start", ":", Text("start, held-out questions"))):
        ax1.axhline(result["accuracy"][m]["mean"], color="grey", ls=ls, lw=1, label=name)
    ax1.set(xlabel=Text("tokens sampled"), ylabel=Text("greedy accuracy (eval questions)"),
            title=Text("accuracy per sampled token"))
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    field_arms.plot_changes(ax2, result)
    b = result["budget"]
    fig.suptitle(Text("Teachers on the lab: {seeds} seed(s), {steps} steps per arm, a {teacher}-step GRPO teacher",
                      seeds=result["seeds"], steps=b["rl_steps"], teacher=b["teacher_steps"]), fontsize=9)
    fig.tight_layout()
    return fig
