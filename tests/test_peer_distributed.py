"""The methods and options TRL and verl ship, in a data-parallel run: 2 simulated ranks (distributed.simulate,
threads of this process) end with the weights one process ends with over the same global batches, for each
method whose coefficient reads a statistic of the whole batch (token-mean's token count, the batch's reward std, GPG's count, GDPO's batch normalisation, the entropy quantile, Clip-Cov's and KL-Cov's
covariance, top-k and draw) and for the others; and with each rank normalising by its own (the negative
control, World.local_normalisers) those that read the batch end elsewhere; a composition no row holds (verl's
rloo x cispo x token-mean, from peers.from_verl) as a row does. float64, 3 steps."""

import copy
import dataclasses

import pytest
import torch

from unified_rl import distributed
from unified_rl.lab import make_lab
from unified_rl.methods import get_method
from unified_rl.peers import from_verl
from unified_rl.rewards import OverlongPenalty, RewardColumns
from unified_rl.trainer import train

TOLERANCE = 1e-8  # relative to how far training moved the weights, as tests/test_distributed.py


def parity(rollout):
    """A reward that needs no right answer and no RNG: the text's parity."""
    return torch.tensor([float(len(t) % 2) for t in rollout.texts])


CASES = {  # id: (method, settings, whether its coefficient reads a statistic of the whole batch)
    "gpg": ("gpg", {}, True),
    "vespo": ("vespo", {}, True),
    "clip-cov": ("clip-cov", {"clip_cov_ratio": 0.05, "clip_cov_lb": 0.0, "clip_cov_ub": 0.5}, True),
    "kl-cov": ("kl-cov", {"kl_cov_ratio": 0.05}, True),
    "gdpo": ("gdpo", {}, True),
    "grpo-batch-options": ("grpo", {"aggregation": "token-mean", "scale_rewards": "batch",
                                    "top_entropy_quantile": 0.5, "mask_truncated_completions": True}, True),
    "cispo-batch": ("cispo", {"aggregation": "token-mean", "scale_rewards": "batch"}, True),
    "verl-rloo-cispo-token-mean": (*from_verl("rloo", "cispo", "token-mean"), True),
    "sapo": ("sapo", {}, False),
    "gmpo": ("gmpo", {}, False),
    "luspo": ("luspo", {"gspo_clip_eps": 0.02, "gspo_clip_eps_high": 0.03}, False),
    "opo": ("opo", {}, False),
    "grpo-passk": ("grpo-passk", {}, False),
    "grpo-sequence-delta": ("grpo", {"importance_sampling_level": "sequence", "delta": 1.05,
                                     "off_policy_mask_threshold": 1e-3}, False),
}


@pytest.fixture(scope="module")
def tiny64():
    lab = make_lab("tiny", 0)
    lab.policy.double()
    lab.ref.double()
    return lab


def method(name):
    m = get_method(name)  # a row's name, or a composed Method
    reward = RewardColumns(parity, OverlongPenalty()) if m.name == "gdpo" else parity
    return dataclasses.replace(m, reward=reward)


def weights(run):
    return {k: v.detach().clone() for k, v in run.policy.state_dict().items()}


def gap(a, b):
    return max((a[k] - b[k]).abs().max().item() for k in a)


@pytest.mark.parametrize("case", list(CASES))
def test_two_simulated_ranks_end_where_one_process_ends(case, tiny64):
    name, settings, reads_the_batch = CASES[case]

    def trained():
        return weights(train(method(name), lab=copy.deepcopy(tiny64), steps=3, prompts_per_step=4, group_size=4,
                             epochs=2, lr=1e-3, progress=False, eval_every=0, **settings))

    with distributed.world_of_one():
        one = trained()
    two, other = distributed.simulate(trained, 2)
    bad = distributed.simulate(trained, 2, local_normalisers=True)[0]
    move = gap(one, tiny64.policy.state_dict())
    assert move > 1e-4 and gap(two, other) == 0.0  # the ranks hold the same weights
    assert gap(two, one) <= TOLERANCE * move, (case, gap(two, one) / move)
    assert (gap(bad, one) > 1000 * TOLERANCE * move) == reads_the_batch, (case, gap(bad, one) / move)
