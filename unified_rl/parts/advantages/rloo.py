"""RLOO's leave-one-out baseline (verl's `rloo`): A_i = r_i - mean of the other G - 1 rewards of its group.

= G/(G-1) (r_i - mean r): REINFORCE with an unbiased baseline that does not depend on the sample it scores.
RLOO: Ahmadian et al., arXiv 2402.14740, §3 (its reward carries a KL penalty: the composition's `kl_in="reward"`).
"""

import sympy as sp
import torch

from ... import advantages
from ...derivations.core import Derivation, _flat, _ragged, _ragged_gc
from ...text import Text
from ..registry import ADVANTAGES
from ._common import groups, on_tokens, scores, written_scores


def objective(v):
    """(B, 1) r_i - (1/(G-1)) sum_{j != i} r_j, written out."""
    g = groups(written_scores(v), v)
    G = v.group_size
    others = torch.stack([torch.cat([g[:, :i], g[:, i + 1:]], 1).mean(-1) for i in range(G)], 1)
    return (g - others).view(-1, 1).to(v.mask.dtype)


def derive_rloo(n, group_size=3):
    """REINFORCE on whole sequences with the leave-one-out baseline: GC = |o_i| k/(k-1) (R_i - mean R)."""
    lengths = tuple(n + (i == group_size - 1) for i in range(group_size))
    l, R, k = _ragged("ell", lengths), sp.symbols(f"R_1:{group_size + 1}", real=True), group_size
    loo = [R[i] - sum(R[j] for j in range(k) if j != i) / (k - 1) for i in range(k)]
    J = sum(b * sum(row) for b, row in zip(loo, l)) / k  # log pi(o_i | q) = sum_t ell_{i,t}
    mean = sum(R) / k
    hand = tuple(len(row) * sp.Rational(k, k - 1) * (r - mean) for row, r in zip(l, R) for _ in row)
    notes = (Text("REINFORCE on whole sequences (a token sum): GC = |o_i| (R_i - mean of the others), which is "
                  "|o_i| k/(k-1) (R_i - mean R): GRPO's centred reward, without std, scaled by k/(k-1)."),)
    return Derivation("rloo", "arXiv 2402.14740, §3", J, _ragged_gc(J, l), hand, None,
                      {"rewards": R, "logp": _flat(l)}, notes=notes, scale="B\\,|o_i|")


ADVANTAGES.add("rloo", gc=lambda v: on_tokens(advantages.leave_one_out(scores(v), v.group_size), v),
               objective=objective, summary="r minus the mean of the other samples of its group",
               cite="RLOO, Ahmadian et al., arXiv 2402.14740 §3", ships_in=("TRL", "verl"), derivation=derive_rloo,
               derivations={"rloo": derive_rloo})
