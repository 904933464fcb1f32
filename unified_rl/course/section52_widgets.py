"""Explorers for DeepSeekMath §5.2 (notebooks 07 and 08), built on the `Explorer` of `widgets`.

- `pass_maj_explorer`: one question's answer distribution, raised to a power alpha and renormalised;
  the exact Pass@K and Maj@K of K i.i.d. samples before and after (§5.2.2).
- `noisy_reward_explorer`: rewards flipped with probability epsilon by the package's `NoisyReward`,
  and what is left of RFT's, DPO's and GRPO's signal (§5.2.3).
"""

import ipywidgets as W
import torch
from matplotlib.figure import Figure

from unified_rl import advantages
from unified_rl.course.i18n import t
from unified_rl.course.nb_pass_maj import maj_at_k_iid, one_question, pass_at_k_iid, sharpen
from unified_rl.course.widgets import Explorer, _num, _slider
from unified_rl.rewards import NoisyReward


def pass_maj_explorer(p_right=0.3, top_wrong_share=0.6, alpha=2.0, k_max=64):
    """§5.2.2: one question's answer distribution, raised to the power alpha and renormalised; the exact
    Pass@K and Maj@K of K i.i.d. samples before and after."""
    controls = {"p_right": _slider("p(right)", p_right, 0.0, 1.0, 0.05),
                "top_wrong_share": _slider(t("w.s52.top_wrong"), top_wrong_share, 0.0, 1.0, 0.05),
                "alpha": _slider(t("w.s52.power"), alpha, 0.25, 8.0, 0.25)}
    ks = [k for k in (1, 2, 4, 8, 16, 32, 64, 128, 256) if k <= k_max]

    def curves(dist):
        return {"p_right": dist["right"], "pass_at_k": [pass_at_k_iid(dist["right"], k) for k in ks],
                "maj_at_k": [maj_at_k_iid(dist, "right", k) for k in ks]}

    def compute(p_right, top_wrong_share, alpha):
        dist = one_question(p_right, top_wrong_share)
        sharp = sharpen(dist, alpha)
        before, after = curves(dist), curves(sharp)
        data = {"k": ks, "dist": dist, "sharpened": sharp, "before": before, "after": after}
        fig = Figure(figsize=(9, 2.8), layout="constrained")
        ax0, ax1, ax2 = fig.subplots(1, 3)
        names = list(dist)
        x = torch.arange(len(names), dtype=torch.float64)
        ax0.bar(x - 0.2, [dist[a] for a in names], 0.4, label=t("w.s52.before"), color="C0")
        ax0.bar(x + 0.2, [sharp[a] for a in names], 0.4, label=f"p^α / Z, α={alpha:g}", color="C1")
        ax0.set_xticks(x.tolist(), [t("w.s52.right")] + [f"w{i + 1}" for i in range(len(names) - 1)])
        ax0.set(title=t("w.s52.dist"), ylim=(0, 1))
        ax0.legend(fontsize=7)
        for ax, key, label in ((ax1, "maj_at_k", "Maj@K"), (ax2, "pass_at_k", "Pass@K")):
            ax.plot(ks, before[key], "o-", color="C0", label=t("w.s52.before"))
            ax.plot(ks, after[key], "o-", color="C1", label=t("w.s52.after"))
            ax.set_xscale("log", base=2)
            ax.set_xticks(ks, [str(k) for k in ks])
            ax.set(title=label, xlabel="K", ylim=(-0.02, 1.02))
            ax.grid(alpha=0.3)
        ax2.legend(fontsize=7)
        K, Km = ks[-1], 16 if 16 in ks else ks[-1]  # the K notebook 07's Figure 7 reads, and the largest
        rows = [["", "p(right)", "Pass@1", f"Maj@{Km}", f"Pass@{Km}", f"Maj@{K}", f"Pass@{K}"]]
        for name, c in ((t("w.s52.before"), before), (t("w.s52.after_alpha", alpha=alpha), after)):
            i = ks.index(Km)
            rows.append([name, c["p_right"], c["pass_at_k"][0], c["maj_at_k"][i], c["pass_at_k"][i],
                         c["maj_at_k"][-1], c["pass_at_k"][-1]])
        return data, fig, rows

    return Explorer(t("w.s52.title"), controls, "p_right", compute,
                    t("w.s52.note"))


