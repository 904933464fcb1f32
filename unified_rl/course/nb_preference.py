"""Helpers for the preference-family notebook (course/11_preference_family.ipynb).

`coefficient_maps` runs each registered method's coefficient, exactly as the trainer calls it, on
one synthetic batch laid out as its data source lays it out; the plots and tables show the
notebook's runs (fixed pairs measured with `nb_dpo.probed`) or the shipped equal-budget comparison
(experiments/preference_family.py).
"""

import matplotlib.pyplot as plt
import torch

from unified_rl.course.nb_policy_gradient import arms  # noqa: F401 (the training cell's progress bar)
from unified_rl.course.plots import draw_coefficients
from unified_rl.evaluation import greedy_accuracy
from unified_rl.methods import METHODS
from unified_rl.paradigm import step_from_tensors

FAMILY = ("dpo", "ipo", "simpo", "kto", "orpo")


def synthetic_rows(B=3, T=8, seed=0):
    """2B ragged rows (log-probs < 0, reference log-probs, 0/1 scores): pairs for DPO, IPO, SimPO and
    ORPO (B chosen, then B rejected), labelled and mismatched rows for KTO."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, T + 1, (2 * B,), generator=g)
    mask = (torch.arange(T)[None] < lengths[:, None]).double()  # (2B, T)
    logp = -(0.05 + 2 * torch.rand(2 * B, T, generator=g, dtype=torch.float64)) * mask
    logp_ref = (logp + 0.3 * torch.randn(2 * B, T, generator=g, dtype=torch.float64)).clamp(max=-0.01) * mask
    scores = torch.tensor([1.0, 0.0] * B, dtype=torch.float64)  # KTO's labels: the first B rows alternate
    return {"logp": logp, "logp_ref": logp_ref, "mask": mask, "scores": scores}


def coefficient_maps(rows, names=FAMILY, cfg=None):
    """{method: (2B, T) GC} from METHODS[name].coefficient on `rows`, as the trainer calls it."""
    from unified_rl.presets import RLConfig

    cfg = cfg or RLConfig()
    out = {}
    for name in names:
        m = METHODS[name]
        step = step_from_tensors(rows["logp"], rows["mask"], cfg, scores=rows["scores"], hp=m.hparams,
                                 logp_ref=rows["logp_ref"] if m.uses_ref else None)
        out[name] = m.coefficient(step)
    return out


def plot_coefficient_maps(maps, mask):
    """One heatmap per method: rows are responses, columns tokens; red pushes up, blue down."""
    fig, axes = plt.subplots(1, len(maps), figsize=(2.6 * len(maps), 2.6), sharey=True)
    B = len(mask) // 2
    for ax, (name, coef) in zip(axes, maps.items()):
        vmax = float(coef.abs().max()) or 1.0
        draw_coefficients(ax, coef, mask, f"{name}\nmax |GC| = {vmax:.3g}", vmax=vmax)
        ax.axhline(B - 0.5, color="k", lw=0.8)
    axes[0].set_ylabel("row (first half | second half)")
    fig.tight_layout()
    return fig


def plot_arms(runs, histories, acc0):
    """Held-out accuracy (left), and the chosen and rejected answers' mean log-probs per token on
    the fixed pairs (right: chosen solid, rejected dashed), one colour per arm."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.4))
    for i, (label, run) in enumerate(runs.items()):
        ev = [(m["step"], m["eval_accuracy"]) for m in run.metrics if "eval_accuracy" in m]
        ax1.plot([0] + [s for s, _ in ev], [acc0] + [a for _, a in ev], marker="o", ms=3, color=f"C{i}", label=label)
        h = histories[label]
        steps = [x["step"] for x in h]
        ax2.plot(steps, [x["logp_chosen"] for x in h], color=f"C{i}", label=f"{label}")
        ax2.plot(steps, [x["logp_rejected"] for x in h], color=f"C{i}", ls="--")
    ax1.set(xlabel="step", ylabel="held-out greedy accuracy", title="accuracy")
    ax2.set(xlabel="step", ylabel="mean log π per token", title="fixed pairs: chosen (solid), rejected (dashed)")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def arm_table(runs, histories, test):
    """Markdown: each arm's final held-out accuracy on `test` and how its fixed pairs moved."""
    head = ("| arm | held-out accuracy | x⁺ = Δ mean log π(o⁺) | x⁻ = Δ mean log π(o⁻) | margin | pairs with x⁺ < 0 |\n"
            "|---|---:|---:|---:|---:|---:|\n")
    rows = []
    for label, run in runs.items():
        h = histories[label][-1]  # pi_ref is the SFT model: x is how far each mean log-prob moved
        acc = greedy_accuracy(run.policy, run.tokenizer, test)
        rows.append(f"| {label} | {acc:.3f} | {h['x_chosen']:+.4f} | {h['x_rejected']:+.4f} | {h['margin']:+.4f} | "
                    f"{h['chosen_fell']:.2f} |")
    return head + "\n".join(rows)


def comparison_table(result):
    """Markdown: the shipped equal-budget comparison, mean ± std over seeds."""
    def f(s, d=3, sign=""):
        return f"{s['mean']:{sign}.{d}f} ± {s['std']:.{d}f}"

    head = ("| arm | method, settings | lr | held-out accuracy | per seed | vs SFT | x⁺ at the end | x⁻ at the end | "
            "pairs whose x⁺ a DPO step lowers |\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n")
    sft_seeds = " / ".join(f"{s['sft']:.3f}" for s in result["per_seed"])
    rows = [f"| SFT model | | | {f(result['sft'])} | {sft_seeds} | | 0 | 0 | "
            f"{f(result['alignment_sft']['x_plus_lowered'], 2)} |"]
    for arm, spec in result["arms"].items():
        e, settings = result["end"][arm], ", ".join(f"{k}={v}" for k, v in spec["settings"].items())
        seeds = " / ".join(f"{s['arms'][arm]['accuracy']:.3f}" for s in result["per_seed"])
        rows.append(f"| {arm} | {spec['method']}{', ' + settings if settings else ''} | {spec['lr']:g} | "
                    f"{f(result['accuracy'][arm])} | {seeds} | {f(result['change_vs_sft'][arm], sign='+')} | "
                    f"{f(e['x_chosen'], 4, '+')} | {f(e['x_rejected'], 4, '+')} | "
                    f"{f(result['alignment'][arm]['x_plus_lowered'], 2)} |")
    return head + "\n".join(rows)
