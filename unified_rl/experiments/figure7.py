"""DeepSeekMath §5.2.2, Figure 7: "RL enhances Maj@K but not Pass@K", reproduced on the lab.

The paper evaluates its SFT (Instruct) model and the RL model trained from it on a subset of the
SFT questions, with Pass@K and Maj@K for K = 1 ... 64 at temperature 0.7. Here, per seed:

1. SFT on the limited SFT set (`preset.n_sft` questions with reference solutions);
2. GRPO from that model on the first `rl_questions` SFT questions (a subset, as in the paper);
3. both models on held-out questions: greedy accuracy, and Pass@K / Maj@K for K = 1, 2, ..., 64
   from 64 samples per question at temperature 0.7 with the exact estimators of `metrics`.

It does so for two SFT models ("regimes"). `converged`: SFT run to convergence (1000 steps on the
cpu preset: held-out greedy accuracy has plateaued by then, and the SFT questions are all answered
right), as the issue asks; it comes first, so the top-level keys of the result are its numbers.
`early-stopped`: the preset's own SFT model, which stops early to leave RL room, and which every
other notebook starts RL from. A converged model that answers every RL question right leaves GRPO
no signal (every group is all-correct, so every advantage is 0); the second regime shows what RL
does when there is something to learn.

If RL's Pass@K falls below SFT's at large K, that is what Yue et al. 2025 ("Does Reinforcement
Learning Really Incentivize Reasoning Capacity in LLMs Beyond the Base Model?", arXiv 2504.13837)
found; the result records the first K where RL's Pass@K is lower than SFT's by more than the
spread over seeds.
"""

from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
import torch

from ..course.plots import plot_pass_maj
from ..evaluation import greedy_accuracy
from ..trainer import train
from . import common


@dataclass(frozen=True)
class Budget:
    """Sizes of the Figure-7 experiment."""

    regimes: tuple = (("converged", 1000), ("early-stopped", None))
    """(name, SFT steps) of each SFT model RL starts from; None: the preset's own SFT checkpoint"""
    rl_questions: int = 200
    """how many of the SFT questions GRPO trains on (the first ones: a subset, as in the paper)"""
    rl_steps: int = 60
    """GRPO steps"""
    k_problems: int = 200
    """held-out questions for Pass@K / Maj@K"""
    samples: int = 64
    """samples per question; K runs over 1, 2, 4, ..., samples"""
    temperature: float = 0.7
    """sampling temperature of the evaluation (the paper's)"""
    eval_every: int = 10
    """GRPO steps between held-out greedy evaluations during training"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(regimes=(("converged", 3000), ("early-stopped", None)), rl_questions=1500, rl_steps=200,
                  k_problems=500),
    "tiny": Budget(regimes=(("tiny", None),), rl_questions=16, rl_steps=2, k_problems=4, samples=4, eval_every=2),
}


def run_regime(preset, sft_steps, seed, b, progress=False):
    """One SFT model, GRPO from it on a subset of its questions, both evaluated: a per-seed dict."""
    t = common.Clock()
    sp = common.sft_preset(preset, sft_steps)
    lab = common.lab_on(sp, seed, common.sft_model(sp, seed, progress))
    lab.rl_problems = lab.sft_problems[: b.rl_questions]  # RL on a subset of the SFT questions
    test = lab.test_problems
    torch.manual_seed(10_000 + seed)
    sft = common.evaluate_policy(lab.policy, lab.tokenizer, test, b.k_problems, b.samples, b.temperature)
    sft["greedy_rl_questions"] = greedy_accuracy(lab.policy, lab.tokenizer, lab.rl_problems)
    r = train("grpo", lab=lab, steps=b.rl_steps, seed=seed, progress=progress, eval_every=b.eval_every)
    torch.manual_seed(10_000 + seed)
    rl = common.evaluate_policy(r.policy, r.tokenizer, test, b.k_problems, b.samples, b.temperature)
    rl["greedy_rl_questions"] = greedy_accuracy(lab.policy, lab.tokenizer, lab.rl_problems)
    curve = [{k: m[k] for k in ("step", "seconds", "accuracy", "kl", "eval_accuracy") if k in m} for m in r.metrics]
    return {"sft": sft, "rl": rl, "rl_curve": curve, "rl_wall_s": r.summary["seconds"], **t.read()}


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run Figure 7 over `seeds` seeds; write OUT/figure7.json and OUT/figure7.png; return the result."""
    common.check_run_args(out, seeds)
    preset, b = common.pick_budget(BUDGETS, preset, budget)
    if not b.regimes or len({name for name, _ in b.regimes}) != len(b.regimes):
        raise ValueError(f"regimes must be distinct (name, sft_steps) pairs, got {b.regimes!r}")
    if b.rl_questions < 1 or b.rl_questions > preset.n_sft:
        raise ValueError(f"rl_questions must be in [1, n_sft={preset.n_sft}], got {b.rl_questions}")
    if b.k_problems < 1 or b.k_problems > preset.n_test:
        raise ValueError(f"k_problems must be in [1, n_test={preset.n_test}], got {b.k_problems}")
    say = common.Progress(progress)
    ks = common.powers_of_two(b.samples)
    clock = common.Clock()
    per_seed = []
    for seed in range(seeds):
        row = {"seed": seed}
        for name, sft_steps in b.regimes:
            x = row[name] = run_regime(preset, sft_steps, seed, b, progress)
            say(f"figure7 seed {seed} {name}: greedy SFT {x['sft']['greedy']:.3f} -> RL {x['rl']['greedy']:.3f}; "
                f"Maj@{ks[-1]} {x['sft']['maj_at_k'][-1]:.3f} -> {x['rl']['maj_at_k'][-1]:.3f}; "
                f"Pass@{ks[-1]} {x['sft']['pass_at_k'][-1]:.3f} -> {x['rl']['pass_at_k'][-1]:.3f} ({x['wall_s']} s)")
        per_seed.append(row)
    result = summarise(ks, per_seed, preset, b, seeds, clock.read())
    key = preset.name if not budget else None  # only the full run is what the notebook may load
    common.write_result("figure7", out, result, plot(result), cache_key=key)
    return result


def _regime(ks, rows):
    """Means, spread, RL - SFT differences and where RL's Pass@K drops below SFT's, for one regime."""
    out = {"spread": {}}
    for name in ("sft", "rl"):
        out[name], out["spread"][name] = common.mean_curves([x[name] for x in rows])
    out["delta_rl_minus_sft"] = {
        key: [common.stats([x["rl"][key][i] - x["sft"][key][i] for x in rows]) for i in range(len(ks))]
        for key in ("pass_at_k", "maj_at_k")}
    # Yue et al.'s crossover: the first K where RL's Pass@K is lower by more than the spread over seeds
    below = [k for k, d in zip(ks, out["delta_rl_minus_sft"]["pass_at_k"]) if d["mean"] + d["std"] < 0]
    out["pass_at_k_rl_below_sft_from_k"] = below[0] if below else None
    return out


