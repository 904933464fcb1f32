"""DPO (DeepSeekMath eq 12-14) and the preference family beside it as rows of a table: IPO, SimPO, KTO and ORPO.

Each method is one composition of the preference parts (parts/pair_scores.py, parts/pair_losses/): how each
response is scored, the loss of the two scores, and the norm (mean or sum over its tokens).

| method | scores    | loss                                  | norm               | data source     | settings              |
|--------|-----------|---------------------------------------|--------------------|-----------------|-----------------------|
| dpo    | log_ratio | sigmoid, or any of TRL's 15 (dpo_loss) | mean (dpo_norm)    | PreferencePairs | beta: RLConfig.dpo_beta |
| ipo    | log_ratio | ipo                                   | mean               | PreferencePairs | ipo_tau (ipo's beta)  |
| simpo  | logp      | simpo                                 | mean               | PreferencePairs | simpo_beta, simpo_gamma |
| kto    | log_ratio | kto or apo_zero_unpaired (kto_loss)   | mean (kto_norm)    | LabelledSamples | kto_beta, kto_lam_d, kto_lam_u |
| orpo   | logp      | odds_ratio + sft                      | mean               | PreferencePairs | orpo_lambda (its lam) |

A pair method sees 2B rows (B chosen, then their B rejected partners), KTO its B labelled rows, then B mismatched
rows for its reference point z0; the surrogate averages over the 2B rows and J over the B pairs, so each GC is
twice the per-pair one (parts/pair_composition.py). `compose_pairs(...)` makes any other composition; a row's
settings are named after it (`{name}_{field}`) unless it names them (`names`) or reads them from the run
(`run`): train("ipo", ipo_tau=2.0) sets them.
"""

import re
from dataclasses import dataclass, field

from ..data import LabelledSamples, PreferencePairs
from ..paradigm import Method
from ..parts import PairComposition, pair_settings_class
from ..parts.pair_losses import TRL_DPO, TRL_KTO
from ..parts.pair_scores import NORMS
from ..rewards import RuleReward

rule = RuleReward()
SOURCES = {"pairs": PreferencePairs, "labelled": LabelledSamples}


def _class_name(name):
    return "".join(w.capitalize() for w in re.split(r"[^A-Za-z0-9]+", name) if w) + "Config"


def compose_pairs(scores, loss, norm="mean", *, extra=(), losses=(), norms=(), prefix="pair", names=None, run=None,
                  name=None, reward=rule, defaults=None, paper="", summary="", ships_in=(), **settings):
    """A Method of the preference parts: `settings` are its settings' defaults by their names
    (`{prefix}_{field}`, or as `names` names them), `defaults` the preset section's fields it changes."""
    comp = PairComposition(scores, loss, tuple(extra), norm, tuple(losses), tuple(norms), prefix, names or {},
                           run or {})
    name = name or "+".join((comp.scores, comp.loss, *comp.extra))
    hp = pair_settings_class(_class_name(name), comp, settings)()
    comp = PairComposition(comp.scores, comp.loss, comp.extra, comp.norm, comp.losses, comp.norms, comp.prefix,
                           comp.names, comp.run, settings=hp)
    return Method(name, SOURCES[comp.data], reward, comp.coefficient, objective=comp.objective, uses_ref=comp.uses_ref,
                  hparams=hp, defaults=dict(defaults or {}), paper=paper, summary=summary, composition=comp,
                  ships_in=tuple(ships_in))


@dataclass(frozen=True)
class PairRow:
    """One named preference composition: its parts, how it names its settings, and where it comes from."""

    name: str
    scores: str
    loss: str
    norm: str = "mean"
    extra: tuple = ()
    losses: tuple = ()
    norms: tuple = ()
    names: dict = field(default_factory=dict)  # {part field: setting name}
    run: dict = field(default_factory=dict)  # {part field: RLConfig field}
    settings: dict = field(default_factory=dict)  # the parts' settings this method sets otherwise
    defaults: dict = field(default_factory=dict)  # the preset section's fields it changes
    paper: str = ""
    summary: str = ""
    ships_in: tuple = ()

    def method(self):
        return compose_pairs(self.scores, self.loss, self.norm, extra=self.extra, losses=self.losses,
                             norms=self.norms, prefix=self.name, names=self.names, run=self.run, name=self.name,
                             defaults=self.defaults, paper=self.paper, summary=self.summary, ships_in=self.ships_in,
                             **self.settings)


