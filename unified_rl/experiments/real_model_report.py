"""The real-model Figure 7 result read back: its headline, its figure, and its sentences as `Text` after a
JSON round trip (`records._revived`). The experiment itself: `real_model`."""

import numpy as np

from ..text import Text
from . import paired


def revive(result):
    """A result loaded from JSON with its verdicts and pictures rebuilt as `Text` (shown in the current
    language), each only where the rebuilt English equals the stored one (see `records._revived`)."""
    try:
        for arm in result["arms"]:
            c = result["change"][arm]
            for key in ("pass_at_k", "maj_at_k"):
                for x in c[key]:
                    x["verdict"] = Text(x["verdict"]) if x["verdict"] in (paired.RAISED, paired.LOWERED,
                                                                         paired.UNCLEAR) else x["verdict"]
            rebuilt = paired.picture([x["verdict"] for x in c["pass_at_k"]], [x["verdict"] for x in c["maj_at_k"]])
            if rebuilt["sentence"] == c["picture"]["sentence"]:
                c["picture"]["sentence"] = rebuilt["sentence"]
    except (KeyError, TypeError):
        pass  # another layout: shown as stored
    return result


def headline(result):
    """The numbers worth printing: per arm, Pass@K and Maj@K at K = 1 and the largest K, and the picture."""
    ks, K = result["k"], result["k"][-1]
    fmt = lambda c: f"{c['mean']:+.3f} [seeds {c['seeds_ci'][0]:+.3f}, {c['seeds_ci'][1]:+.3f}; questions " \
                    f"{c['questions_ci'][0]:+.3f}, {c['questions_ci'][1]:+.3f}] {c['verdict']}"  # noqa: E731
    budget = str(result["budget"]["max_new_tokens"])
    head = {"base model greedy accuracy": result["budgets_considered"][budget]["greedy"],
            "base model greedy replies cut": result["budgets_considered"][budget]["greedy_cut"],
            "base model sampled replies cut": result["mean"]["base"]["sampled_cut"],
            f"base model Pass@{K}": result["mean"]["base"]["pass_at_k"][-1]}
    for arm in result["arms"]:
        c = result["change"][arm]
        head[arm] = {f"{name}@{k} - base": fmt(c[key][ks.index(k)]) for k in (1, K)
                     for key, name in (("pass_at_k", "Pass"), ("maj_at_k", "Maj"))}
        head[arm]["picture"] = c["picture"]["sentence"]
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