def summarise(ks, per_seed, preset, b, seeds, seconds):
    """The first regime's means at the top level (the issue's keys); every regime under "regimes"."""
    result = {"experiment": "figure7", "preset": preset.name, "seeds": seeds, "budget": asdict(b), "k": ks,
              "regimes": {name: _regime(ks, [row[name] for row in per_seed]) for name, _ in b.regimes}}
    result["main_regime"] = b.regimes[0][0]
    result.update(result["regimes"][result["main_regime"]])
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    K = ks[-1]
    head = {}
    for name, _ in b.regimes:
        rows = [row[name] for row in per_seed]
        st = lambda m, key, i: common.fmt(common.stats([x[m][key][i] for x in rows]))
        reg = result["regimes"][name]
        head[name] = {
            "greedy accuracy (held-out)": {m: common.fmt(common.stats([x[m]["greedy"] for x in rows])) for m in ("sft", "rl")},
            "greedy accuracy (RL questions)": {m: common.fmt(common.stats([x[m]["greedy_rl_questions"] for x in rows]))
                                               for m in ("sft", "rl")},
            "Maj@1 = Pass@1": {m: st(m, "maj_at_k", 0) for m in ("sft", "rl")},
            f"Maj@{K}": {m: st(m, "maj_at_k", -1) for m in ("sft", "rl")},
            f"Pass@{K}": {m: st(m, "pass_at_k", -1) for m in ("sft", "rl")},
            f"RL - SFT, Maj@{K}": common.fmt(reg["delta_rl_minus_sft"]["maj_at_k"][-1]),
            f"RL - SFT, Pass@{K}": common.fmt(reg["delta_rl_minus_sft"]["pass_at_k"][-1]),
            "RL Pass@K below SFT from K": reg["pass_at_k_rl_below_sft_from_k"]}
    head.update(seeds=seeds, wall_s=seconds["wall_s"], cpu_s=seconds["cpu_s"])
    result["headline"] = head
    return result


def plot(result):
    """Figure 7's two panels (Maj@K, Pass@K): SFT and RL of each regime, mean over seeds ± one std."""
    k = result["k"]
    curves, bands = {}, []
    for name, reg in result["regimes"].items():
        suffix = f" ({name})" if len(result["regimes"]) > 1 else ""
        for m, label in (("sft", "SFT"), ("rl", "RL (GRPO)")):
            curves[label + suffix] = reg[m]
            bands.append((reg[m], reg["spread"][m]))
    title = f"Figure 7 on the lab: {result['seeds']} seed(s), held-out questions, T = {result['budget']['temperature']}"
    fig = plot_pass_maj(k, curves, title=title)
    for ax, key in zip(fig.axes, ("maj_at_k", "pass_at_k")):
        for line, (mean, spread) in zip(ax.get_lines(), bands):
            m, s = np.array(mean[key]), np.array(spread[key])
            ax.fill_between(k, m - s, m + s, color=line.get_color(), alpha=0.15, lw=0)
    return fig


def per_question(result, seed=0):
    """Per regime, for one seed: each held-out question's fraction of right samples before and after RL,
    and the counts that tell sharpening from learning."""
    samples = result["budget"]["samples"]
    out = {}
    for name in result["regimes"]:
        s = result["per_seed"][seed][name]
        x, y = np.array(s["sft"]["hits"]) / samples, np.array(s["rl"]["hits"]) / samples
        out[name] = {"sft": x, "rl": y, "questions": len(x),
                     "lost": int(((x > 0) & (y == 0)).sum()),  # solved by some SFT sample, by no RL sample
                     "gained": int(((x == 0) & (y > 0)).sum()),  # the reverse: new capability
                     "majority_right": {"sft": float((x > 0.5).mean()), "rl": float((y > 0.5).mean())}}
    return out


def plot_per_question(result, seed=0):
    """One scatter per regime: fraction of right samples per question, SFT (x) against RL (y)."""
    import matplotlib.pyplot as plt

    pq = per_question(result, seed)
    fig, axes = plt.subplots(1, len(pq), figsize=(3.6 * len(pq), 3.4), squeeze=False)
    for ax, (name, q) in zip(axes[0], pq.items()):
        jitter = np.random.default_rng(0).normal(0, 0.006, q["questions"])  # separates equal x values
        ax.scatter(q["sft"] + jitter, q["rl"], s=10, alpha=0.5)
        ax.plot([0, 1], [0, 1], color="grey", lw=1)
        ax.set(xlabel="fraction right, SFT", ylabel="fraction right, RL", title=f"{name} (seed {seed})")
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig
