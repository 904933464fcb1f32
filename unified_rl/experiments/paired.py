"""Paired differences per K (a trained model minus the model it started from), with two 95 % intervals
and a verdict computed from them, and which picture of RL the verdicts make.

The data of one comparison at one K: `base` and `arm`, arrays (S, Q) of one metric (Pass@K or Maj@K)
per seed s and held-out question q, the same questions on every seed. Two sources of noise, one
interval each:
- over seeds: the S per-seed mean differences, mean +/- t(0.975, S-1) x sd / sqrt(S) (Student's t);
- over questions: the Q per-question differences (averaged over seeds), a percentile bootstrap of
  their mean (questions resampled with replacement, a fixed generator: the same numbers every time).
"raised" when both intervals lie above 0, "lowered" when both lie below, else "no clear change";
fewer than 3 seeds give no verdict (figure7.MIN_SEEDS_FOR_A_VERDICT).

The pictures (DeepSeekMath §5.2.2, Figure 7; Yue et al. 2025, arXiv 2504.13837):
- the paper's: Maj@K raised and Pass@K not raised at the largest K;
- Yue et al.'s: RL ahead at K = 1 (Pass@1 raised), the base model catching up (Pass@K no clear change)
  or overtaking (Pass@K lowered) at the largest K;
- neither, e.g. Pass@K raised at the largest K too (RL widened what the model can answer).
The first two can hold together: the paper's Figure 7 itself has Pass@1 = Maj@1 raised.
"""

import numpy as np

from ..text import Text
from .figure7 import MIN_SEEDS_FOR_A_VERDICT

T975 = {1: 12.706, 2: 4.303, 3: 3.182, 4: 2.776, 5: 2.571, 6: 2.447, 7: 2.365, 8: 2.306, 9: 2.262, 10: 2.228,
        15: 2.131, 20: 2.086, 30: 2.042}
"""Student's t quantile 0.975 by degrees of freedom (tables; a df between two entries takes the lower's)."""
RAISED, LOWERED, UNCLEAR = "raised", "lowered", "no clear change"


def t975(df):
    """The 0.975 quantile of Student's t with `df` degrees of freedom (1.96 beyond the table)."""
    if df < 1:
        raise ValueError(f"a t interval needs df >= 1, got {df}")
    below = [d for d in T975 if d <= df]
    return T975[max(below)] if df <= 30 else 1.96


def seed_interval(d):
    """(low, high) of the 95 % t interval of the mean of per-seed differences `d` ((0, 0) spread for one)."""
    d = np.asarray(d, dtype=float)
    if len(d) < 2:
        return float(d.mean()), float(d.mean())
    half = t975(len(d) - 1) * d.std(ddof=1) / np.sqrt(len(d))
    return float(d.mean() - half), float(d.mean() + half)


def question_interval(d, n_boot=2000, seed=0):
    """(low, high) of the 95 % percentile bootstrap of the mean of per-question differences `d`."""
    d = np.asarray(d, dtype=float)
    if d.ndim != 1 or len(d) < 2:
        raise ValueError(f"a bootstrap over questions needs two or more, got shape {d.shape}")
    idx = np.random.default_rng(seed).integers(0, len(d), (n_boot, len(d)))  # (n_boot, Q)
    means = d[idx].mean(1)  # (n_boot,)
    return float(np.quantile(means, 0.025)), float(np.quantile(means, 0.975))


def verdict(seeds_ci, questions_ci, n_seeds):
    """'raised', 'lowered' or 'no clear change' from the two intervals (module doc)."""
    if n_seeds < MIN_SEEDS_FOR_A_VERDICT:
        return Text("no verdict from {n} seed(s) (needs {needed})", n=n_seeds, needed=MIN_SEEDS_FOR_A_VERDICT)
    if seeds_ci[0] > 0 and questions_ci[0] > 0:
        return Text(RAISED)
    if seeds_ci[1] < 0 and questions_ci[1] < 0:
        return Text(LOWERED)
    return Text(UNCLEAR)


def compare(base, arm, n_boot=2000):
    """The difference arm - base at one K from (S, Q) arrays: its mean, per seed, both intervals, verdict."""
    base, arm = np.asarray(base, dtype=float), np.asarray(arm, dtype=float)
    if base.shape != arm.shape or base.ndim != 2:
        raise ValueError(f"base and arm must be (seeds, questions) arrays of one shape, got {base.shape}, {arm.shape}")
    diff = arm - base  # (S, Q)
    per_seed = diff.mean(1)  # (S,)
    s_ci, q_ci = seed_interval(per_seed), question_interval(diff.mean(0), n_boot)
    return {"mean": float(diff.mean()), "per_seed": per_seed.tolist(), "seeds_ci": list(s_ci),
            "questions_ci": list(q_ci), "verdict": verdict(s_ci, q_ci, len(per_seed))}


def picture(pass_verdicts, maj_verdicts):
    """Which picture the verdicts per K (K = 1 first, the largest K last) make: a dict and a sentence."""
    p1, p_top, m_top = pass_verdicts[0], pass_verdicts[-1], maj_verdicts[-1]
    decided = all(v in (RAISED, LOWERED, UNCLEAR) for v in (p1, p_top, m_top))
    paper = decided and m_top == RAISED and p_top != RAISED
    yue = decided and p1 == RAISED and p_top != RAISED
    out = {"paper": paper, "yue": yue, "overtaken": decided and p_top == LOWERED}
    if not decided:
        out["sentence"] = Text("no picture: too few seeds for a verdict")
    elif paper and yue:
        out["sentence"] = Text("both the paper's picture (Maj@K raised, Pass@K not at the largest K) and "
                               "Yue et al.'s (RL ahead at K = 1, the base model {how} at the largest K)",
                               how=Text("overtaking") if out["overtaken"] else Text("catching up"))
    elif paper:
        out["sentence"] = Text("the paper's picture: Maj@K raised, Pass@K not, at the largest K")
    elif yue:
        out["sentence"] = Text("Yue et al.'s picture: RL ahead at K = 1, the base model {how} at the largest K",
                               how=Text("overtaking") if out["overtaken"] else Text("catching up"))
    else:
        out["sentence"] = Text("neither picture: Pass@1 {p1}, Pass@K {p_top} and Maj@K {m_top} at the largest K",
                               p1=p1, p_top=p_top, m_top=m_top)
    return out
