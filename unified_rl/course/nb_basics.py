"""Helpers for the opening notebooks: 00 (eq 5), 01 (SFT), 02 (RFT) and 03 (online RFT).

Everything here reads the package rather than restating it: the table of methods is built from
`methods.METHODS` (each coefficient named by the parts it composes) and the docstrings of `coefficients`, the
trainer excerpt from the trainer's own source, the length-normalisation weights from autograd of
`paradigm.surrogate_loss`.
Reference: DeepSeekMath (arXiv 2402.03300), section 5.2.1 and appendix A.1, eq 5-11.
"""

import inspect
import textwrap

import ipywidgets as W
import torch
from matplotlib.figure import Figure

from unified_rl import coefficients, paradigm
from unified_rl.course import parts_text
from unified_rl.course.i18n import t, t_of
from unified_rl.course.explorer import Explorer, _slider
from unified_rl.methods import METHODS
from unified_rl.sampling import rollout_from_texts


# the reference marks' keys (notebook 01 reads them) -> the catalogue key of their legend label
_REFERENCE_LABELS = {"eq 7 (α = 0)": "nb.basics.ref_eq7", "token mean (α = 1)": "nb.basics.ref_token_mean"}


def markdown_table(rows):
    """A Markdown table (rendered by Jupyter) from rows; the first row is the header."""
    from IPython.display import Markdown

    def cell(v):
        s = f"{v:.4g}" if isinstance(v, float) else str(v)
        return s.replace("|", "\\|").replace("\n", " ")

    lines = ["| " + " | ".join(cell(v) for v in rows[0]) + " |", "|" + "---|" * len(rows[0])]
    lines += ["| " + " | ".join(cell(v) for v in r) + " |" for r in rows[1:]]
    return Markdown("\n".join(lines))


def _first_line(obj):
    return (inspect.getdoc(obj) or "").strip().split("\n")[0]


def _doc_shown(obj, name):
    """The first docstring line of obj in the current language (catalogue key doc.NAME, area #: methods)."""
    return t_of(f"doc.{name}", _first_line(obj))


def _gc_function(method):
    """The `coefficients` function that writes a paper method's GC on bare tensors (eq 7-21), found by the
    method's name: grpo-process's is grpo's (given adv, the process advantage)."""
    for name in dict.fromkeys((method.name.replace("-", "_"), method.name.split("-")[0])):
        if callable(getattr(coefficients.paper, name, None)):
            return getattr(coefficients.paper, name)
    raise ValueError(f"{method.name}: no function of coefficients/paper.py writes its coefficient")


def _gc_cell(method):
    """The table's GC cell: the parts the coefficient composes, the paper's function and its docstring."""
    f = _gc_function(method)
    doc = _doc_shown(f, "coefficients." + f.__name__)
    composed = parts_text.label(method)
    return (f"`{composed}` = " if composed else "") + f"`coefficients.{f.__name__}`: {doc}"


def per_batch(method):
    """What a method computes once per batch, before its updates: [(name, object, shown text)] for its
    advantage part (PPO's GAE, process supervision) and its extra loss (PPO's value model)."""
    out = []
    if method.advantage is not None:
        part = method.composition.parts["advantage"]
        out.append((part.name, part, parts_text.summary(part)))
    if method.extra_loss is not None:
        name = method.extra_loss.__name__
        out.append((name, method.extra_loss, _doc_shown(method.extra_loss, name)))
    return out


def paper_methods():
    """The names of the methods of DeepSeekMath's appendix A.1 (and its process-supervised GRPO) in `METHODS`."""
    return [name for name, m in METHODS.items() if m.paper.startswith("DeepSeekMath")]


def method_rows(lab, names=None):
    """One row per method (default: `paper_methods()`): data source, reward, GC, what comes before the update.

    The data source is built from `lab` (nothing is sampled) so that its type can be shown even where
    the method wraps it (DPO's pairs); the GC names the parts it composes and the first docstring line of
    the paper's coefficient function.
    """
    rows = [[t("nb.method"), t("nb.basics.data_source"), t("nb.basics.reward_fn"), t("nb.basics.gc"), t("nb.basics.also"), t("nb.basics.in_words")]]
    for name in names or paper_methods():
        m = METHODS[name]
        source = m.data_source(lab)
        reward = t("nb.basics.human") if m.reward is None else (
            f"`{type(m.reward).__name__}`: {_doc_shown(m.reward, type(m.reward).__name__)}")
        extra = [f"`{name}`: {shown}" for name, _, shown in per_batch(m)]
        if getattr(m, "defaults", None):
            extra.append(t("nb.basics.defaults") + ", ".join(f"{k}={v}" for k, v in m.defaults.items()))
        rows.append([f"**{name}**", f"`{type(source).__name__}`: {_doc_shown(source, type(source).__name__)}", reward,
                     _gc_cell(m),
                     "; ".join(extra) or "", t_of(f"method.summary.{name}", m.summary)])
    return rows


