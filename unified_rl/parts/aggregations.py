"""Aggregations: how per-token terms f_{i,t} become one number, and the factor w_i each row's GC carries.

Every aggregation here is J = (1/B) sum_i w_i (1/|o_i|) sum_t f_{i,t} with w_i fixed by the mask, so eq 5's
GC is w_i times the per-token term's (B responses; |o_i| their kept tokens; N = sum_i |o_i|):

| name (verl's where verl has it) | J                                   | w_i              | ships in                  |
|---------------------------------|-------------------------------------|------------------|---------------------------|
| seq-mean-token-mean             | (1/B) sum_i (1/|o_i|) sum_t f       | 1                | DeepSeekMath eq 19; verl; TRL grpo |
| token-mean                      | sum_i sum_t f / N (the batch's)     | B |o_i| / N     | verl; TRL dapo, cispo      |
| seq-mean-token-sum              | (1/B) sum_i sum_t f                 | |o_i|            | verl; RLOO, ReMax, OPO     |
| seq-mean-token-sum-norm (alias constant) | (1/B) sum_i sum_t f / L | |o_i| / L   | verl; Dr. GRPO; TRL dr_grpo |
| group-token-mean                | mean over groups of sum_g f / sum_g |o_i| | G |o_i| / sum_g |o_j| | DAPO §3, CISPO (per question); SkyRL prompt_mean |
| token-sum                       | sum_i sum_t f (no normaliser)       | B |o_i|         | verl (newer releases)      |

verl's names mean verl's arithmetic (core_algos.agg_loss, as of commit b8d91ef8 and 1dda039b): its `token-mean` is
the batch's token mean; the mean over each group's tokens is `group-token-mean` here. verl's
`seq-mean-token-sum-norm` divides the batch's token sum by the number of sequences and L (its loss_scale_factor,
else the response length), Dr. GRPO's and TRL's dr_grpo normaliser, which the package called `constant` (an alias);
until b8d91ef8 (February 2026) verl left the 1/B out. L is the setting `max_len`. A row with no kept
tokens (a truncated row left out) has w_i = 0 and still counts in B, as TRL and verl count it. SkyRL's
`prompt_mean` (ppo_utils.apply_loss_reduction_to_advantages_minibatch: each token over the prompts times its prompt's
tokens) is group-token-mean's arithmetic, and an alias of it.

Derivations (sympy, derivations.REGISTRY): aggregation_NAME for each (NAME with '_' for '-'; aggregation_constant
too), and dr_grpo (grpo without std x vanilla x k3 x seq-mean-token-sum-norm: what the constant L does, Dr. GRPO's
point).
"""

import sympy as sp
import torch

from .. import _checks
from ..derivations.core import BETA, Derivation, L, _flat, _k3, _ragged, _ragged_gc
from ..text import Text
from .registry import AGGREGATIONS

RENAMED = {"batch-token-mean": "token-mean"}
"""Old spellings of an aggregation, refused in one line that names the new one (verl's names win)."""


def _lengths(mask):
    return mask.sum(-1, keepdim=True)  # (B, 1) |o_i|


def _L(v):
    L = v.setting("max_len")
    if L is None:
        raise ValueError("this aggregation needs max_len (L, e.g. the generation budget)")
    L = _checks.scalar(L, "max_len", low=0.0)
    if L == 0:
        raise ValueError("max_len must be > 0")
    return L


def token_mean_weight(mask, across=None):
    """(B, 1) B |o_i| / N over the whole batch (every rank's rows and tokens with `across`)."""
    n = _lengths(mask)
    B = torch.tensor(float(mask.shape[0]), dtype=n.dtype, device=n.device)
    total = torch.stack([B, n.sum()])
    if across is not None:
        total = across.sum(total)
    return total[0] * n / total[1].clamp(min=1)


def token_sum_weight(mask, across=None):
    """(B, 1) B |o_i| (B every rank's rows with `across`): verl's token-sum, J = the batch's sum of f.

    >>> token_sum_weight(torch.tensor([[1., 1., 0.], [1., 0., 0.]]))
    tensor([[4.],
            [2.]])
    """
    B = torch.tensor(float(mask.shape[0]), dtype=mask.dtype, device=mask.device)
    return (B if across is None else across.sum(B)) * _lengths(mask)


