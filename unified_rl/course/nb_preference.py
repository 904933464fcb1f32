"""Helpers for the preference-family notebook (course/11_preference_family.ipynb).

`coefficient_maps` runs each registered method's coefficient, exactly as the trainer calls it, on
one synthetic batch laid out as its data source lays it out; the plots and tables show the
notebook's runs (fixed pairs measured with `nb_dpo.probed`) or the shipped equal-budget comparison
(experiments/preference_family.py). `generated_per_step` counts the samples each data source draws,
`gc_falloff` how far each GC has fallen at the margins reached, `kto_regime` where KTO's z sits in a
run, and `findings` the sentences the notebook states about the shipped comparison, each computed (its
verdicts are the course's rule's, through `readings`).
"""

import contextlib
import importlib

import matplotlib.pyplot as plt
import torch

from unified_rl import coefficients
from unified_rl.course import readings
from unified_rl.course.i18n import t
from unified_rl.course.nb_policy_gradient import arms  # noqa: F401 (the training cell's progress bar)
from unified_rl.course.plots import draw_coefficients
from unified_rl.evaluation import greedy_accuracy
from unified_rl.methods import METHODS
from unified_rl.paradigm import step_from_tensors

def family():
    """The preference family as the registry holds it: DPO, then every method of `methods.PREFERENCE`."""
    from unified_rl.methods import PREFERENCE

    return ("dpo",) + tuple(m.name for m in PREFERENCE)


FAMILY = family()
LIVE = ("dpo", "ipo", "simpo", "kto", "orpo")
"""The methods notebook 11 trains live (its CPU budget is measured for these five)."""


def left_out(covered, names=None):
    """The registry's preference methods (`family()`) that a run or comparison covering `covered` leaves out."""
    return [n for n in (family() if names is None else names) if n not in set(covered)]


