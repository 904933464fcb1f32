"""Preference data beyond PreferencePairs: KTO's labelled samples, and pairs of the current policy.

| source          | D in eq 5                                               | used by |
|-----------------|---------------------------------------------------------|---------|
| LabelledSamples | one pi_sft sample per question, desirable if the reward | KTO     |
|                 | says right; plus mismatched rows for the reference z0   |         |
| PolicyPairs     | pairs of pi_theta samples, correct vs incorrect         | on-policy DPO |

On-policy (or "online") DPO draws its pairs from the policy being trained instead of the frozen
pi_sft (Guo et al. 2024, "Direct Language Model Alignment from Online AI Feedback", arXiv
2402.04792): each step's pairs are what the policy answers now, so the preference signal keeps
up with it, while pi_ref in the DPO loss stays the starting model.

KTO (Ethayarajh et al. 2024, arXiv 2402.01306, section 4.1) needs no pairs: a response is desirable
or undesirable by itself (here: by the rule reward, which the method's reward applies). Its
reference point z0 is a KL estimate made on mismatched pairs: "shifting outputs in the same
microbatch to induce mismatched pairs (x_1, y_2), (x_2, y_3), ..., (x_m, y_1)". The batch carries
those rows too, so that the coefficient computes z0 from the same forward pass (detached, as the
paper does) without any change to the trainer.
"""

from .core import PreferencePairs, _held, _Source
from .. import distributed
from ..sampling import cat_rollouts, rollout_from_texts


class LabelledSamples(_Source):
    """KTO: 2B rows: B samples of pi_sft, one per question, then B mismatched rows (question i, response i+1).

    B = 2 * prompts_per_step, so a step sees as many responses as DPO's B pairs hold. The labels
    are the method's reward of the first B rows; the last B rows only serve z0.
    """

    samples = "reference"

    def next_batch(self):
        lab, cfg = self.lab, self.lab.preset.rl
        problems = self.questions(2 * cfg.prompts_per_step)
        if len(problems) < 2:
            raise ValueError("KTO's reference point needs at least 2 questions per batch to mismatch")
        r = self.draw(lab.ref, problems, 1, temperature=cfg.temperature)
        texts = [t for part in distributed.gather(r.texts) for t in part]  # the whole batch's, in order
        shifted = texts[1:] + texts[:1]  # (x_i, y_{i+1}), the paper's mismatched pairs
        shifted = [shifted[i] for i in distributed.share(len(problems))]  # this rank's questions
        own = rollout_from_texts(lab.tokenizer, r.problems, r.texts, device=lab.device)
        mismatched = rollout_from_texts(lab.tokenizer, r.problems, shifted, device=lab.device)
        return _held(cat_rollouts([own, mismatched], pad_token_id=lab.tokenizer.pad_token_id))


class PolicyPairs(PreferencePairs):
    """On-policy DPO: PreferencePairs' 2B rows, with pairs sampled from pi_theta (group_size per question).

    Same layout (B chosen, then their B rejected partners), same pairing rule; only the model the
    samples come from differs. The policy is sampled as it is at this step (no gradient flows
    through sampling). A policy that answers a question always right (or always wrong) gives it no
    pair, so a step draws at most `max_tries` batches (default 2, not 20: on-policy, a step's cost
    must stay bounded as the policy improves) and trains on the pairs it found.
    """

    samples = "policy"

    def sampler(self):
        return self.lab.policy, self.lab.preset.rl.group_size

    def next_batch(self, max_tries=2):
        return super().next_batch(max_tries)
