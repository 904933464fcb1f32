"""Plots the notebooks share: training curves, runs side by side, Pass@K vs Maj@K, coefficient heatmaps.

Each function returns a matplotlib Figure and leaves showing it to the notebook (`plt.show()`).
They plot what tells the story (reward, accuracy, KL, clip fraction, Pass@K, Maj@K), not the
surrogate loss, whose value means nothing (Spinning Up, "Intro to Policy Optimization").
Metric dicts come from the trainer, one per step; keys missing from them are skipped, not errors.
`plot_pass_maj` (DeepSeekMath Figure 7) lives with the experiments that draw it and is re-exported here.
"""

import math

import matplotlib
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.ticker import MaxNLocator
import torch

from ..experiments.plots import plot_pass_maj  # noqa: F401  (re-exported for the notebooks)
from .i18n import Msg, t, text

# metric key -> its label, shown in the current language (a Msg: str() looks it up)
LABELS = {k: Msg(f"plot.label.{k}") for k in (
    "reward", "accuracy", "kl", "clip_frac", "coef_mean", "coef_std", "seconds", "loss", "eval_accuracy",
    "value_loss", "coef_zero_frac", "response_len")}
LABELS["groups with no signal"] = Msg("plot.label.no_signal")  # the key notebook 06 gives nb_grpo.add_history


def label(key):
    """The label of a metric key in the current language (the key itself if it has none)."""
    return text(LABELS.get(key, key))


def _series(metrics, key):
    """(steps, values) of one metric, skipping steps that lack it; x is `step` if present, else the index."""
    xs, ys = [], []
    for i, m in enumerate(metrics):
        v = m.get(key)
        if v is None:
            continue
        v = float(v.item() if torch.is_tensor(v) else v)
        if math.isfinite(v):
            xs.append(m.get("step", i))
            ys.append(v)
    return xs, ys


def _check_metrics(metrics):
    if not isinstance(metrics, (list, tuple)) or not all(isinstance(m, dict) for m in metrics):
        raise ValueError("metrics must be a list of per-step dicts, e.g. [{'step': 0, 'reward': 0.1}, ...]")


def plot_training(metrics, keys=("accuracy", "reward", "kl"), title=None):
    """One panel per metric key against the step; keys absent from every step are skipped."""
    _check_metrics(metrics)
    present = [k for k in keys if _series(metrics, k)[0]]
    fig, axes = plt.subplots(1, max(len(present), 1), figsize=(3.2 * max(len(present), 1), 2.8), squeeze=False)
    for ax, key in zip(axes[0], present):
        ax.plot(*_series(metrics, key), color="C0")
        ax.set(xlabel=t("plot.step"), title=label(key))
        ax.grid(alpha=0.3)
    if not present:
        axes[0, 0].text(0.5, 0.5, t("plot.none_of", keys=list(keys)), ha="center", va="center")
        axes[0, 0].set_axis_off()
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def compare_runs(runs, key="accuracy", title=None):
    """One metric of several runs on one axis: {name: metrics}."""
    if not isinstance(runs, dict) or not runs:
        raise ValueError("runs must be a non-empty dict {name: list of per-step metric dicts}")
    fig, ax = plt.subplots(figsize=(6, 3))
    plotted = 0
    for name, metrics in runs.items():
        _check_metrics(metrics)
        xs, ys = _series(metrics, key)
        if xs:
            ax.plot(xs, ys, label=name)
            plotted += 1
    ax.set(xlabel=t("plot.step"), ylabel=label(key), title=title or label(key))
    ax.grid(alpha=0.3)
    if plotted:
        ax.legend(fontsize=8)
    fig.tight_layout()
    return fig


def draw_coefficients(ax, coef, mask, title="", vmax=None):
    """Heatmap of a (B, T) coefficient on ax: rows are samples, columns tokens; grey off the mask."""
    coef = torch.as_tensor(coef).detach().double().cpu()
    mask = torch.as_tensor(mask).detach().cpu()
    if coef.dim() != 2 or coef.shape != mask.shape:
        raise ValueError(f"coef {tuple(coef.shape)} and mask {tuple(mask.shape)} must be the same (B, T)")
    data = np.ma.masked_where(mask.numpy() == 0, coef.numpy())
    if vmax is None:
        vmax = float(coef.abs().max()) or 1.0  # symmetric: red pushes up, blue pushes down
    # padding / prompt in grey: no coefficient at all, unlike a GC of 0 (white)
    cmap = matplotlib.colormaps["RdBu_r"].with_extremes(bad="#b0b0b0")
    im = ax.imshow(data, cmap=cmap, vmin=-vmax, vmax=vmax, aspect="auto", interpolation="nearest")
    ax.set(xlabel=t("plot.token_t"), ylabel=t("plot.sample_i"), title=title)
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return im


def plot_coefficients(coef, mask, title="GC(q, o, t)"):  # a formula: the same in every language
    """Heatmap of one method's coefficients, with a colour bar."""
    fig, ax = plt.subplots(figsize=(6, 3))
    im = draw_coefficients(ax, coef, mask, title)
    fig.colorbar(im, ax=ax)
    fig.tight_layout()
    return fig
