"""The preference family's coefficient explorer (notebook 11): DPO, IPO, SimPO, ORPO and KTO side by side.

Every number is computed by the package's own coefficient functions (`unified_rl.coefficients`) on
one-token responses, so the value read off the plot is the GC the trainer uses for a pair (or a
response) whose margin is the slider's. References: DPO as DeepSeekMath eq 12-14 (arXiv
2402.03300); IPO arXiv 2310.12036 eq 17; SimPO arXiv 2405.14734 eq 6; KTO arXiv 2402.01306 sec 4.1;
ORPO arXiv 2403.07691 eq 6-10. `dpo_loss_explorer`: every loss_type of TRL's DPOTrainer
(coefficients/dpo_losses.py), one pair of one-token responses, so the summed and mean conventions agree.
"""

import torch
from matplotlib.figure import Figure

from unified_rl import coefficients as C
from unified_rl.course.i18n import t
from unified_rl.course.explorer import Explorer, _dropdown, _slider

GRID = torch.linspace(-3.0, 3.0, 241, dtype=torch.float64)  # margins on the plot


def _ones(x):
    x = torch.as_tensor(x, dtype=torch.float64).reshape(-1, 1)  # (N, 1): one token per response
    return x, torch.zeros_like(x), torch.ones_like(x)


def pair_coefficients(margin, beta, tau, simpo_beta, gamma, lam, logp_rejected):
    """{method: (GC on the chosen token, GC on the rejected token)}, each (N,), at each margin.

    DPO and IPO: margin = x+ - x- (log-ratios, x- = 0). SimPO and ORPO: margin = l+ - l- (mean
    log-probs) with l- = logp_rejected; ORPO is NaN where l+ would be >= 0 (no such probability).
    """
    m, z, one = _ones(margin)
    lr = torch.full_like(m, float(logp_rejected))
    out = {"DPO": C.dpo(m, z, one, z, z, one, beta), "IPO": C.ipo(m, z, one, z, z, one, tau),
           "SimPO": C.simpo(lr + m, one, lr, one, simpo_beta, gamma)}
    ok = (lr + m < 0).squeeze(-1)  # (N,)
    cc, cr = torch.full_like(m, float("nan")), torch.full_like(m, float("nan"))
    if ok.any():
        oc, orr = C.orpo((lr + m)[ok], one[ok], lr[ok], one[ok], lam)
        cc[ok], cr[ok] = oc, orr
    out["ORPO"] = (cc, cr)
    return {k: (c[:, 0], r[:, 0]) for k, (c, r) in out.items()}


def kto_coefficients(x_minus_z0, kto_beta, lam_d, lam_u):
    """(GC of a desirable response, GC of an undesirable one), each (N,), at x - z0."""
    x, z, one = _ones(x_minus_z0)
    both = torch.cat([x, x])  # (2N, 1): the same x, labelled desirable then undesirable
    labels = torch.cat([torch.ones(len(x)), torch.zeros(len(x))]).double()
    c = C.kto(both, torch.zeros_like(both), torch.ones_like(both), labels, 0.0, kto_beta, lam_d, lam_u)[:, 0]
    return c[: len(x)], c[len(x):]


def preference_explorer(margin=0.0, beta=0.5, tau=1.0, simpo_beta=2.0, gamma=1.0, lam=0.1,
                        logp_rejected=-1.0, kto_beta=1.5, lam_d=1.0, lam_u=1.0):
    """The GC on the chosen response against the margin for DPO, IPO, SimPO and ORPO, and KTO's
    GC against x - z0; the table gives every value at the slider's margin."""
    controls = {"margin": _slider(t("w.pref.margin"), margin, -3.0, 3.0, 0.05),
                "beta": _slider("β (DPO)", beta, 0.05, 2.0, 0.05),
                "tau": _slider("τ (IPO)", tau, 0.2, 5.0, 0.1),
                "simpo_beta": _slider("β (SimPO)", simpo_beta, 0.5, 10.0, 0.5),
                "gamma": _slider("γ (SimPO)", gamma, 0.0, 5.0, 0.1),
                "lam": _slider("λ (ORPO)", lam, 0.0, 2.0, 0.05),
                "logp_rejected": _slider(t("w.pref.logp_rejected"), logp_rejected, -3.0, -0.05, 0.05),
                "kto_beta": _slider("β (KTO)", kto_beta, 0.05, 2.0, 0.05),
                "lam_d": _slider("λ_D (KTO)", lam_d, 0.5, 6.0, 0.5),
                "lam_u": _slider("λ_U (KTO)", lam_u, 0.5, 6.0, 0.5)}

    def compute(margin, beta, tau, simpo_beta, gamma, lam, logp_rejected, kto_beta, lam_d, lam_u):
        args = (beta, tau, simpo_beta, gamma, lam, logp_rejected)
        here = {k: (c.item(), r.item()) for k, (c, r) in pair_coefficients([margin], *args).items()}
        kd, ku = kto_coefficients([margin], kto_beta, lam_d, lam_u)
        data = {**here, "KTO": (kd.item(), ku.item()), "ipo_target": 1 / (2 * tau), "margin": margin}
        curves = pair_coefficients(GRID, *args)
        fig = Figure(figsize=(9, 3.2), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2)
        for i, (name, (c, _)) in enumerate(curves.items()):
            ax1.plot(GRID, c, color=f"C{i}", label=name)
            ax1.plot([margin], [here[name][0]], "o", color=f"C{i}")
        ax1.axhline(0, color="0.5", lw=0.8)
        ax1.axvline(1 / (2 * tau), color="C1", lw=0.8, ls=":", label=t("w.pref.target"))
        ax1.set(xlabel=t("w.pref.xlabel"), ylabel=t("w.dpo.gc_chosen"),
                ylim=(-2.5, 3.0))
        ax1.legend(fontsize=7)
        d_grid, u_grid = kto_coefficients(GRID, kto_beta, lam_d, lam_u)
        ax2.plot(GRID, d_grid, color="C4", label=t("w.pref.desirable"))
        ax2.plot(GRID, u_grid, color="C4", ls="--", label=t("w.pref.undesirable"))
        ax2.plot([margin, margin], [data["KTO"][0], data["KTO"][1]], "o", color="C4")
        ax2.axhline(0, color="0.5", lw=0.8)
        ax2.set(xlabel=t("w.pref.kto_x"), title="KTO", ylabel="GC")
        ax2.legend(fontsize=7)
        rows = [[t("w.pref.method"), t("w.pref.col_chosen"), t("w.pref.col_rejected")]]
        rows += [[name, *(float("nan") if v != v else v for v in here[name])] for name in here]
        rows.append([t("w.pref.kto_row"), *data["KTO"]])
        return data, fig, rows

    return Explorer(t("w.pref.title"), controls, "margin", compute,
                    t("w.pref.note"))


