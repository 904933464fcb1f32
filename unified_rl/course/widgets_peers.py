"""Notebook 10's explorer of the loss shapes TRL and verl ship: the GC of one token against its ratio.

One group of four 8-token answers to one question: o1 (right or wrong) with every token at the ratio
r = pi_theta / pi_old, the three others on-policy (one right, two wrong). Each curve is the coefficient
of a registered method (`METHODS[name].coefficient` on `paradigm.step_from_tensors`), with the settings
the sliders give: GRPO's clip, the same with TRL's two-sided `delta`, SAPO's gate, CISPO's weight, GMPO's
clip in log space and VESPO's Gamma weight of the sequence ratio W = r^8. Nothing is recomputed here.
"""

import dataclasses

import ipywidgets as W
import torch
from matplotlib.figure import Figure

from unified_rl.course.explorer import Explorer, _slider
from unified_rl.course.i18n import t
from unified_rl.methods import METHODS
from unified_rl.paradigm import step_from_tensors
from unified_rl.presets import get_preset

N_TOKENS = 8
CURVES = {  # the curve's key: (method, its settings from the sliders), drawn in this order
    "grpo": ("grpo", lambda s: {}),
    "grpo + delta": ("grpo", lambda s: {"delta": s["delta"]}),
    "sapo": ("sapo", lambda s: {"sapo_tau_pos": s["tau"], "sapo_tau_neg": s["tau"]}),
    "cispo": ("cispo", lambda s: {"cispo_clip_eps_high": s["clip_eps"]}),
    "gmpo": ("gmpo", lambda s: {"gmpo_clip_eps": s["clip_eps"], "gmpo_clip_eps_high": s["clip_eps"]}),
    "vespo": ("vespo", lambda s: {}),
}


def token_gc(name, settings, ratio, right, clip_eps):
    """The GC of o1's first token when every token of o1 is at `ratio` (METHODS[name].coefficient)."""
    m = METHODS[name]
    mask = torch.ones(4, N_TOKENS, dtype=torch.float64)
    old = torch.zeros_like(mask)
    logp = old.clone()
    logp[0] = torch.log(torch.as_tensor(ratio, dtype=torch.float64))
    cfg = dataclasses.replace(get_preset("cpu").rl, clip_eps=clip_eps, beta=0.0)
    step = step_from_tensors(logp, mask, cfg, logp_ref=logp.detach(), logp_old=old, group_size=4,
                             scores=torch.tensor([float(right), 1.0, 0.0, 0.0], dtype=torch.float64),
                             hp=dataclasses.replace(m.hparams, **settings))
    return m.coefficient(step)[0, 0].item()


def curves(ratios, right, clip_eps=0.2, delta=1.3, tau=1.0):
    """{curve key: [GC of o1's first token at each ratio]}."""
    s = {"clip_eps": clip_eps, "delta": delta, "tau": tau}
    return {k: [token_gc(name, settings(s), r, right, clip_eps) for r in ratios] for k, (name, settings) in CURVES.items()}


def loss_explorer(ratio=1.25, clip_eps=0.2, delta=1.3, tau=1.0, right=False):
    """The GC of one token against its ratio under the loss shapes TRL and verl ship."""
    controls = {"ratio": _slider(t("w.pg.ratio_r"), ratio, 0.3, 2.0, 0.01),
                "clip_eps": _slider("ε", clip_eps, 0.05, 0.5, 0.01),
                "delta": _slider("δ", delta, 1.05, 2.0, 0.01),
                "tau": _slider("τ (SAPO)", tau, 0.25, 4.0, 0.05),
                "right": W.ToggleButtons(options=[(t("w.pg.o1_wrong"), False), (t("w.pg.o1_right"), True)],
                                         value=right, style={"button_width": "90px"})}

    def compute(ratio, clip_eps, delta, tau, right):
        grid = [0.3 + 0.017 * i for i in range(101)]
        lines = curves(grid, right, clip_eps, delta, tau)
        here = {k: v[0] for k, v in curves([ratio], right, clip_eps, delta, tau).items()}
        fig = Figure(figsize=(7, 3.4), layout="constrained")
        ax = fig.subplots()
        ax.axvspan(1 - clip_eps, 1 + clip_eps, color="0.93")
        styles = ("-", "--", "-", ":", "-.", "-")
        for i, (k, v) in enumerate(lines.items()):
            ax.plot(grid, v, color=f"C{i}", lw=2.4 if i == 0 else 1.6, ls=styles[i], label=t(f"w.peers.curve.{k}"))
            ax.plot([ratio], [here[k]], "o", color=f"C{i}", ms=4)
        ax.axhline(0, color="k", lw=0.6)
        ax.set(xlabel=t("w.pg.xlabel1"), ylabel=t("w.pg.gc_token"),
               title=t("w.peers.title_right" if right else "w.peers.title_wrong"))
        ax.legend(fontsize=7)
        rows = [["", t("w.pg.gc_token")]] + [[t(f"w.peers.curve.{k}"), v] for k, v in here.items()]
        return {"gc": here}, fig, rows

    return Explorer(t("w.peers.title"), controls, "ratio", compute, t("w.peers.note"))