def synthetic_rows(B=3, T=8, seed=0):
    """2B ragged rows (log-probs < 0, reference log-probs, 0/1 scores): pairs for DPO, IPO, SimPO and
    ORPO (B chosen, then B rejected), labelled and mismatched rows for KTO."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(2, T + 1, (2 * B,), generator=g)
    mask = (torch.arange(T)[None] < lengths[:, None]).double()  # (2B, T)
    logp = -(0.05 + 2 * torch.rand(2 * B, T, generator=g, dtype=torch.float64)) * mask
    logp_ref = (logp + 0.3 * torch.randn(2 * B, T, generator=g, dtype=torch.float64)).clamp(max=-0.01) * mask
    scores = torch.tensor([1.0, 0.0] * B, dtype=torch.float64)  # KTO's labels: the first B rows alternate
    return {"logp": logp, "logp_ref": logp_ref, "mask": mask, "scores": scores}


def coefficient_maps(rows, names=FAMILY, cfg=None):
    """{method: (2B, T) GC} from METHODS[name].coefficient on `rows`, as the trainer calls it."""
    from unified_rl.presets import RLConfig

    cfg = cfg or RLConfig()
    out = {}
    for name in names:
        m = METHODS[name]
        step = step_from_tensors(rows["logp"], rows["mask"], cfg, scores=rows["scores"], hp=m.hparams,
                                 logp_ref=rows["logp_ref"] if m.uses_ref else None)
        out[name] = m.coefficient(step)
    return out


def plot_coefficient_maps(maps, mask):
    """One heatmap per method, all on one colour scale (the largest |GC| of any panel), so that colours
    compare across panels: rows are responses, columns tokens; red pushes up, blue down."""
    fig, axes = plt.subplots(1, len(maps), figsize=(2.6 * len(maps), 2.6), sharey=True)
    B = len(mask) // 2
    vmax = max(float(c.abs().max()) for c in maps.values()) or 1.0  # one scale for every panel
    for ax, (name, coef) in zip(axes, maps.items()):
        im = draw_coefficients(ax, coef, mask, t("w.pw.panel", name=name, max_gc=float(coef.abs().max())), vmax=vmax)
        ax.axhline(B - 0.5, color="k", lw=0.8)
    axes[0].set_ylabel(t("nb.pref.row"))
    fig.tight_layout()
    fig.colorbar(im, ax=list(axes), shrink=0.8, label=t("nb.pref.one_scale", vmax=vmax))
    fig.vmax = vmax
    return fig


def plot_arms(runs, histories, acc0):
    """Held-out accuracy (left), and the change of the chosen and rejected answers' mean log-probs
    per token on the fixed pairs since the SFT model, x = Δ mean log π (right: chosen solid, rejected
    dashed), one colour per arm."""
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(11, 3.4))
    for i, (label, run) in enumerate(runs.items()):
        ev = [(m["step"], m["eval_accuracy"]) for m in run.metrics if "eval_accuracy" in m]
        ax1.plot([0] + [s for s, _ in ev], [acc0] + [a for _, a in ev], marker="o", ms=3, color=f"C{i}", label=label)
        h = histories[label]
        steps = [x["step"] for x in h]
        ax2.plot(steps, [x["x_chosen"] for x in h], color=f"C{i}", label=f"{label}")
        ax2.plot(steps, [x["x_rejected"] for x in h], color=f"C{i}", ls="--")
    ax2.axhline(0, color="k", lw=0.6)
    ax1.set(xlabel=t("nb.step"), ylabel=t("plot.label.eval_accuracy"), title=t("nb.accuracy"))
    ax2.set(xlabel=t("nb.step"), ylabel=t("nb.pref.x_label"), title=t("nb.pref.x_title"))
    for ax in (ax1, ax2):
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    return fig


def arm_table(runs, histories, test):
    """Markdown: each arm's final held-out accuracy on `test` and how its fixed pairs moved."""
    head = t("nb.pref.arm_head") + "\n|---|---:|---:|---:|---:|---:|\n"
    rows = []
    for label, run in runs.items():
        h = histories[label][-1]  # pi_ref is the SFT model: x is how far each mean log-prob moved
        acc = greedy_accuracy(run.policy, run.tokenizer, test)
        rows.append(f"| {label} | {acc:.3f} | {h['x_chosen']:+.4f} | {h['x_rejected']:+.4f} | {h['margin']:+.4f} | "
                    f"{h['chosen_fell']:.2f} |")
    return head + "\n".join(rows)


def comparison_table(result):
    """Markdown: the shipped equal-budget comparison, mean ± std over seeds."""
    def f(s, d=3, sign=""):
        return f"{s['mean']:{sign}.{d}f} ± {s['std']:.{d}f}"

    head = t("nb.pref.cmp_head") + "\n|---|---|---:|---:|---:|---:|---:|---:|---:|\n"
    sft_seeds = " / ".join(f"{s['sft']:.3f}" for s in result["per_seed"])
    rows = [f"| {t('nb.pref.sft_model')} | | | {f(result['sft'])} | {sft_seeds} | | 0 | 0 | "
            f"{f(result['alignment_sft']['x_plus_lowered'], 2)} |"]
    for arm, spec in result["arms"].items():
        e, settings = result["end"][arm], ", ".join(f"{k}={v}" for k, v in spec["settings"].items())
        seeds = " / ".join(f"{s['arms'][arm]['accuracy']:.3f}" for s in result["per_seed"])
        rows.append(f"| {arm} | {spec['method']}{', ' + settings if settings else ''} | {spec['lr']:g} | "
                    f"{f(result['accuracy'][arm])} | {seeds} | {f(result['change_vs_sft'][arm], sign='+')} | "
                    f"{f(e['x_chosen'], 4, '+')} | {f(e['x_rejected'], 4, '+')} | "
                    f"{f(result['alignment'][arm]['x_plus_lowered'], 2)} |")
    return head + "\n".join(rows)


