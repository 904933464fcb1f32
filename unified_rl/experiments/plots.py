"""Figures the §5.2 experiments draw (the course shows them too): Pass@K and Maj@K against K.

Each function returns a matplotlib Figure and leaves showing it to the caller.
References: DeepSeekMath (arXiv 2402.03300) Figure 7 for `plot_pass_maj`.
Labels and titles are `unified_rl.text.Text`: English here, Chinese in the course's Chinese edition.
"""

from ..text import Text


def plot_pass_maj(k, curves, title=None):
    """Pass@K and Maj@K against K on a log2 axis, two panels, as in DeepSeekMath Figure 7.

    curves: {name: {"pass_at_k": [...], "maj_at_k": [...]}}, each list aligned with k.
    """
    import matplotlib.pyplot as plt  # here, not at the top: running an experiment needs no matplotlib
    k = [int(v) for v in k]
    if not k or any(v < 1 for v in k):
        raise ValueError(f"k must be a non-empty list of positive ints, got {k}")
    fig, axes = plt.subplots(1, 2, figsize=(7, 3), sharey=True)
    for ax, key, label in zip(axes, ("maj_at_k", "pass_at_k"), ("Maj@K", "Pass@K")):
        for name, c in curves.items():
            if key not in c:
                continue
            if len(c[key]) != len(k):
                raise ValueError(f"curves[{name!r}][{key!r}] has {len(c[key])} values for {len(k)} values of k")
            ax.plot(k, [float(v) for v in c[key]], marker="o", label=name)
        ax.set_xscale("log", base=2)
        ax.set_xticks(k, [str(v) for v in k])
        ax.set(xlabel=Text("K: samples per question"), title=label)
        ax.grid(alpha=0.3)
    axes[0].set_ylabel(Text("accuracy"))
    axes[1].legend(fontsize=8)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig
