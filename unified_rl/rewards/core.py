"""How good is a response: rule, process, learned and noisy rewards.

Every reward is a callable `reward(rollout) -> (B,) tensor`, so a method can swap one for another
(DeepSeekMath §5.2.1: the reward function is one of the three components of eq 5).
- `RuleReward`: 1 when the parsed answer equals the reference, else 0 (outcome supervision,
  §4.1.2). The answer is parsed as digits, never evaluated as code.
- `process_rewards`: a 0/1 reward per step placed on the token that ends the step (process
  supervision, §4.1.3); the final answer is the last step.
- `ModelReward`: a learned reward model's probability that the response is right.
- `NoisyReward`: flips 0/1 rewards at random, to study a reward that is sometimes wrong.
"""

from itertools import accumulate

import torch

from ..sampling import rollout_from_texts
from ..task import parse_answer, parse_steps, step_spans


def answer_of(problem, text):
    """The answer `text` gives, by the problem's own rule (`problem.parse`, a task in words) or the
    lab's (`task.parse_answer`); parsed, never evaluated."""
    parse = getattr(problem, "parse", None)
    return parse(text) if parse is not None else parse_answer(text)


def rule_reward(problems, texts) -> torch.Tensor:
    """(B,) 1.0 where the parsed answer (`answer_of`) equals the problem's answer, else 0.0."""
    if len(problems) != len(texts):
        raise ValueError(f"{len(problems)} problems but {len(texts)} texts")
    return torch.tensor([float(answer_of(p, t) == p.answer) for p, t in zip(problems, texts)])


class RuleReward:
    """The rule-based outcome reward as a `reward(rollout)` callable."""

    def __call__(self, rollout) -> torch.Tensor:
        return rule_reward(rollout.problems, rollout.texts).to(rollout.mask.device)


def _char_ends(tokenizer, ids: list[int], text: str, pieces: dict) -> list[int]:
    """For each token, how many characters of the decoded response end at or before it."""
    for i in ids:
        if i not in pieces:
            pieces[i] = tokenizer.decode([i], skip_special_tokens=True)
    if "".join(pieces[i] for i in ids) == text:  # decoding is concatenation here (e.g. our chars)
        return list(accumulate(len(pieces[i]) for i in ids))
    # otherwise decode every prefix: slower, right for any tokenizer
    return [len(tokenizer.decode(ids[: k + 1], skip_special_tokens=True)) for k in range(len(ids))]


def _token_of_char(ends: list[int], c: int) -> int:
    """Index of the first token whose decoded prefix covers character c."""
    for k, e in enumerate(ends):
        if e > c:
            return k
    raise ValueError(f"character {c} lies beyond the decoded response")


def process_rewards(tokenizer, rollout) -> tuple[torch.Tensor, torch.Tensor]:
    """Per-step 0/1 rewards on the token that ends each step: (step_rewards, step_mask), (B, T).

    Step k is right when it equals the reference's step k. It ends at the separator that closes
    it (";" or "="), so the reward falls on the token that commits to the step. The answer is
    the last step and ends at the response's last token (its EOS when it has one); it is scored
    like `rule_reward`, so a response with no steps still gets a reward.
    """
    B, T = rollout.mask.shape
    step_rewards = torch.zeros(B, T, dtype=rollout.mask.dtype)  # float64 for a float64 rollout
    step_mask = torch.zeros(B, T, dtype=rollout.mask.dtype)
    lengths = rollout.mask.sum(-1).long().tolist()
    P = rollout.prompt_len
    pieces = {}  # token id -> its decoded text, shared by all rows
    for i, (problem, text, n) in enumerate(zip(rollout.problems, rollout.texts, lengths)):
        if n == 0:
            raise ValueError(f"row {i} has no response tokens")
        ids = rollout.input_ids[i, P:P + n].tolist()
        ends = _char_ends(tokenizer, ids, text, pieces)
        if ends[-1] != len(text):
            raise ValueError(f"row {i}: rollout.texts does not match its response tokens")
        marks = {}  # response token index -> reward; several steps on one token must all be right
        for k, ((a, b), step) in enumerate(zip(step_spans(text), parse_steps(text))):
            right = float(k < len(problem.steps) and step == problem.steps[k])
            tok = _token_of_char(ends, b)  # the separator closing the step always exists
            marks[tok] = min(marks.get(tok, 1.0), right)
        right = float(answer_of(problem, text) == problem.answer)
        marks[n - 1] = min(marks.get(n - 1, 1.0), right)
        for tok, r in marks.items():
            step_rewards[i, P - 1 + tok] = r  # response token `tok` is target P-1+tok
            step_mask[i, P - 1 + tok] = 1.0
    device = rollout.mask.device
    return step_rewards.to(device), step_mask.to(device)


class ModelReward:
    """A learned reward: sigmoid of the reward model's logit for each row."""

    def __init__(self, rm, tokenizer):
        self.rm = rm
        self.tokenizer = tokenizer

    @torch.no_grad()
    def __call__(self, rollout) -> torch.Tensor:
        """(B,) predicted probability that each response is right."""
        device = next(self.rm.parameters()).device
        was_training = self.rm.training
        self.rm.eval()
        try:
            logits = self.rm(rollout.input_ids.to(device), rollout.attention_mask.to(device))  # (B,)
        finally:
            self.rm.train(was_training)
        return torch.sigmoid(logits).to(rollout.mask.device)

    def score(self, problems, texts) -> torch.Tensor:
        """(B,) scores of given responses, like `rule_reward(problems, texts)`."""
        return self(rollout_from_texts(self.tokenizer, problems, texts))


class NoisyReward:
    """Wraps a 0/1 reward and flips each row's reward with probability `flip_prob`."""

    def __init__(self, base, flip_prob: float, seed: int = 0):
        if not 0.0 <= flip_prob <= 1.0:
            raise ValueError(f"flip_prob must be in [0, 1], got {flip_prob}")
        self.base = base
        self.flip_prob = flip_prob
        self.generator = torch.Generator().manual_seed(seed)  # same seed, same flips, call by call

    def __call__(self, rollout) -> torch.Tensor:
        """(B,) the base rewards, some flipped 0 <-> 1."""
        rewards = self.base(rollout)  # (B,)
        if not torch.all((rewards == 0) | (rewards == 1)):
            raise ValueError("NoisyReward flips 0/1 rewards; the base reward gave other values")
        flip = torch.rand(rewards.shape, generator=self.generator) < self.flip_prob  # (B,)
        return torch.where(flip.to(rewards.device), 1.0 - rewards, rewards)

    def get_state(self):
        """The flips' generator state, so a resumed run draws the flips an uninterrupted one would."""
        return {"generator": self.generator.get_state()}

    def set_state(self, state):
        self.generator.set_state(state["generator"])
