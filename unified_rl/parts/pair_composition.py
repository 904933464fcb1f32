"""A preference composition: how each response is scored, the loss of the scores, and the normalisation (eq 5).

    J   = -(1/B) sum_i sum_l l(s_i^1, s_i^2)                   the losses, each written from its paper
    GC  = 2 a_{i} k_{i}  on every token of row i              a = B dJ/ds (the losses' gc), k = abs(o) ds/d ell_t

s is the scores part's (pair_scores.py), over the tokens by the norm; l is one of PAIR_LOSSES (pair_losses/),
with further losses added to J where a method has them (ORPO's SFT term: `extra`). Row i of the first half is
the chosen response of pair i (KTO: labelled response i), row i of the second half its partner (KTO: a
mismatched row, which only gives the reference point z0). The surrogate averages over the 2B rows and J over
the B pairs, hence the 2. A loss that is not a function of its own pair's two scores says so on its page (AOT
ranks the batch, KTO's z0 and sft's token mean are batch means): the batch is the whole batch, every rank's
rows where the Step carries `across`.

The settings of a composition are its parts' (`pair_settings_class`), named `{prefix}_{field}` after the
method (dpo_label_smoothing, kto_beta, simpo_gamma), or as the row names them (`names`: IPO's beta is ipo_tau,
ORPO's lam orpo_lambda), or read from the run's RLConfig (`run`: DPO's beta is dpo_beta). A row may let a
setting choose the loss (`losses`: DPO's dpo_loss among TRL's 15 loss types) and the norm (`norms`: dpo_norm).
"""

import dataclasses
import functools
from dataclasses import dataclass, field
from types import SimpleNamespace
from typing import Any

import torch

from .. import _checks
from ..paradigm import step_from_tensors
from .composition import field_docs, make_settings
from .pair_view import PairView, stack_pairs
from .registry import PAIR_LOSSES, PAIR_SCORES
from .view import out

NORMS = ("mean", "sum")
DATA = ("pairs", "labelled")  # PreferencePairs (chosen, rejected) or LabelledSamples (labelled, mismatched)


def _pairs(mapping):
    return tuple(sorted(dict(mapping or {}).items()))


