"""Coefficient explorers: move a slider, watch the gradient coefficient GC of eq 5 respond.

Each explorer returns an `Explorer`, an ipywidgets VBox of controls above an output (a table of
numbers and a small plot). Every number is computed by the package's own functions
(`unified_rl.coefficients`, `unified_rl.advantages`), never re-implemented here.

For tests and for the notebooks' own asserts an explorer is driven from Python: set
`ex.controls["beta"].value = 0.5` and read `ex.data` (the numbers shown) or `ex.table.value`.
Browser tests find the main control by the CSS class `url-main-control` and the output by
`url-explorer-output`. Plots are drawn on pyplot-free Figures and sent as PNG, so no figure leaks
and the widgets work in JupyterLab, Voila, nbval and plain Python alike.
References: DeepSeekMath (arXiv 2402.03300) appendix A.1, eq 10-21; GAE (arXiv 1506.02438).
The explorers of §5.2 (Pass@K / Maj@K, noisy rewards) are in `section52_widgets`.
"""

import contextlib
import html
import io

import ipywidgets as W
import torch
from matplotlib.figure import Figure

from unified_rl import advantages, coefficients
from unified_rl.course.plots import draw_coefficients

MAIN, OUTPUT = "url-main-control", "url-explorer-output"


class Explorer(W.VBox):
    """Controls + output, recomputed by `compute(**control values) -> (data, figure, rows)` on every change."""

    def __init__(self, title, controls, main, compute, note=""):
        self.controls, self.data, self.error, self._held, self.title = controls, {}, None, False, title
        self._compute = compute
        controls[main].add_class(MAIN)
        self.table, self.image = W.HTML(), W.Image(format="png", layout=W.Layout(max_width="900px"))
        self.output = W.VBox([self.table, self.image])
        self.output.add_class(OUTPUT)
        header = W.HTML(f"<b>{html.escape(title)}</b>" + (f"<br><small>{note}</small>" if note else ""))
        super().__init__([header, W.VBox(list(controls.values())), self.output])
        for c in controls.values():
            c.observe(lambda _: None if self._held else self.refresh(), names="value")
        self.refresh()

    def __repr__(self):  # the text/plain fallback where widgets do not render (static pages, logs)
        return f"<Explorer: {self.title}; run the notebook in Jupyter to use the controls>"

    @contextlib.contextmanager
    def hold(self):
        """Change several controls with a single redraw: `with ex.hold(): ...`."""
        self._held = True
        try:
            yield self
        finally:
            self._held = False
            self.refresh()

    def refresh(self):
        """Recompute from the current control values and redraw; a bad input shows its message."""
        try:
            self.data, fig, rows = self._compute(**{k: c.value for k, c in self.controls.items()})
        except ValueError as e:  # e.g. rewards that are not a whole number of groups
            self.error = str(e)
            self.table.value = f'<span style="color:#cf222e">{html.escape(self.error)}</span>'
            return
        self.error = None
        self.table.value = _table(rows)
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=80)
        self.image.value = buf.getvalue()


def _table(rows):
    """An HTML table from a list of rows; the first row is the header; floats to 4 digits."""
    fmt = lambda v: f"{v:.4f}" if isinstance(v, float) else html.escape(str(v))  # noqa: E731
    cells = ["".join(f"<{'th' if i == 0 else 'td'} style='padding:0 8px'>{fmt(v)}</{'th' if i == 0 else 'td'}>"
                     for v in row) for i, row in enumerate(rows)]
    return "<table>" + "".join(f"<tr>{c}</tr>" for c in cells) + "</table>"


def _num(v, spec=".3f"):
    return "—" if v is None else format(v, spec)


def _slider(description, value, lo, hi, step, cls=W.FloatSlider, fmt=".2f"):
    kw = dict(value=value, min=lo, max=hi, step=step, description=description, continuous_update=False,
              style={"description_width": "initial"}, layout=W.Layout(width="420px"))
    return cls(readout_format=fmt, **kw) if cls is W.FloatSlider else cls(**kw)


