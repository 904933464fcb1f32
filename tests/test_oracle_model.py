"""Oracle on a real transformer: for every method, the parameter gradient of its objective equals
the parameter gradient of the GC surrogate (both through the same GPT-2 forward pass)."""

import pytest
import torch
from transformers import GPT2Config, GPT2LMHeadModel

from unified_rl import coefficients as C, objectives as O, paradigm as P
from unified_rl.advantages import gae

B, L, V = 4, 10, 17


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    cfg = GPT2Config(vocab_size=V, n_positions=32, n_embd=32, n_layer=2, n_head=4,
                     resid_pdrop=0.0, embd_pdrop=0.0, attn_pdrop=0.0)
    return GPT2LMHeadModel(cfg).double()


def token_logp(model, ids):
    logits = model(ids).logits[:, :-1]  # (B, T, V), T = L - 1
    return torch.log_softmax(logits, -1).gather(-1, ids[:, 1:, None]).squeeze(-1)  # (B, T)


def rows(seed):
    g = torch.Generator().manual_seed(seed)
    ids = torch.randint(0, V, (B, L), generator=g)
    mask = torch.zeros(B, L - 1, dtype=torch.float64)
    for i in range(B):
        mask[i, 3:3 + int(torch.randint(1, L - 3, (1,), generator=g))] = 1  # prompt of 4, ragged responses
    return g, ids, mask


def param_grad(model, loss):
    model.zero_grad()
    loss.backward()
    return torch.cat([p.grad.flatten() for p in model.parameters()])


def assert_same(model, J_fn, coef_fn, seed=0):
    """grad_theta J  ==  grad_theta of -surrogate_loss(logp, coef, mask)."""
    g, ids, mask = rows(seed)
    g_obj = param_grad(model, -J_fn(token_logp(model, ids), mask, g))
    torch.manual_seed(seed)
    logp = token_logp(model, ids)
    g_gc = param_grad(model, P.surrogate_loss(logp, coef_fn(logp, mask, g), mask))
    diff = (g_obj - g_gc).abs().max().item()
    assert diff < 1e-10, diff
    assert g_obj.abs().max() > 1e-6  # the gradient is not trivially zero


def test_sft(model):
    assert_same(model, lambda lp, m, g: O.sft(lp, m), lambda lp, m, g: C.sft(m))


def test_rft(model):
    correct = torch.tensor([1.0, 0.0, 1.0, 1.0], dtype=torch.float64)
    assert_same(model, lambda lp, m, g: O.rft(lp, correct, m), lambda lp, m, g: C.rft(correct, m))


def test_ppo(model):
    g, ids, mask = rows(1)
    adv, _ = gae(torch.randn(B, L - 1, generator=g, dtype=torch.float64) * mask,
                 torch.randn(B, L - 1, generator=g, dtype=torch.float64), mask, 1.0, 0.95)
    assert_same(model, lambda lp, m, g: O.ppo(lp, lp.detach(), adv, m, 0.2), lambda lp, m, g: C.ppo(adv, m))


def test_grpo(model):
    rewards = torch.tensor([1.0, 0.0, 0.0, 0.0], dtype=torch.float64)
    logp_ref = -torch.rand(B, L - 1, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    assert_same(model, lambda lp, m, g: O.grpo(lp, lp.detach(), logp_ref, rewards, 2, m, 0.1, 0.2),
                lambda lp, m, g: C.grpo(rewards, 2, lp, logp_ref, m, 0.1))


def test_dpo(model):
    _, ids_c, mc = rows(4)
    _, ids_r, mr = rows(5)
    ref_c, ref_r = -torch.rand(B, L - 1, dtype=torch.float64), -torch.rand(B, L - 1, dtype=torch.float64)
    beta = 0.3
    g_obj = param_grad(model, -O.dpo(token_logp(model, ids_c), ref_c, mc, token_logp(model, ids_r), ref_r, mr, beta))
    lc, lr = token_logp(model, ids_c), token_logp(model, ids_r)
    cc, cr = C.dpo(lc, ref_c, mc, lr, ref_r, mr, beta)
    g_gc = param_grad(model, P.surrogate_loss(lc, cc, mc) + P.surrogate_loss(lr, cr, mr))
    assert (g_obj - g_gc).abs().max() < 1e-10
