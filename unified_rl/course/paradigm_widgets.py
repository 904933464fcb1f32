"""Eq 5 side by side: every method's gradient coefficient on one batch, in one explorer (notebook 00).

Each panel is computed by the package's own `coefficients` functions (DPO's by its method's own
coefficient, `METHODS["dpo"].coefficient`, as the trainer calls it); the three β are separate
controls (DPO's β of eq 12, GRPO's KL weight of eq 19, PPO's per-token KL penalty of DeepSeekMath
eq 2), and every panel shares one colour scale so that magnitudes compare across methods.
References: DeepSeekMath (arXiv 2402.03300) §5.2.1 and appendix A.1, eq 5-21.
"""

import ipywidgets as W
import torch
from matplotlib.figure import Figure

from unified_rl import advantages, coefficients
from unified_rl.course.explorer import Explorer, _dropdown, _slider
from unified_rl.course.i18n import t
from unified_rl.course.plots import draw_coefficients
from unified_rl.methods import METHODS
from unified_rl.paradigm import step_from_tensors
from unified_rl.presets import RLConfig


def synthetic_batch(B=8, T=10, seed=0):
    """A reproducible batch: 0/1 rewards, log-probs of the policy, old and reference policies, values."""
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(4, T + 1, (B,), generator=gen)
    mask = (torch.arange(T)[None] < lengths[:, None]).float()  # (B, T)
    logp = -3 * torch.rand(B, T, generator=gen)  # log-probs of sampled tokens
    return {"rewards": torch.randint(0, 2, (B,), generator=gen).float(), "mask": mask, "logp": logp,
            "logp_old": logp + 0.2 * torch.randn(B, T, generator=gen),
            "logp_ref": logp + 0.3 * torch.randn(B, T, generator=gen), "values": torch.rand(B, T, generator=gen)}


def _dpo_panel(r, logp, logp_ref, mask, beta):
    """DPO's GC as the method hands it to the trainer. Rows (2k, 2k+1) form a pair, the one with the
    higher reward chosen; the method wants the B chosen rows first, then their partners (data.pairs)."""
    B = mask.shape[0]
    first = r[0::2] >= r[1::2]
    ic = torch.arange(0, B, 2) + (~first).long()
    ir = torch.arange(0, B, 2) + first.long()
    rows = torch.cat([ic, ir])
    step = step_from_tensors(logp[rows], mask[rows], RLConfig(dpo_beta=float(beta)), logp_ref=logp_ref[rows])
    dpo = torch.zeros_like(logp)
    dpo[rows] = METHODS["dpo"].coefficient(step).to(dpo.dtype)  # (B, T): +2c chosen, -2c rejected
    return dpo


def paradigm_coefficients(batch, beta=0.04, group_size=4, gamma=1.0, lam=0.95, clip_eps=0.2, *,
                          dpo_beta=None, grpo_beta=None, ppo_beta=None):
    """Every method's GC on one batch, {method: (B, T)}, each from `unified_rl.coefficients`.

    `beta` is the default of the three separate weights: DPO's β (eq 12), GRPO's KL β (eq 19) and
    PPO's per-token KL penalty β (DeepSeekMath eq 2).
    """
    dpo_beta, grpo_beta, ppo_beta = (beta if b is None else b for b in (dpo_beta, grpo_beta, ppo_beta))
    r, mask, logp, logp_ref = batch["rewards"], batch["mask"], batch["logp"], batch["logp_ref"]
    if mask.shape[0] % 2:
        raise ValueError(f"the batch needs an even number of samples to form DPO pairs, got {mask.shape[0]}")
    out = {"SFT": coefficients.sft(mask), "RFT / online RFT": coefficients.rft((r > 0.5).float(), mask),
           "DPO": _dpo_panel(r, logp, logp_ref, mask, dpo_beta)}
    # PPO: the outcome reward on the last token, a per-token KL penalty everywhere (DeepSeekMath eq 2).
    last = mask.cumsum(-1) == mask.sum(-1, keepdim=True)
    tok_r = -ppo_beta * (logp - logp_ref) * mask + r[:, None] * (last & (mask > 0))
    adv, _ = advantages.gae(tok_r, batch.get("values", torch.zeros_like(logp)), mask, gamma, lam)
    out["PPO"] = coefficients.ppo(adv, mask, logp=logp, logp_old=batch.get("logp_old", logp), clip_eps=clip_eps)
    out["GRPO"] = coefficients.grpo(r, group_size, logp, logp_ref, mask, grpo_beta)
    return out


def _shown(name):
    """A panel's method name as shown: the shared RFT panel's in the current language (the key stays English)."""
    return t("w.pw.rft_panel") if name == "RFT / online RFT" else name


def paradigm_explorer(batch=None, beta=0.04, group_size=4, *, dpo_beta=None, grpo_beta=None, ppo_beta=None):
    """Eq 5 side by side: the six methods' coefficients on one batch in five panels (online RFT = RFT's)."""
    batch = dict(synthetic_batch() if batch is None else batch)
    rewards = torch.as_tensor(batch["rewards"], dtype=torch.float32).clone()
    B = rewards.shape[0]
    sizes = [g for g in range(2, B + 1) if B % g == 0]
    if not sizes:
        raise ValueError(f"a batch of {B} samples cannot be split into groups of 2 or more")
    betas = {k: beta if v is None else v for k, v in
             (("dpo_beta", dpo_beta), ("grpo_beta", grpo_beta), ("ppo_beta", ppo_beta))}
    controls = {"dpo_beta": _slider("DPO β", betas["dpo_beta"], 0.0, 1.0, 0.01),
                "grpo_beta": _slider("GRPO KL β", betas["grpo_beta"], 0.0, 1.0, 0.01),
                "ppo_beta": _slider("PPO KL β", betas["ppo_beta"], 0.0, 1.0, 0.01),
                "group_size": _dropdown(t("w.pw.group_size"), sizes, group_size if group_size in sizes else sizes[0]),
                "sample": _slider(t("w.pw.sample_i"), 0, 0, B - 1, 1, cls=W.IntSlider),
                "reward": _slider(t("w.pw.its_reward"), float(rewards[0]), 0.0, 1.0, 0.1)}
    # registered before the Explorer's own observers: picking a sample shows its reward, moving the
    # reward slider sets that sample's reward
    controls["sample"].observe(lambda ch: setattr(controls["reward"], "value", float(rewards[ch["new"]])), "value")
    controls["reward"].observe(lambda ch: rewards.__setitem__(controls["sample"].value, ch["new"]), "value")

    def compute(dpo_beta, grpo_beta, ppo_beta, group_size, sample, reward):
        coefs = paradigm_coefficients({**batch, "rewards": rewards}, group_size=group_size,
                                      dpo_beta=dpo_beta, grpo_beta=grpo_beta, ppo_beta=ppo_beta)
        mask = batch["mask"]
        vmax = max(float(c.abs().max()) for c in coefs.values()) or 1.0  # one scale: magnitudes compare
        data = {"coefs": coefs, "rewards": rewards.clone(), "vmax": vmax}
        fig = Figure(figsize=(11, 2.9))  # a fixed layout: constrained layout doubled the redraw time
        fig.subplots_adjust(left=0.05, right=0.9, bottom=0.18, top=0.78, wspace=0.12)
        for j, (ax, (name, c)) in enumerate(zip(fig.subplots(1, len(coefs), sharey=True), coefs.items())):
            im = draw_coefficients(ax, c, mask, t("w.pw.panel", name=_shown(name), max_gc=float(c.abs().max())), vmax=vmax)
            ax.axhline(sample, color="k", lw=0.5)
            ax.set_ylabel(t("w.pw.sample_i") if j == 0 else "")
        fig.colorbar(im, cax=fig.add_axes([0.92, 0.18, 0.012, 0.6]), label=t("w.pw.one_scale"))
        n = mask.sum(-1)
        rows = [[t("w.pw.sample"), t("w.pw.reward")] + [f"{_shown(k)}: (1/|o|)ΣGC" for k in coefs]] + [
            [i, float(rewards[i])] + [float(c[i].sum() / n[i]) for c in coefs.values()] for i in range(B)]
        return data, fig, rows

    return Explorer(t("w.pw.title"), controls,
                    "dpo_beta", compute, t("w.pw.note"))

