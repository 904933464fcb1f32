"""On-policy distillation on SmolLM2-135M-Instruct: a GRPO-trained SmolLM2 as the teacher of the pretrained one.

Per seed, from the same pretrained weights (float32, full fine-tuning), on the same `n_test` held-out sums:
1. GRPO for `steps` steps (seed s): the `grpo` arm; its greedy answers;
2. the same model trained on for `teacher_steps - steps` more GRPO steps (a fresh AdamW and question stream, seed
   10_000 + s): the `teacher`, frozen from then on; its greedy answers;
3. OPD (METHODS' opd: each sampled token's log pi_teacher - log pi_theta as its advantage) for `steps` steps from the
   pretrained weights (seed s), the teacher in memory beside it: the `opd` arm; its greedy answers.
So OPD and GRPO spend the same steps and the same sampled replies (prompts_per_step x group_size per step); OPD also
pays one teacher forward pass per batch, and the teacher cost `teacher_steps` GRPO steps before. Decided (the course's
rule, `field_arms`): opd - base and opd - grpo; teacher - base and opd - teacher are descriptive. The tokens each
arm sampled are recorded, so accuracy per sampled token can be read off. Each finished seed is written to
OUT/real-model-opd.parts/ (a killed run continues from the last finished seed).
"""

import dataclasses
import os
from dataclasses import asdict, dataclass

import numpy as np

from ..lab import make_lab
from ..text import Text
from ..trainer import train
from . import common, field_arms
from .real_model import Parts
from .sampler_precision import world