def row_source(name):
    """The lines of methods/table.py that write method `name`'s row: its parts, data source and reward."""
    from unified_rl.methods import table

    lines = inspect.getsource(table).split("\n")
    start = next((i for i, line in enumerate(lines) if line.strip().startswith(f'Row("{name}",')), None)
    if start is None:
        raise ValueError(f"{name!r} is no row of methods/table.py")
    end = next(j for j in range(start + 1, len(lines)) if lines[j].strip().startswith(("Row(", ")")))
    return textwrap.dedent("\n".join(lines[start:end]))


def excerpt(func, start, end):
    """The lines of `func`'s source from the first containing `start` to the next containing `end`."""
    lines = inspect.getsource(func).split("\n")
    try:
        i = next(k for k, line in enumerate(lines) if start in line)
        j = next(k for k in range(i, len(lines)) if end in lines[k])
    except StopIteration:
        raise ValueError(f"{func.__qualname__} no longer contains {start!r} ... {end!r}") from None
    indent = min(len(line) - len(line.lstrip()) for line in lines[i:j + 1] if line.strip())
    return "\n".join(line[indent:] for line in lines[i:j + 1])


def token_rows(tokenizer, problem, text=None):
    """How one (prompt, response) pair is tokenised, and which targets the mask of eq 6 counts.

    Rows: target position t, the context's last token, the target token, its id, mask[t].
    """
    r = rollout_from_texts(tokenizer, [problem], [problem.solution if text is None else text])
    ids = r.input_ids[0].tolist()
    toks = tokenizer.convert_ids_to_tokens(ids)
    rows = [["t", t("nb.basics.input_token"), t("nb.basics.target"), t("nb.basics.target_id"), t("nb.basics.mask")]]
    for pos in range(len(ids) - 1):
        rows.append([pos, toks[pos], toks[pos + 1], ids[pos + 1], int(r.mask[0, pos])])
    return rows


def length_gc(lengths, alpha):
    """(B,) the coefficient that weighs response i by |o_i|^alpha: B |o_i|^alpha / sum_j |o_j|^alpha.

    alpha = 0 gives eq 7's GC = 1 (every response the same total weight); alpha = 1 gives the GC
    hidden in one token mean over the batch, B |o_i| / sum_j |o_j| (every token the same weight).
    """
    n = torch.as_tensor(lengths, dtype=torch.float64)
    w = n ** alpha
    return len(n) * w / w.sum()


def token_weights(lengths, normalisation="eq5", alpha=0.0):
    """(B, T) weight of each token's grad log pi in the loss's gradient, read off by autograd.

    "eq5": `paradigm.surrogate_loss` with GC = `length_gc(lengths, alpha)` (alpha = 0: SFT's GC = 1,
    1/(B |o_i|) per token). "token": one mean over every token of the batch: 1/sum_i |o_i| per token.
    """
    lengths = torch.as_tensor(lengths)
    T = int(lengths.max())
    mask = (torch.arange(T)[None] < lengths[:, None]).double()  # (B, T)
    logp = torch.zeros_like(mask, requires_grad=True)
    if normalisation == "eq5":
        coef = length_gc(lengths, alpha)[:, None] * coefficients.sft(mask)  # (B, T)
        loss = paradigm.surrogate_loss(logp, coef, mask)
    elif normalisation == "token":
        loss = -(logp * mask).sum() / mask.sum()
    else:
        raise ValueError(f"normalisation must be 'eq5' or 'token', got {normalisation!r}")
    loss.backward()
    return -logp.grad, mask