def group_token_mean_weight(mask, group_size):
    """(B, 1) G |o_i| / sum_{j in i's group} |o_j|; a group a rank holds whole never crosses ranks."""
    _checks.groups(mask.shape[0], group_size)
    n = _lengths(mask)
    per_group = n.view(-1, group_size).sum(-1, keepdim=True).repeat_interleave(group_size, 0)
    return group_size * n / per_group.clamp(min=1)


# the objective's side: each J written as its source prints it (a sum and a normaliser), no weight

def _seq_mean_token_mean(f, v):
    return ((f * v.mask).sum(-1) / v.mask.sum(-1).clamp(min=1)).mean()


def _token_mean(f, v):
    return (f * v.mask).sum() / v.mask.sum().clamp(min=1)


def _token_sum(f, v):
    return (f * v.mask).sum()


def _seq_mean_token_sum(f, v):
    return (f * v.mask).sum(-1).mean()


def _constant(f, v):
    return (f * v.mask).sum() / (v.mask.shape[0] * v.setting("max_len"))


def _group_token_mean(f, v):
    G = v.group_size
    per = (f * v.mask).reshape(-1, G * v.mask.shape[1]).sum(-1) / v.mask.reshape(-1, G * v.mask.shape[1]).sum(-1).clamp(min=1)
    return per.mean()


# the derivation: J of per-token terms in sympy (one group of ragged responses), and the row factor it gives

def sympy_J(terms, name):
    """J of per-token terms (rows of one group: the batch) under aggregation `name`, in sympy."""
    B, sums = len(terms), [sum(row) for row in terms]
    return {"seq-mean-token-mean": lambda: sum(s / len(row) for s, row in zip(sums, terms)) / B,
            "token-mean": lambda: sum(sums) / sum(len(row) for row in terms),
            "group-token-mean": lambda: sum(sums) / sum(len(row) for row in terms),  # the rows are one group
            "seq-mean-token-sum": lambda: sum(sums) / B,
            "seq-mean-token-sum-norm": lambda: sum(sums) / (B * L),
            "constant": lambda: sum(sums) / (B * L),
            "token-sum": lambda: sum(sums)}[name]()


def sympy_weights(rows, name):
    """The hand-derived row factor w_i of aggregation `name`, once per token of the ragged rows."""
    B, N = len(rows), sum(len(r) for r in rows)
    w = {"seq-mean-token-mean": lambda n: sp.Integer(1), "token-mean": lambda n: sp.Rational(B * n, N),
         "group-token-mean": lambda n: sp.Rational(B * n, N), "seq-mean-token-sum": lambda n: sp.Integer(n),
         "seq-mean-token-sum-norm": lambda n: n / L, "constant": lambda n: n / L,
         "token-sum": lambda n: sp.Integer(B * n)}[name]
    return tuple(w(len(row)) for row in rows for _ in row)


def derive_aggregation(n, name):
    """The Derivation of aggregation `name` on two responses of n and n + 1 tokens."""
    l, A = _ragged("ell", (n, n + 1)), sp.symbols("A_1:3", real=True)
    J = sympy_J([[a * x for x in row] for row, a in zip(l, A)], name)
    hand = tuple(w * a for w, a in zip(sympy_weights(l, name), [a for row, a in zip(l, A) for _ in row]))
    notes = (Text("Per-token terms A_i ell_{{i,t}} aggregated by {aggregation}; two responses of {n} and "
                  "{n_plus_1} tokens. The GC is A_i times the row factor w_i of parts/aggregations.py.",
                  aggregation=name, n=n, n_plus_1=n + 1),)
    symbols = {"logp": _flat(l), "adv": A} | ({"max_len": L} if "norm" in name or name == "constant" else {})
    return Derivation(f"aggregation: {name}", "parts/aggregations.py", J, _ragged_gc(J, l), hand, None, symbols,
                      notes=notes, scale="B\\,|o_i|")