@dataclass(frozen=True)
class PairComposition:
    """The parts of one preference method, by name, and how its settings are named."""

    scores: str
    loss: str  # the loss in force (the default of the `{prefix}_loss` setting where `losses` offers a choice)
    extra: tuple = ()  # losses added to J beside it (ORPO's sft)
    norm: str = "mean"
    losses: tuple = ()  # the losses a `{prefix}_loss` setting may choose; () = none
    norms: tuple = ()  # the norms a `{prefix}_norm` setting may choose; () = none
    prefix: str = "pair"
    names: Any = ()  # {part field: setting name} where the row names a setting otherwise
    run: Any = ()  # {part field: RLConfig field} read from the run's config instead
    settings: Any = None  # the default settings, read when a Step has none

    def __post_init__(self):
        set_ = lambda k, v: object.__setattr__(self, k, v)  # noqa: E731 (frozen)
        set_("scores", PAIR_SCORES.get(self.scores).name)
        set_("loss", PAIR_LOSSES.get(self.loss).name)
        set_("extra", tuple(PAIR_LOSSES.get(e).name for e in self.extra))
        set_("losses", tuple(PAIR_LOSSES.get(name).name for name in self.losses))
        set_("names", _pairs(self.names))
        set_("run", _pairs(self.run))
        if self.losses and self.loss not in self.losses:
            raise ValueError(f"the loss {self.loss!r} is not among the losses a setting may choose: {self.losses}")
        for norm in (self.norm, *self.norms):
            if norm not in NORMS:
                raise ValueError(f"unknown norm {norm!r}; choose 'mean' (each response's mean over its tokens) or 'sum'")
        if self.norms and self.norm not in self.norms:
            raise ValueError(f"the norm {self.norm!r} is not among {self.norms}")
        data = {PAIR_LOSSES[name].extra.get("data", "pairs") for name in (*self.candidates, *self.extra)}
        if len(data) > 1:
            raise ValueError(f"the losses {(*self.candidates, *self.extra)} read different batches (paired and "
                             "labelled): compose them apart")
        for name in (*self.candidates, *self.extra):
            allowed = PAIR_LOSSES[name].extra.get("scores")
            if allowed and self.scores not in allowed:
                raise ValueError(f"the {name} loss reads its scores as {' or '.join(allowed)} scores, not "
                                 f"{self.scores}: compose it with scores={allowed[0]!r}")
            forced = {PAIR_LOSSES[n].extra.get("norm") for n in (name, *self.extra)} - {None}
            if len(forced) > 1:
                raise ValueError(f"the losses {(name, *self.extra)} each fix a different norm: {sorted(forced)}")
        self.fields()  # a setting two parts define differently is refused now

    @property
    def candidates(self):
        """The losses a run may have in force: those a setting may choose, else the one."""
        return self.losses or (self.loss,)

    @property
    def data(self):
        """'pairs' (chosen, then rejected rows) or 'labelled' (KTO's labelled, then mismatched rows)."""
        return PAIR_LOSSES[self.loss].extra.get("data", "pairs")

    @property
    def uses_ref(self):
        return bool(PAIR_SCORES[self.scores].extra.get("uses_ref"))

    @property
    def parts(self):
        """{axis: Part}: the scores, the loss in force by default, and the added losses."""
        return {"pair_scores": PAIR_SCORES[self.scores], "pair_loss": PAIR_LOSSES[self.loss],
                **{f"pair_loss+{e}": PAIR_LOSSES[e] for e in self.extra}}

    def record(self, hp):
        """The parts a run under settings hp is made of (its summary's record)."""
        losses, norm = self.chosen(hp)
        return {"scores": self.scores, "loss": losses[0], "extra": list(losses[1:]), "norm": norm}

    def describe(self):
        """The composition in one line: scores x loss (+ added losses), norm, with the settings that choose."""
        loss = self.loss + (f" ({self.prefix}_loss)" if self.losses else "")
        norm = self.norm + (f" ({self.prefix}_norm)" if self.norms else "")
        return f"{self.scores} x {loss}{''.join(f' + {e}' for e in self.extra)}, {norm}"

    # ------------------------------------------------------------ settings

    def setting_name(self, name):
        """What the row calls a part's setting `name` (for a run field: the RLConfig field)."""
        return dict(self.run).get(name) or dict(self.names).get(name) or f"{self.prefix}_{name}"

    def fields(self):
        """[(part field, dataclasses.Field, its doc, the part's name)] of every part a run may use, once each."""
        out_, seen = [], {}
        parts = [PAIR_LOSSES[n] for n in (*self.candidates, *self.extra)] + [PAIR_SCORES[self.scores]]
        for part in parts:
            docs = field_docs(part.settings) if part.settings is not None else {}
            for f in part.fields():
                if f.name in seen:
                    if seen[f.name] != (f.default, dict(f.metadata)):
                        raise ValueError(f"setting {f.name!r} of {part.name!r} differs from another loss's: give it "
                                         "the same default and bounds, or another name")
                    continue
                seen[f.name] = (f.default, dict(f.metadata))
                out_.append((f.name, f, docs.get(f.name, ""), part.name))
        return out_

    def setting(self, name, hp, cfg=None):
        """The value of a part's setting `name`: the settings' field, or the run's config field (None without cfg)."""
        run = dict(self.run)
        if name in run:
            return None if cfg is None else getattr(cfg, run[name])
        return getattr(hp, self.setting_name(name))

    def chosen(self, hp):
        """(the losses in force, the norm) under settings hp: a loss may fix its norm (TRL's sigmoid_norm)."""
        loss = getattr(hp, f"{self.prefix}_loss") if self.losses else self.loss
        norm = getattr(hp, f"{self.prefix}_norm") if self.norms else self.norm
        losses = (loss, *self.extra)
        forced = [PAIR_LOSSES[n].extra["norm"] for n in losses if "norm" in PAIR_LOSSES[n].extra]
        return losses, forced[0] if forced else norm

    def check(self, hp, cfg=None):
        """ValueError naming the setting if a choice is unknown or a value out of its range."""
        if self.losses and getattr(hp, f"{self.prefix}_loss") not in self.losses:
            raise ValueError(f"unknown {self.prefix.upper()} loss_type {getattr(hp, f'{self.prefix}_loss')!r} "
                             f"({self.prefix}_loss); choose one of {', '.join(self.losses)}")
        if self.norms and getattr(hp, f"{self.prefix}_norm") not in self.norms:
            raise ValueError(f"unknown norm {getattr(hp, f'{self.prefix}_norm')!r} ({self.prefix}_norm); choose "
                             "'mean' (each response's mean over its tokens) or 'sum' (its sum)")
        for name, f, _, _ in self.fields():
            value = self.setting(name, hp, cfg)
            if "choices" in f.metadata and value not in f.metadata["choices"]:
                raise ValueError(f"unknown {self.setting_name(name)} {value!r}; choose one of "
                                 f"{', '.join(map(str, f.metadata['choices']))}")
            if value is None or "choices" in f.metadata or not isinstance(f.default, float):
                continue
            value = _checks.scalar(value, self.setting_name(name), low=f.metadata.get("low"))
            if "above" in f.metadata and not value > f.metadata["above"]:
                raise ValueError(f"{self.setting_name(name)} must be > {f.metadata['above']}, got {value}")
        get = lambda name: self.setting(name, hp, cfg)  # noqa: E731
        for name in self.chosen(hp)[0]:
            if "check" in PAIR_LOSSES[name].extra:
                PAIR_LOSSES[name].extra["check"](get, self.setting_name)

    def _hp(self, step):
        return step.hp if step.hp is not None else self.settings

    # ------------------------------------------------------------ the coefficient and the objective

    def _view(self, step, grad):
        hp = self._hp(step)
        self.check(hp, step.cfg)
        losses, norm = self.chosen(hp)
        return PairView.of(step, self, hp, norm, grad), losses

    def coefficient(self, step):
        """(2B, T) GC on `step`, detached, 0 off the mask: 2 a k on every token of each row."""
        v, losses = self._view(step, grad=False)
        v.score, k = PAIR_SCORES[self.scores].gc(v)
        a = sum(torch.cat(PAIR_LOSSES[name].gc(v)) for name in losses)  # (2B,) B dJ/ds of each row's score
        return out(2 * (a * k)[:, None] * v.mask, v.mask)  # 2: the surrogate averages 2B rows, J the B pairs

    def objective(self, step):
        """J on `step` (maximised): minus the mean over pairs of the losses, each written from its paper."""
        v, losses = self._view(step, grad=True)
        v.score = PAIR_SCORES[self.scores].objective(v)
        return -sum(PAIR_LOSSES[name].objective(v) for name in losses).mean()


