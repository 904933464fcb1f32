"""Beyond the paper: the policy-gradient family after DeepSeekMath, at an equal budget on the lab.

GRPO (the baseline) and Dr. GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE++ and ReMax, each as METHODS
defines it (its data source, reward and GC, its paper's aggregation and KL), start from the same
SFT model per seed and train for the same number of steps on the same number of generated responses
per step (prompts_per_step x group_size; ReMax spends half of them on greedy baselines; DAPO's
dynamic sampling draws more, and the result says how many). Each batch is used for `epochs`
updates, so that on the second pi_old != pi_theta and the ratio-based parts (clips, GSPO's sequence
ratio, CISPO's weights) act at all. Two more arms isolate Dr. GRPO's two changes: its advantage
(no std) with GRPO's seq-mean-token-mean and with DAPO's group-token-mean (each question's tokens).

Measured: held-out greedy accuracy; the mean response length over training (Dr. GRPO's length bias);
the length of right and wrong answers sampled from the final policy; how often the clip bound
(fraction of tokens with GC = 0); the samples each step cost.
"""

from dataclasses import asdict, dataclass
from typing import Optional

import numpy as np
import torch

from ..evaluation import greedy_accuracy
from ..methods import METHODS
from ..rewards import rule_reward
from ..sampling import sample
from ..text import Text
from ..trainer import train
from . import common


@dataclass(frozen=True)
class Budget:
    """Sizes of the policy-family comparison."""

    sft_steps: Optional[int] = None
    """SFT steps of the starting model; None: the preset's own SFT checkpoint (the notebooks')"""
    rl_steps: int = 100
    """optimizer steps per run (each on a fresh batch)"""
    epochs: int = 2
    """updates per batch: 2 lets pi_old differ from pi_theta on the second, so clips can act"""
    methods: tuple = ("grpo", "dr-grpo", "dapo", "gspo", "cispo", "rloo", "reinforce++", "remax")
    """the methods compared, each as METHODS defines it"""
    aggregation_arms: tuple = ("seq-mean-token-mean", "group-token-mean")
    """extra Dr. GRPO arms with these aggregations (its own is the constant normaliser)"""
    n_test: int = 500
    """held-out questions for greedy accuracy"""
    length_questions: int = 128
    """held-out questions whose sampled answers' lengths are measured at the end"""
    length_samples: int = 8
    """answers sampled per question (temperature 1) for those lengths"""


PEER_METHODS = ("grpo", "sapo", "vespo", "luspo", "gmpo", "clip-cov", "kl-cov", "gpg", "opo", "grpo-passk", "gdpo")
"""GRPO and the members TRL and verl ship that the shipped peers result ran (rows of methods/table.py)."""
PEER_BUDGETS = {
    "cpu": Budget(methods=PEER_METHODS, aggregation_arms=()),
    "gpu": Budget(rl_steps=150, n_test=1000, length_questions=256, methods=PEER_METHODS, aggregation_arms=()),
    "tiny": Budget(rl_steps=2, epochs=2, methods=("grpo", "sapo", "gpg", "gdpo"), aggregation_arms=(), n_test=8,
                   length_questions=4, length_samples=2),
}

BUDGETS = {
    "cpu": Budget(),
    "gpu": Budget(rl_steps=150, n_test=1000, length_questions=256),
    "tiny": Budget(rl_steps=2, epochs=2, methods=("grpo", "dapo", "remax"), aggregation_arms=("group-token-mean",),
                   n_test=8, length_questions=4, length_samples=2),
}

OLD_AGGREGATIONS = {"token-mean": "group-token-mean"}
"""What an aggregation arm's name meant in a result written before the aggregations took verl's names (one without
"aggregation_names": "verl"), and its name now. The shipped results/policy-family-cpu.json is one: its arm
"dr-grpo (token-mean)" averaged over each question's tokens, group-token-mean now (token-mean is the batch's). A
shipped result is read as it was written; arm_label and budget_of map its labels."""


def arms(b):
    """(label, method name, overrides) of every arm."""
    out = [(name, name, {}) for name in b.methods]
    out += [(f"dr-grpo ({agg})", "dr-grpo", {"aggregation": agg}) for agg in b.aggregation_arms]
    return out


def _renamed(agg, result):
    """`agg` (a name now) as `result` spells it, or None where that result could not have run it."""
    if result.get("aggregation_names") == "verl":
        return agg
    if agg in OLD_AGGREGATIONS:  # that old name meant another aggregation: no arm of this one
        return None
    return {new: old for old, new in OLD_AGGREGATIONS.items()}.get(agg, agg)


