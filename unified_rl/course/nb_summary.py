"""Helpers for notebook 09 (the summary): the GC table of DeepSeekMath's methods, built from the package.

`gc_rows` reads each of the paper's `Method`s in `unified_rl.methods.METHODS` (data source, reward,
advantage, critic) and the sympy derivation of its objective in `unified_rl.derivations`, so the
table can never drift from the code that trains. (The methods after the paper have their own
tables in notebooks 10 and 11.) `markdown_table` renders rows for `IPython.display.Markdown`.
"""

import sympy as sp

from unified_rl import data, derivations
from unified_rl.course import parts_text
from unified_rl.course.i18n import t, t_of
from unified_rl.methods import METHODS

# each method of the paper's appendix A.1 (and §4.1.3's process supervision) -> its derivation
DERIVATION = {"sft": "sft", "rft": "rft", "online-rft": "online_rft", "dpo": "dpo", "ppo": "ppo",
              "grpo": "grpo", "grpo-process": "grpo"}


def source_name(method):
    """The data source's class name, also when the method builds it in a lambda (DPO)."""
    ds = method.data_source
    if isinstance(ds, type):
        return ds.__name__
    names = [n for n in getattr(getattr(ds, "__code__", None), "co_names", ()) if isinstance(getattr(data, n, None), type)]
    return names[0] if names else repr(ds)


def reward_name(method):
    """What scores o: the reward object's class (SFT's data is human-selected)."""
    return t("nb.summary.human") if method.reward is None else type(method.reward).__name__


def gc_latex(name):
    """LaTeX of the method's GC for token 1 of a one-token response: exact, at pi_theta = pi_old.

    For PPO and GRPO that is the printed form (eq 18, 21), which the derivation proves equal to the
    exact one on-policy; for DPO the exact form (eq 14 as printed drops a factor beta)."""
    d = derivations.derive(DERIVATION[name], n_tokens=1)
    expr = d.printed[0] if d.method in ("ppo", "grpo") else d.hand[0]
    if name == "grpo-process":
        return r"\hat A^{process}_{i,t} + " + sp.latex(expr - d.symbols["adv"][0])
    return (r"\pm " if d.method == "dpo" else "") + sp.latex(expr)  # DPO: + on o+, - on o-


def gc_rows(names=None, check=True):
    """One dict per method (default: the paper's, in DERIVATION): name, equations, data source, reward,
    advantage, critic, GC, sympy check."""
    unknown = sorted(set(names or ()) - set(DERIVATION))
    if unknown:
        raise ValueError(f"no derivation of the paper for {unknown}; choose from {list(DERIVATION)}")
    rows = []
    for name in names or DERIVATION:
        m = METHODS[name]
        d = derivations.derive(DERIVATION[name], n_tokens=1)
        rows.append({"method": name, "equations": d.equations if name != "grpo-process" else "§4.1.3, eq 21",
                     "data source": source_name(m), "reward": reward_name(m),
                     "advantage": f"`{m.composition.advantage}`" if m.advantage else "—",  # computed per batch
                     "critic": t("nb.summary.value_model") if m.critic else t("nb.summary.none"),
                     "GC": f"${gc_latex(name)}$",
                     "sympy": ("derived = hand" if derivations.check(d) else "") if check else ""})  # a value notebook 09 asserts on
    return rows


_HEADERS = {c: f"nb.summary.col.{c.replace(' ', '_')}" for c in (
    "method", "equations", "data source", "reward", "advantage", "critic", "paper", "what it changes")}


def markdown_table(rows, columns=None):
    """A Markdown table from a list of dicts (columns: keys of the first row unless given)."""
    columns = list(columns or rows[0])
    fmt = lambda v: f"{v:.3g}" if isinstance(v, float) else str(v)  # noqa: E731
    head = [t(_HEADERS[c]) if c in _HEADERS else c for c in columns]  # the keys stay English; their headers follow the language
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(columns)]
    lines += ["| " + " | ".join(fmt(r.get(c, "")) for c in columns) + " |" for r in rows]
    return "\n".join(lines)


def later_rows():
    """One dict per method in METHODS after the paper's (notebooks 10 and 11): name, data source,
    reward, coefficient (the parts it composes, or its function for the preference family), paper, and what
    it changes."""
    return [{"method": m.name, "data source": source_name(m), "reward": reward_name(m),
             "GC": f"`{parts_text.label(m) or m.coefficient.__name__}`", "paper": m.paper,
             "what it changes": t_of(f"method.summary.{name}", m.summary).replace("|", r"\|")}  # a bare | splits a cell
            for name, m in METHODS.items() if name not in DERIVATION]
