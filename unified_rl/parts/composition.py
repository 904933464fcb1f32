"""A composition: one part per axis, and the coefficient and objective they make together (eq 5).

    GC_{i,t}  = w_i * ( keep_{i,t} * P_{i,t}(A) + K_{i,t} + sum_terms X_{i,t} )   on the rows the loss keeps, 0 elsewhere
    J         = Agg( keep * f_P(A) - beta k + sum_terms f_X )                 the same, written from the parts' papers

A: the advantage estimator's (B, T) advantage (with the KL's estimate subtracted first where the KL sits in the
reward); keep: the token masks; P: the policy term's GC piece (f_P its objective term); K: the KL term's GC piece
in the loss (-beta k its objective term); X: each extra term's (a regulariser beside the policy term: parts.TERMS);
w_i: the aggregation's row factor (Agg its J). An advantage that marks
some rows as baselines only (ReMax's greedy answers) leaves them out: the parts run on the other rows, whose GC is
scaled by B / (rows kept), since eq 5 averages over every row of the batch.

`Composition.coefficient(step)` and `.objective(step)` are what a `Method` built by `parts.compose` calls; the
model oracle compares the gradients of the two, and tests/test_parts.py does it for random compositions.
"""

import ast
import dataclasses
import functools
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Optional

import torch

from . import aggregations
from .registry import ADVANTAGES, AGGREGATIONS, KL_TERMS, MASKS, POLICY_TERMS, TERMS
from .view import View, out

KL_PLACES = ("loss", "reward")


@dataclass(frozen=True)
class Composition:
    """The parts of one method, by name (verl's names or the package's aliases)."""

    advantage: str
    policy: str
    kl: Optional[str] = None
    kl_in: str = "loss"
    masks: tuple = ()
    settings: object = None  # the default settings (a frozen dataclass instance), read when a Step has none
    terms: tuple = ()  # regularisers beside the policy term, in the loss (parts.TERMS)

    def __post_init__(self):
        object.__setattr__(self, "advantage", ADVANTAGES.get(self.advantage).name)
        object.__setattr__(self, "policy", POLICY_TERMS.get(self.policy).name)
        if self.kl is not None:
            object.__setattr__(self, "kl", KL_TERMS.get(self.kl).name)
        if self.kl_in not in KL_PLACES:
            raise ValueError(f"kl_in must be 'loss' or 'reward', got {self.kl_in!r}")
        if self.kl is None and self.kl_in != "loss":
            raise ValueError("kl_in='reward' needs a KL term (kl='k1', 'k2' or 'k3')")
        object.__setattr__(self, "masks", tuple(MASKS.get(m).name for m in self.masks))
        object.__setattr__(self, "terms", tuple(TERMS.get(t).name for t in ((self.terms,) if isinstance(self.terms, str)
                                                                          else self.terms)))
        if self.kl_in == "reward" and self.kl is not None and "reward" not in KL_TERMS[self.kl].extra:
            raise ValueError(f"KL term {self.kl!r} cannot sit in the reward")
        if self.kl_in == "reward" and self.kl is not None and ADVANTAGES[self.advantage].extra.get("no_kl_reward"):
            raise ValueError(f"the {self.advantage} advantage takes no KL in the reward "
                             f"({ADVANTAGES[self.advantage].extra['no_kl_reward']}): put the KL in the loss")

    @property
    def parts(self):
        """{axis: Part} of the chosen parts (the aggregation is a setting: `aggregation`)."""
        out_ = {"advantage": ADVANTAGES[self.advantage], "policy": POLICY_TERMS[self.policy]}
        if self.kl is not None:
            out_["kl"] = KL_TERMS[self.kl]
        out_.update({f"term:{t}": TERMS[t] for t in self.terms})
        out_.update({f"mask:{m}": MASKS[m] for m in self.masks})
        return out_

    def _hp(self, step):
        return step.hp if step.hp is not None else self.settings

    def _masks(self, rows):
        return [MASKS[m] for m in self.masks if bool(MASKS[m].extra.get("rows")) == rows]

    def coefficient(self, step):
        """(B, T) GC of the composition on `step`, detached, 0 off the mask."""
        v = View.of(step, self._hp(step))
        for m in self._masks(rows=True):
            v.mask = m.gc(v)
        if self.kl is not None and self.kl_in == "reward":
            v.kl_reward = KL_TERMS[self.kl].extra["reward"](v)
        adv = ADVANTAGES[self.advantage].gc(v)  # (B, T) over every row of the batch
        rows = ADVANTAGES[self.advantage].extra.get("rows")
        if rows is None:
            return out(self._terms(v, adv), v.full)
        keep = rows(v)
        kept = self._terms(v.rows(keep), adv[keep]) * (v.full.shape[0] / int(keep.sum()))
        coef = torch.zeros(v.full.shape, dtype=kept.dtype, device=kept.device)
        coef[keep] = kept
        return out(coef, v.full)

    def _terms(self, v, adv):
        keep = v.mask
        for m in self._masks(rows=False):
            keep = keep * m.gc(v, adv)
        term = POLICY_TERMS[self.policy].gc(v, adv, keep)
        if self.kl is not None and self.kl_in == "loss":
            term = term + KL_TERMS[self.kl].gc(v)
        for t in self.terms:
            term = term + TERMS[t].gc(v)
        return aggregations.weight(v, v.setting("aggregation", "seq-mean-token-mean")) * term * v.mask

    def objective(self, step):
        """J of the composition on `step` (maximised), written from each part's objective term."""
        v = View.of(step, self._hp(step), grad=True)
        for m in self._masks(rows=True):
            v.mask = m.objective(v)
        if self.kl is not None and self.kl_in == "reward":
            v.kl_reward = KL_TERMS[self.kl].extra["reward_objective"](v)
        A = ADVANTAGES[self.advantage].objective(v)
        A = A.expand_as(v.full) if A.shape[-1] == 1 else A
        rows = ADVANTAGES[self.advantage].extra.get("rows")
        if rows is not None:
            keep = rows(v)
            v, A = v.rows(keep), A[keep]
        keep = torch.ones_like(v.mask)
        for m in self._masks(rows=False):
            keep = keep * m.objective(v, A)
        f = keep * POLICY_TERMS[self.policy].objective(v, A)
        if self.kl is not None and self.kl_in == "loss":
            f = f + KL_TERMS[self.kl].objective(v)
        for t in self.terms:
            f = f + TERMS[t].objective(v)
        return AGGREGATIONS.get(aggregations.checked(v.setting("aggregation", "seq-mean-token-mean"))).objective(f, v)


