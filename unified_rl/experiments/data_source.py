"""DeepSeekMath §5.2.3, data source: RL on the SFT questions vs on out-of-distribution questions.

The paper used only questions from the instruction-tuning stage, and names this as a possible reason
its RL improved Maj@K but not Pass@K; it proposes RL on out-of-distribution prompts. Per seed, from
one SFT model, GRPO trains with the same budget on one of three question pools:

- `sft-questions`:    the SFT set's own questions (what DeepSeekMath did);
- `unseen-questions`: new questions of the same difficulty, never seen in SFT;
- `harder-questions`: questions with one more digit per operand (`TaskConfig.harder()`), a
                      difficulty the SFT set never showed;
- `harder-process`:   the same harder questions with process supervision (`grpo-process`): a right
                      column sum earns reward even when the final answer is wrong, so a question the
                      model never solves can still give a signal.

Each model is then evaluated on held-out questions of both difficulties: greedy accuracy, and
Pass@K / Maj@K at temperature 0.7.
"""

from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
import torch

from ..sampling import sample
from ..task import make_splits, parse_steps
from ..text import Text
from ..trainer import train
from . import common

ARMS = {  # arm -> (question pool, method)
    "sft-questions": ("sft", "grpo"),
    "unseen-questions": ("unseen", "grpo"),
    "harder-questions": ("harder", "grpo"),
    "harder-process": ("harder", "grpo-process"),
}
TESTS = ("in-distribution", "harder")


@dataclass(frozen=True)
class Budget:
    """Sizes of the data-source experiment."""

    sft_steps: Optional[int] = None
    """SFT steps of the starting model; None: the preset's own SFT checkpoint, the one every notebook
    starts RL from (stopped early, so RL has something to learn)"""
    rl_steps: int = 60
    """GRPO steps per arm"""
    extra_digits: int = 1
    """how many digits per operand the harder questions add"""
    n_harder: int = 2000
    """size of the pool of harder training questions"""
    n_test: int = 500
    """held-out questions per difficulty for greedy accuracy"""
    k_problems: int = 100
    """held-out questions per difficulty for Pass@K / Maj@K"""
    samples: int = 32
    """samples per question for Pass@K / Maj@K (K = 1, 2, ..., samples)"""
    temperature: float = 0.7
    """evaluation sampling temperature"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(rl_steps=200, n_harder=20000, n_test=1000, k_problems=300, samples=64),
    "tiny": Budget(rl_steps=2, n_harder=32, n_test=8, k_problems=4, samples=4),
}


def pools(lab, preset, b):
    """The question pools and the two held-out test sets (both disjoint from every pool)."""
    hard_task = preset.task.harder(b.extra_digits)
    common.check_fits(preset, hard_task)
    hard_pool, hard_test = make_splits(hard_task, b.n_harder, b.n_test, seed=preset.seed)
    unseen = lab.rl_problems[preset.n_sft:]
    if not unseen:
        raise ValueError(f"the preset's RL pool (n_rl={preset.n_rl}) has no questions beyond the "
                         f"n_sft={preset.n_sft} SFT questions; raise n_rl")
    pools = {"sft": lab.sft_problems, "unseen": unseen, "harder": hard_pool}
    tests = {"in-distribution": lab.test_problems[: b.n_test], "harder": hard_test}
    return pools, tests


def step_accuracy(policy, tokenizer, problems):
    """Mean fraction of the reference's column-sum steps that the greedy response gets right, in place."""
    r = sample(policy, tokenizer, problems, greedy=True)
    right = [sum(k < len(got) and got[k] == want for k, want in enumerate(p.steps)) / len(p.steps)
             for p, got in zip(r.problems, map(parse_steps, r.texts))]
    return float(np.mean(right))


def _evaluate(policy, tokenizer, tests, b, seed):
    out = {}
    for name, problems in tests.items():
        torch.manual_seed(20_000 + seed)
        out[name] = common.evaluate_policy(policy, tokenizer, problems, b.k_problems, b.samples, b.temperature)
        out[name]["step_accuracy"] = step_accuracy(policy, tokenizer, problems)  # partial credit, greedy
    return out


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the data-source experiment; write OUT/data-source.json and .png; return the result."""
    exp = common.begin("data-source", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say, sp = exp.preset, exp.budget, exp.say, exp.sft
    per_seed = []
    for seed, init, lab in exp.seed_labs():
        qs, tests = pools(lab, sp, b)
        row = {"seed": seed, "sft": _evaluate(lab.policy, lab.tokenizer, tests, b, seed), "train": {}}
        for arm, (pool, method) in ARMS.items():
            t = common.Clock()
            lab = common.lab_on(sp, seed, init, rl_problems=qs[pool])
            r = train(method, lab=lab, steps=b.rl_steps, seed=seed, progress=progress, eval_every=0)
            row[arm] = _evaluate(r.policy, r.tokenizer, tests, b, seed)
            acc = [m["accuracy"] for m in r.metrics]
            row["train"][arm] = {"pool": pool, "method": method, "batch_accuracy_first": float(np.mean(acc[:5])),
                                 "batch_accuracy_last": float(np.mean(acc[-5:])),
                                 "kl_last": r.metrics[-1].get("kl"), **t.read()}
            say(f"data-source seed {seed} {arm}: greedy in-dist {row[arm]['in-distribution']['greedy']:.3f} "
                f"(SFT {row['sft']['in-distribution']['greedy']:.3f}), harder {row[arm]['harder']['greedy']:.3f} "
                f"(SFT {row['sft']['harder']['greedy']:.3f}) ({t.read()['wall_s']} s)")
        per_seed.append(row)
    return exp.finish(summarise(per_seed, preset, b, seeds, exp.clock.read(), common.powers_of_two(b.samples)),
                      plot)


def summarise(per_seed, preset, b, seeds, seconds, ks):
    result = {"experiment": "data-source", "preset": preset.name, "seeds": seeds, "budget": asdict(b),
              "k": ks, "arms": list(ARMS), "tests": list(TESTS), "mean": {}, "spread": {}}
    for model in ("sft", *ARMS):
        result["mean"][model], result["spread"][model] = {}, {}
        for test in TESTS:
            m, s = common.mean_curves([row[model][test] for row in per_seed])
            result["mean"][model][test], result["spread"][model][test] = m, s
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    K = ks[-1]
    head = {}
    for model in ("sft", *ARMS):
        for test in TESTS:
            rows = [row[model][test] for row in per_seed]
            head[f"{model} on {test}"] = {
                "greedy": common.fmt(common.stats([x["greedy"] for x in rows])),
                "steps right (greedy)": common.fmt(common.stats([x["step_accuracy"] for x in rows])),
                f"Maj@{K}": common.fmt(common.stats([x["maj_at_k"][-1] for x in rows])),
                f"Pass@{K}": common.fmt(common.stats([x["pass_at_k"][-1] for x in rows]))}
    head.update(seeds=seeds, wall_s=seconds["wall_s"], cpu_s=seconds["cpu_s"])
    result["headline"] = head
    return result


def plot(result):
    """Top: Maj@K and Pass@K on the in-distribution test, one line per pool. Bottom: greedy accuracy
    and the fraction of column-sum steps right, per model, on both test sets (bars: mean; ticks: ± std)."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    k = result["k"]
    models = ("sft", *ARMS)
    fig, axes = plt.subplots(2, 2, figsize=(8.5, 5.8))
    test = "in-distribution"
    for c, (key, label) in enumerate((("maj_at_k", "Maj@K"), ("pass_at_k", "Pass@K"))):
        ax = axes[0, c]
        for i, model in enumerate(models):
            m = np.array(result["mean"][model][test][key])
            s = np.array(result["spread"][model][test][key])
            ax.plot(k, m, marker="o", ms=3, color=f"C{i}", label="SFT" if model == "sft" else f"GRPO: {model}")
            ax.fill_between(k, m - s, m + s, color=f"C{i}", alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_xticks(k, [str(v) for v in k])
        ax.set(title=Text("{label}, {test} held-out", label=label, test=Text(test)),
               xlabel=Text("K: samples per question"), ylim=(-0.02, 1.02))
        ax.grid(alpha=0.3)
    axes[0, 0].set_ylabel(Text("accuracy"))
    axes[0, 1].legend(fontsize=7)
    width = 0.8 / len(models)
    for ax, key, title in ((axes[1, 0], "greedy", Text("greedy accuracy")),
                           (axes[1, 1], "step_accuracy", Text("steps right (greedy)"))):
        for i, model in enumerate(models):
            xs = np.arange(len(TESTS)) + (i - (len(models) - 1) / 2) * width
            m = [result["mean"][model][t].get(key, np.nan) for t in TESTS]
            s = [result["spread"][model][t].get(key, 0.0) for t in TESTS]
            ax.bar(xs, m, width, yerr=s, color=f"C{i}", capsize=2)
        ax.set_xticks(range(len(TESTS)), [Text("{test} held-out", test=Text(t)) for t in TESTS])
        ax.set(title=title, ylim=(0, 1.02))
        ax.grid(alpha=0.3, axis="y")
    fig.suptitle(Text("Data source: GRPO on different question pools ({seeds} seed(s))", seeds=result["seeds"]))
    fig.tight_layout()
    return fig
