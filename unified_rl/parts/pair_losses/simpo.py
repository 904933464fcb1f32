"""simpo (SimPO): DPO's log sigmoid with a target margin gamma, on the policy's own mean log-probs.

    l = -log sigma(beta (s+ - s-) - gamma)            a+ = beta sigma(gamma - beta (s+ - s-)),  a- = -a+

SimPO composes it with the logp scores and the mean norm (eq 4's reward beta/|y| log pi(y)): no pi_ref.
SimPO, Meng et al., arXiv 2405.14734 eq 4-6 (TRL's CPOTrainer loss_type='simpo').
"""

from dataclasses import dataclass, field

import sympy as sp
import torch
import torch.nn.functional as F

from ...derivations.core import BETA, Derivation, _derive, _toks, sigmoid as ssig
from ...derivations.paper import _dpo
from ...text import Text
from ..registry import PAIR_LOSSES
from ._common import NONNEGATIVE, mean, same_on_every_token

GAMMA = sp.Symbol("gamma", real=True)


@dataclass(frozen=True)
class Settings:
    beta: float = field(default=2.0, metadata=NONNEGATIVE)
    """beta: scale of the reward beta * (mean log-prob) (eq 4)"""
    gamma: float = 1.0
    """gamma: target reward margin (eq 5)"""


def simpo_a(s1, s2, beta, gamma):
    """(a+, a-) of SimPO's loss: +-beta sigma(gamma - beta (s+ - s-)).

    >>> simpo_a(torch.tensor([0.]), torch.tensor([0.]), 2.0, 0.0)   # equal scores, no margin: beta / 2
    (tensor([1.]), tensor([-1.]))
    """
    a = beta * torch.sigmoid(gamma - beta * (s1 - s2))
    return a, -a


def _gc(v):
    return simpo_a(v.s1, v.s2, v.setting("beta"), v.setting("gamma"))


def _objective(v):
    """-log sigma(beta s+ - beta s- - gamma) per pair (eq 6)."""
    beta = v.setting("beta")
    return -F.logsigmoid(beta * v.s1 - beta * v.s2 - v.setting("gamma"))


def derive_simpo(n):
    """SimPO's eq 6 on one pair of mean log-probs."""
    lc, lr = _toks("ell^+", n), _toks("ell^-", n)
    J = sp.log(ssig(BETA * mean(lc) - BETA * mean(lr) - GAMMA))  # eq 6
    gc = _derive(J, lc, n) + _derive(J, lr, n)
    c = BETA * ssig(GAMMA - BETA * mean(lc) + BETA * mean(lr))
    dpo = _dpo(n)  # SimPO with gamma = 0 and log-ratios in place of log-probs is DPO (eq 12)
    to_ratios = {**{a: a - b for a, b in zip(lc, dpo.symbols["logp_ref_chosen"])},
                 **{a: a - b for a, b in zip(lr, dpo.symbols["logp_ref_rejected"])}}
    as_dpo = c.subs(GAMMA, 0).subs(to_ratios, simultaneous=True)
    as_dpo = as_dpo.subs(dict(zip(lc, dpo.symbols["logp_chosen"])) | dict(zip(lr, dpo.symbols["logp_rejected"])))
    claims = ((Text("with gamma = 0 and pi_ref in the log-probs, SimPO's GC is DPO's exact GC"), as_dpo - dpo.hand[0]),
              ) + same_on_every_token(gc, n, "chosen") + same_on_every_token(gc[n:], n, "rejected")
    notes = (Text("The GC is c = beta sigmoid(gamma - beta (l+ - l-)) on chosen tokens and -c on rejected "
             "ones, l the mean log-prob of eq 4: DPO's coefficient with no pi_ref and a margin shifted by gamma."),
             Text("The 1/|y| of eq 4 is exactly eq 5's 1/|o|: the GC is one number per response."))
    symbols = {"logp_chosen": lc, "logp_rejected": lr, "beta": BETA, "gamma": GAMMA}
    return Derivation("simpo", "SimPO eq 4, 5, 6", J, gc, (c,) * n + (-c,) * n, None, symbols, claims, notes=notes)


PAIR_LOSSES.add("simpo", gc=_gc, objective=_objective, settings=Settings, derivation=derive_simpo,
                derivations={"simpo": derive_simpo},
                summary="-log sigma(beta (s+ - s-) - gamma): DPO's loss with a target margin gamma",
                cite="SimPO, Meng et al., arXiv 2405.14734 eq 4-6", ships_in=("TRL",))
