"""Helpers for the teachers-and-stale-samples notebook (course/13_teachers_and_stale_samples.ipynb).

`vocabulary_check` takes the reverse KL to a teacher over the whole vocabulary at every response position of a
sampled batch and compares, on every parameter of the model, its autograd gradient with eq 5's surrogate whose
coefficient on each possible token is the package's `opd` part, weighted by that token's probability: the exact
expectation, not a sample. `sampler_oracle` compares the gradient of a composition's objective with that of eq 5's
surrogate on a batch a rounded sampler drew (its ratio to the learner is not 1). `recording` wraps a method so
that a run keeps each update's log rho_s = log pi_old - log pi_sampler. The rest are the live runs' plot and the
tables and sentences about the shipped experiments (experiments/teachers.py, stale_samples.py), each computed
from the result, the verdicts by the course's one rule (`experiments/verdicts.py`).
"""

import copy
import dataclasses

import matplotlib.pyplot as plt
import torch

from unified_rl.course.i18n import t
from unified_rl.data import samplers
from unified_rl.experiments import common, field_arms, stale_samples, teachers, verdicts
from unified_rl.models import position_ids_of
from unified_rl.paradigm import surrogate_loss
from unified_rl.parts.advantages.teacher import opd
from unified_rl.sampling import sample
from unified_rl.text import english
from unified_rl.wiring import coefficient_of, policy_logp, prepare, step_of


def _grads(model, loss):
    return torch.autograd.grad(loss, [p for p in model.parameters() if p.requires_grad], retain_graph=True)


def _rel(a, b):
    """max |a - b| over every parameter, over max |b|."""
    top = max(x.abs().max().item() for x in b)
    return max((x - y).abs().max().item() for x, y in zip(a, b)) / max(top, 1e-300)


def vocabulary_check(policy, teacher, tokenizer, problems, rows=4, seed=0):
    """{"opd", "no_stop_gradient": relative gradient differences to -grad KL(pi_theta || pi_T), "positions"}: the
    reverse KL over every token of the vocabulary at each response position of `rows` sampled answers (float64)."""
    torch.manual_seed(seed)
    with torch.no_grad():
        batch = sample(policy, tokenizer, problems[:rows])
    model, frozen = copy.deepcopy(policy).double(), copy.deepcopy(teacher).double().requires_grad_(False)
    ids, att = batch.input_ids, batch.attention_mask
    kw = dict(input_ids=ids, attention_mask=att, position_ids=position_ids_of(att))
    logp = model(**kw).logits[:, :-1].log_softmax(-1)  # (B, T, V) log pi_theta of every token at every position
    with torch.no_grad():
        logq = frozen(**kw).logits[:, :-1].log_softmax(-1)  # (B, T, V) the teacher's
    mask, n = batch.mask.double(), batch.mask.sum()
    kl = (logp.exp() * (logp - logq)).sum(-1)  # (B, T) KL(pi_theta || pi_T) at each position
    exact = _grads(model, -(kl * mask).sum() / n)
    B, T, V = logp.shape
    every = mask[..., None].expand(B, T, V)
    gc = opd(logq.reshape(B, T * V), logp.detach().reshape(B, T * V), every.reshape(B, T * V)).reshape(B, T, V)
    p = logp.exp().detach()  # each token weighted by its probability: eq 5's expectation over o_t, enumerated
    surrogate = (p * gc * logp * every).sum() / n
    leaked = (p * (logq - logp) * logp * every).sum() / n  # the log-ratio left in the graph: no stop-gradient
    return {"opd": _rel(_grads(model, surrogate), exact), "no_stop_gradient": _rel(_grads(model, leaked), exact),
            "positions": int(n)}


