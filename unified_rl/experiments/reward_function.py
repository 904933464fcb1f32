"""DeepSeekMath §5.2.3, reward function: outcome vs process supervision vs a learned reward model.

GRPO trains from one SFT model with three rewards and the same budget:

- `outcome`: the rule checks the final answer (§4.1.2, outcome supervision);
- `process`: the rule checks every column-sum step, each step's reward on the token that closes it,
  normalised over the group and summed from each token onward (§4.1.3, `grpo-process`);
- `learned`: a reward model (`rewards.model.RewardModel`: the SFT model's trunk under a scalar head)
  trained on samples of the SFT model scored by the rule, then used in its place (`ModelReward`);
  the samples and seconds spent building it are charged to this arm before its first RL step. How
  well it ranks right above wrong (AUC) is measured three times: on its training samples, on SFT
  samples of held-out questions, and on the trained policy's samples of those questions, the last
  being the paper's first reward-model direction (does it still judge a policy that has moved?).

Compute is counted two ways: responses sampled (deterministic) and seconds (wall-clock from the
trainer, and process CPU seconds per arm; on a shared CPU the wall-clock is inflated, the CPU
seconds much less so). Held-out greedy accuracy is measured every `eval_every` steps.
"""

from dataclasses import asdict, dataclass, replace
from typing import Optional

import numpy as np
import torch

from ..evaluation import greedy_accuracy
from ..methods import METHODS
from ..rewards.model import RewardModel, auc, train_reward_model
from ..rewards import ModelReward, rule_reward
from ..sampling import sample
from ..text import Text
from ..trainer import train
from . import common

ARMS = ("outcome", "process", "learned")


