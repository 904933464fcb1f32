"""Data sources, the first component of the paradigm: where (q, o) come from.

| source               | D in eq 5                                     | used by              |
|----------------------|-----------------------------------------------|----------------------|
| FixedDataset         | human-written solutions, P_sft(Q, O)          | SFT (eq 6)           |
| FrozenPolicySamples  | samples of the frozen SFT model, pi_sft(O|q)  | RFT (eq 8)           |
| PreferencePairs      | pairs of pi_sft samples, correct vs incorrect | DPO (eq 12)          |
| PolicySamples        | samples of the current policy, pi_theta(O|q)  | online RFT, PPO, GRPO|

Each is built from the run's `Lab` and returns a `Rollout` per call of `next_batch()`. The frozen
sources keep a copy of the policy as it was when training started: sampling it step by step draws
from the same distribution as sampling a fixed offline set up front. `get_state()`/`set_state()`
carry what a resumed run needs to continue the same stream of batches (the contract is
`paradigm.DataSource`; see docs/ARCHITECTURE.md).

In a distributed run (distributed.py) every rank draws the same questions and keeps its share of
whole groups (`mine`, `draw`); each group is sampled from its own stream, so the batch the ranks hold
together is the one a single process of the same code draws, whichever rank holds which group.
"""

import random
from dataclasses import replace

from .. import distributed, fsdp
from ..rewards import RuleReward
from ..sampling import cat_rollouts, response_budget, rollout_from_texts, sample


def _held(rollout, ranks="share"):
    """The rollout marked as this rank's share ("share") or the whole batch ("all"), in a distributed run."""
    return replace(rollout, ranks=ranks) if distributed.active() else rollout


SAMPLES = ("human", "reference", "policy")  # whose responses a source's rows are: `_Source.samples`


class _Source:
    samples = None  # "human" (the dataset's solutions), "reference" (the frozen pi_ref / pi_sft) or "policy" (pi_theta)

    def __init__(self, lab):
        self.lab = lab
        self.rng = random.Random(lab.seed)
        self.draws = 0  # sampling draws so far: a distributed run's group g of draw d uses stream (seed, d, g)

    def questions(self, n, pool=None):
        """n questions drawn without replacement from the RL (or given) pool."""
        pool = pool if pool is not None else self.lab.rl_problems
        return self.rng.sample(pool, min(n, len(pool)))

    def _share(self, n):
        world = distributed.current()
        if world is not None and n < world.size:
            raise ValueError(f"{n} questions per draw cannot be shared by {world.size} ranks: every rank needs "
                             "at least one (raise prompts_per_step or batch_size)")
        return distributed.share(n)

    def mine(self, items):
        """This rank's share of `items` (all of them outside a distributed run)."""
        return [items[i] for i in self._share(len(items))]

    def draw(self, model, problems, group_size, **kw):
        """sample() of `problems`; in a distributed run, of this rank's share only, each group from its
        own stream and with the whole draw's token budget, so no sample depends on the rank."""
        tok = self.lab.tokenizer
        if not distributed.active():
            return sample(model, tok, problems, group_size=group_size, **kw)
        mine = self._share(len(problems))
        streams = [distributed.stream(self.lab.seed, "draw", self.draws, g) for g in mine]
        self.draws += 1
        budget = kw.pop("max_new_tokens", None) or response_budget(problems)
        with fsdp.gathered(model):
            r = sample(model, tok, [problems[g] for g in mine], group_size=group_size, max_new_tokens=budget,
                       generators=streams, **kw)
        return replace(r, ranks="share")  # each row records the whole draw's budget (Rollout.budget)

    def get_state(self):
        """The question sampler's RNG state (plain ints: `torch.load(weights_only=True)` reads it)."""
        state = {"rng": self.rng.getstate()}
        if distributed.active():
            state["draws"] = self.draws
        return state

    def set_state(self, state):
        version, internal, gauss = state["rng"]
        self.rng.setstate((version, tuple(internal), gauss))
        self.draws = state.get("draws", 0)


class FixedDataset(_Source):
    """SFT: batches of the limited human-written dataset (reward = human selection)."""

    samples = "human"

    def next_batch(self):
        lab = self.lab
        problems = self.mine(self.questions(lab.preset.sft.batch_size, lab.sft_problems))
        return _held(rollout_from_texts(lab.tokenizer, problems, [p.solution for p in problems], device=lab.device))


class PolicySamples(_Source):
    """Online: group_size samples per question from the current policy pi_theta."""

    samples = "policy"

    def next_batch(self):
        lab, cfg = self.lab, self.lab.preset.rl
        return self.draw(lab.policy, self.questions(cfg.prompts_per_step), cfg.group_size,
                         temperature=cfg.temperature)


class FrozenPolicySamples(_Source):
    """Offline: samples of the frozen SFT model pi_sft (the reference copy), never of pi_theta."""

    samples = "reference"

    def next_batch(self):
        lab, cfg = self.lab, self.lab.preset.rl
        return self.draw(lab.ref, self.questions(cfg.prompts_per_step), cfg.frozen_samples,
                         temperature=cfg.temperature)