@contextlib.contextmanager
def _counting_samples(source):
    """Count the responses `source` generates: wraps the `sample` its module calls and the one
    data.core's `_Source.draw` calls, restores them after."""
    modules = {m.__name__: m for m in (importlib.import_module(type(source).__module__),
                                       importlib.import_module("unified_rl.data.core")) if hasattr(m, "sample")}
    reals, drawn = {name: m.sample for name, m in modules.items()}, []

    def counting(real):
        def counted(*args, **kwargs):
            r = real(*args, **kwargs)
            drawn.append(len(r))
            return r
        return counted
    for name, m in modules.items():
        m.sample = counting(reals[name])
    try:
        yield drawn
    finally:
        for name, m in modules.items():
            m.sample = reals[name]


def generated_per_step(lab, names, steps=2):
    """{name: (responses generated per step, rows trained on per step)}, measured on `steps` batches
    of each method's own data source (the pair source samples frozen_samples per question and keeps
    one pair; KTO's one sample per question, then mismatched copies that are not generated)."""
    out = {}
    for name in names:
        source = METHODS[name].data_source(lab)
        with _counting_samples(source) as drawn:
            rows = [len(source.next_batch()) for _ in range(steps)]
        out[name] = (sum(drawn) / steps, sum(rows) / steps)
    return out


def gc_falloff(margins, beta, tau):
    """{name: GC on the chosen tokens at each margin over its value at margin 0}: DPO's
    beta sigma(-beta m) / (beta / 2) and IPO's (1/tau - 2m) / (1/tau), from `coefficients` itself."""
    m = torch.as_tensor(margins, dtype=torch.float64).reshape(-1, 1)  # one-token responses, x- = 0
    z, one = torch.zeros_like(m), torch.ones_like(m)
    dpo = coefficients.dpo(m, z, one, z, z, one, beta)[0][:, 0] / coefficients.dpo(z, z, one, z, z, one, beta)[0][:, 0]
    ipo = coefficients.ipo(m, z, one, z, z, one, tau)[0][:, 0] / coefficients.ipo(z, z, one, z, z, one, tau)[0][:, 0]
    return {"dpo": dpo, "ipo": ipo}


def kto_regime(policy, ref, batch, beta, lam_d, lam_u):
    """KTO's z = beta (x - z0) on a batch of its data source, and its GC over lam beta / 4 (1 at z = 0)."""
    from unified_rl.wiring import policy_logp

    n = len(batch) // 2  # labelled rows, then the mismatched rows that give z0
    with torch.no_grad():
        logp, logp_ref = policy_logp(policy, batch), policy_logp(ref, batch)
    z0 = coefficients.kto_reference_point(logp[n:], logp_ref[n:], batch.mask[n:])
    mask = batch.mask[:n]
    x = ((logp[:n] - logp_ref[:n]) * mask).sum(-1) / mask.sum(-1)  # (n,) length-normalised log-ratio
    z = beta * (x - z0)
    return {"z": z, "z0": float(z0), "gc_over_quarter": 4 * torch.sigmoid(z) * torch.sigmoid(-z)}


def _pm(s, d=3, sign=""):
    return f"{s['mean']:{sign}.{d}f} ± {s['std']:.{d}f}"


def _per_seed(result, arm, key):
    return [s["arms"][arm]["probe"][key] for s in result["per_seed"]]


