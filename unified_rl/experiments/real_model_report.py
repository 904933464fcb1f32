"""The real-model Figure 7 result read back: what the course's rule derives from its stored per-seed numbers
(`verdicts`: the verdicts at the primary K, the headroom, the headline), its figure, and its sentences as
`Text` after a JSON round trip (`records._revived`). The experiment itself: `real_model`."""

import numpy as np

from ..text import Text
from . import paired, verdicts


def right_counts(result, model="base"):
    """(S, Q) numbers of right answers among each question's samples, per seed, from the stored tallies."""
    return np.array([[sum(c for a, c in t if a == q["answer"]) for t, q in zip(s[model]["tallies"], result["questions"])]
                     for s in result["per_seed"]])


def derive(result):
    """`result` with what the rule reads off its per-seed numbers (re)computed: each K's 95 % interval over
    seeds (descriptive), the verdicts at the primary K (simultaneous over the arms and both metrics), the
    base model's Pass@K headroom and the headline. Nothing measured is recomputed."""
    ks = result["k"]
    K = verdicts.primary_k(ks)
    i, rows = ks.index(K), {}
    for arm in result["arms"]:
        c = result["change"][arm]
        c.pop("picture", None)  # an older layout's reading at the largest K: the rule reads the primary K
        for key, _ in verdicts.METRICS:
            for x in c[key]:
                x.pop("verdict", None)  # every K but the primary one is descriptive
                x["seeds_ci"] = list(paired.seed_interval(x["per_seed"]))
            rows[arm, key] = (c[key][i]["per_seed"], [s["base"][key][i] for s in result["per_seed"]])
    decided = verdicts.family(rows)
    arms = {}
    for arm in result["arms"]:
        arms[arm] = {key: decided[arm, key] for key, _ in verdicts.METRICS}
        arms[arm]["sentence"] = verdicts.sentence(arms[arm]["maj_at_k"]["verdict"], arms[arm]["pass_at_k"]["verdict"], K)
    result["verdicts"] = {"k": K, "arms": arms}
    result["headroom"] = verdicts.headroom(right_counts(result), result["budget"]["samples"], ks)
    result["headline"] = headline(result)
    return result


def revive(result):
    """A result loaded from JSON with `derive`'s parts rebuilt from its stored numbers by the current rule,
    its sentences `Text` (shown in the current language); a layout it cannot read is shown as stored."""
    try:
        return derive(result)
    except (KeyError, TypeError, ValueError, IndexError):
        return result


def _ci(lo_hi):
    return f"[{lo_hi[0]:+.3f}, {lo_hi[1]:+.3f}]"


def headline(result):
    """The numbers worth printing: per arm, Pass@K and Maj@K at K = 1, the primary K and the largest K with
    both 95 % intervals (descriptive), and the verdicts at the primary K with their simultaneous intervals."""
    ks, K = result["k"], result["verdicts"]["k"]
    fmt = lambda c: f"{c['mean']:+.3f} [seeds {c['seeds_ci'][0]:+.3f}, {c['seeds_ci'][1]:+.3f}; questions " \
                    f"{c['questions_ci'][0]:+.3f}, {c['questions_ci'][1]:+.3f}]"  # noqa: E731
    budget = str(result["budget"]["max_new_tokens"])
    head = {"base model greedy accuracy": result["budgets_considered"][budget]["greedy"],
            "base model greedy replies cut": result["budgets_considered"][budget]["greedy_cut"],
            "base model sampled replies cut": result["mean"]["base"]["sampled_cut"],
            f"base model Pass@{ks[-1]}": result["mean"]["base"]["pass_at_k"][-1]}
    for arm in result["arms"]:
        c, v = result["change"][arm], result["verdicts"]["arms"][arm]
        head[arm] = {f"{name}@{k} - base": fmt(c[key][ks.index(k)]) for k in sorted({1, K, ks[-1]})
                     for key, name in (("pass_at_k", "Pass"), ("maj_at_k", "Maj"))}
        for key, name in verdicts.METRICS:
            x = v[key]
            head[arm][f"verdict, {name}@{K}"] = f"{x['mean']:+.3f} {_ci(x['interval'])} ({x['level']:.2%}) {x['verdict']}"
        head[arm]["verdict"] = v["sentence"]
    head.update(seeds=result["seeds"], wall_s=result["seconds"]["wall_s"], cpu_s=result["seconds"]["cpu_s"])
    return head


def plot(result, ax_pair=None):
    """Figure 7's two panels on the real model: Maj@K and Pass@K of the base model and each arm (means
    over seeds; the band is the 95 % interval over seeds of each arm's difference, placed on the arm)."""
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    ks = result["k"]
    if ax_pair is None:
        fig, ax_pair = plt.subplots(1, 2, figsize=(9, 3.4))
    for ax, key, label in zip(ax_pair, ("maj_at_k", "pass_at_k"), ("Maj@K", "Pass@K")):
        base = np.array(result["mean"]["base"][key])
        ax.plot(ks, base, marker="o", color="grey", label=Text("base model"))
        for i, arm in enumerate(result["arms"]):
            ch = result["change"][arm][key]
            lo, hi = np.array([c["seeds_ci"][0] for c in ch]), np.array([c["seeds_ci"][1] for c in ch])
            ax.plot(ks, base + [c["mean"] for c in ch], marker="o", color=f"C{i}", label=arm)
            ax.fill_between(ks, base + lo, base + hi, color=f"C{i}", alpha=0.15, lw=0)
        ax.set_xscale("log", base=2)
        ax.set_xticks(ks, [str(k) for k in ks])
        ax.set(xlabel="K", title=label)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    b = result["budget"]
    fig = ax_pair[0].figure
    fig.suptitle(Text("Figure 7 on SmolLM2-135M-Instruct: {seeds} seed(s), {n} held-out sums, {samples} samples, "
                      "T = {temperature}", seeds=result["seeds"], n=b["n_test"], samples=b["samples"],
                      temperature=b["temperature"]), fontsize=9)
    fig.tight_layout()
    return fig
