"""Helpers for notebook 10 (the policy family after DeepSeekMath): tables and measurements, not methods.

- `method_table`: METHODS' (data source, reward, GC, paper) rows as Markdown.
- `std_weights`: how much total push a question gets with and without GRPO's division by the std.
- `one_update_ratios`: token and sequence ratios pi_theta / pi_old after one update (GSPO's point).
- `kl_markdown`: kl.study's exact comparison as a table.
- `comparison_table` / `plot_comparison`: the policy-family experiment's result.
Every number comes from the package (`advantages`, `coefficients`, `kl.study`, `experiments`).
"""

import copy

import matplotlib.pyplot as plt
import numpy as np
import torch

from unified_rl import advantages, coefficients
from unified_rl.paradigm import surrogate_loss
from unified_rl.wiring import policy_logp


def _name(obj):
    return getattr(obj, "__name__", None) or type(obj).__name__


def method_table(methods, names):
    """A Markdown table of METHODS' components for `names`."""
    rows = ["| method | data source | reward | GC | paper |", "|---|---|---|---|---|"]
    for n in names:
        m = methods[n]
        rows.append(f"| `{n}` | `{_name(m.data_source)}` | `{_name(m.reward)}` | `{_name(m.coefficient)}` | {m.paper} |")
    return "\n".join(rows)


def std_weights(G):
    """For k = 1 .. G-1 right answers out of G (0/1 rewards): sum_i |A_i| with the std (GRPO) and without (Dr. GRPO)."""
    ks = list(range(1, G))
    with_std, without = [], []
    for k in ks:
        r = torch.tensor([1.0] * k + [0.0] * (G - k), dtype=torch.float64)
        with_std.append(advantages.group_relative(r, G).abs().sum().item())
        without.append(advantages.group_centred(r, G).abs().sum().item())
    return ks, np.array(with_std), np.array(without)


def one_update_ratios(lab, batch, scores, lr):
    """(token ratios, sequence ratios) pi_theta / pi_old after one AdamW step of GRPO's surrogate on `batch`."""
    policy = copy.deepcopy(lab.policy).train()
    opt = torch.optim.AdamW(policy.parameters(), lr=lr, weight_decay=0.0)
    with torch.no_grad():
        old = policy_logp(policy, batch)  # (B, T) pi_old
    logp = policy_logp(policy, batch)  # (B, T) with grad
    coef = coefficients.grpo(scores, batch.group_size, logp, old, batch.mask, 0.0)
    surrogate_loss(logp, coef, batch.mask).backward()
    opt.step()
    with torch.no_grad():
        log_ratio = (policy_logp(policy, batch) - old) * batch.mask  # (B, T)
    m = batch.mask.bool()
    tokens = log_ratio[m].exp()
    seqs = (log_ratio.sum(-1) / batch.mask.sum(-1)).exp()  # (B,) GSPO's s_i
    return tokens.cpu(), seqs.cpu()


def kl_markdown(table, columns):
    """Rows: the uses of each estimator; columns: max |expected GC gradient - target| for each target."""
    head = "| estimator, used as | " + " | ".join(columns) + " |"
    rows = [head, "|---|" + "---:|" * len(columns)]
    for use, row in table.items():
        rows.append(f"| {use} | " + " | ".join(
            ("**%.0e**" % row[c]) if row[c] < 1e-10 else "%.3f" % row[c] for c in columns) + " |")
    return "\n".join(rows)


def versus(result, arm, base="grpo"):
    """Per-seed held-out accuracy of `arm` minus `base` (same seed, same SFT model): (diffs, mean, std)."""
    d = np.array([s["runs"][arm]["accuracy"] - s["runs"][base]["accuracy"] for s in result["per_seed"]])
    return d, float(d.mean()), float(d.std(ddof=1)) if len(d) > 1 else 0.0


def comparison_table(result):
    """The policy-family result as Markdown: accuracy, its paired difference to GRPO, lengths, zero-GC
    tokens and samples per step, mean +- std over seeds."""
    rows = ["| arm | held-out accuracy | minus GRPO, same seed | length: first step -> last 10 | wrong / right "
            "answers at the end | tokens with GC = 0 | samples per step |", "|---|---:|---:|---:|---:|---:|---:|"]
    for arm in result["arms"]:
        t = result["table"][arm]
        wrong = f"{t['len_wrong']['mean']:.2f}" if t["len_wrong"] else "-"
        right = f"{t['len_right']['mean']:.2f}" if t["len_right"] else "-"
        d, mean, std = versus(result, arm)
        wins = f" ({int((d > 0).sum())} of {len(d)} ahead)" if arm != "grpo" else ""
        rows.append(f"| `{arm}` | {t['accuracy']['mean']:.3f} ± {t['accuracy']['std']:.3f} | "
                    f"{mean:+.3f} ± {std:.3f}{wins} | {t['len_first']['mean']:.2f} -> "
                    f"{t['len_last10']['mean']:.2f} | {wrong} / {right} | {t['zero_gc_frac']['mean']:.2f} | "
                    f"{t['samples_per_step']['mean']:.0f} |")
    return "\n".join(rows)


def plot_runs(runs, start):
    """Held-out accuracy and mean response length over training, one line per method's run."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.2))
    for i, (name, run) in enumerate(runs.items()):
        ev = [(0, start)] + [(m["step"], m["eval_accuracy"]) for m in run.metrics if "eval_accuracy" in m]
        ax1.plot(*zip(*ev), "o-", ms=3, color=f"C{i % 10}", label=name)
        ax2.plot([m["step"] for m in run.metrics], [m["response_len"] for m in run.metrics], color=f"C{i % 10}",
                 lw=1, label=name)
    ax1.set(xlabel="step", ylabel="held-out greedy accuracy", title="accuracy")
    ax2.set(xlabel="step", ylabel="mean response length (tokens)", title="response length of the batch")
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    ax1.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig
