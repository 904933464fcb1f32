"""docs/ARCHITECTURE.md's "Adding a part" and "Adding a method", followed step by step for a part this test
registers itself: REINFORCE's group-median baseline, A_i = r_i - median of its group's rewards (a test part, not
in the package). Each step is written the way the document says; then every promise of "what it gets for free"
is checked: compose() and the CLI train it, `methods` lists it, the model oracle checks it and sees a wrong
coefficient, its derivation is proved, notebook 09's table shows its row; and a slip planted in the package's
own new parts (MaxRL's advantage, DRO's policy term) is caught by the tensor oracle the fast suite runs on every
registered part."""

import dataclasses

import pytest
import sympy as sp
import torch

from unified_rl import cli, methods, parts
from unified_rl.course import nb_summary
from unified_rl.derivations import Derivation, check
from unified_rl.paradigm import step_from_tensors, surrogate_loss
from unified_rl.parts.advantages._common import groups, on_tokens, scores
from unified_rl.presets import RLConfig
from unified_rl.trainer import make_lab, train
from unified_rl.verify import model_oracle

NAME = "group-median"


# step 1: the page. Its tensor function, the gc adapter, the objective written out again, the derivation.
def group_median(rewards, group_size):
    """(B,) r - the median of its group's rewards (the lower median for an even group)."""
    r = torch.as_tensor(rewards).double().view(-1, group_size)
    return (r - r.median(-1, keepdim=True).values).view(-1)


def _gc(v):
    return on_tokens(group_median(scores(v), v.group_size), v)


def objective(v):
    g = groups(scores(v), v)
    ordered = g.sort(-1).values
    return (g - ordered[:, (v.group_size - 1) // 2][:, None]).view(-1, 1).to(v.mask.dtype)


def derive(n, hand_scale=1):
    ell, A = sp.symbols(f"ell_1:{n + 1}", real=True), sp.Symbol("A", real=True)
    J = A * sum(ell) / n  # one response: A mean_t log pi
    return Derivation(NAME, "Williams 1992", J, tuple(n * sp.diff(J, x) for x in ell),
                      tuple(hand_scale * A for _ in ell), None, {"logp": ell, "adv": A})


@pytest.fixture
def registered(monkeypatch, tmp_path):
    """Steps 1-2 (registering the page) and the method's row, undone after the test."""
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "cache"))
    part = parts.ADVANTAGES.add(NAME, gc=_gc, objective=objective, derivation=derive, summary="r minus its group's median",
                                cite="Williams 1992 (REINFORCE)", aliases=("median",))
    row = methods.Row("median-reinforce", NAME, "vanilla", summary="PPO's clip on r minus its group's median",
                      paper="Williams 1992 (REINFORCE), a group-median baseline")
    m = row.method()
    monkeypatch.setitem(methods.METHODS, m.name, m)
    yield part, m
    del parts.ADVANTAGES[NAME], parts.ADVANTAGES.aliases["median"]


def test_the_derivation_is_proved_and_a_wrong_hand_form_fails():
    check(derive(3))
    with pytest.raises(AssertionError):
        check(derive(3, hand_scale=sp.Rational(1, 2)))


def test_compose_train_and_the_cli_run_it_and_methods_lists_it(registered, tmp_path, capsys):
    run = train(parts.compose(advantage="median", policy="cispo"), preset="tiny", steps=2, progress=False)
    assert [r["step"] for r in run.metrics] == [1, 2] and run.summary["parts"]["advantage"] == NAME
    cli.main(["methods"])
    out = capsys.readouterr().out
    assert NAME in out and "median-reinforce" in out
    cli.main(["train", "--advantage", NAME, "--policy", "vanilla", "--preset", "tiny", "--steps", "1",
              "--out", str(tmp_path / "run"), "--quiet"])
    assert (tmp_path / "run" / "summary.json").is_file()


def test_the_model_oracle_checks_its_row_and_sees_a_wrong_coefficient(registered, monkeypatch):
    _, m = registered
    lab = make_lab("tiny")
    diffs = model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=[m.name, f"{m.name}-clipped"])
    assert max(diffs.values()) < 1e-10, diffs
    flipped = dataclasses.replace(m, coefficient=lambda step: -m.coefficient(step))
    monkeypatch.setitem(methods.METHODS, m.name, flipped)
    assert model_oracle(lab.policy, lab.tokenizer, lab.rl_problems, methods=[m.name])[m.name] > 1e-6


