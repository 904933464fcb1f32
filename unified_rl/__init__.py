"""unified_rl: SFT, RFT, online RFT, DPO, PPO and GRPO as one gradient (DeepSeekMath, arXiv 2402.03300, eq 5).

    grad J = E[(q, o) ~ D] ( 1/|o| sum_t GC(q, o, t) grad log pi(o_t | q, o_<t) )

The folder listing is the paradigm: `paradigm` (eq 5 as a loss), `coefficients` (GC of each method),
`objectives` (each method's own J, the oracle), `advantages`, `kl`, `derivations` (sympy), `metrics`.
Layers, contracts and the run folder: docs/ARCHITECTURE.md.
"""

__version__ = "0.1.0"