def derive_dr_grpo(n):
    """Dr. GRPO (grpo without std x vanilla x k3 x constant): what the constant normaliser L does to the GC."""
    lengths = (n, n + 1)
    l, lo, lref = _ragged("ell", lengths), _ragged("ell^old", lengths), _ragged("ell^ref", lengths)
    R = sp.symbols("R_1:3", real=True)
    A = [r - sum(R) / 2 for r in R]  # no std
    terms = [[sp.exp(x - y) * a - BETA * _k3(x, z) for x, y, z in zip(*rows)] for rows, a in zip(zip(l, lo, lref), A)]
    J = sum(sum(row) for row in terms) / (2 * L)  # 1/G sum_i sum_t (...) / L
    gc = _ragged_gc(J, l)
    w, adv = sympy_weights(l, "constant"), [a for row, a in zip(l, A) for _ in row]
    hand = tuple(wi * (sp.exp(x - y) * a + BETA * (sp.exp(z - x) - 1))
                 for wi, x, y, z, a in zip(w, _flat(l), _flat(lo), _flat(lref), adv))
    printed = tuple(wi * (a + BETA * (sp.exp(z - x) - 1)) for wi, x, z, a in zip(w, _flat(l), _flat(lref), adv))
    on_policy = dict(zip(_flat(lo), _flat(l)))
    claims = tuple((Text("at pi_old = pi_theta token {k}'s GC is |o_i|/L (R_i - mean R + KL term)", k=k + 1),
                    (g - p).subs(on_policy)) for k, (g, p) in enumerate(zip(gc, printed)))
    notes = (Text("No std and no 1/|o_i|: as eq 5 divides by |o_i|, the GC carries |o_i| / L, so every token "
                  "of every response gets the same push A_i / L, whatever its length."),)
    symbols = {"rewards": R, "logp": _flat(l), "logp_old": _flat(lo), "logp_ref": _flat(lref), "beta": BETA,
               "max_len": L}
    return Derivation("dr_grpo", "arXiv 2503.20783, Figure 1", J, gc, hand, printed, symbols, claims,
                      notes=notes, scale="B\\,|o_i|")


def _register(name, weight, objective, summary, cite, **kw):
    derive = lambda n, name=name: derive_aggregation(n, name)  # noqa: E731
    AGGREGATIONS.add(name, gc=weight, objective=objective, summary=summary, cite=cite, derivation=derive,
                     derivations={f"aggregation_{name.replace('-', '_')}": derive, **kw.pop("derivations", {})}, **kw)


_register("seq-mean-token-mean", lambda v: (_lengths(v.mask) > 0).to(v.mask.dtype), _seq_mean_token_mean,
          "each response's mean over its tokens, then the mean over responses", "DeepSeekMath eq 19, arXiv 2402.03300",
          ships_in=("paper", "TRL", "verl"))
_register("token-mean", lambda v: token_mean_weight(v.mask, v.across), _token_mean,
          "every token of the batch weighs the same", "verl core_algos.agg_loss; DAPO arXiv 2503.14476",
          ships_in=("TRL", "verl"))
_register("seq-mean-token-sum", lambda v: _lengths(v.mask), _seq_mean_token_sum,
          "each response's token sum (log pi(o|q)), then the mean over responses", "verl core_algos.agg_loss",
          ships_in=("verl",))
_register("seq-mean-token-sum-norm", lambda v: _lengths(v.mask) / _L(v), _constant,
          "the mean over responses of each token sum over a constant L",
          "verl core_algos.agg_loss (commit b8d91ef8); Dr. GRPO, arXiv 2503.20783; TRL dr_grpo", aliases=("constant",),
          ships_in=("verl", "TRL"), derivations={"dr_grpo": derive_dr_grpo,
                                                  "aggregation_constant": lambda n: derive_aggregation(n, "constant")})
_register("group-token-mean", lambda v: group_token_mean_weight(v.mask, v.group_size), _group_token_mean,
          "every token of a question's group weighs the same, then the mean over groups",
          "DAPO §3, arXiv 2503.14476; CISPO, arXiv 2506.13585; SkyRL prompt_mean", aliases=("prompt_mean",),
          ships_in=("SkyRL",))
_register("token-sum", lambda v: token_sum_weight(v.mask, v.across), _token_sum,
          "the batch's sum of every token's term, no normaliser", "verl core_algos.agg_loss (commit 1dda039b)",
          ships_in=("verl",))


def weight(v, name):
    """(B, 1) the row factor of aggregation `name` on View v (the registry's, old spellings refused)."""
    return AGGREGATIONS.get(checked(name)).gc(v)


def checked(name):
    """`name` if it is an aggregation; an old spelling or an unknown one is a ValueError naming what to use."""
    if name in RENAMED:
        raise ValueError(f"aggregation {name!r} is now called {RENAMED[name]!r} (verl's name and arithmetic: the "
                         "batch's token mean); the mean over each group's tokens is 'group-token-mean'")
    AGGREGATIONS.get(name)
    return name