@dataclass(frozen=True)
class Budget:
    """Sizes of the SmolLM2 on-policy distillation experiment."""

    model: str = "smollm2"
    """alias, folder or hub name of the chat model (smollm2: the offline SmolLM2-135M-Instruct)"""
    world: str = "llm-cpu"
    """the LLM preset the runs start from"""
    digits: int = 1
    """operand digits of the sums in words (the llm-cpu preset's task)"""
    max_new_tokens: int = 16
    """the reply's budget in tokens"""
    n_test: int = 32
    """held-out sums every model answers greedily"""
    steps: int = 8
    """steps of the grpo and opd arms"""
    teacher_steps: int = 16
    """GRPO steps of the teacher in all (the grpo arm's, then more)"""
    prompts_per_step: int = 2
    """questions per step"""
    group_size: int = 4
    """replies per question"""
    lr: float = 1e-5
    """AdamW learning rate (full fine-tuning)"""
    bootstrap: int = 2000
    """bootstrap resamples of the questions"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(world="llm-gpu", max_new_tokens=32, n_test=256, steps=50, teacher_steps=150, prompts_per_step=16,
                  group_size=8, lr=2e-4),
    "tiny": Budget(max_new_tokens=4, n_test=4, steps=1, teacher_steps=2, prompts_per_step=2, group_size=2, bootstrap=50),
}
ARMS = ("base", "grpo", "teacher", "opd")
COMPARISONS = (("grpo - base", "base", "grpo"), ("teacher - base", "base", "teacher"), ("opd - base", "base", "opd"),
               ("opd - grpo", "grpo", "opd"), ("opd - teacher", "teacher", "opd"))
DECIDED = ("opd - base", "opd - grpo")


def _tokens(r, b):
    return float(sum(m["response_len"] for m in r.metrics) * b.prompts_per_step * b.group_size)


def _curve(r):
    return [{k: m[k] for k in ("step", "seconds", "accuracy", "coef_zero_frac", "response_len") if k in m}
            for m in r.metrics]


def run_seed(p, b, seed, test, progress):
    """One seed: the grpo arm, the teacher trained on from it, and opd from the pretrained weights."""
    out, clock = {"right": {}, "runs": {}}, common.Clock()
    lab = make_lab(p, seed)
    common.phase(f"seed {seed}: GRPO {b.steps} steps, then {b.teacher_steps - b.steps} more for the teacher")
    g = train("grpo", lab=lab, steps=b.steps, seed=seed, progress=progress, eval_every=0)
    out["right"]["grpo"] = field_arms.greedy_right(g.policy, g.tokenizer, test)
    out["runs"]["grpo"] = {"curve": _curve(g), "sampled_tokens": _tokens(g, b), "train_wall_s": g.summary["seconds"]}
    t = train("grpo", lab=lab, steps=b.teacher_steps - b.steps, seed=10_000 + seed, progress=progress, eval_every=0)
    teacher = t.policy.eval().requires_grad_(False)
    out["right"]["teacher"] = field_arms.greedy_right(teacher, t.tokenizer, test)
    out["runs"]["teacher"] = {"curve": _curve(g) + _curve(t), "sampled_tokens": _tokens(g, b) + _tokens(t, b),
                              "train_wall_s": g.summary["seconds"] + t.summary["seconds"]}
    common.phase(f"seed {seed}: OPD {b.steps} steps from the pretrained weights")
    student = dataclasses.replace(make_lab(p, seed), teacher=teacher)  # the loop reads lab.teacher's log-probs
    o = train("opd", lab=student, steps=b.steps, seed=seed, progress=progress, eval_every=0)
    out["right"]["opd"] = field_arms.greedy_right(o.policy, o.tokenizer, test)
    out["runs"]["opd"] = {"curve": _curve(o), "sampled_tokens": _tokens(o, b), "train_wall_s": o.summary["seconds"]}
    out.update(clock.read())
    return out


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the experiment; write OUT/real-model-opd.json and .png; return the result."""
    exp = common.begin("real-model-opd", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say = exp.preset, exp.budget, exp.say
    if not 1 <= b.steps < b.teacher_steps or b.n_test < 2:
        raise ValueError(f"need 1 <= steps < teacher_steps and n_test >= 2, got {b.steps}, {b.teacher_steps}, {b.n_test}")
    p, parts = world(b), Parts(os.path.join(out, "real-model-opd.parts"), b)
    lab = make_lab(p, 0)
    test = lab.test_problems[: b.n_test]
    base = parts.get("greedy-base", lambda: field_arms.greedy_right(lab.policy, lab.tokenizer, test))
    del lab
    per_seed = []
    for seed in range(seeds):
        x = parts.get(f"seed{seed}", lambda: run_seed(p, b, seed, test, progress))
        x["right"] = {"base": base, **x["right"]}
        per_seed.append({"seed": seed, **x})
        say(f"real-model-opd seed {seed}: " + ", ".join(f"{a} {np.mean(x['right'][a]):.3f}" for a in ARMS)
            + f" ({x['wall_s']} s)")
    result = {"experiment": "real-model-opd", "preset": preset.name, "world": p.name, "seeds": seeds,
              "budget": asdict(b), "arms": list(ARMS),
              "questions": [{"question": q.prompt, "answer": q.answer} for q in test],
              "per_seed": per_seed, "seconds": exp.clock.read()}
    return exp.finish(derive(result), plot)


def derive(result):
    """`result` with the accuracies, comparisons, verdicts, the share of the teacher's gain OPD recovered and the
    headline recomputed from its stored per-seed answers and token counts."""
    per_seed = result["per_seed"]
    derived, head = field_arms.summary(per_seed, list(ARMS), COMPARISONS, DECIDED, result["budget"]["bootstrap"])
    result.update(derived)
    acc = derived["accuracy"]
    gain = [t - b for t, b in zip(acc["teacher"]["per_seed"], acc["base"]["per_seed"])]
    got = [o - b for o, b in zip(acc["opd"]["per_seed"], acc["base"]["per_seed"])]
    result["recovered"] = [g2 / g1 if g1 else None for g1, g2 in zip(gain, got)]
    tokens = {a: common.stats([s["runs"][a]["sampled_tokens"] for s in per_seed]) for a in ("grpo", "teacher", "opd")}
    result["sampled_tokens"] = tokens
    head["OPD's gain over the teacher's, per seed"] = ", ".join("-" if r is None else f"{r:.2f}" for r in result["recovered"])
    head["sampled tokens per run"] = {a: f"{t['mean']:.0f}" for a, t in tokens.items()}
    head["accuracy gain per 1000 sampled tokens"] = {
        a: f"{np.mean([(x - y) / s['runs'][a]['sampled_tokens'] * 1000 for x, y, s in zip(acc[a]['per_seed'], acc['base']['per_seed'], per_seed)]):+.4f}"
        for a in ("grpo", "teacher", "opd")}
    head.update(seeds=result["seeds"], wall_s=result["seconds"]["wall_s"], cpu_s=result["seconds"]["cpu_s"])
    result["headline"] = head
    return result


def revive(result):
    """A loaded result with its derived parts rebuilt from its stored numbers (`field_arms.revive`)."""
    return field_arms.revive(result, derive)


def plot(result):
    """Left: each model's held-out greedy accuracy per seed. Right: each comparison with its interval over seeds."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.4))
    for i, arm in enumerate(result["arms"]):
        a = result["accuracy"][arm]
        ax1.bar(i, a["mean"], color=f"C{i}", alpha=0.6)
        ax1.plot([i] * len(a["per_seed"]), a["per_seed"], "k.", ms=5)
    ax1.set_xticks(range(len(result["arms"])), result["arms"])
    ax1.set(ylabel=Text("held-out greedy accuracy"), title=Text("each model (dots: seeds)"))
    field_arms.plot_changes(ax2, result)
    b = result["budget"]
    ax2.set(title=Text("{steps} steps each; the teacher: {teacher} GRPO steps", steps=b["steps"], teacher=b["teacher_steps"]))
    fig.suptitle(Text("On-policy distillation on SmolLM2-135M-Instruct: {seeds} seed(s), {n} held-out sums",
                      seeds=result["seeds"], n=b["n_test"]), fontsize=9)
    fig.tight_layout()
    return fig
