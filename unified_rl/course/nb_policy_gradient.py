"""Helpers for notebook 10 (the policy family after DeepSeekMath): tables and measurements, not methods.

- `method_table`: METHODS' (data source, reward, GC as the parts it composes, paper) rows as Markdown.
- `row_factor`: the factor an aggregation puts on each row's GC (parts/aggregations.py's).
- `std_weights`: how much total push a question gets with and without GRPO's division by the std.
- `one_update_ratios`: token and sequence ratios pi_theta / pi_old after one update (GSPO's point).
- `kl_markdown`: kl.study's exact comparison as a table.
- `raw_grad_norms`: each method's gradient norm on one batch before the trainer's clip at norm 1.
- `comparison_table` / `findings`: the policy-family experiment's result, as a table and as the
  sentences the notebook states about it (each computed from the result, none typed by hand; the
  verdicts are the course's rule's, through `readings`).
- `arms`: a progress bar over the arms a training cell runs (each takes seconds to minutes).
Every number comes from the package (`advantages`, `coefficients`, `kl.study`, `experiments`).
"""

import copy
import dataclasses
from types import SimpleNamespace

import matplotlib.pyplot as plt
import numpy as np
import torch

from unified_rl import advantages
from unified_rl.data import GivenBatch
from unified_rl.methods import METHODS
from unified_rl.paradigm import step_from_tensors, surrogate_loss
from unified_rl.parts import View, aggregations
from unified_rl.course import parts_text, readings
from unified_rl.course.i18n import t
from unified_rl.wiring import policy_logp


def arms(items, desc=None):
    """`items` (a list, or a dict's items) under a tqdm.auto bar: a long cell says how far it is."""
    from tqdm.auto import tqdm
    items = list(items)
    return tqdm(items, desc=t("nb.pg.training") if desc is None else desc, total=len(items), unit="arm")


def _name(obj):
    return getattr(obj, "__name__", None) or type(obj).__name__


def method_table(methods, names):
    """A Markdown table of METHODS' components for `names`."""
    rows = [t("nb.pg.method_head"), "|---|---|---|---|---|"]
    for n in names:
        m = methods[n]
        gc = parts_text.label(m) or _name(m.coefficient)  # the parts it composes
        rows.append(f"| `{n}` | `{_name(m.data_source)}` | `{_name(m.reward)}` | `{gc}` | {m.paper} |")
    return "\n".join(rows)


def row_factor(mask, aggregation, group_size=1, max_len=None):
    """(B, 1) the factor w_i an aggregation puts on each row's GC: parts/aggregations.py's own, on `mask`."""
    hp = SimpleNamespace(aggregation=aggregation, max_len=max_len)
    view = View.of(step_from_tensors(torch.zeros_like(mask), mask, None, group_size=group_size), hp)
    return aggregations.weight(view, aggregation)


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
    """(token ratios, sequence ratios) pi_theta / pi_old after one step of the trainer on `batch`: GRPO
    (beta 0) with `scores` as its rewards, through `train()` itself (AdamW, the clip at norm 1), on a copy
    of the policy."""
    from unified_rl.trainer import train
    method = dataclasses.replace(METHODS["grpo"], data_source=GivenBatch.of(batch), reward=lambda rollout: scores)
    work = dataclasses.replace(lab, policy=copy.deepcopy(lab.policy))
    with torch.no_grad():
        old = policy_logp(work.policy, batch)  # (B, T) pi_old
    train(method, lab=work, steps=1, lr=lr, beta=0.0, eval_every=0, progress=False)
    with torch.no_grad():
        log_ratio = (policy_logp(work.policy, batch) - old) * batch.mask  # (B, T)
    m = batch.mask.bool()
    tokens = log_ratio[m].exp()
    seqs = (log_ratio.sum(-1) / batch.mask.sum(-1)).exp()  # (B,) GSPO's s_i
    return tokens.cpu(), seqs.cpu()


def raw_grad_norms(lab, batch, scores, methods, names):
    """{name: |grad_theta of eq 5's surrogate|} on `batch` at pi_theta = pi_old = pi_ref, before the clip.

    The trainer (loop.fit) clips the gradient to norm 1 before AdamW's step: an arm whose raw norm is
    above 1 has its step shortened, one below is not, so a constant factor on the GC (Dr. GRPO's L,
    RLOO's token sum) is undone by AdamW only while nothing clips.
    """
    logp = policy_logp(lab.policy, batch)  # (B, T) with grad
    with torch.no_grad():
        logp_ref = policy_logp(lab.ref, batch)
    out = {}
    for name in names:
        m = methods[name]
        adv = m.advantage(lab, batch, scores, logp_ref, None) if m.advantage else None
        step = step_from_tensors(logp, batch.mask, lab.preset.rl, logp_ref=logp_ref, scores=scores, adv=adv,
                                 group_size=batch.group_size, hp=m.hparams)
        lab.policy.zero_grad()
        surrogate_loss(logp, m.coefficient(step), batch.mask).backward(retain_graph=True)
        out[name] = torch.cat([p.grad.flatten() for p in lab.policy.parameters() if p.grad is not None]).norm().item()
    lab.policy.zero_grad()
    return out


