"""unified_rl: SFT, RFT, online RFT, DPO, PPO and GRPO as one gradient (DeepSeekMath, arXiv 2402.03300, eq 5).

    grad J = E[(q, o) ~ D] ( 1/|o| sum_t GC(q, o, t) grad log pi(o_t | q, o_<t) )

The folder listing is the paradigm: `paradigm` (eq 5 as a loss), its three components `data/`
(where (q, o) come from), `rewards/` (how good o is) and `coefficients/` (GC of each method), the
registry `methods/` that combines them, `objectives/` (each method's own J, the oracle),
`derivations/` (sympy), `advantages`, `kl/`, `metrics`.
Layers, contracts and the run folder: docs/ARCHITECTURE.md.
"""

__version__ = "0.1.0"
