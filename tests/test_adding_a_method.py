"""docs/ARCHITECTURE.md's "Adding a method", followed step by step for a new method: REINFORCE with a
group-mean baseline (Williams 1992, arXiv-free, so it is registered here as a test method, not in the
package). Each step is written the way the document says; then every promise of "what it gets for
free" is checked: train() and the CLI run it, `methods` lists it, the model oracle checks it (and
sees a wrong coefficient), its derivation is proved, and 09's table of later methods shows it."""

import dataclasses

import pytest
import sympy as sp
import torch

from unified_rl import cli, methods
from unified_rl.course import nb_summary
from unified_rl.data import PolicySamples
from unified_rl.derivations import Derivation, check
from unified_rl.paradigm import Method
from unified_rl.rewards import RuleReward
from unified_rl.trainer import make_lab, train
from unified_rl.verify import ORACLE_KEYS, model_oracle

NAME = "reinforce-mean"


# step 1: the coefficient, a pure function: GC_i,t = |o_i| (r_i - mean of its group's rewards)
def reinforce_mean(rewards, group_size, mask):
    mask = mask.detach()
    r = rewards.detach().to(mask.dtype).view(-1, group_size)  # (n_groups, G)
    adv = (r - r.mean(1, keepdim=True)).flatten()  # (B,)
    return (mask.sum(-1) * adv)[:, None] * mask  # (B, T)


# step 2: the objective as printed: J = 1/B sum_i (r_i - mean r) log pi(o_i | q), log pi(o | q) = sum_t logp
def reinforce_mean_objective(logp, rewards, group_size, mask):
    r = rewards.to(logp.dtype).view(-1, group_size)
    adv = (r - r.mean(1, keepdim=True)).flatten()  # (B,)
    return (adv * (logp * mask).sum(-1)).mean()


# step 3: the derivation, for one response of n tokens with advantage A (a constant of theta)
def derive_reinforce_mean(n_tokens=3, hand_scale=1):
    ell, A = sp.symbols(f"ell_1:{n_tokens + 1}", real=True), sp.Symbol("A", real=True)
    J = A * sum(ell)
    gc = tuple(sp.Integer(n_tokens) * sp.diff(J, l) for l in ell)
    hand = tuple(hand_scale * n_tokens * A for _ in ell)
    return Derivation(NAME, "Williams 1992", J, gc, hand, None, {"logp": ell, "adv": A})


# step 4: the Method, unpacking the Step
def reinforce_mean_gc(step):
    return reinforce_mean(step.scores, step.batch.group_size, step.batch.mask)


def reinforce_mean_step_objective(step):
    return reinforce_mean_objective(step.logp, step.scores, step.batch.group_size, step.batch.mask)


METHOD = Method(NAME, PolicySamples, RuleReward(), reinforce_mean_gc, objective=reinforce_mean_step_objective,
                uses_ref=False, off_policy=True, paper="Williams 1992 (REINFORCE), group-mean baseline",
                summary="REINFORCE on whole sequences with the group's mean reward as baseline")


@pytest.fixture
def registered(monkeypatch, tmp_path):
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "cache"))
    monkeypatch.setitem(methods.METHODS, NAME, METHOD)
    return METHOD


def test_the_derivation_is_proved_and_a_wrong_hand_form_fails():
    check(derive_reinforce_mean())
    with pytest.raises(AssertionError):
        check(derive_reinforce_mean(hand_scale=sp.Rational(1, 2)))


def test_train_and_the_cli_run_it_and_methods_lists_it(registered, tmp_path, capsys):
    run = train(NAME, preset="tiny", steps=2, progress=False)
    assert [r["step"] for r in run.metrics] == [1, 2] and "coef_mean" in run.metrics[-1]
    cli.main(["methods"])
    assert NAME in capsys.readouterr().out
    assert f"{len(methods.METHODS)} post-training methods" in cli.build_parser().description  # counts it too
    cli.main(["train", NAME, "--preset", "tiny", "--steps", "1", "--out", str(tmp_path / "run"), "--quiet"])
    assert (tmp_path / "run" / "summary.json").is_file()


def test_the_model_oracle_checks_it_and_sees_a_wrong_coefficient(registered, monkeypatch):
    assert NAME in ORACLE_KEYS and f"{NAME}-clipped" in ORACLE_KEYS  # off_policy: both checks
    lab = make_lab("tiny")
    diffs = model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=[NAME, f"{NAME}-clipped"])
    assert max(diffs.values()) < 1e-10, diffs
    wrong = dataclasses.replace(METHOD, coefficient=lambda step: reinforce_mean_gc(step) / step.batch.mask.sum(-1, keepdim=True))
    monkeypatch.setitem(methods.METHODS, NAME, wrong)  # forgot |o|: a per-token mean instead of a sum
    assert model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=[NAME])[NAME] > 1e-6


def test_notebook_09s_table_of_later_methods_shows_it(registered):
    assert NAME in [r["method"] for r in nb_summary.later_rows()]


def test_the_coefficient_is_the_objectives_gradient_on_tensors():
    torch.manual_seed(0)
    mask = torch.tensor([[0, 1, 1, 1.], [0, 1, 1, 0], [0, 0, 1, 1], [0, 1, 0, 0]], dtype=torch.float64)
    logp = (-torch.rand(4, 4, dtype=torch.float64) * mask).requires_grad_()
    rewards = torch.tensor([1., 0., 0.3, 0.9], dtype=torch.float64)
    g_obj, = torch.autograd.grad(reinforce_mean_objective(logp, rewards, 2, mask), logp)
    coef = reinforce_mean(rewards, 2, mask)
    surrogate = ((coef * logp * mask).sum(-1) / mask.sum(-1)).mean()
    g_gc, = torch.autograd.grad(surrogate, logp)
    assert torch.allclose(g_obj, g_gc, atol=1e-14)


def test_its_summary_without_chinese_passes_once_listed_to_translate(registered, monkeypatch):
    """Step 6's route, with a real entry: the new method's summary has no Chinese. Unlisted, the package-text
    tests fail; listed in to_translate.py, they pass and the Chinese method tables show it in English."""
    import test_package_text as package_text
    from unified_rl.course import to_translate

    from unified_rl.course import i18n

    checks = (package_text.test_every_method_message_still_matches_the_package,
              package_text.test_method_tables_speak_chinese_and_their_english_is_unchanged)
    try:
        for check in checks:
            with pytest.raises(AssertionError, match=f"{NAME}|mean reward as baseline"):
                check()
            i18n.set_language("en")  # a failed check leaves the language it switched to
        entry = {**to_translate.TO_TRANSLATE, f"method.summary.{NAME}": METHOD.summary}  # beside what is listed
        monkeypatch.setattr(to_translate, "TO_TRANSLATE", entry)
        monkeypatch.setattr(package_text, "TO_TRANSLATE", entry)
        for check in checks:
            check()
        package_text.test_what_is_listed_to_translate_still_lacks_chinese()
    finally:
        i18n.set_language("en")
