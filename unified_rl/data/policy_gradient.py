"""Data sources of the policy family: DAPO's dynamic sampling and ReMax's greedy baseline.

| source              | D in eq 5                                                   | used by |
|---------------------|-------------------------------------------------------------|---------|
| DynamicSampling     | groups of pi_theta samples whose answers are not all equal  | DAPO    |
| GreedyBaselinePairs | one pi_theta sample and the greedy answer per question      | ReMax   |

Both subclass `data._Source` (its question RNG is their whole state: nothing is buffered between
batches), so a resumed run continues the same stream (docs/ARCHITECTURE.md).

In a distributed run, dynamic sampling keeps what one process keeps: each rank tests its own groups,
the ranks agree on the first prompts_per_step groups with signal in group order, pool them, and each
takes its share (every rank all of them, if fewer groups than ranks were kept).
"""

from dataclasses import replace

from .core import PolicySamples, _held, _Source
from .. import distributed
from ..rewards import RuleReward
from ..sampling import cat_rollouts, response_budget, sample


class DynamicSampling(PolicySamples):
    """DAPO §3.2: drop the groups whose G answers are all right or all wrong, and sample more.

    The filter reads accuracy (the rule reward), as the paper's does. Under the rule reward alone such
    a group has A-hat = 0 for every answer, so its GC is 0 (DAPO has no KL term); under DAPO's reward
    (rule + overlong shaping, rewards.OverlongReward) its answers can still differ by their length
    penalties, so a kept batch of all-equal-accuracy groups is not always a no-op. The source keeps
    drawing batches of prompts_per_step questions until it has prompts_per_step groups of mixed
    accuracy, or `max_draws` batches (then it returns those it has; if none, the last batch).
    `drawn` records the samples each batch cost, to compare methods at an equal sampling budget.
    """

    max_draws = 4

    def __init__(self, lab, reward=None):
        super().__init__(lab)
        self.reward = RuleReward() if reward is None else reward  # DAPO filters on accuracy
        self.drawn = []

    def next_batch(self):
        if distributed.active():
            return self._shared_batch()
        lab, cfg = self.lab, self.lab.preset.rl
        want, G = cfg.prompts_per_step, cfg.group_size
        kept, n_kept, cost = [], 0, 0
        for _ in range(self.max_draws):
            r = sample(lab.policy, lab.tokenizer, self.questions(want), group_size=G, temperature=cfg.temperature)
            cost += len(r)
            right = self.reward(r).view(-1, G)  # (n_groups, G)
            groups = ((right.amax(1) != right.amin(1)).nonzero().flatten().tolist())[: want - n_kept]
            if groups:
                kept.append(r.select([g * G + j for g in groups for j in range(G)], group_size=G))
                n_kept += len(groups)
            if n_kept == want:
                break
        self.drawn.append(cost)
        if not kept:
            return r  # every group of every draw was all right or all wrong: only overlong penalties move it
        return cat_rollouts(kept, pad_token_id=lab.tokenizer.pad_token_id) if len(kept) > 1 else kept[0]

    def _shared_batch(self):
        lab, cfg = self.lab, self.lab.preset.rl
        want, G = cfg.prompts_per_step, cfg.group_size
        kept, n_kept, cost = [], 0, 0
        for _ in range(self.max_draws):
            problems = self.questions(want)
            r = self.draw(lab.policy, problems, G, temperature=cfg.temperature)
            cost += len(problems) * G
            right = self.reward(r).view(-1, G)  # (my groups, G)
            mixed = [bool(x) for x in (right.amax(1) != right.amin(1)).tolist()]
            signal = [g for g, ok in enumerate(x for part in distributed.gather(mixed) for x in part) if ok]
            chosen = set(signal[: want - n_kept])  # the groups one process keeps from this draw
            ours = [k for k, g in enumerate(distributed.share(len(problems))) if g in chosen]
            part = r.select([k * G + j for k in ours for j in range(G)], group_size=G).to("cpu") if ours else None
            kept += [p for p in distributed.gather(part) if p is not None]  # in group order
            n_kept += len(chosen)
            if n_kept == want:
                break
        self.drawn.append(cost)
        if not kept:
            return r
        pad = lab.tokenizer.pad_token_id
        pooled = cat_rollouts(kept, pad_token_id=pad) if len(kept) > 1 else kept[0]  # every kept group
        n_groups = len(pooled) // G
        if n_groups < distributed.current().size:
            return _held(pooled, "all")
        ours = distributed.share(n_groups)
        return _held(pooled.select([g * G + j for g in ours for j in range(G)], group_size=G))


class GreedyBaselinePairs(_Source):
    """ReMax: per question, one sample of pi_theta and pi_theta's greedy answer (the baseline).

    Rows come in pairs (sampled, greedy), group_size 2. To spend the same number of generated
    responses per step as the group methods, it asks prompts_per_step * group_size / 2 questions.
    """

    samples = "policy"

    def next_batch(self):
        lab, cfg = self.lab, self.lab.preset.rl
        problems = self.questions(max(1, cfg.prompts_per_step * cfg.group_size // 2))
        sampled = self.draw(lab.policy, problems, 1, temperature=cfg.temperature)
        greedy = self.draw(lab.policy, problems, 1, greedy=True)
        both = cat_rollouts([sampled, greedy], pad_token_id=lab.tokenizer.pad_token_id)  # n sampled, n greedy
        n = len(sampled)  # this rank's questions in a distributed run
        return _held(both.select([i for k in range(n) for i in (k, n + k)], group_size=2))