def noisy_signal(accuracy, flip_prob, group_size, n_groups=4000, seed=0):
    """What a reward that is wrong with probability flip_prob leaves of each method's signal, by simulation.

    n_groups groups of group_size samples, each right with probability `accuracy`; the package's
    `NoisyReward` flips the 0/1 rewards. Returns
    - rft_precision: share of the samples RFT keeps (noisy reward 1) that are right;
    - dpo_right, dpo_reversed: shares of DPO pairs (one noisy-1 and one noisy-0 sample of a group)
      whose chosen is right and rejected wrong, and the other way round (the rest agree in truth);
    - grpo_adv_right, grpo_adv_wrong: GRPO's mean advantage (eq 21's A-hat) on right and on wrong samples;
    - grpo_right_pushed_down: share of right samples whose advantage is negative.
    A share with nothing to count (no sample kept, no pair) is None.
    """
    if not 0.0 < accuracy < 1.0:
        raise ValueError(f"accuracy must be in (0, 1), got {accuracy}")
    if group_size < 2:
        raise ValueError(f"group_size must be >= 2, got {group_size}")
    gen = torch.Generator().manual_seed(seed)
    truth = (torch.rand(n_groups * group_size, generator=gen) < accuracy).double()  # (N,) 1 = right
    noisy = NoisyReward(lambda _: truth, flip_prob, seed=seed + 1)(None)  # (N,) what the method sees
    right, kept = truth > 0, noisy > 0
    adv = advantages.group_relative(noisy, group_size)
    # DPO: in each group with both noisy labels, the first noisy-1 sample is chosen, the first noisy-0 rejected
    t, k = truth.view(n_groups, group_size), kept.view(n_groups, group_size)
    usable = k.any(1) & (~k).any(1)
    chosen = t.gather(1, k.double().argmax(1, keepdim=True))[usable, 0]
    rejected = t.gather(1, (~k).double().argmax(1, keepdim=True))[usable, 0]
    mean = lambda x: x.double().mean().item() if x.numel() else None  # noqa: E731
    return {"rft_precision": mean(truth[kept]), "rft_kept": mean(kept),
            "dpo_right": mean((chosen == 1) & (rejected == 0)), "dpo_reversed": mean((chosen == 0) & (rejected == 1)),
            "grpo_adv_right": mean(adv[right]), "grpo_adv_wrong": mean(adv[~right]),
            "grpo_right_pushed_down": mean(adv[right] < 0)}


def noisy_reward_explorer(flip_prob=0.2, accuracy=0.3, group_size=8):
    """§5.2.3: how much of RFT's, DPO's and GRPO's signal survives rewards flipped with probability ε."""
    controls = {"flip_prob": _slider(t("w.s52.flip"), flip_prob, 0.0, 0.5, 0.05),
                "accuracy": _slider(t("w.s52.acc"), accuracy, 0.05, 0.95, 0.05),
                "group_size": _slider(t("w.s52.group_size"), group_size, 2, 16, 1, cls=W.IntSlider)}
    grid = [i / 20 for i in range(11)]  # eps = 0 ... 0.5

    def compute(flip_prob, accuracy, group_size):
        now = noisy_signal(accuracy, flip_prob, group_size)
        curve = [noisy_signal(accuracy, e, group_size, n_groups=1000) for e in grid]
        a, e = accuracy, flip_prob
        formula = (1 - e) * a / ((1 - e) * a + e * (1 - a))  # Bayes: P(right | kept)
        data = {**now, "rft_precision_formula": formula, "curve": curve, "grid": grid}
        fig = Figure(figsize=(8, 3), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2)
        for key, label in (("rft_precision", t("w.s52.rft_kept")),
                           ("dpo_right", t("w.s52.dpo_right")), ("dpo_reversed", t("w.s52.dpo_rev"))):
            ax1.plot(grid, [float("nan") if c[key] is None else c[key] for c in curve], label=label)  # gap if none
        ax1.axvline(e, color="k", lw=0.5)
        ax1.set(xlabel="ε", ylim=(0, 1.02), title=t("w.s52.acc_title", a=a))
        ax1.legend(fontsize=7)
        ax2.plot(grid, [c["grpo_adv_right"] for c in curve], color="C2", label=t("w.s52.adv_right"))
        ax2.plot(grid, [c["grpo_adv_wrong"] for c in curve], color="C3", label=t("w.s52.adv_wrong"))
        ax2.axhline(0, color="grey", lw=0.5)
        ax2.axvline(e, color="k", lw=0.5)
        ax2.set(xlabel="ε", title=f"GRPO, G = {group_size}")
        ax2.legend(fontsize=7)
        rows = [[t("w.s52.at_eps") + f"{e:.2f}", t("w.s52.value")],
                [t("w.s52.rft_sim"), now["rft_precision"]],
                [t("w.s52.rft_bayes"), formula],
                [t("w.s52.dpo_both"), f"{_num(now['dpo_right'])} / {_num(now['dpo_reversed'])}"],
                [t("w.s52.grpo_adv"),
                 f"{_num(now['grpo_adv_right'], '+.3f')} / {_num(now['grpo_adv_wrong'], '+.3f')}"],
                [t("w.s52.grpo_down"), now["grpo_right_pushed_down"]]]
        return data, fig, rows

    return Explorer(t("w.s52.noisy_title"), controls, "flip_prob", compute,
                    t("w.s52.noisy_note"))
