"""Which KL each estimator's gradient follows, with exact expectations (every token enumerated)."""
import pytest
import torch

from unified_rl.kl import study as K

EXACT, APART = 1e-12, 1e-3
REV, FWD = "-grad KL(pi || pi_ref)", "-grad KL(pi_ref || pi)"
CTX_REV, CTX_FWD = "-grad per-context KL(pi || pi_ref)", "-grad per-context KL(pi_ref || pi)"
K1, K2, K3, K3R, K1R = K.USES


@pytest.mark.parametrize("seed", range(4))
def test_one_token_on_policy(seed):
    a, _, c, _ = K.random_case(V=6, seed=seed)
    table = K.match_table(K.one_token(a, c)[0])
    assert table[K1]["zero"] < EXACT  # k1 as a loss: E[grad log pi] = 0
    for use in (K2, K3R, K1R):  # the reverse KL, KL(pi || pi_ref)
        assert table[use][REV] < EXACT and table[use][FWD] > APART
    assert table[K3][FWD] < EXACT and table[K3][REV] > APART  # GRPO's k3: the forward KL


def test_one_token_off_policy_only_the_ratio_keeps_k3_unbiased():
    a, _, c, _ = K.random_case(V=6, seed=7)
    old = a + 0.7 * torch.randn(6, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    table = K.match_table(K.one_token(a, c, old)[0])
    assert table[K3R][REV] < EXACT
    for use in (K1, K2, K3, K1R):
        assert min(v for k, v in table[use].items()) > APART


@pytest.mark.parametrize("seed", range(3))
def test_two_tokens_per_token_penalties_miss_the_prefix(seed):
    table = K.match_table(K.two_tokens(*K.random_case(V=4, seed=seed))[0])
    assert table[K1]["zero"] < EXACT
    assert table[K1R][REV] < EXACT  # the KL in the reward follows the whole response's KL
    for use in (K2, K3R):  # a per-token loss follows each next-token KL, prefixes held fixed
        assert table[use][CTX_REV] < EXACT and table[use][REV] > APART
    assert table[K3][CTX_FWD] < EXACT and table[K3][FWD] > APART


def test_values_are_the_kls():
    a, b, c, d = K.random_case(V=3, seed=2)
    p, q = a.softmax(-1), c.softmax(-1)
    _, values = K.one_token(a, c)
    assert values["KL(pi || pi_ref)"] == pytest.approx((p * (p / q).log()).sum().item(), rel=1e-12)
    assert values["KL(pi_ref || pi)"] == pytest.approx((q * (q / p).log()).sum().item(), rel=1e-12)
    assert min(values.values()) > 0