def test_notebook_09s_table_of_later_methods_shows_its_row(registered):
    assert "median-reinforce" in [r["method"] for r in nb_summary.later_rows()]


def _oracle_gap(composition, settings=None, seed=0):
    """max |autograd of the composition's objective - gradient of eq 5's surrogate with its coefficient|, relative."""
    g = torch.Generator().manual_seed(seed)
    B, T = 8, 6
    lengths = torch.randint(1, T + 1, (B,), generator=g)
    mask = (torch.arange(T)[None] < lengths[:, None]).double()
    logp = (-2 * torch.rand(B, T, generator=g, dtype=torch.float64) * mask).requires_grad_()
    old = (logp.detach() + 0.3 * torch.randn(B, T, generator=g, dtype=torch.float64)) * mask
    ref = (logp.detach() - 0.2 * torch.rand(B, T, generator=g, dtype=torch.float64)) * mask
    rewards = torch.tensor([1., 0., 0., 1., 1., 1., 0., 1.], dtype=torch.float64)
    hp = parts.settings_class("Check", composition)(**(settings or {}))
    comp = dataclasses.replace(composition, settings=hp)
    step = step_from_tensors(logp, mask, RLConfig(beta=0.1), logp_ref=ref, logp_old=old, scores=rewards, group_size=4,
                             hp=hp)
    g_obj, = torch.autograd.grad(comp.objective(step), logp)
    g_gc, = torch.autograd.grad(-surrogate_loss(logp, comp.coefficient(step), mask), logp)
    return float((g_obj - g_gc).abs().max() / g_gc.abs().max())


def test_the_new_parts_pass_the_tensor_oracle_and_a_planted_slip_fails(monkeypatch):
    """MaxRL and DRO as added by the walkthrough agree with their objectives; a wrong sign in MaxRL's advantage or
    in DRO's penalty, and a stop-gradient missing from DRO's objective, show far above round-off."""
    maxrl, dro = parts.Composition("maxrl", "vanilla"), parts.Composition("grpo", "dro")
    assert _oracle_gap(maxrl) < 1e-10 and _oracle_gap(dro, {"dro_beta": 0.7}) < 1e-10
    adv, term = parts.ADVANTAGES["maxrl"], parts.POLICY_TERMS["dro"]
    monkeypatch.setitem(parts.ADVANTAGES, "maxrl", dataclasses.replace(adv, gc=lambda v: -adv.gc(v)))
    assert _oracle_gap(maxrl) > 1e-3
    monkeypatch.setitem(parts.ADVANTAGES, "maxrl", adv)
    monkeypatch.setitem(parts.POLICY_TERMS, "dro", dataclasses.replace(
        term, gc=lambda v, a, keep: (a + v.setting("dro_beta") * v.log_ratio()) * keep))
    assert _oracle_gap(dro, {"dro_beta": 0.7}) > 1e-3
    monkeypatch.setitem(parts.POLICY_TERMS, "dro", dataclasses.replace(   # pi_old differentiated as well
        term, objective=lambda v, a: a * v.logp - v.setting("dro_beta") / 2 * (v.logp - (v.logp_old + v.logp - v.logp.detach())) ** 2))
    assert _oracle_gap(dro, {"dro_beta": 0.7}) > 1e-3


def test_its_summary_without_chinese_passes_once_listed_to_translate(registered, monkeypatch):
    """The row's route, with a real entry: its summary has no Chinese. Unlisted, the package-text tests fail;
    listed in to_translate.py, they pass and the Chinese method tables show it in English."""
    import test_package_text as package_text
    from unified_rl.course import i18n, to_translate

    _, m = registered
    checks = (package_text.test_every_method_message_still_matches_the_package,
              package_text.test_method_tables_speak_chinese_and_their_english_is_unchanged)
    try:
        for c in checks:
            with pytest.raises(AssertionError, match=f"{m.name}|median"):
                c()
            i18n.set_language("en")  # a failed check leaves the language it switched to
        entry = {**to_translate.TO_TRANSLATE, f"method.summary.{m.name}": m.summary}
        monkeypatch.setattr(to_translate, "TO_TRANSLATE", entry)
        monkeypatch.setattr(package_text, "TO_TRANSLATE", entry)
        for c in checks:
            c()
        package_text.test_what_is_listed_to_translate_still_lacks_chinese()
    finally:
        i18n.set_language("en")
