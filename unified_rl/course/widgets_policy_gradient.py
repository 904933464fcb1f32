"""The policy family's explorer (notebook 10): how the ratio and the length of a response set its GC.

One group of four answers: o1 (right or wrong, |o1| tokens) and three others of 8 tokens (one
right, two wrong). Left: the GC of o1's tokens against the ratio r = pi_theta / pi_old under
GRPO's symmetric clip, DAPO's clip-higher and CISPO's clipped weight (every token of o1 at r), and
GSPO's sequence clip with its own range (the paper's 3e-4 / 4e-4, the gspo policy term's settings): there only o1's first
token is at r, so its sequence ratio is s = r^(1/|o1|), and one GC, s A or 0, holds on every token.
Right: the push each token of o1 gets in eq 5 (GC / |o1|) against |o1| under the three
aggregations. Every number is a registered method's coefficient (`methods.gc_of`, `coefficients.grpo`).
References: Dr. GRPO arXiv 2503.20783, DAPO 2503.14476, GSPO 2507.18071, CISPO 2506.13585.
"""

import ipywidgets as W
import torch
from matplotlib.figure import Figure

from unified_rl import coefficients as C
from unified_rl.course.i18n import t
from unified_rl.course.explorer import Explorer, _slider
from unified_rl.methods import METHODS, gc_of

OTHERS = (1.0, 0.0, 0.0)  # rewards of o2..o4
OTHER_LEN, MAX_LEN = 8, 16  # their length; the constant L of Dr. GRPO here
GSPO_EPS, GSPO_EPS_HIGH = METHODS["gspo"].hparams.gspo_clip_eps, METHODS["gspo"].hparams.gspo_clip_eps_high  # GSPO's own range
GSPO_KEY = "GSPO: o₁'s 1st token at r (ε 3e-4/4e-4)"
# the curves' keys (what tests and notebooks read) -> the catalogue key of their label (what a learner sees)
_LABELS = {"GRPO / PPO clip": "w.pg.curve.grpo_clip", "DAPO clip-higher": "w.pg.curve.dapo_clip_higher",
           "CISPO weight": "w.pg.curve.cispo_weight", GSPO_KEY: "w.pg.curve.gspo",
           "GRPO: A-hat, 1/|o|": "w.pg.curve.grpo_length", "token-mean (DAPO)": "w.pg.curve.token_mean",
           f"constant L = {MAX_LEN} (Dr. GRPO)": "w.pg.curve.constant_l"}


def label(key):
    """A curve's label in the current language."""
    return t(_LABELS[key], L=MAX_LEN) if key in _LABELS else key


def _group(right, length):
    """(rewards (4,), mask (4, MAX_LEN)) of the group: o1 first."""
    rewards = torch.tensor([float(right), *OTHERS], dtype=torch.float64)
    lengths = torch.tensor([length] + [OTHER_LEN] * 3)
    mask = (torch.arange(MAX_LEN)[None] < lengths[:, None]).double()  # (4, L)
    return rewards, mask


def gspo_sequence(ratio, right, length, clip_eps=GSPO_EPS, clip_eps_high=GSPO_EPS_HIGH):
    """GSPO with o1's first token at `ratio`, its other tokens and the other answers at 1: (s, GC of o1 (|o1|,))."""
    rewards, mask = _group(right, length)
    old = torch.zeros_like(mask)
    logp = old.clone()
    logp[0, 0] = torch.log(torch.as_tensor(ratio, dtype=torch.float64))  # one token moved
    s = torch.exp((logp[0] - old[0]).sum() / mask[0].sum())  # the geometric mean of o1's token ratios
    gc = gc_of("gspo", logp, mask, logp_old=old, scores=rewards, group_size=4,
               settings={"gspo_clip_eps": clip_eps, "gspo_clip_eps_high": clip_eps_high})
    return s.item(), gc[0, :length]


def ratio_gcs(ratios, right, length, clip_eps, clip_eps_high):
    """GC of o1's tokens at each ratio, per method: every token of o1 at that ratio, except GSPO
    (`gspo_sequence`: its first token only, with GSPO's own clip range). {name: (N,)}"""
    rewards, mask = _group(right, length)
    out = {k: [] for k in ("GRPO / PPO clip", "DAPO clip-higher", "CISPO weight", GSPO_KEY)}
    old = torch.zeros_like(mask)
    for r in torch.as_tensor(ratios, dtype=torch.float64):
        logp = old.clone()
        logp[0] = torch.log(r) * mask[0]  # o1 at ratio r, the others on-policy
        agg = {"aggregation": "seq-mean-token-mean"}  # the same aggregation: only the clip differs
        on = dict(logp_old=old, scores=rewards, group_size=4, clip_eps=clip_eps)
        out["GRPO / PPO clip"].append(C.grpo(rewards, 4, logp, logp, mask, 0.0, logp_old=old, clip_eps=clip_eps)[0, 0])
        out["DAPO clip-higher"].append(gc_of("dapo", logp, mask, settings={"clip_eps_high": clip_eps_high, **agg},
                                             **on)[0, 0])
        out["CISPO weight"].append(gc_of("cispo", logp, mask, settings={"cispo_clip_eps_high": clip_eps_high, **agg},
                                         **on)[0, 0])
        out[GSPO_KEY].append(gspo_sequence(r, right, length)[1][0])
    return {k: torch.stack(v) for k, v in out.items()}


