"""Notebook 13's explorers: a teacher's per-token coefficient (OPD, GKD at beta) against the teacher's temperature,
and a stale sampler's ratio with what TIS's cap and MIS's band make of it.

Every number is computed by the package's own functions: `parts.advantages.teacher.opd` (OPD's advantage, the GC
under REINFORCE's policy term), `parts.policy_terms.gkd.gkd` (the generalized JSD of the sampled token's coin) and
`parts.sampler_corrections.truncated` / `in_band` (TIS's weight, MIS's mask). References: GKD, Agarwal et al.,
arXiv 2306.13649 eq 2-3; TIS, Yao et al. (2025); IcePop, arXiv 2510.18855.
"""

import math

import torch
from matplotlib.figure import Figure

from unified_rl.course.explorer import Explorer, _dropdown, _slider
from unified_rl.course.i18n import t
from unified_rl.parts.advantages.teacher import opd
from unified_rl.parts.policy_terms.gkd import gkd
from unified_rl.parts.sampler_corrections import in_band, truncated

TEACHER_LOGITS = (2.0, 1.0, 0.3, -0.5, -1.5)
"""The teacher's logits over five tokens, best first (the explorer's vocabulary)."""
P_GRID = torch.linspace(0.01, 0.99, 197, dtype=torch.float64)


def teacher_probs(temperature, logits=TEACHER_LOGITS):
    """(V,) the teacher's distribution at `temperature` (its logits divided by it)."""
    if temperature <= 0:
        raise ValueError(f"the teacher's temperature must be > 0, got {temperature}")
    return torch.softmax(torch.tensor(logits, dtype=torch.float64) / temperature, 0)


def coefficients(p, q, beta):
    """{curve: (N,) GC of the sampled token} at policy probabilities `p` (N,) and the teacher's `q` (a number):
    OPD's, GKD's at `beta`, and GKD's at beta 0 (forward KL) and 1 (reverse KL), each with A = 1."""
    p = torch.as_tensor(p, dtype=torch.float64).reshape(-1, 1)  # (N, 1): one token per row
    lq, one = torch.full_like(p, math.log(q)), torch.ones_like(p)
    return {"opd": opd(lq, p.log(), one)[:, 0], "gkd": gkd(one, p.log(), lq, one, beta)[:, 0],
            "forward": gkd(one, p.log(), lq, one, 0.0)[:, 0], "reverse": gkd(one, p.log(), lq, one, 1.0)[:, 0]}


def teacher_explorer(p=0.2, temperature=1.0, beta=0.5, token=0):
    """GC of the sampled token against pi_theta(o_t) under OPD and GKD, for the teacher's temperature and GKD's
    beta; the table gives each at the slider's pi_theta."""
    ranks = {t("w.teach.rank", rank=i + 1): i for i in range(len(TEACHER_LOGITS))}
    controls = {"p": _slider(t("w.teach.p"), p, 0.01, 0.99, 0.01),
                "temperature": _slider(t("w.teach.temperature"), temperature, 0.25, 4.0, 0.05),
                "beta": _slider("β (GKD)", beta, 0.0, 1.0, 0.05),
                "token": _dropdown(t("w.teach.token"), list(ranks.items()), token)}

    def compute(p, temperature, beta, token):
        dist = teacher_probs(temperature)
        q = float(dist[token])
        here = {k: float(v[0]) for k, v in coefficients([p], q, beta).items()}
        data = {"q": q, "p": p, "beta": beta, "temperature": temperature, **here}
        curves = coefficients(P_GRID, q, beta)
        fig = Figure(figsize=(9, 3.2), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2, width_ratios=(1.6, 1))
        labels = {"opd": t("w.teach.opd"), "gkd": t("w.teach.gkd", beta=beta), "forward": t("w.teach.forward"),
                  "reverse": t("w.teach.reverse")}
        styles = {"opd": ("C0", "-"), "gkd": ("C3", "-"), "forward": ("0.55", "--"), "reverse": ("0.55", ":")}
        for k, c in curves.items():
            color, ls = styles[k]
            ax1.plot(P_GRID, c, color=color, ls=ls, label=labels[k])
            ax1.plot([p], [here[k]], "o", color=color)
        ax1.axvline(q, color="C2", lw=0.8, label=t("w.teach.q_line"))
        ax1.axhline(0, color="0.5", lw=0.8)
        ax1.set(xlabel=t("w.teach.xlabel"), ylabel=t("w.teach.ylabel"), ylim=(-3.0, 3.0))
        ax1.legend(fontsize=7)
        ax2.bar(range(1, len(dist) + 1), dist.numpy(), color=["C2" if i == token else "0.7" for i in range(len(dist))])
        ax2.set(xlabel=t("w.teach.tokens"), ylim=(0, 1), title=t("w.teach.dist", tau=temperature))
        rows = [[t("w.teach.col_what"), t("w.teach.col_value")], [t("w.teach.row_q"), q], ["π_θ", p]]
        rows += [[labels[k], here[k]] for k in ("opd", "gkd", "forward", "reverse")]
        return data, fig, rows

    return Explorer(t("w.teach.title"), controls, "p", compute, t("w.teach.note"))


