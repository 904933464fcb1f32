"""DeepSeekMath §5.2.2 and §5.2.3 as experiments on the lab: `python -m unified_rl reproduce NAME`.

Each experiment is a function (preset, out, seeds, progress) -> dict that writes OUT/NAME.json and
OUT/NAME.png; the dict's "headline" holds the numbers worth printing.

| name            | paper        | question                                                         |
|-----------------|--------------|------------------------------------------------------------------|
| figure7         | §5.2.2, Fig 7| does RL raise Maj@K, Pass@K, or both?                            |
| data-source     | §5.2.3       | RL on the SFT questions vs unseen vs harder questions            |
| noisy-reward    | §5.2.3       | RFT, online RFT, DPO, GRPO under 0-40 % flipped rewards          |
| reward-function | §5.2.3       | outcome vs process vs learned reward: accuracy per unit compute  |
| policy-family   | beyond       | GRPO's successors at an equal budget: accuracy, response length  |
| policy-family-peers | beyond   | the same for the methods TRL and verl ship (SAPO ... GDPO)       |
| preference-family | beyond     | DPO, IPO, SimPO, KTO, ORPO at an equal budget; does x+ fall?     |
| real-model      | beyond       | GRPO and on-policy DPO on SmolLM2-135M-Instruct, before / after  |
| teachers        | 2026         | OPD from a GRPO-trained teacher vs GRPO vs SFT on its samples   |
| stale-samples   | 2026         | GRPO on samples 0-8 steps stale: no correction, TIS, MIS         |
| sampler-precision | 2026       | SmolLM2: a bf16 / Q8_0 / Q4_1 / GGUF sampler's ratio; TIS, MIS    |
| real-model-opd  | 2026         | SmolLM2: OPD from a GRPO-trained teacher against GRPO            |
"""

from . import data_source, figure7, noisy_reward, reward_function
from . import policy_family
from . import preference_family
from . import real_model
from . import real_model_opd, sampler_precision, stale_samples, teachers

EXPERIMENTS = {
    "figure7": figure7.run,
    "data-source": data_source.run,
    "noisy-reward": noisy_reward.run,
    "reward-function": reward_function.run,
    "policy-family": policy_family.run,  # beyond the paper: Dr. GRPO, DAPO, GSPO, CISPO, RLOO, REINFORCE++, ReMax
    "policy-family-peers": policy_family.run_peers,  # what TRL and verl ship: SAPO, VESPO, ..., GDPO
    "preference-family": preference_family.run,  # beyond the paper: DPO, IPO, SimPO, KTO, ORPO
    "real-model": real_model.run,  # beyond the lab: a pretrained chat LLM (SmolLM2-135M-Instruct)
    "teachers": teachers.run,  # the 2026 field: on-policy distillation on the lab
    "stale-samples": stale_samples.run,  # the 2026 field: stale samples, TIS and MIS on the lab
    "sampler-precision": sampler_precision.run,  # the 2026 field: a sampler in another precision, TIS and MIS
    "real-model-opd": real_model_opd.run,  # the 2026 field: on-policy distillation on SmolLM2
}