def kl_markdown(table, columns):
    """Rows: the uses of each estimator; columns: max |expected GC gradient - target| for each target."""
    cell = lambda text: str(text).replace("|", "\\|")  # noqa: E731 a KL's "||" is not a column border
    head = t("nb.pg.estimator_head") + " | ".join(map(cell, columns)) + " |"
    rows = [head, "|---|" + "---:|" * len(columns)]
    for use, row in table.items():
        rows.append(f"| {cell(use)} | " + " | ".join(
            ("**%.0e**" % row[c]) if row[c] < 1e-10 else "%.3f" % row[c] for c in columns) + " |")
    return "\n".join(rows)


def versus(result, arm, base="grpo"):
    """Per-seed held-out accuracy of `arm` minus `base` (same seed, same SFT model): (diffs, mean, std)."""
    d = np.array([s["runs"][arm]["accuracy"] - s["runs"][base]["accuracy"] for s in result["per_seed"]])
    return d, float(d.mean()), float(d.std(ddof=1)) if len(d) > 1 else 0.0


def comparison_table(result):
    """The policy-family result as Markdown: accuracy, its paired difference to GRPO, lengths, zero-GC
    tokens and samples per step, mean +- std over seeds (described; `readings.table` has the verdicts)."""
    rows = [t("nb.pg.table_head"), "|---|---:|---:|---:|---:|---:|---:|"]
    for arm in result["arms"]:
        tab = result["table"][arm]
        wrong = f"{tab['len_wrong']['mean']:.2f}" if tab["len_wrong"] else "-"
        right = f"{tab['len_right']['mean']:.2f}" if tab["len_right"] else "-"
        d, mean, std = versus(result, arm)
        rows.append(f"| `{arm}` | {tab['accuracy']['mean']:.3f} ± {tab['accuracy']['std']:.3f} | "
                    f"{mean:+.3f} ± {std:.3f} | {tab['len_first']['mean']:.2f} -> "
                    f"{tab['len_last10']['mean']:.2f} | {wrong} / {right} | {tab['zero_gc_frac']['mean']:.2f} | "
                    f"{tab['samples_per_step']['mean']:.0f} |")
    return "\n".join(rows)


def findings(result):
    """The sentences notebook 10 states about a policy-family result, each computed from `result`: the
    verdicts of the course's rule (`readings`: each arm minus GRPO on the same seed, and Dr. GRPO's
    aggregations against its seq-mean-token-mean arm, read together), then what the table describes."""
    tab, out = result["table"], []
    decided = readings.decide(result)
    sft = result["sft"]
    out.append(t("nb.pg.sft_range", lo=sft["min"], hi=sft["max"]))
    out += readings.summary(decided)
    std_only = "dr-grpo (seq-mean-token-mean)"
    against = [n for n in decided if n.endswith(readings.MINUS + std_only)]
    if against:
        out.append(t("nb.pg.dr_grpo", std_only=std_only, std=readings.said(decided[std_only + readings.MINUS + "grpo"]),
                     items=t("nb.pg.list_sep").join(f"{readings.label(n)} {readings.said(decided[n])}"
                                                    for n in against)))
    if "dapo" in tab:
        per_step = tab["dapo"]["samples_per_step"]["mean"]
        out.append(t("nb.pg.dapo", samples=per_step, rows=result["rows_per_step"],
                     factor=per_step / result["rows_per_step"], said=readings.said(decided["dapo" + readings.MINUS + "grpo"])))
    clip = {a: max(s["runs"][a]["clip_frac"] for s in result["per_seed"]) for a in result["arms"]}
    worst = max(clip, key=clip.get)
    out.append(t("nb.pg.clip", pct=100 * clip[worst], worst=worst))
    zero = {a: tab[a]["zero_gc_frac"]["mean"] for a in ("gspo", "cispo", "remax") if a in tab}
    if zero:
        out.append(t("nb.pg.zero_gc", items=t("nb.pg.list_sep").join(f"`{a}` {v:.2f}" for a, v in zero.items())))
    first = [tab[a]["len_first"]["mean"] for a in result["arms"]]
    last = [tab[a]["len_last10"]["mean"] for a in result["arms"]]
    out.append(t("nb.pg.lengths", first_lo=min(first), first_hi=max(first), last_lo=min(last), last_hi=max(last)))
    return out


def plot_runs(runs, start):
    """Held-out accuracy and mean response length over training, one line per method's run."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 3.2))
    for i, (name, run) in enumerate(runs.items()):
        ev = [(0, start)] + [(m["step"], m["eval_accuracy"]) for m in run.metrics if "eval_accuracy" in m]
        ax1.plot(*zip(*ev), "o-", ms=3, color=f"C{i % 10}", label=name)
        ax2.plot([m["step"] for m in run.metrics], [m["response_len"] for m in run.metrics], color=f"C{i % 10}",
                 lw=1, label=name)
    ax1.set(xlabel=t("nb.step"), ylabel=t("plot.label.eval_accuracy"), title=t("nb.accuracy"))
    ax2.set(xlabel=t("nb.step"), ylabel=t("nb.pg.mean_len"), title=t("nb.pg.len_title"))
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
    ax1.legend(fontsize=7, ncol=2)
    fig.tight_layout()
    return fig
