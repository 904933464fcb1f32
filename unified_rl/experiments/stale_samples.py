"""Learning from stale samples on the lab: GRPO whose batches a copy of the policy of k steps ago draws, with no
correction, with TIS and with MIS, at one budget.

An asynchronous trainer samples with weights some updates old (data/samplers.py: `sampler_lag` = k, the batch drawn
by the policy of step max(s - k, 0), its log-probs recorded). pi_old is the learner at the batch's start, so with one
update per batch GRPO's ratio is 1 and its clip never acts: uncorrected, each stale token is weighed as if the
learner had drawn it. TIS weighs each token's GC by min(pi_old / pi_sampler, 2), MIS zeroes the GC of the tokens
whose ratio leaves [0.5, 5] (parts/sampler_corrections.py, their default bounds). Per seed, from the same SFT model
(figure7's early stop), every (lag, correction) arm trains `rl_steps` steps on the same number of replies per step
with the same seed; each arm's greedy answers to the `n_test` held-out questions are stored, and its greedy accuracy
on the preset's eval questions every `eval_every` steps.

Decided (the course's rule, `field_arms`), at the largest lag only (`primary_lag`, fixed before the run: the lag
where staleness should matter most): none at lag k - none at lag 0 (what staleness costs), tis - none and
mis - none at lag k (what a correction changes). Every other lag's comparisons are descriptive. At lag 0 the sampler
is the learner, so the corrections' ratio is 1 up to the sampler's float error: those arms are a check.
"""

from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np

from ..methods import METHODS
from ..methods.table import GRPO_MASKS, recompose
from ..text import Text
from ..trainer import train
from . import common, field_arms


@dataclass(frozen=True)
class Budget:
    """Sizes of the stale-samples comparison."""

    sft_steps: Optional[int] = 175
    """SFT steps of the starting model (figure7's early stop: mid-range accuracy)"""
    rl_steps: int = 60
    """GRPO steps of each arm"""
    lags: tuple = (0, 1, 2, 4, 8)
    """the samplers' staleness in steps"""
    corrections: tuple = ("none", "tis", "mis")
    """no correction, TIS (min(rho_s, 2)), MIS (the band [0.5, 5])"""
    primary_lag: int = 8
    """the lag whose comparisons get verdicts"""
    eval_every: int = 10
    """steps between greedy evaluations on the preset's eval questions"""
    n_test: int = 500
    """held-out questions every model answers at the end"""
    bootstrap: int = 2000
    """bootstrap resamples of the questions"""


BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(sft_steps=None, rl_steps=100, n_test=1000),
    "tiny": Budget(sft_steps=None, rl_steps=3, lags=(0, 2), primary_lag=2, eval_every=3, n_test=8, bootstrap=50),
}
CORRECTIONS = ("none", "tis", "mis")


def method_of(correction):
    """GRPO, or GRPO with the tis or mis part among its masks."""
    if correction == "none":
        return METHODS["grpo"]
    if correction in ("tis", "mis"):
        return recompose("grpo", masks=GRPO_MASKS + (correction,))
    raise ValueError(f"unknown correction {correction!r}; choose from {CORRECTIONS}")


def label(correction, lag):
    return f"{correction} lag {lag}"


def comparisons(b):
    """(label, base arm, arm) of every comparison, and the labels decided (those at the primary lag)."""
    out = [(f"{label(c, k)} - start", "start", label(c, k)) for k in b["lags"] for c in b["corrections"]]
    decided = []
    for k in b["lags"]:
        if k == 0:
            continue
        here = []
        if "none" in b["corrections"] and 0 in b["lags"]:
            here.append((f"none lag {k} - none lag 0", label("none", 0), label("none", k)))
        here += [(f"{c} - none, lag {k}", label("none", k), label(c, k)) for c in b["corrections"] if c != "none"
                 and "none" in b["corrections"]]
        out += here
        if k == b["primary_lag"]:
            decided = [x[0] for x in here]
    return out, decided