def alignment_findings(result):
    """Section 7's sentences about the shipped comparison, each computed from `result`."""
    al, end, out = result["alignment"], result["end"], []
    out.append(t("nb.pref.cos", sft=_pm(result['alignment_sft']['cos_mean'], 2, '+'),
                 fast=_pm(al['dpo-fast']['cos_mean'], 2, '+'), median=_pm(al['dpo-fast']['cos_median'], 2, '+')))
    fast_end = [xs[-1] for xs in _per_seed(result, "dpo-fast", "x_chosen")]
    out.append(t("nb.pref.fast_end", below=sum(x < 0 for x in fast_end), n=len(fast_end),
                 x_plus=_pm(end['dpo-fast']['x_chosen'], 3, '+'), x_minus=_pm(end['dpo-fast']['x_rejected'], 3, '+'),
                 fell=_pm(end['dpo-fast']['chosen_fell'], 2), margin=_pm(end['dpo-fast']['margin'], 3, '+')))
    steps = result["per_seed"][0]["arms"]["dpo"]["probe"]["step"]
    peaks = [steps[max(range(len(xs)), key=xs.__getitem__)] for xs in _per_seed(result, "dpo", "x_chosen")]
    fell = sum(xs[-1] < max(xs) for xs in _per_seed(result, "dpo", "x_chosen"))
    out.append(t("nb.pref.own_rate", lo=min(peaks), hi=max(peaks), fell=fell, n=len(peaks),
                 x_plus=_pm(end['dpo']['x_chosen'], 3, '+'), below=_pm(end['dpo']['chosen_fell'], 2),
                 cos=_pm(al['dpo']['cos_mean'], 2, '+')))
    out.append(t("nb.pref.lowered", sft=_pm(result['alignment_sft']['x_plus_lowered'], 2),
                 fast=_pm(al['dpo-fast']['x_plus_lowered'], 2)))
    ipo = readings.decide(result).get("ipo" + readings.MINUS + "dpo-fast")
    out.append(t("nb.pref.x_end", orpo=_pm(end['orpo']['x_chosen'], 3, '+'),
                 sft=_pm(end['sft-on-chosen']['x_chosen'], 3, '+'), ipo=_pm(end['ipo']['x_chosen'], 3, '+'),
                 acc_ipo=_pm(result['accuracy']['ipo']), acc_fast=_pm(result['accuracy']['dpo-fast']),
                 said=readings.said(ipo) if ipo else t("nb.pg.none")))
    return out


def findings(result):
    """Section 8's sentences about the shipped comparison, each computed from `result`: the verdicts of the
    course's rule (`readings`: each arm minus DPO on the same seed, ORPO minus SFT on the chosen answers, IPO
    minus DPO at IPO's rate, read together), then what the per-seed numbers describe."""
    acc, seeds, out = result["accuracy"], result["per_seed"], []
    decided = readings.decide(result)
    pair = lambda a, b: decided[a + readings.MINUS + b]  # noqa: E731
    sft = [s["sft"] for s in seeds]
    out.append(t("nb.pref.sft_seeds", accs=" / ".join(f"{a:.3f}" for a in sft)))
    out += readings.summary(decided)
    four = ("dpo", "ipo", "simpo", "kto")
    out.append(t("nb.pref.four", accs=", ".join(_pm(acc[a]) for a in four)))
    strong = max(range(len(seeds)), key=lambda i: sft[i])
    weak = [i for i in range(len(seeds)) if i != strong]
    lifts = [seeds[i]["arms"][a]["accuracy"] - sft[i] for i in weak for a in four]
    after = [seeds[strong]["arms"][a]["accuracy"] for a in four]
    out.append(t("nb.pref.lifted", lo=min(lifts), hi=max(lifts), seed=seeds[strong]['seed'], sft=sft[strong],
                 after_lo=min(after), after_hi=max(after)))
    out.append(t("nb.pref.orpo", orpo=_pm(acc['orpo']), strong=seeds[strong]['arms']['orpo']['accuracy'],
                 sft=_pm(acc['sft-on-chosen']), said=readings.said(pair("orpo", "sft-on-chosen"))))
    below = sum(s["arms"]["dpo-fast"]["accuracy"] < s["arms"]["dpo"]["accuracy"] for s in seeds)
    peaks = [max(s["arms"]["dpo-fast"]["curve"], key=lambda p: p[1])[0] for s in seeds]
    out.append(t("nb.pref.fast", acc=_pm(acc['dpo-fast']), said=readings.said(pair("dpo-fast", "dpo")), below=below,
                 n=len(seeds), lo=min(peaks), hi=max(peaks)))
    return out