def length_pushes(lengths, right):
    """Per-token push GC / |o1| of o1 in eq 5 against |o1|, per aggregation (beta = 0). {name: (N,)}"""
    out = {"GRPO: A-hat, 1/|o|": [], "token-mean (DAPO)": [], f"constant L = {MAX_LEN} (Dr. GRPO)": []}
    for n in lengths:
        rewards, mask = _group(right, int(n))
        z = torch.zeros_like(mask)
        out["GRPO: A-hat, 1/|o|"].append(C.grpo(rewards, 4, z, z, mask, 0.0)[0, 0] / n)
        out["token-mean (DAPO)"].append(gc_of("dapo", z, mask, logp_old=z, scores=rewards, group_size=4)[0, 0] / n)
        out[f"constant L = {MAX_LEN} (Dr. GRPO)"].append(
            gc_of("dr-grpo", z, mask, logp_ref=z, scores=rewards, group_size=4, beta=0.0,
                  settings={"max_len": float(MAX_LEN)})[0, 0] / n)
    return {k: torch.stack(v) for k, v in out.items()}


def policy_explorer(ratio=1.25, clip_eps=0.2, clip_eps_high=0.28, length=12, right=False):
    """The GC of one answer against the ratio (clip family) and its length (aggregation)."""
    controls = {"ratio": _slider(t("w.pg.ratio_r"), ratio, 0.5, 1.6, 0.01),
                "clip_eps": _slider("ε_low", clip_eps, 0.0, 0.5, 0.01),
                "clip_eps_high": _slider("ε_high", clip_eps_high, 0.0, 0.5, 0.01),
                "length": _slider(t("w.pg.len"), length, 1, MAX_LEN, 1, cls=W.IntSlider),
                "right": W.ToggleButtons(options=[(t("w.pg.o1_wrong"), False), (t("w.pg.o1_right"), True)], value=right,
                                         style={"button_width": "90px"})}

    def compute(ratio, clip_eps, clip_eps_high, length, right):
        grid = torch.linspace(0.5, 1.6, 111, dtype=torch.float64)
        curves = ratio_gcs(grid, right, length, clip_eps, clip_eps_high)
        here = {k: v[0].item() for k, v in ratio_gcs([ratio], right, length, clip_eps, clip_eps_high).items()}
        ns = torch.arange(1, MAX_LEN + 1)
        pushes = length_pushes(ns, right)
        push_here = {k: v[length - 1].item() for k, v in pushes.items()}
        s, gspo_gc = gspo_sequence(ratio, right, length)
        fig = Figure(figsize=(9, 3.2), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2)
        ax1.axvspan(1 - clip_eps, 1 + clip_eps_high, color="0.93")  # the per-token clip range
        ax1.axvspan((1 - GSPO_EPS) ** length, (1 + GSPO_EPS_HIGH) ** length, color="C3", alpha=0.3)  # GSPO's, in r
        for i, (k, v) in enumerate(curves.items()):  # dashed and dotted: the curves often coincide
            ax1.plot(grid, v, color=f"C{i}", lw=(3.0, 2.0, 1.6, 1.6)[i], ls=("-", "--", "-", ":")[i], label=label(k))
            ax1.plot([ratio], [here[k]], "o", color=f"C{i}", ms=4)
        ax1.axhline(0, color="k", lw=0.6)
        ax1.set(xlabel=t("w.pg.xlabel1"), ylabel=t("w.pg.gc_token"),
                title=t("w.pg.clips_right" if right else "w.pg.clips_wrong"))
        ax1.legend(fontsize=7)
        for i, (k, v) in enumerate(pushes.items()):
            ax2.plot(ns, v, "o-", ms=3, color=f"C{i + 4}", label=label(k))
        ax2.axvline(length, color="grey", lw=0.8, ls="--")
        ax2.axhline(0, color="k", lw=0.6)
        ax2.set(xlabel=t("w.pg.xlabel2"), ylabel=t("w.pg.push"),
                title=t("w.pg.agg_title"))
        ax2.legend(fontsize=7)
        rows = [["", t("w.pg.gc_token")]] + [[label(k), v] for k, v in here.items()]
        rows += [["", t("w.pg.gspo_row")], [t("w.pg.seq_ratio"), s],
                 [t("w.pg.gc_that"), gspo_gc[0].item()], [t("w.pg.gc_others"), gspo_gc[-1].item()]]
        rows += [["", t("w.pg.push_row")]] + [[label(k), v] for k, v in push_here.items()]
        data = {"gc": here, "push": push_here, "gspo": {"s": s, "gc": gspo_gc.tolist()}}
        return data, fig, rows

    return Explorer(t("w.pg.title"), controls, "ratio", compute,
                    t("w.pg.note"))
