"""Everything about the KL term in one place.

- `estimators`: k1, k2, k3 per token, estimators of KL(pi_theta || pi_ref) from samples of pi_theta
  (importable from here: `kl.k3`).
- `gc`: the GC term each estimator adds, as a loss or inside the reward (`coefficients` re-exports it).
- `study`: which KL each estimator's gradient follows, computed exactly on a tiny vocabulary.

The KL terms a composition takes (their GC and their term of the objective, each page written apart) are the
parts of parts/kl_terms.py.
"""

from .estimators import k1, k2, k3

__all__ = ["k1", "k2", "k3"]
