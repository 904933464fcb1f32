"""Helpers for the DPO notebook (course/04_dpo.ipynb): watch the log-ratios of fixed pairs move.

DPO's objective (DeepSeekMath eq 12) depends on a pair only through the margin x+ - x-, where
x = (1/|o|) sum_t log(pi_theta / pi_ref) is the length-normalised log-ratio. Nothing in it holds x+
up on its own: both can fall while the margin grows ("likelihood displacement", Razin et al. 2024,
arXiv 2410.08847; Pal et al. 2024, arXiv 2402.13228). To see it, fix a set of pairs before training
and measure x+, x- on them as the policy moves: `probed` wraps the DPO method's data source so
that the shared trainer measures them before each step, without any change to the trainer.
"""

import matplotlib.pyplot as plt

from unified_rl.experiments.pair_probe import _logps, fixed_pairs, pair_summary, probed  # noqa: F401

from unified_rl.course.i18n import t


def plot_pairs(histories, beta):
    """x+ and x- (left), the margin (middle) and the mean coefficient (right) on the fixed pairs
    against the step, one colour per run. histories: {run name: list of `pair_summary` dicts}."""
    fig, axes = plt.subplots(1, 3, figsize=(11, 3))
    for k, (name, history) in enumerate(histories.items()):
        steps, col = [h["step"] for h in history], f"C{k}"
        axes[0].plot(steps, [h["x_chosen"] for h in history], color=col, label=t("nb.dpo.x_chosen", name=name))
        axes[0].plot(steps, [h["x_rejected"] for h in history], color=col, ls="--", label=t("nb.dpo.x_rejected", name=name))
        axes[1].plot(steps, [h["margin"] for h in history], color=col, label=name)
        axes[2].plot(steps, [h["gc"] for h in history], color=col, label=name)
    axes[0].axhline(0, color="0.5", lw=0.8)
    axes[2].axhline(beta / 2, color="0.5", lw=0.8, ls=":")
    titles = (t("nb.dpo.log_ratios"), t("nb.dpo.margin"), t("nb.dpo.mean_gc", half_beta=beta / 2))
    for ax, title in zip(axes, titles):
        ax.set(xlabel=t("nb.step"), title=title)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig
