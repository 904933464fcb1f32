"""Policy terms: how the ratio to the sampler weighs each token (one page each, registered where defined)."""

from . import vanilla, reinforce, gspo, cispo, sapo, vespo, geo_mean, covariance, dro, dppo, topr, kimi  # noqa: F401  (each registers its parts)
from . import dft, gkd  # noqa: F401  (DFT; GKD on the sampled token)