def dpo_explorer(beta=0.1, margin=1.0):
    """DPO (eq 14): the coefficient beta * sigmoid(beta x- - beta x+) against the margin x+ - x-."""
    controls = {"beta": _slider("β", beta, 0.01, 2.0, 0.01),
                "margin": _slider("margin x⁺ − x⁻ (log-ratio of chosen minus rejected)", margin, -10.0, 10.0, 0.1)}

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
        ax.plot(grid, g_pos, label="exact: β·σ(βx⁻ − βx⁺)  (autograd of eq 12)")
        ax.plot(grid, g_pos / beta, "--", label="eq 14 as printed: σ(βx⁻ − βx⁺)")
        ax.plot([margin], [data["coef_chosen"]], "o", color="C0")
        ax.set(xlabel="margin x⁺ − x⁻", ylabel="GC on the chosen response", ylim=(0, max(1.05, beta * 1.05)))
        ax.legend(fontsize=7)
        rows = [["", "value"], ["GC on chosen tokens (+c)", data["coef_chosen"]],
                ["GC on rejected tokens (−c)", data["coef_rejected"]],
                ["eq 14 as printed (no leading β)", data["eq14_printed"]]]
        return data, fig, rows

    return Explorer("DPO: the gradient coefficient", controls, "margin", compute,
                    "A pair the policy already ranks well (large margin) gets a small push; a mis-ranked one a large push.")


DEFAULT_VALUES = (0.3, 0.35, 0.4, 0.5, 0.55, 0.6, 0.7, 0.8)


def ppo_explorer(gamma=1.0, lam=0.95, clip_eps=0.2, ratio=1.1, reward=1.0, values=DEFAULT_VALUES):
    """PPO (eq 15-18): GAE advantages along one response, and the clipped coefficient against the ratio."""
    controls = {"gamma": _slider("γ (discount)", gamma, 0.5, 1.0, 0.01),
                "lam": _slider("λ (GAE)", lam, 0.0, 1.0, 0.01),
                "clip_eps": _slider("ε (clip)", clip_eps, 0.0, 0.5, 0.01),
                "ratio": _slider("ratio r = π/π_old", ratio, 0.5, 1.5, 0.01),
                "reward": _slider("terminal reward", reward, -1.0, 1.0, 0.1)}
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
        t = torch.arange(T)
        ax1.bar(t, adv[0], color=["C2" if a >= 0 else "C3" for a in adv[0]], label="A_t (GAE)")
        ax1.plot(t, v[0], "k.--", label="V_t")
        ax1.set(xlabel="token t", title=f"GAE, γ={gamma:.2f}, λ={lam:.2f}")
        ax1.legend(fontsize=7)
        grid = torch.linspace(0.5, 1.5, 201, dtype=torch.float64)
        ax2.axvspan(1 - clip_eps, 1 + clip_eps, color="0.92")
        ax2.plot(grid, clipped(grid, 1.0, clip_eps), label="A = +1")
        ax2.plot(grid, clipped(grid, -1.0, clip_eps), label="A = −1")
        ax2.plot([ratio, ratio], [data["coef_pos"], data["coef_neg"]], "ko")
        ax2.set(xlabel="ratio r", title="clipped GC: r·A inside, 0 outside")
        ax2.legend(fontsize=7)
        rows = [["token t"] + list(range(T)), ["V_t"] + v[0].tolist(), ["A_t"] + adv[0].tolist(),
                ["GC at r, A=+1", data["coef_pos"]], ["GC at r, A=−1", data["coef_neg"]]]
        return data, fig, rows

    return Explorer("PPO: GAE advantages and the clipped coefficient", controls, "lam", compute,
                    "γ and λ shape how the terminal reward spreads back over the tokens; ε sets where the push stops.")


