"""Notebook 10's helpers: the numbers they tabulate are the package's."""
import math

import torch

from unified_rl.kl import study as kl_study
from unified_rl.course import nb_policy_gradient as nb_policy
from unified_rl.methods import METHODS
from unified_rl.trainer import make_lab
from unified_rl.sampling import sample


def test_std_weights_closed_forms():
    G = 8
    ks, with_std, without = nb_policy.std_weights(G)
    for k, a, b in zip(ks, with_std, without):
        p = k / G
        assert math.isclose(b, 2 * k * (G - k) / G, rel_tol=1e-12)
        assert math.isclose(a, 2 * math.sqrt(G * (G - 1) * p * (1 - p)), rel_tol=1e-4)  # eps = 1e-6 in the std


def test_tables():
    text = nb_policy.method_table(METHODS, ["grpo", "dapo"])
    assert "`DynamicSampling`" in text and "`OverlongReward`" in text and text.count("\n") == 3
    table = kl_study.match_table(kl_study.one_token(*kl_study.random_case(V=4)[::2])[0])
    md = nb_policy.kl_markdown(table, ["zero", "-grad KL(pi_ref || pi)"])
    assert md.count("**") == 4  # k1's zero and k3's forward KL: equal to round-off, in bold


def test_one_update_moves_sequence_ratios_less_than_token_ratios():
    torch.manual_seed(0)  # the tiny model is built at random
    lab = make_lab("tiny", seed=0)
    batch = sample(lab.policy, lab.tokenizer, lab.rl_problems[:4], group_size=4)
    scores = torch.tensor([1.0, 0.0] * 8)
    tokens, seqs = nb_policy.one_update_ratios(lab, batch, scores, lr=1e-2)
    assert len(seqs) == len(batch) and len(tokens) == int(batch.mask.sum())
    assert seqs.log().std() < tokens.log().std() and (tokens != 1).any()
