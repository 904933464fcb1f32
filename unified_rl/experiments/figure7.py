"""DeepSeekMath §5.2.2, Figure 7: "RL enhances Maj@K but not Pass@K", reproduced on the lab.

The paper evaluates its SFT (Instruct) model and the RL model trained from it on a subset of the
SFT questions, with Pass@K and Maj@K for K = 1 ... 64 at temperature 0.7. Here, per seed:

1. SFT on the limited SFT set (`preset.n_sft` questions with reference solutions), trained to
   convergence: `sft_steps` optimizer steps, well past the point where the preset's default stops
   (the default leaves RL room to improve; this one asks what RL adds to a finished SFT model);
2. GRPO from that model on the first `rl_questions` SFT questions (a subset, as in the paper);
3. both models on held-out questions: greedy accuracy, and Pass@K / Maj@K for K = 1, 2, ..., 64
   from 64 samples per question at temperature 0.7 with the exact estimators of `metrics`.

If RL's Pass@K falls below SFT's at large K, that is what Yue et al. 2025 ("Does Reinforcement
Learning Really Incentivize Reasoning Capacity in LLMs Beyond the Base Model?", arXiv 2504.13837)
found; the result records where the curves cross.
"""

from dataclasses import asdict, dataclass
from typing import Optional

import torch

from ..course.plots import plot_pass_maj
from ..trainer import train
from . import common


@dataclass(frozen=True)
class Budget:
    """Sizes of the Figure-7 experiment."""

    sft_steps: Optional[int] = 1000
    """SFT optimizer steps ("to convergence"); None: the preset's own SFT checkpoint"""
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
    "gpu": Budget(sft_steps=2000, rl_questions=1500, rl_steps=200, k_problems=500),
    "tiny": Budget(sft_steps=None, rl_questions=16, rl_steps=2, k_problems=4, samples=4, eval_every=2),
}


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run Figure 7 over `seeds` seeds; write OUT/figure7.json and OUT/figure7.png; return the result."""
    common.check_run_args(out, seeds)
    preset, b = common.pick_budget(BUDGETS, preset, budget)
    if b.rl_questions < 1 or b.rl_questions > preset.n_sft:
        raise ValueError(f"rl_questions must be in [1, n_sft={preset.n_sft}], got {b.rl_questions}")
    if b.k_problems < 1 or b.k_problems > preset.n_test:
        raise ValueError(f"k_problems must be in [1, n_test={preset.n_test}], got {b.k_problems}")
    say = common.Progress(progress)
    sp = common.sft_preset(preset, b.sft_steps)
    ks = common.powers_of_two(b.samples)
    clock = common.Clock()
    per_seed = []
    for seed in range(seeds):
        t = common.Clock()
        lab = common.lab_on(sp, seed, common.sft_model(sp, seed, progress))
        lab.rl_problems = lab.sft_problems[: b.rl_questions]  # RL on a subset of the SFT questions
        sft_s = t.read()
        test = lab.test_problems
        torch.manual_seed(10_000 + seed)
        sft = common.evaluate_policy(lab.policy, lab.tokenizer, test, b.k_problems, b.samples, b.temperature)
        sft["greedy_rl_questions"] = _greedy(lab, lab.rl_problems)
        r = train("grpo", lab=lab, steps=b.rl_steps, seed=seed, progress=progress, eval_every=b.eval_every)
        torch.manual_seed(10_000 + seed)
        rl = common.evaluate_policy(r.policy, r.tokenizer, test, b.k_problems, b.samples, b.temperature)
        rl["greedy_rl_questions"] = _greedy(lab, lab.rl_problems)
        per_seed.append({"seed": seed, "sft": sft, "rl": rl, "seconds": t.read(), "sft_seconds": sft_s,
                         "rl_seconds": r.summary["seconds"],
                         "rl_curve": [{k: m[k] for k in ("step", "seconds", "accuracy", "kl", "eval_accuracy")
                                       if k in m} for m in r.metrics]})
        say(f"figure7 seed {seed}: greedy SFT {sft['greedy']:.3f} -> RL {rl['greedy']:.3f}; "
            f"Maj@{ks[-1]} {sft['maj_at_k'][-1]:.3f} -> {rl['maj_at_k'][-1]:.3f}; "
            f"Pass@{ks[-1]} {sft['pass_at_k'][-1]:.3f} -> {rl['pass_at_k'][-1]:.3f} ({t.read()['wall_s']} s)")
    result = summarise(ks, per_seed, preset, b, seeds, clock.read())
    key = preset.name if not budget else None  # only the full run is what the notebook may load
    common.write_result("figure7", out, result, plot(result), cache_key=key)
    return result


def _greedy(lab, problems):
    from ..evaluation import greedy_accuracy
    return greedy_accuracy(lab.policy, lab.tokenizer, problems)


def summarise(ks, per_seed, preset, b, seeds, seconds):
    """Means over seeds at the top level (the issue's keys), spread and per-seed values beside them."""
    result = {"experiment": "figure7", "preset": preset.name, "seeds": seeds, "budget": asdict(b), "k": ks}
    result["spread"] = {}
    for name in ("sft", "rl"):
        mean, std = common.mean_curves([s[name] for s in per_seed])
        result[name], result["spread"][name] = mean, std
    delta = {key: [common.stats([s["rl"][key][i] - s["sft"][key][i] for s in per_seed]) for i in range(len(ks))]
             for key in ("pass_at_k", "maj_at_k")}
    result["delta_rl_minus_sft"] = delta
    crossing = [k for k, d in zip(ks, delta["pass_at_k"]) if d["mean"] < 0]
    result["pass_at_k_rl_below_sft_from_k"] = crossing[0] if crossing else None
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    K = ks[-1]
    st = lambda name, key, i: common.stats([s[name][key][i] for s in per_seed])
    result["headline"] = {
        "greedy accuracy (held-out)": {n: common.fmt(common.stats([s[n]["greedy"] for s in per_seed]))
                                       for n in ("sft", "rl")},
        "Maj@1 = Pass@1": {n: common.fmt(st(n, "maj_at_k", 0)) for n in ("sft", "rl")},
        f"Maj@{K}": {n: common.fmt(st(n, "maj_at_k", -1)) for n in ("sft", "rl")},
        f"Pass@{K}": {n: common.fmt(st(n, "pass_at_k", -1)) for n in ("sft", "rl")},
        f"RL - SFT, Maj@{K}": common.fmt(delta["maj_at_k"][-1]),
        f"RL - SFT, Pass@{K}": common.fmt(delta["pass_at_k"][-1]),
        "RL Pass@K below SFT from K": result["pass_at_k_rl_below_sft_from_k"],
        "seeds": seeds, "wall_s": seconds["wall_s"], "cpu_s": seconds["cpu_s"],
    }
    return result


def plot(result):
    """Figure 7's two panels (Maj@K, Pass@K) with the mean over seeds and a band of ± one std."""
    k = result["k"]
    curves = {"SFT": result["sft"], "RL (GRPO)": result["rl"]}
    title = f"Figure 7 on the lab: {result['seeds']} seed(s), held-out questions, T = {result['budget']['temperature']}"
    fig = plot_pass_maj(k, curves, title=title)
    for ax, key in zip(fig.axes, ("maj_at_k", "pass_at_k")):
        for i, name in enumerate(("sft", "rl")):
            m = torch.tensor(result[name][key])
            s = torch.tensor(result["spread"][name][key])
            ax.fill_between(k, (m - s).tolist(), (m + s).tolist(), color=f"C{i}", alpha=0.15, lw=0)
    return fig