def run(preset="auto", out="results", seeds=3, progress=True, **budget):
    """Run the comparison; write OUT/stale-samples.json and .png; return the result."""
    exp = common.begin("stale-samples", BUDGETS, preset, out, seeds, progress, budget)
    preset, b, say = exp.preset, exp.budget, exp.say
    if b.rl_steps < 1 or b.n_test < 2 or any(isinstance(k, bool) or not isinstance(k, int) or k < 0 for k in b.lags):
        raise ValueError(f"need rl_steps >= 1, n_test >= 2 and whole lags >= 0, got {b.rl_steps}, {b.n_test}, {b.lags}")
    if b.primary_lag not in b.lags or any(c not in CORRECTIONS for c in b.corrections):
        raise ValueError(f"primary_lag must be one of lags {b.lags} and corrections some of {CORRECTIONS}")
    sp, per_seed = exp.sft, []
    rows = sp.rl.prompts_per_step * sp.rl.group_size
    for seed, init, lab in exp.seed_labs():
        test = lab.test_problems[: b.n_test]
        row = {"seed": seed, "right": {"start": field_arms.greedy_right(lab.policy, lab.tokenizer, test)}, "runs": {}}
        for k in b.lags:
            for c in b.corrections:
                clock = common.Clock()
                r = train(method_of(c), lab=common.lab_on(sp, seed, init), steps=b.rl_steps, seed=seed,
                          progress=progress, eval_every=b.eval_every, sampler_lag=k)
                row["right"][label(c, k)] = field_arms.greedy_right(r.policy, r.tokenizer, test)
                row["runs"][label(c, k)] = {
                    "curve": [{"step": m["step"], "eval_accuracy": m["eval_accuracy"]} for m in r.metrics
                              if "eval_accuracy" in m],
                    "zero_gc_frac": float(np.mean([m["coef_zero_frac"] for m in r.metrics])),
                    "sampled_tokens": float(sum(m["response_len"] for m in r.metrics) * rows), **clock.read()}
        per_seed.append(row)
        say(f"stale-samples seed {seed}: start {np.mean(row['right']['start']):.3f}; " + ", ".join(
            f"{a} {np.mean(v):.3f}" for a, v in row["right"].items() if a != "start"))
    result = {"experiment": "stale-samples", "preset": preset.name, "seeds": seeds, "budget": asdict(b),
              "arms": ["start"] + [label(c, k) for k in b.lags for c in b.corrections], "per_seed": per_seed,
              "seconds": exp.clock.read()}
    return exp.finish(derive(result), plot)


def derive(result):
    """`result` with the accuracies, comparisons, verdicts, curves and headline recomputed from its stored per-seed
    answers."""
    b, per_seed = result["budget"], result["per_seed"]
    comps, decided = comparisons(b)
    derived, head = field_arms.summary(per_seed, result["arms"], comps, decided, b["bootstrap"])
    result.update(derived)
    arms = [a for a in result["arms"] if a != "start"]
    result["curves"] = {a: {k: np.mean([[p[k] for p in s["runs"][a]["curve"]] for s in per_seed], 0).tolist()
                            for k in ("step", "eval_accuracy")} for a in arms}
    result["zero_gc_frac"] = {a: common.stats([s["runs"][a]["zero_gc_frac"] for s in per_seed]) for a in arms}
    keep = {k: v for k, v in head.items() if not k.endswith(" - start")}  # the per-arm accuracies say it
    keep["share of tokens with GC 0 (mean over steps)"] = {a: f"{v['mean']:.3f}" for a, v in result["zero_gc_frac"].items()}
    keep.update(seeds=result["seeds"], wall_s=result["seconds"]["wall_s"], cpu_s=result["seconds"]["cpu_s"])
    result["headline"] = keep
    return result


def revive(result):
    """A loaded result with its derived parts rebuilt from its stored numbers (`field_arms.revive`)."""
    return field_arms.revive(result, derive)


def plot(result):
    """Left: held-out greedy accuracy against the lag per correction (mean over seeds; dots: seeds). Right: the
    comparisons at every lag with their intervals over seeds."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    b = result["budget"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4.2))
    for i, c in enumerate(b["corrections"]):
        x = np.arange(len(b["lags"])) + (i - 1) * 0.08
        acc = [result["accuracy"][label(c, k)] for k in b["lags"]]
        ax1.plot(x, [a["mean"] for a in acc], marker="o", color=f"C{i}", label=c)
        for xi, a in zip(x, acc):
            ax1.plot([xi] * len(a["per_seed"]), a["per_seed"], ".", color=f"C{i}", ms=3, alpha=0.5)
    ax1.axhline(result["accuracy"]["start"]["mean"], color="grey", ls=":", lw=1, label=Text("SFT (start)"))
    ax1.set_xticks(range(len(b["lags"])), [str(k) for k in b["lags"]])
    ax1.set(xlabel=Text("sampler lag (steps)"), ylabel=Text("held-out greedy accuracy"),
            title=Text("GRPO, {steps} steps, on stale samples", steps=b["rl_steps"]))
    ax1.grid(alpha=0.3)
    ax1.legend(fontsize=7)
    field_arms.plot_changes(ax2, result, [k for k in result["changes"] if not k.endswith(" - start")])
    fig.suptitle(Text("Stale samples on the lab: {seeds} seed(s)", seeds=result["seeds"]), fontsize=9)
    fig.tight_layout()
    return fig