def grpo_explorer(rewards=(1, 0, 0, 1, 0, 1, 1, 0), group_size=4, beta=0.04, log_ratio=0.0):
    """GRPO (eq 21): group-relative advantages of G rewards, and the KL term beta * (pi_ref/pi - 1)."""
    G_max = len(rewards)
    controls = {"group_size": _slider("group size G", group_size, 2, G_max, 1, cls=W.IntSlider)}
    for i, r in enumerate(rewards):
        controls[f"reward_{i}"] = W.ToggleButton(value=bool(r), description=f"o{i + 1}: {'1' if r else '0'}",
                                                 layout=W.Layout(width="56px"))
    controls["beta"] = _slider("β (KL weight)", beta, 0.0, 0.5, 0.01)
    controls["log_ratio"] = _slider("log π_ref − log π", log_ratio, -2.0, 2.0, 0.05)
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
        ax1.set(xlabel="answer i in the group", ylabel="Â_i", title=f"group-relative advantage, G={group_size}")
        ax2.plot(grid[:, 0], kl)
        ax2.plot([log_ratio], [data["kl_term"]], "o", color="C0")
        ax2.set(xlabel="log π_ref − log π", title=f"KL term β(π_ref/π − 1), β={beta:.2f}")
        rows = [["answer", "reward", "Â", "GC = Â + KL term"]] + [
            [i + 1, int(r[i]), adv[i].item(), gc[i].item()] for i in range(group_size)]
        return data, fig, rows

    ex = Explorer("GRPO: group-relative advantages and the KL term", controls, "group_size", compute,
                  "Click an answer to flip its reward. A group whose rewards are all equal gives no signal.")
    ex.children[1].children = (controls["group_size"], W.HBox(toggles), controls["beta"], controls["log_ratio"])
    return ex


def rft_explorer(n_samples=16, accuracy=0.3, policy_accuracy=0.6, seed=0, max_len=10):
    """RFT (eq 10) vs online RFT (eq 11): which samples survive the filter I(o), per data source."""
    controls = {"n_samples": _slider("samples per question", n_samples, 2, 32, 1, cls=W.IntSlider),
                "accuracy": _slider("accuracy of the frozen SFT model (offline RFT)", accuracy, 0.0, 1.0, 0.05),
                "policy_accuracy": _slider("accuracy of the current policy (online RFT)", policy_accuracy, 0.0, 1.0, 0.05),
                "seed": _slider("seed", seed, 0, 20, 1, cls=W.IntSlider)}

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
        for ax, (name, c, k) in zip(fig.subplots(1, 2), [("offline RFT", off, data["kept_offline"]),
                                                          ("online RFT", on, data["kept_online"])]):
            draw_coefficients(ax, c, mask, f"{name}: {k}/{n_samples} kept", vmax=1.0)
        rows = [["", "offline RFT (eq 10)", "online RFT (eq 11)"],
                ["samples from", "frozen SFT model", "current policy"],
                ["kept (GC = 1)", data["kept_offline"], data["kept_online"]],
                ["dropped (GC = 0)", n_samples - data["kept_offline"], n_samples - data["kept_online"]]]
        return data, fig, rows

    return Explorer("RFT vs online RFT: the filter I(o)", controls, "accuracy", compute,
                    "Same coefficient, other data source: online RFT keeps more as the policy improves.")


def synthetic_batch(B=8, T=10, seed=0):
    """A reproducible batch: 0/1 rewards, log-probs of the policy, old and reference policies, values."""
    gen = torch.Generator().manual_seed(seed)
    lengths = torch.randint(4, T + 1, (B,), generator=gen)
    mask = (torch.arange(T)[None] < lengths[:, None]).float()  # (B, T)
    logp = -3 * torch.rand(B, T, generator=gen)  # log-probs of sampled tokens
    return {"rewards": torch.randint(0, 2, (B,), generator=gen).float(), "mask": mask, "logp": logp,
            "logp_old": logp + 0.2 * torch.randn(B, T, generator=gen),
            "logp_ref": logp + 0.3 * torch.randn(B, T, generator=gen), "values": torch.rand(B, T, generator=gen)}


