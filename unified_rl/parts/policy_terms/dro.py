"""DRO's policy term (verl's `dro`): the advantage, with a quadratic penalty on the log-ratio to the sampler.

    f_{i,t} = A log pi_theta(o_{i,t}) - beta/2 (log pi_theta(o_{i,t}) - log pi_old(o_{i,t}))^2
    GC piece = A - beta log rho,   rho = pi_theta / pi_old

No clip: the square pulls each token's log-ratio back toward the sampler's, harder the further it moved. On-policy
(rho = 1) it is REINFORCE's A. verl's `dro` policy loss (Direct Reward Optimization: Richemond et al., "Offline
Regularised Reinforcement Learning for Large Language Models Alignment", arXiv 2405.19107).
"""

from dataclasses import dataclass

from ... import _checks
from ..registry import POLICY_TERMS


@dataclass(frozen=True)
class Settings:
    dro_beta: float = 0.1
    """beta of the quadratic penalty on log(pi_theta / pi_old)"""


def _gc(v, adv, keep):
    beta = _checks.scalar(v.setting("dro_beta"), "dro_beta", low=0.0)
    return (adv - beta * v.log_ratio()) * keep


def objective(v, adv):
    """A log pi - beta/2 (log pi - log pi_old)^2 per token."""
    return adv * v.logp - v.setting("dro_beta") / 2 * (v.logp - v.logp_old) ** 2


def derive(n):
    """One response of n tokens: J = mean_t (A ell_t - beta/2 (ell_t - ell^old_t)^2)."""
    import sympy as sp

    from ...derivations.core import Derivation
    from ...derivations.core import _ragged, _ragged_gc as gc_of
    from ...text import Text
    l, lo = _ragged("ell", (n,))[0], _ragged("ell^old", (n,))[0]
    A, beta = sp.Symbol("A", real=True), sp.Symbol("beta_DRO", positive=True)
    J = sum(A * x - beta / 2 * (x - y) ** 2 for x, y in zip(l, lo)) / n
    hand = tuple(A - beta * (x - y) for x, y in zip(l, lo))
    claims = tuple((Text("at pi_old = pi_theta token {t}'s GC is A", t=t + 1), (h - A).subs(dict(zip(lo, l))))
                   for t, h in enumerate(hand))
    notes = (Text("The square's derivative is -beta log rho: a token whose probability rose is pushed back in "
                  "proportion to how far, with no clip and no zero."),)
    return Derivation("dro", "verl dro; arXiv 2405.19107", J, gc_of(J, (l,)), hand, None,
                      {"adv": A, "logp": l, "logp_old": lo, "dro_beta": beta}, claims, notes=notes)


POLICY_TERMS.add("dro", gc=_gc, objective=objective, settings=Settings, reads_old=True, derivation=derive,
                 summary="A minus beta times the log-ratio to the sampler: a quadratic pull instead of a clip",
                 cite="verl dro; Richemond et al., arXiv 2405.19107", ships_in=("verl",))