# Regimes measured on the cpu preset (seed 0, 60 steps, greedy accuracy on 256 held-out questions;
# the SFT model starts at 0.37). Over the steps a method moves, Adam makes the GC's overall scale
# matter little, so the learning rate is the knob that matters; see experiments/preference_family.py.
ROWS = (
    # nothing but the saturating sigmoid stops DPO pushing rejected answers down, and its pairs never come from
    # the policy it has become: held-out accuracy from SFT's 0.44 peaked at 0.61 (lr 3e-5, step 25) then fell to
    # 0.07 by step 150; at lr 1e-5 it was 0.53 at step 25, 0.51 at 50, 0.12 at 150. Short and gentle is DPO's regime
    PairRow("dpo", "log_ratio", "sigmoid", losses=TRL_DPO, norms=NORMS, run={"beta": "dpo_beta"},
            paper="DeepSeekMath eq 12-14, arXiv 2402.03300; Rafailov et al., arXiv 2305.18290",
            summary="raise correct over incorrect SFT samples, relative to pi_ref", defaults={"lr": 1e-5, "steps": 30}),
    # tau 1: 0.66 at lr 1e-5, 0.68 at 2e-5 (where DPO peaked at 0.59 and fell to 0.45); tau 5 (a target the
    # margin reaches): 0.51 at 1e-5 and 3e-5
    PairRow("ipo", "log_ratio", "ipo", names={"beta": "ipo_tau"}, settings={"ipo_tau": 1.0},
            paper="IPO eq 17, Azar et al., arXiv 2310.12036",
            summary="regress the log-ratio margin onto 1/(2 tau): no saturation, pulls back past it",
            defaults={"lr": 2e-5, "steps": 60}),
    # beta 2, gamma 1 (the paper's usual range): 0.64 at lr 1e-5; at 2e-5 it peaked at 0.60 and fell to 0.49;
    # beta 10, gamma 3: 0.66 at 1e-5
    PairRow("simpo", "logp", "simpo", paper="SimPO eq 4-6, Meng et al., arXiv 2405.14734",
            summary="DPO on mean log-probs with a target margin gamma, no reference model",
            defaults={"lr": 1e-5, "steps": 60}),
    # lam_d 1: 0.45 at lr 1e-5 (every log-prob pushed down); lam_d 5 (the paper's rule lam_d n_d / (lam_u n_u) in
    # [1, 4/3] with ~18 % right samples): 0.59; 6: 0.61; lam_d 4 at 3e-5 fell to 0.20
    PairRow("kto", "log_ratio", "kto", losses=TRL_KTO, norms=NORMS, settings={"kto_lam_d": 5.0},
            paper="KTO sec 4.1 (v2 eq 7, 9), Ethayarajh et al., arXiv 2402.01306",
            summary="unpaired: raise desirable, lower undesirable samples around a reference point z0",
            defaults={"lr": 1e-5, "steps": 60}),
    # lambda 0.1: 0.83 at lr 1e-4, 0.79 at 3e-5; lambda 0 (SFT on the chosen answers alone) 0.82 at 1e-4: on the
    # lab the SFT term does most of the work
    PairRow("orpo", "logp", "odds_ratio", extra=("sft",), names={"lam": "orpo_lambda"},
            paper="ORPO eq 3-10, Hong et al., arXiv 2403.07691",
            summary="SFT on the chosen answer plus an odds-ratio penalty on the rejected, no reference",
            defaults={"lr": 1e-4, "steps": 60}),
)
"""The preference family, each method a composition of the preference parts."""

BY_NAME = {r.name: r.method() for r in ROWS}
DPO = BY_NAME["dpo"]
PREFERENCE = tuple(BY_NAME[n] for n in ("ipo", "simpo", "kto", "orpo"))