def paradigm_coefficients(batch, beta, group_size, gamma=1.0, lam=0.95, clip_eps=0.2):
    """Every method's GC on one batch, {method: (B, T)}, each from `unified_rl.coefficients`."""
    r, mask, logp, logp_ref = batch["rewards"], batch["mask"], batch["logp"], batch["logp_ref"]
    B = mask.shape[0]
    if B % 2:
        raise ValueError(f"the batch needs an even number of samples to form DPO pairs, got {B}")
    out = {"SFT": coefficients.sft(mask), "RFT / online RFT": coefficients.rft((r > 0.5).float(), mask)}
    # DPO: rows (2k, 2k+1) form a pair; the one with the higher reward is the chosen response.
    first = r[0::2] >= r[1::2]
    ic = torch.arange(0, B, 2) + (~first).long()
    ir = torch.arange(0, B, 2) + first.long()
    cc, cr = coefficients.dpo(logp[ic], logp_ref[ic], mask[ic], logp[ir], logp_ref[ir], mask[ir], beta)
    dpo = torch.zeros_like(logp)
    dpo[ic], dpo[ir] = cc, cr
    out["DPO"] = dpo
    # PPO: the outcome reward on the last token, a per-token KL penalty everywhere (DeepSeekMath eq 2).
    last = mask.cumsum(-1) == mask.sum(-1, keepdim=True)
    tok_r = -beta * (logp - logp_ref) * mask + r[:, None] * (last & (mask > 0))
    adv, _ = advantages.gae(tok_r, batch.get("values", torch.zeros_like(logp)), mask, gamma, lam)
    logp_old = batch.get("logp_old", logp)
    out["PPO"] = coefficients.ppo(adv, mask, logp=logp, logp_old=logp_old, clip_eps=clip_eps)
    out["GRPO"] = coefficients.grpo(r, group_size, logp, logp_ref, mask, beta)
    return out


def paradigm_explorer(batch=None, beta=0.1, group_size=4):
    """Eq 5 side by side: every method's coefficient on one batch (rows samples, columns tokens)."""
    batch = dict(synthetic_batch() if batch is None else batch)
    rewards = torch.as_tensor(batch["rewards"], dtype=torch.float32).clone()
    B = rewards.shape[0]
    sizes = [g for g in range(2, B + 1) if B % g == 0]
    if not sizes:
        raise ValueError(f"a batch of {B} samples cannot be split into groups of 2 or more")
    controls = {"beta": _slider("β", beta, 0.0, 1.0, 0.01),
                "group_size": W.Dropdown(options=sizes, value=group_size if group_size in sizes else sizes[0],
                                         description="group size G"),
                "sample": _slider("sample i", 0, 0, B - 1, 1, cls=W.IntSlider),
                "reward": _slider("reward of sample i", float(rewards[0]), 0.0, 1.0, 0.1)}
    # registered before the Explorer's own observers: picking a sample shows its reward, moving the
    # reward slider sets that sample's reward
    controls["sample"].observe(lambda ch: setattr(controls["reward"], "value", float(rewards[ch["new"]])), "value")
    controls["reward"].observe(lambda ch: rewards.__setitem__(controls["sample"].value, ch["new"]), "value")

    def compute(beta, group_size, sample, reward):
        coefs = paradigm_coefficients({**batch, "rewards": rewards}, beta, group_size)
        mask = batch["mask"]
        data = {"coefs": coefs, "rewards": rewards.clone()}
        fig = Figure(figsize=(11, 2.8), layout="constrained")
        for j, (ax, (name, c)) in enumerate(zip(fig.subplots(1, len(coefs), sharey=True), coefs.items())):
            vmax = float(c.abs().max()) or 1.0  # per method: DPO's coefficients are ~beta, GRPO's ~1
            draw_coefficients(ax, c, mask, f"{name}\nmax |GC| = {vmax:.3g}", vmax=vmax)
            ax.axhline(sample, color="k", lw=0.5)
            ax.set_ylabel("sample i" if j == 0 else "")
        n = mask.sum(-1)
        rows = [["sample", "reward"] + [f"{k}: (1/|o|)ΣGC" for k in coefs]] + [
            [i, float(rewards[i])] + [float(c[i].sum() / n[i]) for c in coefs.values()] for i in range(B)]
        return data, fig, rows

    return Explorer("Eq 5: one gradient, six coefficients", controls, "beta", compute,
                    "Red pushes a token's log-prob up, blue down. Change a reward, β or the group size.")

