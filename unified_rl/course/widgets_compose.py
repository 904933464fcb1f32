"""Notebook 10's composition explorer: pick one part per axis and see the coefficient they compose.

The axes of eq 5's coefficient (parts/): an advantage estimator, a policy term, a KL term and where it sits
(in the loss or in the reward), and an aggregation. The choice becomes a method with `parts.compose`, the
same call a learner would make, and the explorer shows
- the composed formula for one group of two answers of 1 and 2 tokens (sympy): w_i (P + K), w the
  aggregation's row factors (`aggregations.sympy_weights`), K the KL term's derived GC piece, P the policy
  term's piece, beside the derivations the policy term and the advantage are registered with;
- its GC on a small batch (one question, four answers of 3 to 8 tokens, pi_theta moved from pi_old by the
  main slider), drawn like `plots.draw_coefficients`; a part that needs a teacher reads pi_ref as the teacher;
- the oracle's verdict: autograd of the composition's objective against eq 5's surrogate with its GC;
- a button that trains the composition from the cached SFT model for a few steps and measures held-out
  greedy accuracy before and after (a per-batch advantage, GAE or process supervision, is a fixed stand-in
  on the small batch; training computes it).
A choice the package refuses (a KL in the reward without a KL term, GAE with its KL in the loss) shows the
package's message instead of numbers.
"""

import dataclasses
import functools
import html
import time

import ipywidgets as W
import sympy as sp
import torch
from matplotlib.figure import Figure

from unified_rl import parts
from unified_rl.course import parts_text
from unified_rl.course.explorer import Explorer, _dropdown, _slider
from unified_rl.course.i18n import t
from unified_rl.course.plots import draw_coefficients
from unified_rl.paradigm import step_from_tensors, surrogate_loss
from unified_rl.parts import aggregations
from unified_rl.presets import get_preset

LENGTHS = (3, 5, 6, 8)  # one question's four answers
REWARDS = (1.0, 0.0, 1.0, 0.0)  # two right, two wrong
ORACLE_TOL = 1e-10  # float64: a composition that is its objective's gradient agrees to round-off (~1e-17)
SHORT_LATEX = 900  # a derivation's GC longer than this (in LaTeX characters) is named, not printed


def small_batch(drift, seed=0):
    """One group on bare tensors, float64, (4, 8): (mask, logp_old, logp_ref, logp, stand-in advantage).

    Each token's probability is sigmoid(z) (a two-way choice: log-probs stay below 0, which the distillation
    parts need); pi_theta's logit is pi_old's moved by `drift` times a fixed direction, pi_ref's by 0.3 times
    another."""
    g = torch.Generator().manual_seed(seed)
    mask = (torch.arange(max(LENGTHS))[None] < torch.tensor(LENGTHS)[:, None]).double()  # (B, T)
    z = 1.5 * torch.randn(mask.shape, generator=g, dtype=torch.float64) + 1.0  # pi_old's logits
    moved = torch.randn(mask.shape, generator=g, dtype=torch.float64)  # the direction pi_theta moved in
    z_ref = z + 0.3 * torch.randn(mask.shape, generator=g, dtype=torch.float64)
    adv = torch.randn(mask.shape, generator=g, dtype=torch.float64) * mask  # GAE's or process's A_t, a stand-in
    lp = torch.nn.functional.logsigmoid
    return mask, lp(z) * mask, lp(z_ref) * mask, lp(z + drift * moved) * mask, adv


def _home_row(advantage):
    """The data source and reward of the last reinforcement-learning row built on this advantage (ReMax's
    greedy pairs, GDPO's reward columns), or {} where none is (compose's defaults: samples and the rule)."""
    from unified_rl.methods.table import ROWS

    rows = [r for r in ROWS if r.advantage == advantage and r.section == "rl"]
    return {"data_source": rows[-1].data_source, "reward": rows[-1].reward} if rows else {}


def method_of(advantage, policy, kl=None, kl_in="loss", aggregation="seq-mean-token-mean"):
    """The Method of one part per axis: `parts.compose`, with the advantage's own data source and reward."""
    return parts.compose(advantage=advantage, policy=policy, kl=kl, aggregation=aggregation, kl_in=kl_in,
                         **_home_row(parts.ADVANTAGES.get(advantage).name))


def step_for(method, logp, drift, beta=0.04, clip_eps=0.2):
    """The Step of the small batch for `method`, with logp (B, T) as given (with or without its gradient)."""
    mask, old, ref, _, adv = small_batch(drift)
    cfg = dataclasses.replace(get_preset("cpu").rl, beta=beta, clip_eps=clip_eps)
    return step_from_tensors(logp, mask, cfg, logp_ref=ref, logp_old=old, group_size=len(LENGTHS), hp=method.hparams,
                             scores=torch.tensor(REWARDS, dtype=torch.float64),
                             adv=adv if method.advantage is not None else None)


def coefficient(method, drift):
    """(GC (B, T), mask, oracle) of `method` on the small batch: oracle = max |grad J - grad surrogate|."""
    mask, _, _, logp, _ = small_batch(drift)
    logp = logp.requires_grad_(True)
    step = step_for(method, logp, drift)
    gc = method.coefficient(step)
    (g_j,) = torch.autograd.grad(method.objective(step), logp)
    (g_s,) = torch.autograd.grad(-surrogate_loss(logp, gc, mask), logp)
    return gc, mask, (g_j - g_s).abs().max().item()


@functools.lru_cache(maxsize=None)
def _derivation(axis, name):
    part = parts.REGISTRIES[axis].get(name)
    return None if part.derivation is None else part.derivation(1)


def _shown(axis, name):
    """'name: derivation (its GC of token 1)' in LaTeX where that is short, else the derivation's name."""
    d = _derivation(axis, name)
    if d is None:
        return f"\\text{{{name}}}"
    gc = sp.latex(d.gc[0])
    return f"\\text{{{name} ({d.method})}}" + (f": {gc}" if len(gc) <= SHORT_LATEX else "")


def composed(method):
    """The composed GC of one group, o_1 of 1 token and o_2 of 2, as sympy: w_i (P_{i,t} + K_{i,t})."""
    comp, rows = method.composition, ((1,), (1, 2))
    w = aggregations.sympy_weights(rows, method.hparams.aggregation)  # one per token
    cells = [(i + 1, s + 1) for i, row in enumerate(rows) for s in range(len(row))]
    kl = comp.kl if comp.kl_in == "loss" else None
    d = None if kl is None else _derivation("kl", kl)
    out = []
    for wi, (i, s) in zip(w, cells):
        P = sp.Symbol(f"P_{i},{s}")
        if d is None:  # no KL term in the loss (0), or one registered without a derivation (named K)
            K = 0 if kl is None else sp.Symbol(f"K_{i},{s}")
        else:  # its derived piece for one token, written for token (i, t)
            names = (("logp", ""), ("logp_ref", "^ref"), ("logp_old", "^old"))
            K = (d.hand or d.gc)[0].subs({d.symbols[key][0]: sp.Symbol(f"ell{sup}_{i},{s}", real=True)
                                          for key, sup in names if key in d.symbols})
        gc = P + K if wi == 1 else sp.Mul(wi, P + K, evaluate=False)  # w_i (P + K), as composition.py puts it
        out.append(sp.Eq(sp.Symbol(f"GC_{i},{s}"), gc, evaluate=False))
    return out


def formula(method):
    """LaTeX lines: the composed GC of the small group, then what P and A are (their parts' derivations)."""
    comp = method.composition
    lines = [t("w.compose.rule")] + [f"$${sp.latex(e)}$$" for e in composed(method)]
    if comp.kl is not None and comp.kl_in == "reward":
        lines.append(t("w.compose.kl_in_reward", kl=comp.kl))
    lines.append(t("w.compose.policy_piece") + f" ${_shown('policy', comp.policy)}$")
    lines.append(t("w.compose.advantage_piece") + f" ${_shown('advantage', comp.advantage)}$")
    return "<br>".join(lines)


@functools.lru_cache(maxsize=4)
def _start(preset_name):
    """(held-out problems, greedy accuracy of the cached SFT model on them) for `preset_name`."""
    from unified_rl.cache import sft_checkpoint
    from unified_rl.evaluation import greedy_accuracy
    from unified_rl.trainer import make_lab

    preset = get_preset(preset_name)
    lab = make_lab(preset, init=sft_checkpoint(preset, progress=False))
    problems = lab.test_problems[:preset.eval_problems]
    return problems, greedy_accuracy(lab.policy, lab.tokenizer, problems)


def train_briefly(method, steps=10, preset="auto"):
    """Train `method` from the cached SFT model for `steps` steps; held-out greedy accuracy before and after
    (the same questions), the sampled answers' accuracy at the first and the last step, and the seconds."""
    from unified_rl.evaluation import greedy_accuracy
    from unified_rl.trainer import train

    name = get_preset(preset).name
    problems, before = _start(name)
    t0 = time.perf_counter()
    run = train(method, preset=name, steps=steps, eval_every=0, progress=False)
    seconds = time.perf_counter() - t0
    first, last = run.metrics[0], run.metrics[-1]
    return {"before": before, "after": greedy_accuracy(run.policy, run.tokenizer, problems),
            "sampled_first": first.get("accuracy"), "sampled_last": last.get("accuracy"),
            "steps": len(run.metrics), "seconds": seconds}


