"""Arms trained at one budget, compared per seed and per held-out question (the 2026 field's experiments:
`teachers`, `stale_samples`, `sampler_precision`, `real_model_opd`).

Each arm's greedy answer to each held-out question is stored as right (1) or wrong (0), per seed. A comparison
"arm minus base" is `paired.compare` of the two (S, Q) arrays: its mean, the per-seed differences, a 95 % t interval
over the seeds and a 95 % bootstrap over the questions (both descriptive). The comparisons a result decides get the
course's verdicts (`verdicts.family`: the seed is the unit, simultaneous Student-t intervals over the seeds,
Bonferroni over the comparisons decided, "no change" only inside +/- 0.05; fewer than 3 seeds: no verdict).
Everything here is recomputed from the stored per-seed answers when a result is read (`derive`, `agrees`).
"""

import copy
import json

import numpy as np
import torch

from ..rewards import rule_reward
from ..sampling import sample
from ..text import english
from . import common, paired, verdicts


@torch.no_grad()
def greedy_right(policy, tokenizer, problems, batch_size=256):
    """[0/1 per question]: whether the greedy answer to each of `problems` is right."""
    if not problems:
        raise ValueError("no problems to evaluate")
    out = []
    for i in range(0, len(problems), batch_size):
        r = sample(policy, tokenizer, problems[i:i + batch_size], greedy=True)
        out += [int(x) for x in rule_reward(r.problems, r.texts).round().tolist()]
    return out


def right_array(per_seed, arm):
    """(S, Q) array of an arm's stored right/wrong answers."""
    return np.array([s["right"][arm] for s in per_seed], dtype=float)


def compare_arms(per_seed, comparisons, decided, bootstrap=2000):
    """{label: paired.compare(...) + base, arm} for each (label, base arm, arm) in `comparisons`, and the verdicts
    of the labels in `decided` read together (simultaneous intervals over the seeds)."""
    out, rows = {}, {}
    for label, base, arm in comparisons:
        b, a = right_array(per_seed, base), right_array(per_seed, arm)
        out[label] = {"base": base, "arm": arm, **paired.compare(b, a, bootstrap)}
        if label in decided:
            rows[label] = (out[label]["per_seed"], b.mean(1).tolist())
    decisions = verdicts.family(rows) if rows else {}
    return out, {k: {**v, "verdict": english(v["verdict"])} for k, v in decisions.items()}


def accuracies(per_seed, arms):
    """Per arm: its held-out greedy accuracy per seed and their mean, sample std, min and max."""
    out = {}
    for arm in arms:
        acc = right_array(per_seed, arm).mean(1)
        out[arm] = {"per_seed": acc.tolist(), **common.stats(acc)}
    return out


def fmt_change(c):
    """'+0.012 [seeds -0.010, +0.034; questions -0.005, +0.029]': a comparison's mean and its two 95 % intervals."""
    return (f"{c['mean']:+.3f} [seeds {c['seeds_ci'][0]:+.3f}, {c['seeds_ci'][1]:+.3f}; "
            f"questions {c['questions_ci'][0]:+.3f}, {c['questions_ci'][1]:+.3f}]")


def fmt_verdict(v):
    """'+0.012 [-0.030, +0.054] (98.33 %) no clear change': a decided comparison's simultaneous interval."""
    return f"{v['mean']:+.3f} [{v['interval'][0]:+.3f}, {v['interval'][1]:+.3f}] ({v['level']:.2%}) {v['verdict']}"


def summary(per_seed, arms, comparisons, decided, bootstrap):
    """The part of a result every one of these experiments derives the same way: accuracies, comparisons,
    verdicts and their headline lines."""
    acc = accuracies(per_seed, arms)
    changes, decisions = compare_arms(per_seed, comparisons, decided, bootstrap)
    head = {f"{arm} held-out greedy accuracy": common.fmt(acc[arm]) for arm in arms}
    for label, c in changes.items():
        head[label] = fmt_change(c)
    for label, v in decisions.items():
        head[f"verdict, {label}"] = fmt_verdict(v)
    if decided and len(per_seed) < verdicts.MIN_SEEDS:
        head["verdicts"] = f"none: {len(per_seed)} seed(s), the rule needs {verdicts.MIN_SEEDS}"
    return {"accuracy": acc, "changes": changes, "verdicts": decisions}, head


def _plain(x):
    return json.loads(json.dumps(x))


def agrees(result, derive):
    """Whether a stored result's derived parts (headline, changes, verdicts, ...) are what `derive` computes from its
    stored per-seed numbers now; `derive` works on a copy. Returns (True, []) or (False, the keys that differ)."""
    again = _plain(derive(copy.deepcopy(_plain(result))))
    stored = _plain(result)
    keys = [k for k in again if k not in ("per_seed", "provenance", "loaded_from") and again[k] != stored.get(k)]
    return not keys, keys


def plot_changes(ax, result, labels=None):
    """Horizontal bars: each comparison's mean with its 95 % interval over seeds (dots: the seeds)."""
    from ..text import Text
    labels = list(result["changes"]) if labels is None else labels
    for i, label in enumerate(labels):
        c = result["changes"][label]
        lo, hi = c["seeds_ci"]
        ax.errorbar(c["mean"], i, xerr=[[c["mean"] - lo], [hi - c["mean"]]], fmt="o", color="C0", capsize=3)
        ax.plot(c["per_seed"], [i] * len(c["per_seed"]), "k.", ms=4)
    ax.axvline(0, color="grey", lw=1)
    ax.set_yticks(range(len(labels)), labels, fontsize=7)
    ax.invert_yaxis()
    ax.set(xlabel=Text("held-out greedy accuracy difference (95 % interval over seeds)"))
    ax.grid(alpha=0.3)


def revive(result, derive):
    """`result` with its derived parts rebuilt from its stored numbers by `derive` (a layout it cannot read: as
    stored)."""
    try:
        return derive(result)
    except (KeyError, TypeError, ValueError, IndexError):
        return result
