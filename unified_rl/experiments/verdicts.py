"""The course's one verdict rule: when a change "trained model minus the model it started from" is called
raised, lowered, no change or no clear change. Figure 7 on the lab (`figure7`), Figure 7 on SmolLM2
(`real_model`), notebooks 07 and 12 and the README read their verdicts from here, notebooks 08, 10 and 11
through `course/readings.py` (one primary metric per experiment); none is typed.

1. The seed is the unit. Each seed re-runs the training (in the lab its SFT model too) and its own
   sampling, so a seed's difference (its mean over the held-out questions) carries every source of noise
   but the choice of questions, which is the same on every seed. A verdict reads a Student-t interval
   over the seeds; the interval over questions (`paired`) is shown beside it and describes the held-out set.
2. One primary K for Maj@K and Pass@K, in every experiment: K = 16 (a run that samples fewer answers per
   question reads its largest K). The lab fixed it before its shipped run (figure7.Budget.headline_k). It
   is also the largest K at which no held-out question of either shipped run starts at Pass@K = 1 on every
   seed, so that every question can still rise (at K = 64: 183 of the lab's 200, 37 of SmolLM2's 48 cannot);
   that reads the starting models only, never a trained one. Every other K is descriptive: its 95 %
   interval is shown, with no verdict.
3. Multiplicity: the m verdicts one result reads (the metrics times the trained models, at the primary K:
   2 in the lab, 4 on SmolLM2) come from simultaneous intervals, Bonferroni: each at 1 - 0.05 / m, so the
   chance that any of them is wrong is at most 5 %. Holm's step-down would decide a little more often;
   Bonferroni is taken because it gives each verdict an interval to print.
4. The words: "raised" when the interval lies above 0, "lowered" when below; "no change" only when it
   lies inside (-MARGIN, +MARGIN) (an equivalence test) and the start could have moved by more than the
   margin either way (a metric at its ceiling cannot show that it did not rise); else "no clear change".
   Fewer than 3 seeds: no verdict.
"""

import math

import numpy as np

from ..text import Text

ALPHA = 0.05
"""The chance, over all the verdicts one result reads, that any of them is wrong."""
PRIMARY_K = 16
"""The K at which Maj@K and Pass@K get a verdict (module doc, 2)."""
MARGIN = 0.05
"""'no change' needs the interval inside +/- MARGIN: 0.05 of a metric in [0, 1], 10 of the lab's 200
held-out questions, 2.4 of SmolLM2's 48; a smaller change is not one the course names."""
MIN_SEEDS = 3
"""Fewer seeds give no verdict: two seeds leave one degree of freedom (t(0.9875, 1) = 25.5)."""
RAISED, LOWERED, NO_CHANGE, UNCLEAR = "raised", "lowered", "no change", "no clear change"
WORDS = (RAISED, LOWERED, NO_CHANGE, UNCLEAR)
METRICS = (("maj_at_k", "Maj"), ("pass_at_k", "Pass"))

RULE = Text("The verdict rule: the unit is the seed (each re-runs the training); at one primary K, K = {K}, for "
            "Maj@K and Pass@K alike, the m verdicts a result reads get simultaneous Student-t intervals over the "
            "seeds (Bonferroni: each at 1 - {alpha} / m), so that all of them hold together with 95 % "
            "probability. Raised or lowered when the interval lies above or below 0; no change only when it lies "
            "inside +/- {margin} and the start could have moved by more; otherwise no clear change. Every other K "
            "is descriptive: its 95 % interval, no verdict. Fewer than {seeds} seeds: no verdict.",
            K=PRIMARY_K, alpha=ALPHA, margin=MARGIN, seeds=MIN_SEEDS)
"""The rule in one paragraph, as the notebooks print it (shown in the reader's language)."""


def primary_k(ks):
    """The K that gets a verdict among the K values a run measured: PRIMARY_K, or the largest K below it."""
    below = [k for k in ks if k <= PRIMARY_K]
    if not below:
        raise ValueError(f"no K of {list(ks)} is at most {PRIMARY_K}")
    return max(below)


def _betacf(a, b, x):
    """The continued fraction of the regularised incomplete beta function (modified Lentz)."""
    tiny, qab, qap, qam = 1e-300, a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 500):
        m2 = 2 * m
        for num in (m * (b - m) * x / ((qam + m2) * (a + m2)), -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))):
            d = 1.0 + num * d
            d = 1.0 / (d if abs(d) > tiny else tiny)
            c = 1.0 + num / c
            c = c if abs(c) > tiny else tiny
            h *= d * c
        if abs(d * c - 1.0) < 1e-15:
            break
    return h


def _beta_inc(a, b, x):
    """I_x(a, b), the regularised incomplete beta function, for 0 <= x <= 1."""
    if x <= 0.0 or x >= 1.0:
        return 0.0 if x <= 0.0 else 1.0
    front = math.exp(math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x))
    if x < (a + 1.0) / (a + b + 2.0):
        return front * _betacf(a, b, x) / a
    return 1.0 - front * _betacf(b, a, 1.0 - x) / b


def t_cdf(t, df):
    """P(T <= t) for Student's t with `df` degrees of freedom."""
    tail = 0.5 * _beta_inc(df / 2.0, 0.5, df / (df + t * t))
    return 1.0 - tail if t >= 0 else tail


