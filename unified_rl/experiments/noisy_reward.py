"""DeepSeekMath §5.2.3, algorithm: how do the methods cope with a reward that is sometimes wrong?

"All methods now fully TRUST the signal of the reward function": the gradient coefficient of every
method is built from the reward as if it were right. The paper notes that even PRM800K has about 20 %
wrong labels. Here each method's rule reward is wrapped in `NoisyReward`, which flips each sample's
0/1 reward with probability p (0, 10, 20 and 40 %), and RFT, online RFT, DPO and GRPO train from the
same SFT model with the same budget. What is measured is the truth: held-out greedy accuracy, scored
by the exact rule. The data source of each method is unchanged, except that DPO's pairs are chosen
by the noisy reward (a flipped label can make the wrong answer the "chosen" one).
"""

from dataclasses import asdict, dataclass, replace
from typing import Optional

import numpy as np

from ..data import PreferencePairs
from ..evaluation import greedy_accuracy
from ..methods import METHODS
from ..rewards import NoisyReward, RuleReward
from ..text import Text
from ..trainer import train
from . import common


@dataclass(frozen=True)
class Budget:
    """Sizes of the noisy-reward experiment."""

    sft_steps: Optional[int] = None
    """SFT steps of the starting model; None: the preset's own SFT checkpoint, the one every notebook
    starts RL from (stopped early, so RL has something to learn)"""
    rl_steps: int = 30
    """optimizer steps per (method, noise) run"""
    flip_probs: tuple = (0.0, 0.1, 0.2, 0.4)
    """probabilities of flipping a sample's reward"""
    methods: tuple = ("rft", "online-rft", "dpo", "grpo")
    """the methods compared"""
    n_test: int = 500
    """held-out questions for greedy accuracy"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(rl_steps=100, n_test=1000),
    # tiny: its untrained model answers nothing right, so DPO finds pairs only under noise
    "tiny": Budget(rl_steps=2, flip_probs=(0.3, 0.5), n_test=8),
}


def noisy_method(name, flip_prob, seed):
    """METHODS[name] with its rule reward flipped at rate `flip_prob` (DPO's pairs chosen by it too)."""
    if name not in METHODS or name in ("sft",):
        raise ValueError(f"noisy-reward compares methods that use a reward; got {name!r}")
    reward = NoisyReward(RuleReward(), flip_prob, seed=seed)
    m = replace(METHODS[name], reward=reward)
    if name == "dpo":
        m = replace(m, data_source=lambda lab: PreferencePairs(lab, reward))
    return m


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the noisy-reward experiment; write OUT/noisy-reward.json and .png; return the result."""
    exp = common.begin("noisy-reward", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say = exp.preset, exp.budget, exp.say
    ps = list(b.flip_probs)
    if not ps or ps != sorted(ps) or not all(0.0 <= p <= 1.0 for p in ps):
        raise ValueError(f"flip_probs must be increasing probabilities in [0, 1], got {b.flip_probs}")
    for name in b.methods:
        noisy_method(name, 0.0, 0)  # fail before any training on an unknown method
    sp = exp.sft
    per_seed = []
    for seed, init, lab in exp.seed_labs():
        test = lab.test_problems[: b.n_test]
        row = {"seed": seed, "sft": greedy_accuracy(lab.policy, lab.tokenizer, test), "runs": {}}
        for name in b.methods:
            for p in b.flip_probs:
                t = common.Clock()
                lab = common.lab_on(sp, seed, init)
                r = train(noisy_method(name, p, seed), lab=lab, steps=b.rl_steps, seed=seed,
                          progress=progress, eval_every=0)
                last = r.metrics[-5:]
                row["runs"][f"{name}@{p}"] = {
                    "method": name, "flip_prob": p,
                    "accuracy": greedy_accuracy(r.policy, r.tokenizer, test),
                    "seen_reward": float(np.mean([m["reward"] for m in last])),
                    "true_batch_accuracy": float(np.mean([m["accuracy"] for m in last])),
                    "kl_last": r.metrics[-1].get("kl"), **t.read()}
                say(f"noisy-reward seed {seed} {name} p={p}: held-out {row['runs'][f'{name}@{p}']['accuracy']:.3f} "
                    f"(SFT {row['sft']:.3f}) ({t.read()['wall_s']} s)")
        per_seed.append(row)
    return exp.finish(summarise(per_seed, preset, b, seeds, exp.clock.read()), plot)


def summarise(per_seed, preset, b, seeds, seconds):
    result = {"experiment": "noisy-reward", "preset": preset.name, "seeds": seeds, "budget": asdict(b),
              "flip_probs": list(b.flip_probs), "methods": list(b.methods),
              "sft": common.stats([row["sft"] for row in per_seed]), "accuracy": {}, "change_vs_least_noise": {}}
    for name in b.methods:
        acc = [[row["runs"][f"{name}@{p}"]["accuracy"] for p in b.flip_probs] for row in per_seed]
        result["accuracy"][name] = [common.stats([a[i] for a in acc]) for i in range(len(b.flip_probs))]
        result["change_vs_least_noise"][name] = [common.stats([a[i] - a[0] for a in acc])
                                           for i in range(len(b.flip_probs))]
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    head = {"SFT held-out accuracy": common.fmt(result["sft"])}
    for name in b.methods:
        head[name] = {f"p={p}": common.fmt(s) for p, s in zip(b.flip_probs, result["accuracy"][name])}
    head.update(seeds=seeds, wall_s=seconds["wall_s"], cpu_s=seconds["cpu_s"])
    result["headline"] = head
    return result


def plot(result):
    """Held-out accuracy against the flip probability, one line per method; the SFT model dashed."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    ps = result["flip_probs"]
    fig, axes = plt.subplots(1, 2, figsize=(8, 3.2))
    for i, name in enumerate(result["methods"]):
        for ax, key in zip(axes, ("accuracy", "change_vs_least_noise")):
            m = np.array([s["mean"] for s in result[key][name]])
            s = np.array([s["std"] for s in result[key][name]])
            ax.errorbar(ps, m, yerr=s, marker="o", ms=4, capsize=3, color=f"C{i}", label=name)
    sft = result["sft"]["mean"]
    axes[0].axhline(sft, color="grey", ls="--", lw=1, label=Text("SFT (start)"))
    axes[0].set(xlabel=Text("fraction of rewards flipped"), ylabel=Text("held-out greedy accuracy"),
                title=Text("accuracy"))
    axes[1].axhline(0, color="grey", lw=1)
    axes[1].set(xlabel=Text("fraction of rewards flipped"), ylabel=Text("change vs. p = {p}", p=ps[0]),
                title=Text("what the noise costs"))
    for ax in axes:
        ax.set_xticks(ps)
        ax.grid(alpha=0.3)
    axes[0].legend(fontsize=7)
    fig.suptitle(Text("Noisy rewards ({seeds} seed(s), {steps} steps per run)", seeds=result["seeds"],
                      steps=result["budget"]["rl_steps"]))
    fig.tight_layout()
    return fig
