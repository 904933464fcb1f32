"""DFT's policy term (Dynamic Fine-Tuning): each token's log-prob weighed by its own probability, not differentiated.

    f_{i,t} = A sg(pi_theta(o_{i,t})) log pi_theta(o_{i,t})         GC piece = A pi_theta(o_{i,t})

SFT's gradient, read as a policy gradient, weighs each token by 1 / pi_theta (an importance weight for the
demonstration's tokens under a reward of 1); DFT rescales it by pi_theta, so every token's GC is its probability:
a token the model finds unlikely is pushed less. With A = 1 on the dataset's solutions (SFT's advantage) and the
batch's token mean it is TRL's SFTTrainer `loss_type="dft"` (`-log_probs * log_probs.exp().detach()`).
Wu et al., "On the Generalization of SFT: A Reinforcement Learning Perspective with Reward Rectification",
arXiv 2508.05629, eq 8.
"""

import torch

from ..registry import POLICY_TERMS


def dft(adv, logp, keep):
    """(B, T) A times each token's probability under the policy, on the kept tokens.

    >>> dft(torch.ones(1, 2), torch.log(torch.tensor([[0.5, 0.25]])), torch.ones(1, 2))
    tensor([[0.5000, 0.2500]])
    """
    return adv * torch.exp(logp.detach()) * keep


def _gc(v, adv, keep):
    return dft(adv, v.logp, keep)


def objective(v, adv):
    """A sg(pi_theta) log pi_theta per token."""
    return adv * v.logp.exp().detach() * v.logp


def derive(n):
    """One response of n tokens: J = mean_t A sg(e^ell_t) ell_t, sg(ell) an ell-bar set to ell after differentiating."""
    import sympy as sp

    from ...derivations.core import Derivation
    from ...derivations.core import _ragged, _ragged_gc as gc_of
    from ...text import Text
    l, bar = _ragged("ell", (n,))[0], _ragged("ellbar", (n,))[0]
    A = sp.Symbol("A", real=True)
    J = sum(A * sp.exp(b) * x for x, b in zip(l, bar)) / n
    derived = tuple(g.subs(dict(zip(bar, l))) for g in gc_of(J, (l,)))
    hand = tuple(A * sp.exp(x) for x in l)
    claims = ((Text("a token the policy already gives probability 1 keeps SFT's GC, A"), hand[0].subs(l[0], 0) - A),)
    notes = (Text("Differentiating the weight too would give A pi (1 + log pi), which changes sign at pi = 1/e; "
                  "DFT stops it: the GC is A pi, never negative for A > 0."),)
    return Derivation("dft", "arXiv 2508.05629, eq 8", J, derived, hand, None, {"adv": A, "logp": l}, claims,
                      notes=notes)


POLICY_TERMS.add("dft", gc=_gc, objective=objective, derivation=derive, reads_old=False,
                 summary="A times the token's own probability (not differentiated): SFT rescaled by pi_theta",
                 cite="DFT, Wu et al., arXiv 2508.05629 eq 8; TRL SFTTrainer loss_type='dft'", ships_in=("TRL",))
