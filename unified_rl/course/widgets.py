"""Coefficient explorers: move a slider, watch the gradient coefficient GC of eq 5 respond.

Each explorer returns an `Explorer` (`explorer.py`: controls above a table and a plot). Every number
is computed by the package's own functions (`unified_rl.coefficients`, `unified_rl.advantages`),
never re-implemented here. This module holds the per-method explorers (RFT, DPO, PPO, GRPO); the
eq-5 explorer of every method side by side is in `paradigm_widgets`, the SFT one in `nb_basics`,
those of §5.2 (Pass@K / Maj@K, noisy rewards) in `section52_widgets`; all import from here.
References: DeepSeekMath (arXiv 2402.03300) appendix A.1, eq 10-21; GAE (arXiv 1506.02438).
"""

import ipywidgets as W
import torch
from matplotlib.figure import Figure

from unified_rl import advantages, coefficients
from unified_rl.course.i18n import t
from unified_rl.course.explorer import MAIN, OUTPUT, Explorer, _dropdown, _num, _slider, _table, labelled
from unified_rl.course.paradigm_widgets import paradigm_coefficients, paradigm_explorer, synthetic_batch
from unified_rl.course.plots import draw_coefficients

__all__ = ["MAIN", "OUTPUT", "Explorer", "DEFAULT_VALUES", "dpo_explorer", "grpo_explorer", "labelled",
           "paradigm_coefficients", "paradigm_explorer", "ppo_explorer", "rft_explorer", "synthetic_batch",
           "_dropdown", "_num", "_slider", "_table"]

def dpo_explorer(beta=0.1, margin=1.0):
    """DPO (eq 14): the coefficient beta * sigmoid(beta x- - beta x+) against the margin x+ - x-."""
    controls = {"beta": _slider("β", beta, 0.01, 2.0, 0.01),
                "margin": _slider(t("w.dpo.margin"), margin, -10.0, 10.0, 0.1)}

    def coef(margins, beta):
        m = torch.as_tensor(margins, dtype=torch.float64)[:, None]  # (N, 1): one token per response
        z, ones = torch.zeros_like(m), torch.ones_like(m)
        c_pos, c_neg = coefficients.dpo(m, z, ones, z, z, ones, beta)  # x+ = margin, x- = 0
        return c_pos[:, 0], c_neg[:, 0]

    def compute(beta, margin):
        c_pos, c_neg = coef([margin], beta)
        printed = torch.sigmoid(torch.tensor(beta * (0.0 - margin), dtype=torch.float64))  # eq 14 as printed
        data = {"beta": beta, "margin": margin, "coef_chosen": c_pos.item(), "coef_rejected": c_neg.item(),
                "eq14_printed": printed.item()}
        grid = torch.linspace(-10, 10, 201, dtype=torch.float64)
        g_pos, _ = coef(grid, beta)
        fig = Figure(figsize=(6, 3), layout="constrained")
        ax = fig.subplots()
        ax.plot(grid, g_pos, label=t("w.dpo.exact"))
        ax.plot(grid, g_pos / beta, "--", label=t("w.dpo.printed"))
        ax.plot([margin], [data["coef_chosen"]], "o", color="C0")
        ax.set(xlabel=t("w.dpo.margin"), ylabel=t("w.dpo.gc_chosen"), ylim=(0, max(1.05, beta * 1.05)))
        ax.legend(fontsize=7)
        rows = [["", t("w.value")], [t("w.dpo.row_chosen"), data["coef_chosen"]],
                [t("w.dpo.row_rejected"), data["coef_rejected"]],
                [t("w.dpo.row_printed"), data["eq14_printed"]]]
        return data, fig, rows

    return Explorer(t("w.dpo.title"), controls, "margin", compute,
                    t("w.dpo.note"))


DEFAULT_VALUES = (0.3, 0.35, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8)