# ---------------------------------------------------------------- the settings of a composition

@functools.lru_cache(maxsize=None)
def field_docs(cls):
    """{field name: its docstring} read from the class's source (CleanRL's docstring per field)."""
    try:
        tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
    except (OSError, TypeError):
        return {}
    body, docs = tree.body[0].body, {}
    for a, b in zip(body, body[1:]):
        if isinstance(a, ast.AnnAssign) and isinstance(b, ast.Expr) and isinstance(getattr(b, "value", None), ast.Constant):
            docs[a.target.id] = " ".join(str(b.value.value).split())
    return docs


AGGREGATION_DOC = ("how per-token terms become one number (parts.AGGREGATIONS, verl's names where verl has them: "
                   "token-mean is the batch's; group-token-mean the per-question form)")
MAX_LEN_DOC = "L of the constant and seq-mean-token-sum-norm aggregations (here the cpu preset's budget, 12 + EOS + 4)"


def settings_fields(composition):
    """[(name, type, dataclasses.field)] of every setting the composition's parts read, in axis order."""
    out_, owner = [], {}
    for axis, part in composition.parts.items():
        docs = field_docs(part.settings) if part.settings is not None else {}
        for f in part.fields():
            if f.name in owner:
                raise ValueError(f"setting {f.name!r} of {axis} {part.name!r} is also {owner[f.name]}'s")
            owner[f.name] = f"{axis} {part.name!r}"
            meta = {**f.metadata, "doc": docs.get(f.name, ""), "part": owner[f.name]}
            out_.append((f.name, f.type, field(default=f.default, metadata=meta)))
    out_.append(("aggregation", str, field(default="seq-mean-token-mean",
                                           metadata={"choices": tuple(AGGREGATIONS), "doc": AGGREGATION_DOC})))
    out_.append(("max_len", float, field(default=17.0, metadata={"doc": MAX_LEN_DOC})))
    return out_


def _check_choices(self):
    for f in dataclasses.fields(self):
        value = getattr(self, f.name)
        if f.name == "aggregation":  # an alias is read as the part's name (constant: seq-mean-token-sum-norm)
            object.__setattr__(self, f.name, AGGREGATIONS.get(aggregations.checked(value)).name)
        elif isinstance(f.default, str) and "choices" in f.metadata and value not in f.metadata["choices"]:
            raise ValueError(f"unknown {f.name} {value!r}; choose one of {', '.join(map(str, f.metadata['choices']))}")


def make_settings(name, fields_, defaults, post_init, doc):
    """A frozen dataclass named `name` of `fields_` ((name, type, field) triples) whose defaults the row's
    `defaults` override (ValueError naming one that is no field), checked by `post_init` when made."""
    known = {n for n, _, _ in fields_}
    unknown = sorted(set(defaults or {}) - known)
    if unknown:
        raise ValueError(f"{name}: default(s) {unknown} are no setting of its parts; its settings: {sorted(known)}")
    fields_ = [(n, t, field(default=(defaults or {}).get(n, f.default), metadata=f.metadata)) for n, t, f in fields_]
    cls = dataclasses.make_dataclass(name, fields_, frozen=True, namespace={"__post_init__": post_init})
    cls.__doc__ = doc
    return cls


def settings_class(name, composition, defaults=None):
    """A frozen dataclass of the composition's settings, with the row's `defaults`; str choices checked."""
    return make_settings(name, settings_fields(composition), defaults, _check_choices,
                         f"The settings of {composition.advantage} x {composition.policy}" + (
                             f" x {composition.kl} ({composition.kl_in})" if composition.kl else "")
                         + ": each part's, and the aggregation.")