def arm_label(result, label):
    """The label under which `result` holds the arm called `label` now (an older result's own label), or None."""
    if label.startswith("dr-grpo (") and label.endswith(")"):
        old = _renamed(label[len("dr-grpo ("):-1], result)
        label = None if old is None else f"dr-grpo ({old})"
    return label if label in result["arms"] else None


def budget_of(result):
    """The Budget a result was run with, its aggregation arms in today's names."""
    b = {k: tuple(v) if isinstance(v, list) else v for k, v in result["budget"].items()}
    if result.get("aggregation_names") != "verl":
        b["aggregation_arms"] = tuple(OLD_AGGREGATIONS.get(a, a) for a in b.get("aggregation_arms", ()))
    return Budget(**b)


@torch.no_grad()
def answer_lengths(policy, tokenizer, problems, samples, seed):
    """Mean response length (tokens, EOS included) of right and of wrong answers at temperature 1."""
    torch.manual_seed(seed)
    r = sample(policy, tokenizer, problems, group_size=samples, temperature=1.0)
    right = rule_reward(r.problems, r.texts).bool()
    n = r.mask.sum(-1).cpu()  # (B,)
    mean = lambda sel: float(n[sel].mean()) if sel.any() else None  # noqa: E731 None: no such answer
    return {"right": mean(right), "wrong": mean(~right), "right_frac": float(right.float().mean())}


def one_run(label, name, overrides, sp, seed, init, test, b, progress):
    """Train one arm from the seed's SFT model; what the comparison records of it."""
    t = common.Clock()
    lab = common.lab_on(sp, seed, init)
    r = train(name, lab=lab, steps=b.rl_steps, seed=seed, progress=progress, eval_every=0, epochs=b.epochs,
              **overrides)
    rows = r.metrics
    drawn = getattr(r.state.source, "drawn", None)  # DAPO's dynamic sampling: samples each batch cost
    return {"arm": label, "method": name, "overrides": overrides,
            "accuracy": greedy_accuracy(r.policy, r.tokenizer, test),
            "response_len": [m["response_len"] for m in rows],
            "reward": [m["reward"] for m in rows],
            "zero_gc_frac": float(np.mean([m["coef_zero_frac"] for m in rows])),
            "clip_frac": float(np.mean([m["clip_frac"] for m in rows])),
            "kl_last": rows[-1].get("kl"),
            "samples_per_step": float(np.mean(drawn)) if drawn else None,
            "lengths": answer_lengths(r.policy, r.tokenizer, test[: b.length_questions], b.length_samples, seed),
            **t.read()}


def run(preset="auto", out="results", seeds=3, progress=True, *, name="policy-family", budgets=None, **budget):
    """Run the comparison; write OUT/NAME.json and .png; return the result."""
    exp = common.begin(name, BUDGETS if budgets is None else budgets, preset, out, seeds, progress, budget)
    preset, b, say = exp.preset, exp.budget, exp.say
    if b.rl_steps < 1 or b.epochs < 1:
        raise ValueError(f"rl_steps and epochs must be >= 1, got {b.rl_steps} and {b.epochs}")
    unknown = [n for n in b.methods if n not in METHODS]
    if unknown:
        raise ValueError(f"unknown method(s) {unknown}; choose from {', '.join(METHODS)}")
    sp = exp.sft
    per_seed = []
    for seed, init, lab in exp.seed_labs():
        test = lab.test_problems[: b.n_test]
        row = {"seed": seed, "sft": greedy_accuracy(lab.policy, lab.tokenizer, test),
               "sft_lengths": answer_lengths(lab.policy, lab.tokenizer, test[: b.length_questions],
                                             b.length_samples, seed), "runs": {}}
        for label, method, overrides in arms(b):
            res = one_run(label, method, overrides, sp, seed, init, test, b, progress)
            row["runs"][label] = res
            say(f"{name} seed {seed} {label}: held-out {res['accuracy']:.3f} (SFT {row['sft']:.3f}), "
                f"length {res['response_len'][0]:.2f} -> {res['response_len'][-1]:.2f} ({res['wall_s']} s)")
        per_seed.append(row)
    return exp.finish(summarise(per_seed, preset, b, seeds, exp.clock.read(), name), plot)


def _stats(values):
    """common.stats of the seeds that have a value (a seed whose answers were all right has no wrong length)."""
    values = [v for v in values if v is not None]
    return common.stats(values) if values else None