def sampler_oracle(lab, method, dtype="q8_0", seed=0):
    """{"diff": max |grad J - grad surrogate| / max |grad surrogate| on every parameter (float64), "log_rho": the
    batch's log pi_old - log pi_sampler on its response tokens}: `method` on a batch drawn by a `dtype` sampler."""
    p = lab.preset.with_(rl={"sampler_dtype": dtype, "sampler_lag": 0})
    torch.manual_seed(seed)
    batch = samplers.source_of(method, dataclasses.replace(lab, preset=p)).next_batch()
    double = {k: copy.deepcopy(getattr(lab, k)).double() for k in ("policy", "ref", "teacher")
              if getattr(lab, k) is not None}
    lab64 = dataclasses.replace(lab, preset=p, **double)
    batch = dataclasses.replace(batch, mask=batch.mask.double(), logp=batch.logp.double())
    scores = method.reward(batch).double() if method.reward is not None else None  # float64, as the oracle's
    prep = prepare(method, lab64, batch, scores=scores)
    logp = policy_logp(lab64.policy, prep.batch)  # (B, T), with grad; pi_old = its value: one update
    step = step_of(prep, logp, logp.detach(), p.rl, method.hparams)
    objective = _grads(lab64.policy, -method.objective(step))
    surrogate = _grads(lab64.policy, surrogate_loss(logp, coefficient_of(method, step), batch.mask))
    on = batch.mask.bool()
    return {"diff": _rel(objective, surrogate), "log_rho": (logp.detach() - batch.logp)[on]}


def recording(method):
    """(method, records): the same method, whose coefficient also keeps each update's log rho_s = log pi_old -
    log pi_sampler on the response tokens (1-D, float64), one entry per update."""
    records = []

    def coefficient(step):
        on = step.batch.mask.bool()
        records.append((step.logp_old - step.batch.logp)[on].detach().double().cpu())
        return method.coefficient(step)
    return dataclasses.replace(method, coefficient=coefficient), records


def by_lag(records, lag):
    """{lag: log rho_s of every token drawn at that lag}: step s (from 1) of a run with `sampler_lag=lag` is drawn
    by the policy of step max(s - 1 - lag, 0), so its lag is min(s - 1, lag) (data/samplers.py)."""
    out = {}
    for s, r in enumerate(records):
        out.setdefault(min(s, lag), []).append(r)
    return {k: torch.cat(v) for k, v in out.items()}


def plot_live(runs, rows, levels):
    """Held-out greedy accuracy of each live run against its step and against the tokens it sampled;
    `levels`: {label: accuracy} drawn as lines (the start, the teacher)."""
    fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.2))
    for i, (name, run) in enumerate(runs.items()):
        c = teachers.curve(run, rows)
        for ax, x in zip(axes, ("step", "sampled_tokens")):
            ax.plot([p[x] for p in c], [p["eval_accuracy"] for p in c], "o-", ms=3, color=f"C{i}", label=name)
    for ax in axes:
        for (label, level), ls in zip(levels.items(), (":", "--")):
            ax.axhline(level, color="grey", ls=ls, lw=1, label=label)
        ax.set(ylabel=t("nb13.plot.accuracy"))
        ax.grid(alpha=0.3)
    axes[0].set(xlabel=t("nb13.plot.step"), title=t("nb13.plot.per_step"))
    axes[1].set(xlabel=t("nb13.plot.tokens"), title=t("nb13.plot.per_token"))
    axes[1].legend(fontsize=7)
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- the shipped experiments


def decisions(result, comparisons, decided):
    """{label: verdicts.family's entry} for the `decided` comparisons, from the result's stored per-seed answers:
    the course's one rule, read together (the verdict a Text, shown in the reader's language)."""
    per_seed, rows = result["per_seed"], {}
    for label, base, arm in comparisons:
        if label in decided:
            b, a = field_arms.right_array(per_seed, base), field_arms.right_array(per_seed, arm)
            rows[label] = ((a - b).mean(1).tolist(), b.mean(1).tolist())
    return verdicts.family(rows) if rows else {}


def teacher_decisions(result):
    return decisions(result, teachers.COMPARISONS, teachers.DECIDED)


def stale_decisions(result):
    comps, decided = stale_samples.comparisons(result["budget"])
    return decisions(result, comps, decided)


def _verdict_line(label, v):
    """One decided comparison in words: its verdict, interval and what the interval supports."""
    word = english(v["verdict"])
    key = {verdicts.RAISED: "raised", verdicts.LOWERED: "lowered", verdicts.NO_CHANGE: "no_change",
           verdicts.UNCLEAR: "unclear"}.get(word, "none")
    return t(f"nb13.verdict.{key}", label=label, mean=v["mean"], lo=v["interval"][0], hi=v["interval"][1],
             level=v["level"], m=v["family"], margin=verdicts.MARGIN, n=len(v["per_seed"]), verdict=v["verdict"])


def _described(label, c):
    return t("nb13.descriptive", label=label, mean=c["mean"], lo=c["seeds_ci"][0], hi=c["seeds_ci"][1])


