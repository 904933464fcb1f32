"""Notebook 06's baseline lemma helpers: the exact expected update over every group of G answers of a
categorical policy, against the closed forms the notebook states."""

import pytest
import torch

from unified_rl import advantages
from unified_rl.course import nb_grpo


def test_raw_reward_gives_the_true_gradient():
    z, r = torch.tensor([0.3, -0.2, 0.5]), torch.tensor([1.0, 0.0, 0.5])
    p = z.double().softmax(-1)
    z_ = z.double().requires_grad_()
    true = torch.autograd.grad((z_.softmax(-1) * r.double()).sum(), z_)[0]  # grad of E[r]
    for G in (1, 2, 3):
        assert torch.allclose(nb_grpo.expected_update(z, r, G), true, atol=1e-12)
    assert torch.allclose(p.sum(), torch.tensor(1.0, dtype=torch.float64))


@pytest.mark.parametrize("G", [2, 3, 5])
def test_group_mean_scales_by_g_minus_one_over_g_and_leave_one_out_is_exact(G):
    z, r = torch.tensor([0.3, -0.2, 0.5, 0.0]), torch.tensor([1.0, 0.0, 0.0, 1.0])
    true = nb_grpo.expected_update(z, r, 1)
    assert torch.allclose(nb_grpo.expected_update(z, r, G, advantages.group_centred), (G - 1) / G * true, atol=1e-12)
    assert torch.allclose(nb_grpo.expected_update(z, r, G, advantages.leave_one_out), true, atol=1e-12)


def test_the_std_reweights_questions_by_how_often_they_are_solved():
    def factor(p):
        z, r = torch.tensor([torch.tensor(p).logit().item(), 0.0]), torch.tensor([1.0, 0.0])
        return (nb_grpo.expected_update(z, r, 8, advantages.group_relative) / nb_grpo.expected_update(z, r, 1))[0].item()
    f = {p: factor(p) for p in (0.05, 0.5, 0.95)}
    assert f[0.05] == pytest.approx(f[0.95], abs=1e-6) and f[0.05] > f[0.5] > 1


def test_bad_input():
    with pytest.raises(ValueError, match="one reward per answer"):
        nb_grpo.expected_update(torch.zeros(3), torch.zeros(2), 2)
    with pytest.raises(ValueError, match="V\\^G"):
        nb_grpo.expected_update(torch.zeros(10), torch.zeros(10), 8)