def ppo_explorer(gamma=1.0, lam=0.95, clip_eps=0.2, ratio=1.1, reward=1.0, values=DEFAULT_VALUES):
    """PPO (eq 15-18): GAE advantages along one response, and the clipped coefficient against the ratio."""
    controls = {"gamma": _slider(t("w.ppo.gamma"), gamma, 0.5, 1.0, 0.01),
                "lam": _slider("λ (GAE)", lam, 0.0, 1.0, 0.01),
                "clip_eps": _slider(t("w.ppo.eps"), clip_eps, 0.0, 0.5, 0.01),
                "ratio": _slider("ratio π/π_old", ratio, 0.5, 1.5, 0.01),
                "reward": _slider(t("w.ppo.terminal"), reward, -1.0, 1.0, 0.1)}
    v = torch.tensor(values, dtype=torch.float64)[None]  # (1, T): the value model's predictions
    T = v.shape[1]

    def clipped(r, a, clip_eps):
        r = torch.as_tensor(r, dtype=torch.float64)[:, None]  # (N, 1)
        return coefficients.ppo(torch.full_like(r, a), torch.ones_like(r), logp=r.log(),
                                logp_old=torch.zeros_like(r), clip_eps=clip_eps)[:, 0]

    def compute(gamma, lam, clip_eps, ratio, reward):
        rewards = torch.zeros(1, T, dtype=torch.float64)
        rewards[0, -1] = reward  # outcome reward on the last token
        adv, returns = advantages.gae(rewards, v, torch.ones_like(v), gamma, lam)
        data = {"adv": adv[0], "returns": returns[0], "coef_pos": clipped([ratio], 1.0, clip_eps).item(),
                "coef_neg": clipped([ratio], -1.0, clip_eps).item()}
        fig = Figure(figsize=(8, 3), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2)
        tok = torch.arange(T)
        ax1.bar(tok, adv[0], color=["C2" if a >= 0 else "C3" for a in adv[0]], label="A_t (GAE)")
        ax1.plot(tok, v[0], "k.--", label="V_t")
        ax1.set(xlabel=t("w.token_t"), title=t("w.ppo.gae_title", gamma=gamma, lam=lam))
        ax1.legend(fontsize=7)
        grid = torch.linspace(0.5, 1.5, 201, dtype=torch.float64)
        ax2.axvspan(1 - clip_eps, 1 + clip_eps, color="0.92")
        ax2.plot(grid, clipped(grid, 1.0, clip_eps), label="A = +1")
        ax2.plot(grid, clipped(grid, -1.0, clip_eps), label="A = −1")
        ax2.plot([ratio, ratio], [data["coef_pos"], data["coef_neg"]], "ko")
        ax2.set(xlabel=t("w.ppo.ratio_r"), title=t("w.ppo.clip_title"))
        ax2.legend(fontsize=7)
        rows = [[t("w.token_t")] + list(range(T)), ["V_t"] + v[0].tolist(), ["A_t"] + adv[0].tolist(),
                ["GC at r, A=+1", data["coef_pos"]], ["GC at r, A=−1", data["coef_neg"]]]
        return data, fig, rows

    return Explorer(t("w.ppo.title"), controls, "lam", compute,
                    t("w.ppo.note"))