def ratio_stats(log_rho, cap, low, high):
    """What TIS's cap and MIS's band do to tokens whose log rho_s is `log_rho` (1-D): counts and shares."""
    rho = torch.as_tensor(log_rho, dtype=torch.float64).exp()
    if rho.numel() == 0:
        raise ValueError("no tokens at this lag")
    return {"tokens": int(rho.numel()), "std": float(rho.log().std()) if rho.numel() > 1 else 0.0,
            "max_abs": float(rho.log().abs().max()), "tis": float((truncated(rho, cap) < rho).double().mean()),
            "mis": float(1 - in_band(rho, low, high).mean()), "tis_weight": float(truncated(rho, cap).mean())}


def sampler_explorer(log_rho, lag=None, cap=2.0, low=0.5, high=5.0):
    """The measured log rho_s at each lag (`log_rho`: {lag: 1-D tensor}), and the share of tokens TIS's cap C
    truncates and MIS's band [low, high] masks; the table reads every lag at the sliders' bounds."""
    lags = sorted(log_rho)
    if not lags:
        raise ValueError("sampler_explorer needs the log-ratios of at least one lag")
    controls = {"lag": _dropdown(t("w.samp.lag"), lags, lags[-1] if lag is None else lag),
                "cap": _slider(t("w.samp.cap"), cap, 1.0, 5.0, 0.01),
                "low": _slider(t("w.samp.low"), low, 0.1, 1.0, 0.01),
                "high": _slider(t("w.samp.high"), high, 1.0, 10.0, 0.01)}

    def compute(lag, cap, low, high):
        stats = {k: ratio_stats(log_rho[k], cap, low, high) for k in lags}
        x = torch.as_tensor(log_rho[lag], dtype=torch.float64)
        fig = Figure(figsize=(9, 3.2), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2)
        ax1.hist(x.numpy(), bins=40, color="C0")
        for v, c in ((cap, "C1"), (low, "C2"), (high, "C2")):
            ax1.axvline(math.log(v), color=c, lw=0.8, ls="--")
        ax1.set(xlabel=t("w.samp.hist_x"), ylabel=t("w.samp.hist_y"), yscale="log",
                title=t("w.samp.hist_title", lag=lag, n=stats[lag]["tokens"]))
        grid = torch.linspace(0.05, max(6.0, 1.2 * high), 400, dtype=torch.float64)
        ax2.plot(grid, torch.ones_like(grid), color="0.5", label=t("w.samp.none"))
        ax2.plot(grid, truncated(grid, cap), color="C1", label=f"TIS: min(ρ_s, {cap:.2f})")
        ax2.plot(grid, in_band(grid, low, high), color="C2", ls="--", label=f"MIS: [{low:.2f}, {high:.2f}]")
        ax2.set(xlabel=t("w.samp.weight_x"), ylabel=t("w.samp.weight_y"))
        ax2.legend(fontsize=7)
        rows = [[t("w.samp.col_lag"), t("w.samp.col_tokens"), t("w.samp.col_std"), t("w.samp.col_max"),
                 t("w.samp.col_tis"), t("w.samp.col_mis")]]
        rows += [[k, s["tokens"], s["std"], s["max_abs"], s["tis"], s["mis"]] for k, s in stats.items()]
        return {"lag": lag, "cap": cap, "low": low, "high": high, "stats": stats}, fig, rows

    return Explorer(t("w.samp.title"), controls, "cap", compute, t("w.samp.note"))