class GivenBatch:
    """One given batch, handed to the loop at every step: a notebook's or a test's batch through the
    trainer's own step (`Method` with `data_source=GivenBatch.of(batch)`). It samples nothing."""

    samples = None  # whoever made the batch

    def __init__(self, batch):
        self.batch = batch

    @classmethod
    def of(cls, batch):
        """The `Lab -> DataSource` factory a Method's data_source field holds."""
        return lambda lab: cls(batch)

    def next_batch(self):
        return self.batch

    def get_state(self):
        return {}

    def set_state(self, state):
        pass


def pairs(x):
    """(chosen, rejected) halves of a per-row tensor laid out as PreferencePairs gives it."""
    B = len(x) // 2  # rows: B chosen, then their B rejected partners
    return x[:B], x[B:]


class PreferencePairs(_Source):
    """DPO: for a question, a correct sample of pi_sft is chosen (o+) and an incorrect one rejected (o-).

    Returns 2B rows: the B chosen responses, then their B rejected partners in the same order.
    Questions whose samples are all right or all wrong give no pair and are skipped.
    """

    samples = "reference"

    def __init__(self, lab, reward=None):
        super().__init__(lab)
        self.reward = RuleReward() if reward is None else reward  # what makes o+ correct, o- not

    def sampler(self):
        """(model, samples per question) the pairs are drawn from: the frozen pi_sft (the reference copy)."""
        return self.lab.ref, self.lab.preset.rl.frozen_samples

    def get_state(self):
        state = super().get_state()
        if hasattr(self.reward, "get_state"):  # e.g. a NoisyReward's flips
            state["reward"] = self.reward.get_state()
        return state

    def set_state(self, state):
        super().set_state(state)
        if "reward" in state:
            self.reward.set_state(state["reward"])

    def next_batch(self, max_tries=20):
        if distributed.active():
            return self._shared_batch(max_tries)
        lab, cfg = self.lab, self.lab.preset.rl
        want = cfg.prompts_per_step
        problems, chosen, rejected = [], [], []
        model, n = self.sampler()
        for _ in range(max_tries):
            r = sample(model, lab.tokenizer, self.questions(want), group_size=n, temperature=cfg.temperature)
            scores = self.reward(r)  # (B,)
            G = r.group_size
            for g in range(len(r) // G):
                rows = range(g * G, (g + 1) * G)
                good = [i for i in rows if scores[i] > 0.5]
                bad = [i for i in rows if scores[i] <= 0.5]
                if good and bad and len(problems) < want:
                    problems.append(r.problems[g * G])
                    chosen.append(r.texts[self.rng.choice(good)])
                    rejected.append(r.texts[self.rng.choice(bad)])
            if len(problems) == want:
                break
        if not problems:
            raise ValueError(f"no preference pair could be built in {max_tries} draws: every group of samples "
                             "was all right or all wrong")
        return self._pairs(problems, chosen, rejected)

    def _pairs(self, problems, chosen, rejected):
        lab = self.lab
        c = rollout_from_texts(lab.tokenizer, problems, chosen, device=lab.device)
        x = rollout_from_texts(lab.tokenizer, problems, rejected, device=lab.device)
        return cat_rollouts([c, x], pad_token_id=lab.tokenizer.pad_token_id)

    def _shared_batch(self, max_tries):
        """next_batch in a distributed run: each rank pairs its own groups (each group's picks from its
        own stream), the ranks pool the pairs in group order and keep the first prompts_per_step, as
        one process would, then each takes its share of them (every rank all of them if fewer than ranks)."""
        lab, cfg = self.lab, self.lab.preset.rl
        want, found = cfg.prompts_per_step, []
        model, n = self.sampler()
        for _ in range(max_tries):
            problems, draw = self.questions(want), self.draws
            r = self.draw(model, problems, n, temperature=cfg.temperature)
            scores, G = self.reward(r), r.group_size  # (B,)
            candidates = []
            for k, g in enumerate(distributed.share(len(problems))):
                good = [i for i in range(k * G, (k + 1) * G) if scores[i] > 0.5]
                bad = [i for i in range(k * G, (k + 1) * G) if scores[i] <= 0.5]
                if good and bad:
                    pick = random.Random(distributed.stream_seed(lab.seed, "pair", draw, g))
                    candidates.append((g, r.texts[pick.choice(good)], r.texts[pick.choice(bad)]))
            pooled = [c for part in distributed.gather(candidates) for c in part]  # group order
            found += [(problems[g], c, x) for g, c, x in pooled[: want - len(found)]]
            if len(found) == want:
                break
        if not found:
            raise ValueError(f"no preference pair could be built in {max_tries} draws: every group of samples "
                             "was all right or all wrong")
        split = len(found) >= distributed.current().size
        held = [found[i] for i in distributed.share(len(found))] if split else found
        out = self._pairs(*(list(x) for x in zip(*held)))
        return _held(out, "share" if split else "all")