# ---------------------------------------------------------------- the settings of a composition

def pair_settings_fields(composition):
    """[(name, type, dataclasses.field)]: the choosing settings, then every part's, named as the row names them."""
    c = composition
    out_ = []
    if c.losses:
        out_.append((f"{c.prefix}_loss", str, field(default=c.loss, metadata={
            "choices": c.losses, "doc": "the loss of the two scores (parts.PAIR_LOSSES)", "part": "pair_loss"})))
    if c.norms:
        out_.append((f"{c.prefix}_norm", str, field(default=c.norm, metadata={
            "choices": c.norms, "doc": "each response's score over its tokens: mean (abs(o) alike) or sum (a longer "
                                       "response pushed harder)", "part": "norm"})))
    run = dict(c.run)
    for name, f, doc, part in c.fields():
        if name not in run:
            out_.append((c.setting_name(name), f.type, field(default=f.default,
                                                             metadata={**f.metadata, "doc": doc, "part": part})))
    return out_


def pair_settings_class(name, composition, defaults=None):
    """A frozen dataclass of the composition's settings with the row's `defaults`, checked when made."""
    return make_settings(name, pair_settings_fields(composition), defaults, lambda self: composition.check(self),
                         f"The settings of {composition.describe()}: each part's, named as the method names them.")


# ---------------------------------------------------------------- a composition on bare tensors

@functools.lru_cache(maxsize=None)
def composed(scores, loss, extra=(), norm="mean", losses=(), norms=()):
    """The PairComposition of these parts with its default settings (named pair_FIELD), made once per process:
    what `coefficients.ipo`, `objectives.dpo_loss`, ... call on bare tensors."""
    bare = PairComposition(scores, loss, extra, norm, losses, norms)
    return dataclasses.replace(bare, settings=pair_settings_class("PairConfig", bare)())


def pair_step(composition, logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
              mask_rejected, pairs_word="pairs are needed", **settings):
    """The Step of one batch of pairs (chosen rows, then rejected, padded to one T) under the composition's
    settings, given by the parts' field names (beta=0.3, label_smoothing=0.1); logp keeps its gradient."""
    logp, ref, mask = stack_pairs(logp_chosen, logp_ref_chosen, mask_chosen, logp_rejected, logp_ref_rejected,
                                  mask_rejected, pairs_word)
    hp = dataclasses.replace(composition.settings, **{composition.setting_name(k) if k not in ("loss", "norm") else
                                                      f"{composition.prefix}_{k}": v for k, v in settings.items()})
    return step_from_tensors(logp, mask, SimpleNamespace(), logp_ref=ref, hp=hp)