def length_explorer(short=8, long=13, n_short=1, n_long=1, alpha=0.0):
    """SFT's coefficient against response length: GC_i = B |o_i|^alpha / sum_j |o_j|^alpha, from eq 7 to a token mean."""
    controls = {"alpha": _slider(t("nb.basics.alpha"), alpha, 0.0, 1.0, 0.05),
                "long": _slider(t("nb.basics.long"), long, 2, 30, 1, cls=W.IntSlider),
                "short": _slider(t("nb.basics.short"), short, 2, 30, 1, cls=W.IntSlider),
                "n_long": _slider(t("nb.basics.n_long"), n_long, 1, 4, 1, cls=W.IntSlider),
                "n_short": _slider(t("nb.basics.n_short"), n_short, 1, 4, 1, cls=W.IntSlider)}

    def compute(alpha, long, short, n_long, n_short):
        lengths = [short] * n_short + [long] * n_long
        gc = length_gc(lengths, alpha)  # (B,)
        w, mask = token_weights(lengths, "eq5", alpha)
        ref = {"eq 7 (α = 0)": token_weights(lengths, "eq5", 0.0)[0], "token mean (α = 1)": token_weights(lengths, "token")[0]}
        data = {"lengths": lengths, "gc": gc, "per_token": w.amax(1), "per_response": w.sum(1),
                "reference": {k: (v.amax(1), v.sum(1)) for k, v in ref.items()}}
        fig = Figure(figsize=(9, 2.8), layout="constrained")
        axes = fig.subplots(1, 3)
        x = torch.arange(len(lengths))
        for ax, (title, y, k) in zip(axes, [(t("nb.basics.gc_each"), gc, None),
                                            (t("nb.basics.w_token"), data["per_token"], 0),
                                            (t("nb.basics.w_total"), data["per_response"], 1)]):
            ax.bar(x, y, color="C0", label=f"α = {alpha:.2f}")
            if k is not None:
                for j, (name, pair) in enumerate(data["reference"].items()):
                    ax.plot(x, pair[k], "_", ms=18, mew=2, color=f"C{j + 1}", label=t(_REFERENCE_LABELS[name]))
            ax.set_xticks(x, [f"|o|={n}" for n in lengths], fontsize=7)
            ax.set_title(title, fontsize=9)
        axes[1].legend(fontsize=7, loc="lower center")
        rows = [[t("nb.basics.response"), "|o|", "GC", t("nb.basics.w_per_token"), t("nb.basics.w_response")]] + [
            [i, n, gc[i].item(), data["per_token"][i].item(), data["per_response"][i].item()]
            for i, n in enumerate(lengths)]
        return data, fig, rows

    return Explorer(t("nb.basics.title"), controls, "alpha", compute,
                    t("nb.basics.note"))


def greedy_rows(before, after, tokenizer, problems, labels=None):
    """Greedy answers of two policies on the same problems, with a mark for each correct answer."""
    from unified_rl.rewards import rule_reward
    from unified_rl.sampling import sample

    labels = (t("nb.before"), t("nb.after")) if labels is None else labels
    rows = [[t("nb.basics.prompt"), t("nb.basics.reference")] + list(labels)]
    outs = []
    for policy in (before, after):
        r = sample(policy, tokenizer, problems, greedy=True)
        ok = rule_reward(r.problems, r.texts)
        outs.append([f"`{o}` " + ("✓" if c else "✗") for o, c in zip(r.texts, ok.tolist())])
    for i, p in enumerate(problems):
        rows.append([f"`{p.prompt}`", f"`{p.solution}`", outs[0][i], outs[1][i]])
    return rows


def mark(fig, key, y, label):
    """A dashed reference line at height y on the panel of `plots.plot_training` that shows metric `key`."""
    from unified_rl.course.plots import label as metric_label

    title = metric_label(key)
    axes = [ax for ax in fig.axes if ax.get_title() == title]
    if not axes:
        raise ValueError(f"no panel for {key!r} (title {title!r}); panels: {[ax.get_title() for ax in fig.axes]}")
    axes[0].axhline(y, ls="--", color="0.5", label=label)
    axes[0].legend(fontsize=7)
    return fig


def running_mean(metrics, key, window=5):
    """Per-step dicts {"step", key} with `key` averaged over the last `window` steps that have it."""
    rows = [m for m in metrics if m.get(key) is not None]
    out = []
    for i, m in enumerate(rows):
        recent = [r[key] for r in rows[max(0, i - window + 1): i + 1]]
        out.append({"step": m.get("step", i), key: sum(recent) / len(recent)})
    return out
