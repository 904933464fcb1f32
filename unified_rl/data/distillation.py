"""GKD's data source: each batch the policy's own samples with probability lambda, else the SFT set's solutions.

Generalized knowledge distillation (Agarwal et al., arXiv 2306.13649, Algorithm 1) mixes the student's own
generations (on-policy, the distribution it will meet) with a fixed dataset's outputs; TRL's GKDTrainer draws
`random.random() <= lmbda` once per step. Here the draw comes from the source's own RNG (its state, so a resumed
run draws the same coins, and every rank of a distributed run draws the same one), with lambda =
`RLConfig.gkd_lambda`. An on-policy batch is prompts_per_step questions x group_size samples of the policy (its
log-probs recorded); an off-policy one is the same number of rows: prompts_per_step x group_size questions of
the SFT set with their reference solutions, one each.
"""

from .core import PolicySamples, _held
from ..sampling import rollout_from_texts


class OnOrOffPolicy(PolicySamples):
    """GKD: the policy's samples with probability `gkd_lambda`, else the SFT dataset's solutions."""

    samples = "policy"

    def next_batch(self):
        lab, cfg = self.lab, self.lab.preset.rl
        if self.rng.random() <= cfg.gkd_lambda:  # TRL's GKDTrainer: on-policy when random() <= lmbda
            return super().next_batch()
        problems = self.mine(self.questions(cfg.prompts_per_step * cfg.group_size, lab.sft_problems))
        return _held(rollout_from_texts(lab.tokenizer, problems, [p.solution for p in problems], device=lab.device))
