"""A learned outcome reward model (DeepSeekMath §4.1.2, §5.2.3): a transformer that reads a question and
a response and predicts whether the response is right, trained on responses a rule has scored.

`RewardModel` is the policy's transformer under a scalar head read at the last real token;
`train_reward_model` fits it with binary cross-entropy; `auc` measures how well its scores rank
right above wrong responses (0.5: it knows nothing). `rewards.ModelReward` turns it into a reward.
"""

import torch
import torch.nn.functional as F

from ..models import _ScalarHeadModel, pick_device
from ..sampling import rollout_from_texts


class RewardModel(_ScalarHeadModel):
    """A learned outcome reward: one logit per sequence, read at its last non-pad token."""

    def __init__(self, backbone):
        super().__init__(backbone)
        # Not zero, unlike a critic's head: with a zero head no gradient reaches the trunk at first,
        # and a trunk whose last hidden states barely differ between right and wrong responses then
        # leaves training at the loss of a coin (log 2) for hundreds of steps. GPT-2's init scale.
        torch.nn.init.normal_(self.head.weight, std=0.02)

    def forward(self, input_ids, attention_mask) -> torch.Tensor:
        """(B,) logits; sigmoid(logit) is the predicted probability that the response is right."""
        scores = self.per_position(input_ids, attention_mask)  # (B, L)
        L = attention_mask.shape[1]
        # index of the last 1 in each row: prompts are left-padded, responses right-padded
        last = L - 1 - attention_mask.long().flip(-1).argmax(-1)  # (B,)
        return scores.gather(1, last[:, None]).squeeze(1)  # (B,)


def train_reward_model(rm, tokenizer, problems, texts, scores, steps=200, lr=1e-3,
                       batch_size=64, device=None, seed=0) -> list[float]:
    """Fit every parameter of `rm` to responses scored 0/1 (binary cross-entropy); the loss of each step.

    `texts[i]` answers `problems[i]`; `scores[i]` is 1.0 for a correct response, 0.0 otherwise.
    """
    scores = torch.as_tensor(scores, dtype=torch.float32)  # (N,)
    if not (len(problems) == len(texts) == len(scores)) or len(texts) == 0:
        raise ValueError(
            f"problems, texts and scores must be non-empty and equally long, got "
            f"{len(problems)}, {len(texts)}, {len(scores)}"
        )
    if not torch.all((scores == 0) | (scores == 1)):
        raise ValueError("scores must be 0.0 or 1.0 (binary cross-entropy targets)")
    if steps < 1 or batch_size < 1:
        raise ValueError(f"steps and batch_size must be >= 1, got {steps} and {batch_size}")
    device = pick_device(device)
    data = rollout_from_texts(tokenizer, problems, texts).to(device)
    scores = scores.to(device)
    # A reward model copied from the frozen reference policy inherits requires_grad=False: without
    # this only the 65 numbers of the head would learn, a linear probe of a trunk that was never
    # asked whether an answer is right.
    rm.to(device).train().requires_grad_(True)
    opt = torch.optim.AdamW(rm.parameters(), lr=lr)
    gen = torch.Generator().manual_seed(seed)
    losses = []
    for _ in range(steps):
        idx = torch.randint(len(texts), (min(batch_size, len(texts)),), generator=gen).to(device)
        logits = rm(data.input_ids[idx], data.attention_mask[idx])  # (b,)
        loss = F.binary_cross_entropy_with_logits(logits, scores[idx])
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        losses.append(loss.item())
    rm.eval()
    return losses


def auc(scores, truth):
    """P(a right response outscores a wrong one), ties counting 1/2; 0.5 is a reward that knows nothing."""
    scores, truth = torch.as_tensor(scores).flatten(), torch.as_tensor(truth).flatten()
    if scores.shape != truth.shape:
        raise ValueError(f"{len(scores)} scores for {len(truth)} labels")
    pos, neg = scores[truth == 1], scores[truth == 0]
    if len(pos) == 0 or len(neg) == 0:
        raise ValueError(f"the AUC needs right and wrong responses; got {len(pos)} right, {len(neg)} wrong")
    return ((pos[:, None] > neg[None]).float().mean() + 0.5 * (pos[:, None] == neg[None]).float().mean()).item()