def loss_type_coefficients(loss_type, margin, s_minus, beta, label_smoothing, discopop_tau):
    """(GC on the chosen token, GC on the rejected token), each (N,), of TRL's `loss_type` at each margin
    s+ - s- (s the log-ratio; one pair of one-token responses, so the batch's sorting in AOT is trivial)."""
    m, z, one = _ones(margin)
    s_r = torch.full_like(m, float(s_minus))
    cc, cr = C.dpo_loss(loss_type, s_r + m, z, one, s_r, z, one, beta, norm="sum",
                        label_smoothing=label_smoothing, discopop_tau=discopop_tau)
    return cc[:, 0], cr[:, 0]


def dpo_loss_explorer(loss_type="hinge", margin=0.0, s_minus=0.0, beta=0.5, label_smoothing=0.1, discopop_tau=0.5):
    """One loss type's GC on the chosen and the rejected response against the margin, DPO's beside it;
    the table gives every loss type's GC at the slider's point, side by side."""
    from unified_rl.coefficients.dpo_losses import LOSS_TYPES

    controls = {"margin": _slider(t("w.dl.margin"), margin, -6.0, 6.0, 0.1),
                "loss_type": _dropdown("loss_type", list(LOSS_TYPES), loss_type),
                "s_minus": _slider(t("w.dl.s_minus"), s_minus, -4.0, 4.0, 0.1),
                "beta": _slider("β", beta, 0.05, 2.0, 0.05),
                "label_smoothing": _slider("ε (label_smoothing)", label_smoothing, 0.01, 0.45, 0.01),
                "discopop_tau": _slider("τ (discopop_tau)", discopop_tau, 0.05, 2.0, 0.05)}
    grid = torch.linspace(-6.0, 6.0, 241, dtype=torch.float64)

    def compute(margin, loss_type, s_minus, beta, label_smoothing, discopop_tau):
        args = (s_minus, beta, label_smoothing, discopop_tau)
        here = {lt: tuple(v.item() for v in loss_type_coefficients(lt, [margin], *args)) for lt in LOSS_TYPES}
        c, r = loss_type_coefficients(loss_type, grid, *args)
        dc, _ = loss_type_coefficients("sigmoid", grid, *args)
        fig = Figure(figsize=(6.4, 3.2), layout="constrained")
        ax = fig.subplots()
        ax.plot(grid, dc, color="0.6", lw=1, label=t("w.dl.dpo"))
        ax.plot(grid, c, color="C0", label=t("w.dl.chosen", loss=loss_type))
        ax.plot(grid, r, color="C3", ls="--", label=t("w.dl.rejected", loss=loss_type))
        ax.plot([margin, margin], list(here[loss_type]), "o", color="k")
        ax.axhline(0, color="0.5", lw=0.8)
        ax.set(xlabel=t("w.dl.xlabel"), ylabel="GC", title=loss_type)
        ax.legend(fontsize=7)
        rows = [["loss_type", t("w.pref.col_chosen"), t("w.pref.col_rejected")]]
        rows += [[lt, *here[lt]] for lt in LOSS_TYPES]
        return {**here, "margin": margin}, fig, rows

    return Explorer(t("w.dl.title"), controls, "margin", compute, t("w.dl.note"))