def _pm(a):
    return f"{a['mean']:.3f} ± {a['std']:.3f}"


def teachers_table(result):
    """Markdown: each model's held-out greedy accuracy (mean ± sd, per seed), and each arm's sampled tokens."""
    acc, tok = result["accuracy"], result["sampled_tokens"]
    rows = [t("nb13.teachers.head"), "|---|---|---|---|---|"]
    for m in teachers.MODELS:
        per = ", ".join(f"{x:.3f}" for x in acc[m]["per_seed"])
        tokens = f"{tok[m]['mean']:.0f}" if m in tok else "—"
        gain = common.fmt(result["gain_per_1k_tokens"][m], 4) if m in result["gain_per_1k_tokens"] else "—"
        rows.append(f"| {m} | {_pm(acc[m])} | {per} | {tokens} | {gain} |")
    return "\n".join(rows)


def teachers_findings(result):
    """The sentences the notebook states about the shipped teachers run, each computed from it."""
    out = [t("nb13.teachers.budget", seeds=result["seeds"], steps=result["budget"]["rl_steps"],
             teacher=result["budget"]["teacher_steps"], n=len(result["per_seed"][0]["right"]["start"]))]
    for label in ("teacher - start", "opd - start", "grpo - start", "sft-teacher - start", "sft-teacher - grpo"):
        out.append(_described(label, result["changes"][label]))
    for label, v in teacher_decisions(result).items():
        out.append(_verdict_line(label, v))
    if result["seeds"] < verdicts.MIN_SEEDS:
        out.append(t("nb13.too_few", n=result["seeds"], needed=verdicts.MIN_SEEDS))
    return out


def stale_table(result):
    """Markdown: held-out greedy accuracy (mean ± sd) per lag and correction, and the share of tokens with GC 0."""
    b = result["budget"]
    rows = [t("nb13.stale.head", corrections=" | ".join(b["corrections"])), "|---|" + "---|" * len(b["corrections"])]
    for k in b["lags"]:
        arms = [stale_samples.label(c, k) for c in b["corrections"]]
        rows.append(f"| {k} | " + " | ".join(f"{_pm(result['accuracy'][a])} ({result['zero_gc_frac'][a]['mean']:.3f})"
                                              for a in arms) + " |")
    return "\n".join(rows)


def stale_findings(result):
    """The sentences the notebook states about the shipped stale-samples run, each computed from it."""
    b = result["budget"]
    out = [t("nb13.stale.budget", seeds=result["seeds"], steps=b["rl_steps"], lags=", ".join(map(str, b["lags"])),
             primary=b["primary_lag"], n=len(result["per_seed"][0]["right"]["start"]))]
    decided = stale_decisions(result)
    for label, c in result["changes"].items():
        if label not in decided and not label.endswith(" - start"):
            out.append(_described(label, c))
    for label, v in decided.items():
        out.append(_verdict_line(label, v))
    if result["seeds"] < verdicts.MIN_SEEDS:
        out.append(t("nb13.too_few", n=result["seeds"], needed=verdicts.MIN_SEEDS))
    return out


def plot_teachers(result):
    """The shipped teachers run: accuracy per step and per sampled token (means over seeds), and every comparison
    with its interval over seeds."""
    fig, axes = plt.subplots(1, 3, figsize=(13, 3.6))
    for i, a in enumerate(teachers.ARMS):
        c = result["curves"][a]
        for ax, x in zip(axes[:2], ("step", "sampled_tokens")):
            ax.plot(c[x], c["eval_accuracy"], "o-", ms=3, color=f"C{i}", label=a)
    for ax in axes[:2]:  # the eval questions, not the held-out ones the table and the intervals read
        ax.set(ylabel=t("nb13.plot.eval_accuracy"))
        ax.grid(alpha=0.3)
    axes[0].set(xlabel=t("nb13.plot.step"), title=t("nb13.plot.per_step"))
    axes[1].set(xlabel=t("nb13.plot.tokens"), title=t("nb13.plot.per_token"))
    axes[1].legend(fontsize=7)
    field_arms.plot_changes(axes[2], result)
    axes[2].xaxis.label.set_fontsize(8)
    fig.suptitle(t("nb13.plot.teachers_title", seeds=result["seeds"], steps=result["budget"]["rl_steps"],
                   teacher=result["budget"]["teacher_steps"]), fontsize=9)
    fig.tight_layout()
    return fig
