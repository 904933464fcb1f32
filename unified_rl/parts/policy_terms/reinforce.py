"""REINFORCE: A log pi with no ratio and no clip (verl's `gpg` policy loss).

    f_{i,t} = A_{i,t} log pi_theta(o_{i,t})       GC piece = A

The score-function estimator itself (Williams 1992): the coefficient is the advantage, on-policy or not, which
is why SFT (A = 1), RFT (A = I(o)) and GPG share it. Spinning Up's `loss_pi = -(logp * adv).mean()`.
"""

from ...derivations.paper import REGISTRY as PAPER
from ..registry import POLICY_TERMS


def objective(v, adv):
    """A log pi per token: REINFORCE's objective (its gradient is A grad log pi)."""
    return adv * v.logp


POLICY_TERMS.add("reinforce", gc=lambda v, adv, keep: adv * keep, objective=objective, reads_old=False,
                 summary="A log pi: the advantage is the coefficient, no ratio, no clip",
                 cite="Williams 1992 (REINFORCE); DeepSeekMath eq 7, 10 (SFT, RFT); GPG, arXiv 2504.02546",
                 aliases=("gpg",), ships_in=("paper", "verl"), derivation=PAPER["rft"])