# ---------------------------------------------------------------- TRL's DPOConfig.loss_type, mapped

# a+ and a- of each loss page (parts/pair_losses/): GC = k a on every token (k = |o| summed, 1 per-token mean);
# u = beta (s+ - s-), r = beta s, sigma' = sigma(1 - sigma), g(d) = beta((1-eps) sigma(-beta d) - eps sigma(beta d))
TRL_GC = {
    "sigmoid": (r"$\beta\sigma(-u)$", r"$-a^+$"),
    "hinge": (r"$\beta\,[u<1]$", r"$-a^+$"),
    "ipo": (r"$\frac{1}{\beta}-2(s^+-s^-)$", r"$-a^+$"),
    "exo_pair": (r"$\beta\sigma'(u)\big(\log\frac{1-\varepsilon}{\varepsilon}-u\big)$", r"$-a^+$"),
    "nca_pair": (r"$\beta\big(\sigma(-r^+)-\frac12\sigma(r^+)\big)$", r"$-\frac12\beta\sigma(r^-)$"),
    "robust": (r"$\beta\frac{(1-\varepsilon)\sigma(-u)+\varepsilon\sigma(u)}{1-2\varepsilon}$", r"$-a^+$"),
    "bco_pair": (r"$\beta\sigma(-r^+)$", r"$-\beta\sigma(r^-)$"),
    "sppo_hard": (r"$\frac{1}{\beta}-2s^+$", r"$-\big(\frac{1}{\beta}+2s^-\big)$"),
    "aot": (r"$g(d_{(k)})$, $k$ the pair's rank", r"$-a^+$"),
    "aot_unpaired": (r"$g(d_{(k^+)})$", r"$-g(d_{(k^-)})$"),
    "apo_zero": (r"$\beta\sigma'(r^+)$", r"$-\beta\sigma'(r^-)$"),
    "apo_down": (r"$\beta\big(\sigma'(u)-\sigma'(r^+)\big)$", r"$-\beta\sigma'(u)$"),
    "discopop": (r"$\beta\big((1-m)\sigma(-u)+me^{-u}-\frac{m(1-m)}{\tau}(\log\sigma(u)+e^{-u})\big)$, "
                 r"$m=\sigma(u/\tau)$", r"$-a^+$"),
    "sft": (r"$1$ (mean), $\lvert o\rvert/\bar n$ (sum)", r"$0$"),
    "sigmoid_norm": (r"$\beta\sigma(-u)$ on means: eq 14", r"$-a^+$"),
}


def trl_map_rows():
    """Markdown: for each of TRL's DPO loss types, our settings, its GC (a+, a-), what it changes, its paper."""
    from unified_rl.coefficients.dpo_losses import LOSS_TYPES
    from unified_rl.trl_preference import dpo_from_trl

    papers = {"sigmoid": "2305.18290", "hinge": "2305.10425, 2309.06657", "ipo": "2310.12036", "exo_pair": "2402.00856",
              "nca_pair": "2402.05369", "robust": "2403.00409", "bco_pair": "2404.04656", "sppo_hard": "2405.00675",
              "aot": "2406.05882", "aot_unpaired": "2406.05882", "apo_zero": "2408.06266", "apo_down": "2408.06266",
              "discopop": "2406.08414", "sft": "—", "sigmoid_norm": "2402.03300"}
    rows = [t("nb.pref.map_head")]
    for loss in LOSS_TYPES:
        plus, minus = TRL_GC[loss]  # a loss type without its row here is a KeyError naming it
        ours = dpo_from_trl(loss, label_smoothing=0.1)
        rows.append(f"| `{loss}` | `dpo_loss=\"{ours['dpo_loss']}\", dpo_norm=\"{ours['dpo_norm']}\"` | {plus} | "
                    f"{minus} | {t('nb.pref.map.' + loss)} | {papers[loss]} |")
    return "\n".join(rows)