def summarise(per_seed, preset, b, seeds, seconds, name="policy-family"):
    labels = [label for label, _, _ in arms(b)]
    rows_per_step = preset.rl.prompts_per_step * preset.rl.group_size
    result = {"experiment": name, "preset": preset.name, "seeds": seeds, "budget": asdict(b),
              "arms": labels, "rows_per_step": rows_per_step, "aggregation_names": "verl",
              "sft": common.stats([r["sft"] for r in per_seed]),
              "sft_lengths": {k: _stats([r["sft_lengths"][k] for r in per_seed]) for k in ("right", "wrong")},
              "table": {}, "response_len": {}}
    for label in labels:
        runs = [r["runs"][label] for r in per_seed]
        drawn = [x["samples_per_step"] for x in runs if x["samples_per_step"] is not None]
        result["table"][label] = {
            "method": runs[0]["method"], "paper": METHODS[runs[0]["method"]].paper,
            "accuracy": common.stats([x["accuracy"] for x in runs]),
            "gain": common.stats([x["accuracy"] - r["sft"] for x, r in zip(runs, per_seed)]),
            "len_first": common.stats([x["response_len"][0] for x in runs]),
            "len_last10": common.stats([float(np.mean(x["response_len"][-10:])) for x in runs]),
            "len_right": _stats([x["lengths"]["right"] for x in runs]),
            "len_wrong": _stats([x["lengths"]["wrong"] for x in runs]),
            "zero_gc_frac": common.stats([x["zero_gc_frac"] for x in runs]),
            "clip_frac": common.stats([x["clip_frac"] for x in runs]),
            "samples_per_step": common.stats(drawn) if drawn else {"mean": float(rows_per_step)},
            "wall_s": common.stats([x["wall_s"] for x in runs])}
        result["response_len"][label] = np.mean([x["response_len"] for x in runs], 0).tolist()
    result["per_seed"] = per_seed
    result["seconds"] = seconds
    head = {"SFT held-out accuracy": common.fmt(result["sft"])}
    for label in labels:
        t = result["table"][label]
        wrong = f"{t['len_wrong']['mean']:.2f}" if t["len_wrong"] else "-"
        head[label] = (f"{common.fmt(t['accuracy'])} held-out; length {t['len_first']['mean']:.2f} -> "
                       f"{t['len_last10']['mean']:.2f}; wrong answers {wrong} tokens")
    head.update(seeds=seeds, wall_s=seconds["wall_s"], cpu_s=seconds["cpu_s"])
    result["headline"] = head
    return result


def plot(result, window=10):
    """Left: each arm's held-out accuracy minus GRPO's on the same seed (dots: seeds; bar: mean +- std).
    Right: the mean response length over training, a rolling mean over `window` steps."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    labels = result["arms"]
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.6))
    base = np.array([s["runs"]["grpo"]["accuracy"] for s in result["per_seed"]]) if "grpo" in labels else None
    for i, a in enumerate(labels):
        acc = np.array([s["runs"][a]["accuracy"] for s in result["per_seed"]])
        d = acc - base if base is not None else acc
        ax1.barh(i, d.mean(), xerr=d.std(ddof=1) if len(d) > 1 else 0, color="C0", alpha=0.6)
        ax1.plot(d, [i] * len(d), "k.", ms=4)
    ax1.axvline(0, color="grey", lw=1)
    ax1.set_yticks(range(len(labels)), labels, fontsize=8)
    ax1.invert_yaxis()
    ax1.set(xlabel=Text("held-out accuracy minus GRPO's (same seed)") if base is not None else Text("held-out accuracy"),
            title=Text("accuracy after RL, paired by seed"))
    k = np.ones(window) / window
    for i, a in enumerate(labels):
        y = np.convolve(result["response_len"][a], k, mode="valid") if len(result["response_len"][a]) >= window \
            else np.asarray(result["response_len"][a])
        ax2.plot(np.arange(len(y)) + (len(result["response_len"][a]) - len(y)) + 1, y, color=f"C{i % 10}",
                 ls="-" if i < 10 else "--", lw=1.2, label=a)
    ax2.set(xlabel=Text("step"), ylabel=Text("response length (tokens),\nmean of the last {window} steps", window=window),
            title=Text("response length over training"))
    ax2.grid(alpha=0.3)
    ax2.legend(fontsize=6, ncol=2)
    fig.suptitle(Text("The policy family at an equal budget ({seeds} seed(s), {steps} steps x {epochs} updates)",
                      seeds=result["seeds"], steps=result["budget"]["rl_steps"], epochs=result["budget"]["epochs"]))
    fig.tight_layout()
    return fig


def run_peers(preset="auto", out="results", seeds=3, progress=True, **budget):
    """GRPO and the methods TRL and verl ship, at the same equal budget: OUT/policy-family-peers.json and .png."""
    return run(preset, out, seeds, progress, name="policy-family-peers", budgets=PEER_BUDGETS, **budget)