def t_quantile(p, df):
    """The p quantile of Student's t with `df` > 0 degrees of freedom (bisection on `t_cdf`, to 1e-12)."""
    if not 0 < p < 1:
        raise ValueError(f"a quantile needs 0 < p < 1, got {p}")
    if not df > 0:
        raise ValueError(f"Student's t needs df > 0, got {df}")
    if p < 0.5:
        return -t_quantile(1.0 - p, df)
    lo, hi = 0.0, 1.0
    while t_cdf(hi, df) < p:
        hi *= 2.0
    while hi - lo > 1e-12 * max(1.0, hi):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if t_cdf(mid, df) < p else (lo, mid)
    return (lo + hi) / 2.0


def t_interval(d, level=1 - ALPHA):
    """(low, high): the two-sided `level` Student-t interval of the mean of per-seed differences `d`
    (no width from one seed)."""
    d = np.asarray(d, dtype=float)
    if d.ndim != 1 or len(d) < 1:
        raise ValueError(f"need one difference per seed, got shape {d.shape}")
    if len(d) < 2:
        return float(d.mean()), float(d.mean())
    half = t_quantile(1 - (1 - level) / 2, len(d) - 1) * d.std(ddof=1) / math.sqrt(len(d))
    return float(d.mean() - half), float(d.mean() + half)


def word(interval, n_seeds, room=1.0):
    """The verdict (a Text) read off a simultaneous interval: module doc, 4. `room`: how far the start could
    move (the smaller of 1 - start and start, for a metric in [0, 1])."""
    lo, hi = interval
    if n_seeds < MIN_SEEDS:
        return Text("no verdict from {n} seed(s) (needs {needed})", n=n_seeds, needed=MIN_SEEDS)
    if lo > 0:
        return Text(RAISED)
    if hi < 0:
        return Text(LOWERED)
    if -MARGIN < lo and hi < MARGIN and room > MARGIN:
        return Text(NO_CHANGE)
    return Text(UNCLEAR)


def family(rows):
    """Verdicts of m = len(rows) differences read together. rows: {name: (per-seed differences, per-seed
    start values)}; returns {name: {per_seed, mean, std, min, max, start, interval, level, family, verdict}}."""
    if not rows:
        raise ValueError("no difference to decide")
    m = len(rows)
    level = 1 - ALPHA / m
    out = {}
    for name, (diffs, start) in rows.items():
        d, s = np.asarray(diffs, dtype=float), float(np.mean(start))
        if len(np.atleast_1d(start)) != len(d):
            raise ValueError(f"{name}: {len(d)} differences but {len(np.atleast_1d(start))} start values")
        ci = t_interval(d, level)
        out[name] = {"per_seed": d.tolist(), "mean": float(d.mean()), "std": float(d.std(ddof=1)) if len(d) > 1 else 0.0,
                     "min": float(d.min()), "max": float(d.max()), "start": s, "interval": list(ci), "level": level,
                     "family": m, "verdict": word(ci, len(d), min(1.0 - s, s))}
    return out


def reading(maj, pas, K):
    """What the verdicts at K say of DeepSeekMath's Figure 7 ("RL enhances Maj@K but not Pass@K"), as a Text."""
    if maj == RAISED and pas == NO_CHANGE:
        return Text("as in the paper's Figure 7 (Pass@{K} unchanged within +/- {margin})", K=K, margin=MARGIN)
    if maj == RAISED and pas == RAISED:
        return Text("unlike the paper's Figure 7, which saw Maj@K rise and not Pass@K")
    if maj == RAISED and pas != LOWERED:
        return Text("the paper's \"not Pass@K\" is neither shown nor refuted (that needs Pass@{K} within +/- {margin})",
                    K=K, margin=MARGIN)
    if pas == LOWERED:
        return Text("the start ahead in Pass@{K}, as Yue et al. report at large K", K=K)
    return Text("the paper's picture is neither shown nor refuted here")


def sentence(maj, pas, K):
    """'Maj@K <verdict>, Pass@K <verdict>: <reading>', the one-line verdict every result prints."""
    if maj not in WORDS:  # too few seeds: both say so
        return Text("Maj@{K} and Pass@{K}: {why}", K=K, why=maj)
    return Text("Maj@{K} {m}, Pass@{K} {p}: {reading}", K=K, m=maj, p=pas, reading=reading(maj, pas, K))


def pass_per_question(counts, n, k):
    """(S, Q) Pass@k of each question from (S, Q) counts of right answers among n samples (exact estimator)."""
    c = np.asarray(counts)
    if c.ndim != 2 or (c < 0).any() or (c > n).any() or not 1 <= k <= n:
        raise ValueError(f"need (seeds, questions) counts in [0, {n}] and 1 <= k <= {n}, got {c.shape}, k = {k}")
    out = np.ones(c.shape)
    for idx in zip(*np.nonzero(n - c >= k)):  # below 1 only where k draws can miss every right answer
        out[idx] = 1.0 - float(np.prod(1.0 - k / np.arange(n - c[idx] + 1, n + 1)))
    return out


def headroom(counts, n, ks):
    """Per K, for Pass@K of the starting model: how many questions start at exactly 1 on every seed (fewer
    than K wrong samples: they cannot rise), how many can still rise, and the largest rise the mean can
    still make (1 - its mean)."""
    c = np.asarray(counts)
    out = {"questions": int(c.shape[1]), "k": list(ks), "at_ceiling": [], "can_rise": [], "largest_rise": []}
    for k in ks:
        p = pass_per_question(c, n, k)
        full = int((n - c < k).all(0).sum())  # fewer than k wrong samples: any k of them hold a right one
        out["at_ceiling"].append(full)
        out["can_rise"].append(int(c.shape[1]) - full)
        out["largest_rise"].append(float(1.0 - p.mean()))
    return out
