"""KTO's data source: unpaired samples of the frozen SFT model, each labelled on its own.

| source          | D in eq 5                                               | used by |
|-----------------|---------------------------------------------------------|---------|
| LabelledSamples | one pi_sft sample per question, desirable if the reward | KTO     |
|                 | says right; plus mismatched rows for the reference z0   |         |

KTO (Ethayarajh et al. 2024, arXiv 2402.01306, section 4.1) needs no pairs: a response is desirable
or undesirable by itself (here: by the rule reward, which the method's reward applies). Its
reference point z0 is a KL estimate made on mismatched pairs: "shifting outputs in the same
microbatch to induce mismatched pairs (x_1, y_2), (x_2, y_3), ..., (x_m, y_1)". The batch carries
those rows too, so that the coefficient computes z0 from the same forward pass (detached, as the
paper does) without any change to the trainer.
"""

from .core import _Source
from ..sampling import cat_rollouts, rollout_from_texts, sample


class LabelledSamples(_Source):
    """KTO: 2B rows: B samples of pi_sft, one per question, then B mismatched rows (question i, response i+1).

    B = 2 * prompts_per_step, so a step sees as many responses as DPO's B pairs hold. The labels
    are the method's reward of the first B rows; the last B rows only serve z0.
    """

    def next_batch(self):
        lab, cfg = self.lab, self.lab.preset.rl
        problems = self.questions(2 * cfg.prompts_per_step)
        if len(problems) < 2:
            raise ValueError("KTO's reference point needs at least 2 questions per batch to mismatch")
        r = sample(lab.ref, lab.tokenizer, problems, group_size=1, temperature=cfg.temperature)
        shifted = r.texts[1:] + r.texts[:1]  # (x_i, y_{i+1}), the paper's mismatched pairs
        own = rollout_from_texts(lab.tokenizer, r.problems, r.texts, device=lab.device)
        mismatched = rollout_from_texts(lab.tokenizer, r.problems, shifted, device=lab.device)
        return cat_rollouts([own, mismatched], pad_token_id=lab.tokenizer.pad_token_id)