def grpo_explorer(rewards=(1, 0, 0, 1, 0, 1, 1, 0), group_size=4, beta=0.04, log_ratio=0.0):
    """GRPO (eq 21): group-relative advantages of G rewards, and the KL term beta * (pi_ref/pi - 1)."""
    G_max = len(rewards)
    controls = {"group_size": _slider(t("w.grpo.group_size"), group_size, 2, G_max, 1, cls=W.IntSlider)}
    for i, r in enumerate(rewards):
        controls[f"reward_{i}"] = W.ToggleButton(value=bool(r), description=f"o{i + 1}: {'1' if r else '0'}",
                                                 layout=W.Layout(width="56px"))
    controls["beta"] = _slider(t("w.grpo.beta"), beta, 0.0, 0.5, 0.01)
    controls["log_ratio"] = _slider("log π_ref/π", log_ratio, -2.0, 2.0, 0.05)
    toggles = [controls[f"reward_{i}"] for i in range(G_max)]

    def compute(group_size, beta, log_ratio, **rs):
        for i, tb in enumerate(toggles):  # show only the G answers of the group
            tb.description = f"o{i + 1}: {int(tb.value)}"
            tb.layout.display = None if i < group_size else "none"
        r = torch.tensor([float(rs[f"reward_{i}"]) for i in range(group_size)], dtype=torch.float64)
        adv = advantages.group_relative(r, group_size)
        ones = torch.ones(group_size, 1, dtype=torch.float64)
        gc = coefficients.grpo(r, group_size, 0 * ones, log_ratio * ones, ones, beta)[:, 0]  # Â + KL term
        grid = torch.linspace(-2, 2, 161, dtype=torch.float64)[:, None]
        kl = coefficients.grpo(None, 1, torch.zeros_like(grid), grid, torch.ones_like(grid), beta,
                               adv=torch.zeros_like(grid))[:, 0]  # the KL term alone (Â = 0)
        data = {"rewards": r, "adv": adv, "coef": gc, "kl_term": (gc - adv).mean().item()}
        fig = Figure(figsize=(8, 3), layout="constrained")
        ax1, ax2 = fig.subplots(1, 2)
        ax1.bar(range(1, group_size + 1), adv, color=["C2" if x else "C3" for x in r])
        ax1.set(xlabel=t("w.grpo.answer_i"), ylabel="Â_i", title=t("w.grpo.adv_title", group_size=group_size))
        ax2.plot(grid[:, 0], kl)
        ax2.plot([log_ratio], [data["kl_term"]], "o", color="C0")
        ax2.set(xlabel="log π_ref − log π", title=t("w.grpo.kl_title", beta=beta))
        rows = [[t("w.grpo.answer"), t("w.grpo.reward"), "Â", t("w.grpo.gc_col")]] + [
            [i + 1, int(r[i]), adv[i].item(), gc[i].item()] for i in range(group_size)]
        return data, fig, rows

    ex = Explorer(t("w.grpo.title"), controls, "group_size", compute,
                  t("w.grpo.note"))
    ex.children[1].children = tuple(labelled(c) for c in (controls["group_size"], W.HBox(toggles),
                                                           controls["beta"], controls["log_ratio"]))
    return ex


def rft_explorer(n_samples=16, accuracy=0.3, policy_accuracy=0.6, seed=0, max_len=10):
    """RFT (eq 10) vs online RFT (eq 11): which samples survive the filter I(o), per data source."""
    controls = {"n_samples": _slider(t("w.rft.n"), n_samples, 2, 32, 1, cls=W.IntSlider),
                "accuracy": _slider(t("w.rft.acc_off"), accuracy, 0.0, 1.0, 0.05),
                "policy_accuracy": _slider(t("w.rft.acc_on"), policy_accuracy, 0.0, 1.0, 0.05),
                "seed": _slider(t("w.seed"), seed, 0, 20, 1, cls=W.IntSlider)}

    def compute(n_samples, accuracy, policy_accuracy, seed):
        gen = torch.Generator().manual_seed(seed)
        u = torch.rand(n_samples, generator=gen)  # one draw per sample: raising accuracy only adds survivors
        lengths = torch.randint(3, max_len + 1, (n_samples,), generator=gen)
        mask = (torch.arange(max_len)[None] < lengths[:, None]).float()  # (N, T)
        off = coefficients.rft((u < accuracy).float(), mask)
        on = coefficients.online_rft((u < policy_accuracy).float(), mask)
        data = {"offline": off, "online": on, "mask": mask,
                "kept_offline": int(off.amax(1).sum()), "kept_online": int(on.amax(1).sum())}
        fig = Figure(figsize=(7, 3), layout="constrained")
        for ax, (name, c, k) in zip(fig.subplots(1, 2), [(t("w.rft.offline"), off, data["kept_offline"]),
                                                          (t("w.rft.online"), on, data["kept_online"])]):
            draw_coefficients(ax, c, mask, t("w.rft.kept_title", name=name, k=k, n_samples=n_samples), vmax=1.0)
        rows = [["", t("w.rft.col_off"), t("w.rft.col_on")],
                [t("w.rft.from"), t("w.rft.frozen"), t("w.rft.current")],
                [t("w.rft.kept"), data["kept_offline"], data["kept_online"]],
                [t("w.rft.dropped"), n_samples - data["kept_offline"], n_samples - data["kept_online"]]]
        return data, fig, rows

    return Explorer(t("w.rft.title"), controls, "accuracy", compute,
                    t("w.rft.note"))