def _options(registry):
    return [(f"{name}: {parts_text.summary(part)}"[:70], name) for name, part in registry.items()]


def compose_explorer(advantage="grpo", policy="vanilla", kl="k3", kl_in="loss", aggregation="seq-mean-token-mean",
                     drift=0.3, train_steps=10):
    """Compose a coefficient from parts: its formula, its GC on a small batch, the oracle, a short training run."""
    controls = {"drift": _slider(t("w.compose.drift"), drift, 0.0, 1.0, 0.05),
                "advantage": _dropdown(t("w.compose.advantage"), _options(parts.ADVANTAGES), advantage),
                "policy": _dropdown(t("w.compose.policy"), _options(parts.POLICY_TERMS), policy),
                "kl": _dropdown(t("w.compose.kl"), [(t("w.compose.no_kl"), None)] + _options(parts.KL_TERMS), kl),
                "kl_in": W.ToggleButtons(options=[(t("w.compose.in_loss"), "loss"),
                                                  (t("w.compose.in_reward"), "reward")],
                                         value=kl_in, style={"button_width": "110px"}),
                "aggregation": _dropdown(t("w.compose.aggregation"), _options(parts.AGGREGATIONS), aggregation)}
    for c in controls.values():
        if isinstance(c, W.Dropdown):
            c.layout.width = "600px"
    maths, trained = W.HTMLMath(), W.HTML()

    def compute(drift, advantage, policy, kl, kl_in, aggregation):
        maths.value, trained.value = "", ""
        method = method_of(advantage, policy, kl, kl_in, aggregation)  # a refused choice raises ValueError
        gc, mask, oracle = coefficient(method, drift)
        label = parts_text.label(method, aggregation)
        maths.value = formula(method)
        fig = Figure(figsize=(6.5, 2.6), layout="constrained")
        ax = fig.subplots()
        fig.colorbar(draw_coefficients(ax, gc, mask, title=f"GC: {label}"), ax=ax)
        agree, on = oracle < ORACLE_TOL, gc[mask.bool()]  # the GC on the response tokens
        rows = [[t("w.compose.col.what"), t("w.compose.col.value")],
                [t("w.compose.composition"), label],
                *[[t(f"w.compose.{axis}"), f"{part.name}: {parts_text.summary(part)} ({part.cite})"]
                  for axis, part in method.composition.parts.items() if ":" not in axis],
                [t("w.compose.gc_range"), f"{on.min().item():+.4f} … {on.max().item():+.4f}"],
                [t("w.compose.gc_zero"), f"{(on == 0).double().mean().item():.0%}"],
                [t("w.compose.oracle"), t("w.compose.agree" if agree else "w.compose.differ", diff=oracle)]]
        return {"method": method, "gc": gc, "mask": mask, "oracle": oracle, "agree": agree, "label": label}, fig, rows

    ex = Explorer(t("w.compose.title"), controls, "drift", compute, t("w.compose.note"))
    button = W.Button(description=t("w.compose.train", steps=train_steps), layout=W.Layout(width="320px"))

    def train_now(_=None):
        """Train the composition shown (the button's action); the result, or the refusal, below it."""
        if ex.error is not None:
            trained.value = f'<span style="color:#cf222e">{html.escape(ex.error)}</span>'
            return None
        trained.value = html.escape(t("w.compose.training", label=ex.data["label"]))
        try:
            r = train_briefly(ex.data["method"], train_steps)
        except ValueError as e:
            trained.value = f'<span style="color:#cf222e">{html.escape(str(e))}</span>'
            return None
        fmt = lambda v: "—" if v is None else f"{v:.3f}"  # noqa: E731  (ReMax's greedy rows: no sampled accuracy)
        trained.value = html.escape(t("w.compose.trained", label=ex.data["label"], steps=r["steps"],
                                      before=r["before"], after=r["after"], first=fmt(r["sampled_first"]),
                                      last=fmt(r["sampled_last"]), seconds=r["seconds"]))
        ex.trained = r
        return r

    button.on_click(train_now)
    ex.train, ex.maths, ex.trained_html, ex.trained = train_now, maths, trained, None
    ex.children = ex.children + (maths, W.HBox([button]), trained)
    return ex