@dataclass(frozen=True)
class Budget:
    """Sizes of the reward-function experiment."""

    sft_steps: Optional[int] = None
    """SFT steps of the starting model; None: the preset's own SFT checkpoint, the one every notebook
    starts RL from (stopped early, so RL has something to learn)"""
    rl_steps: int = 100
    """GRPO steps per arm"""
    eval_every: int = 10
    """steps between held-out greedy evaluations (on the preset's eval_problems questions)"""
    rm_questions: int = 1000
    """RL-pool questions whose SFT samples train the reward model"""
    rm_samples: int = 8
    """samples of the SFT model per question for the reward model"""
    rm_steps: int = 1500
    """reward-model optimizer steps (batches of 64)"""
    rm_lr: float = 3e-4
    """reward-model learning rate"""
    rm_val_questions: int = 100
    """held-out questions whose SFT samples measure the reward model's accuracy"""
    n_test: int = 500
    """held-out questions for the final greedy accuracy"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(rl_steps=200, rm_questions=4000, rm_steps=1000, rm_val_questions=500,
                  n_test=1000),
    "tiny": Budget(rl_steps=2, eval_every=1, rm_questions=8, rm_samples=2, rm_steps=2,
                   rm_val_questions=4, n_test=8),
}


def build_reward_model(lab, b, seed):
    """Train a reward model on rule-scored samples of the SFT model; return it with its cost and accuracy."""
    t = common.Clock()
    cfg = lab.preset.rl
    torch.manual_seed(30_000 + seed)
    questions = lab.rl_problems[: b.rm_questions]
    r = sample(lab.ref, lab.tokenizer, questions, group_size=b.rm_samples, temperature=cfg.temperature)
    scores = rule_reward(r.problems, r.texts)  # (N,)
    rm = RewardModel.from_policy(lab.ref)
    losses = train_reward_model(rm, lab.tokenizer, r.problems, r.texts, scores, steps=b.rm_steps, lr=b.rm_lr,
                                device=lab.device, seed=seed)
    cost = t.read()
    reward = ModelReward(rm, lab.tokenizer)
    val = judge(reward, lab.ref, lab, b)
    info = {"train_samples": len(r), "train_positive_frac": scores.mean().item(),
            "final_loss": float(np.mean(losses[-20:])), "train_auc": _auc_or_none(reward(r).cpu(), scores),
            **{f"val_{k}": v for k, v in val.items()}, **cost}
    return reward, info


def judge(reward, policy, lab, b):
    """How well `reward` tells right from wrong on samples of `policy` for held-out questions."""
    v = sample(policy, lab.tokenizer, lab.test_problems[: b.rm_val_questions], group_size=b.rm_samples,
               temperature=lab.preset.rl.temperature)
    truth = rule_reward(v.problems, v.texts)  # (N,)
    pred = reward(v).cpu()  # (N,)
    return {"samples": len(v), "right_frac": truth.mean().item(),
            "accuracy": ((pred > 0.5).float() == truth).float().mean().item(),
            "accuracy_if_always_majority": max(truth.mean().item(), 1 - truth.mean().item()),
            "auc": _auc_or_none(pred, truth)}


def _auc_or_none(pred, truth):
    """The AUC, or None where the samples are all right or all wrong (nothing to rank)."""
    return auc(pred, truth) if 0 < truth.sum() < len(truth) else None


def examples(policy, tokenizer, problems, n=4):
    """(prompt, reference, greedy response) of the first n problems: what the trained policy writes."""
    r = sample(policy, tokenizer, problems[:n], greedy=True)
    return [(p.prompt, p.solution, t) for p, t in zip(r.problems, r.texts)]


def _curve(lab, r, start_acc, sample0=0, seconds0=0.0):
    """(samples, wall seconds, held-out accuracy) at step 0 and every evaluation."""
    cfg = lab.preset.rl
    per_step = cfg.prompts_per_step * cfg.group_size
    pts = [(sample0, seconds0, start_acc)]
    pts += [(sample0 + m["step"] * per_step, seconds0 + m["seconds"], m["eval_accuracy"])
            for m in r.metrics if "eval_accuracy" in m]
    return {"samples": [p[0] for p in pts], "wall_s": [p[1] for p in pts], "accuracy": [p[2] for p in pts]}


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the reward-function experiment; write OUT/reward-function.json and .png; return the result."""
    exp = common.begin("reward-function", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say, sp = exp.preset, exp.budget, exp.say, exp.sft
    per_seed = []
    for seed, init, lab in exp.seed_labs():
        start = greedy_accuracy(lab.policy, lab.tokenizer, lab.test_problems[: sp.eval_problems])
        reward, rm_info = build_reward_model(lab, b, seed)
        methods = {"outcome": METHODS["grpo"], "process": METHODS["grpo-process"],
                   "learned": replace(METHODS["grpo"], reward=reward)}
        row = {"seed": seed, "sft_eval_accuracy": start, "reward_model": rm_info, "arms": {}}
        for arm in ARMS:
            t = common.Clock()
            lab = common.lab_on(sp, seed, init)
            r = train(methods[arm], lab=lab, steps=b.rl_steps, seed=seed, progress=progress, eval_every=b.eval_every)
            cost = t.read()
            pre = (rm_info["train_samples"], rm_info["wall_s"]) if arm == "learned" else (0, 0.0)
            curve = _curve(lab, r, start, *pre)
            final = greedy_accuracy(r.policy, r.tokenizer, lab.test_problems[: b.n_test])
            cpu = cost["cpu_s"] + (rm_info["cpu_s"] if arm == "learned" else 0.0)
            row["arms"][arm] = {"curve": curve, "final_accuracy": final, "cpu_s": cpu, "rl_wall_s": cost["wall_s"],
                                "examples": examples(r.policy, r.tokenizer, lab.test_problems),
                                "reward_seen": [m["reward"] for m in r.metrics],
                                "true_batch_accuracy": [m["accuracy"] for m in r.metrics]}
            if arm == "learned":  # the paper's generalization question: does it still judge the moved policy?
                row["reward_model"].update({f"policy_{k}": v for k, v in judge(reward, r.policy, lab, b).items()})
            say(f"reward-function seed {seed} {arm}: held-out {final:.3f} after {curve['samples'][-1]} samples, "
                f"{cpu:.0f} CPU s ({cost['wall_s']} s wall)")
        per_seed.append(row)
    return exp.finish(summarise(per_seed, preset, b, seeds, exp.clock.read()), plot)


def summarise(per_seed, preset, b, seeds, seconds):
    result = {"experiment": "reward-function", "preset": preset.name, "seeds": seeds, "budget": asdict(b),
              "arms": list(ARMS), "sft": common.stats([row["sft_eval_accuracy"] for row in per_seed]),
              "final_accuracy": {}, "cpu_s": {}, "samples": {}, "curve": {}, "curve_spread": {},
              "reward_model": {k: _stats_known([row["reward_model"][k] for row in per_seed])
                               for k in ("val_accuracy", "val_accuracy_if_always_majority", "val_auc",
                                         "train_auc", "train_positive_frac", "policy_auc", "policy_right_frac")}}
    for arm in ARMS:
        rows = [row["arms"][arm] for row in per_seed]
        result["final_accuracy"][arm] = common.stats([x["final_accuracy"] for x in rows])
        result["cpu_s"][arm] = common.stats([x["cpu_s"] for x in rows])
        result["samples"][arm] = rows[0]["curve"]["samples"][-1]
        result["curve"][arm], result["curve_spread"][arm] = common.mean_curves([x["curve"] for x in rows])
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    head = {"SFT held-out accuracy (eval set)": common.fmt(result["sft"])}
    for arm in ARMS:
        head[arm] = {"held-out accuracy": common.fmt(result["final_accuracy"][arm]),
                     "samples": result["samples"][arm], "CPU s": common.fmt(result["cpu_s"][arm], 0)}
    head["reward model held-out accuracy"] = common.fmt(result["reward_model"]["val_accuracy"])
    head["majority-class baseline"] = common.fmt(result["reward_model"]["val_accuracy_if_always_majority"])
    head["reward model held-out AUC"] = _fmt_known(result["reward_model"]["val_auc"])
    head["reward model AUC on its training samples"] = _fmt_known(result["reward_model"]["train_auc"])
    head["reward model AUC on the trained policy's samples"] = _fmt_known(result["reward_model"]["policy_auc"])
    head.update(seeds=seeds, wall_s=seconds["wall_s"], cpu_s=seconds["cpu_s"])
    result["headline"] = head
    return result


def _stats_known(values):
    """stats() of the values that exist (an AUC is None where nothing could be ranked); None if none do."""
    known = [v for v in values if v is not None]
    return dict(common.stats(known), n=len(known)) if known else None


def _fmt_known(s):
    """'mean +/- std' of the seeds that had a value, 'n/a' if none had."""
    return "n/a" if s is None else common.fmt(s)


def plot(result):
    """Held-out accuracy against samples drawn and against seconds; reward seen vs truth while training."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    fig, axes = plt.subplots(1, 3, figsize=(11, 3.2))
    for i, arm in enumerate(result["arms"]):
        c, s = result["curve"][arm], result["curve_spread"][arm]
        m, e = np.array(c["accuracy"]), np.array(s["accuracy"])
        for ax, x in zip(axes[:2], ("samples", "wall_s")):
            ax.plot(c[x], m, marker="o", ms=3, color=f"C{i}", label=arm)
            ax.fill_between(c[x], m - e, m + e, color=f"C{i}", alpha=0.15, lw=0)
        seen = np.mean([row["arms"][arm]["reward_seen"] for row in result["per_seed"]], 0)
        true = np.mean([row["arms"][arm]["true_batch_accuracy"] for row in result["per_seed"]], 0)
        steps = np.arange(1, len(seen) + 1)
        axes[2].plot(steps, seen, color=f"C{i}", lw=1, ls="--")
        axes[2].plot(steps, true, color=f"C{i}", lw=1.5, label=arm)
    axes[0].set(xlabel=Text("responses sampled (incl. the reward model's data)"),
                ylabel=Text("held-out greedy accuracy"), title=Text("accuracy per sample"))
    axes[1].set(xlabel=Text("wall-clock seconds (incl. reward-model training)"), title=Text("accuracy per second"))
    axes[2].set(xlabel=Text("GRPO step"), ylabel=Text("batch mean"),
                title=Text("reward seen (dashed) vs. truth (solid)"))
    for ax in axes:
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.suptitle(Text("Reward functions for GRPO ({seeds} seed(s))", seeds=result["seeds"]))
    fig.tight_layout()
    return fig
