"""The composition explorer (notebook 10): its numbers are the registered methods' and parts.compose's, its
formula agrees with its numbers, its oracle can fail, every axis moves the GC, and a refused choice is shown."""

import dataclasses
import html

import pytest
import sympy as sp
import torch

from unified_rl import parts
from unified_rl.course import i18n, nb_policy_gradient, widgets_compose as wc
from unified_rl.course.explorer import MAIN
from unified_rl.methods import METHODS, gc_of
from unified_rl.methods.table import ROWS
from unified_rl.paradigm import step_from_tensors
from unified_rl.presets import get_preset

AXES = ("advantage", "policy", "kl", "kl_in", "aggregation")


@pytest.fixture(scope="module")
def ex():
    return wc.compose_explorer()


def choose(ex, **axes):
    with ex.hold():
        for k, v in axes.items():
            ex.controls[k].value = v
    return ex


def independent_gc(name_or_method, drift, adv=None):
    """The coefficient on the explorer's batch, computed here: `gc_of` (a name) or the Method's own call."""
    mask, old, ref, logp, stand_in = wc.small_batch(drift)
    tensors = dict(logp_old=old, logp_ref=ref, scores=torch.tensor(wc.REWARDS, dtype=torch.float64), group_size=4)
    if adv is not None:
        tensors["adv"] = stand_in
    if isinstance(name_or_method, str):
        return gc_of(name_or_method, logp, mask, beta=0.04, clip_eps=0.2, **tensors)
    cfg = dataclasses.replace(get_preset("cpu").rl, beta=0.04, clip_eps=0.2)
    return name_or_method.coefficient(step_from_tensors(logp, mask, cfg, hp=name_or_method.hparams, **tensors))


# every reinforcement-learning row whose settings are its parts' defaults: the explorer composes the same method
PLAIN_ROWS = [r for r in ROWS if r.section == "rl" and not r.settings]


@pytest.mark.parametrize("row", PLAIN_ROWS, ids=[r.name for r in PLAIN_ROWS])
def test_a_registered_method_has_the_explorer_numbers(ex, row):
    choose(ex, advantage=row.advantage, policy=row.policy, kl=row.kl, kl_in=row.kl_in, aggregation=row.aggregation,
           drift=0.4)
    m = METHODS[row.name]
    try:
        expected = independent_gc(row.name, 0.4, adv=m.advantage)
    except ValueError as e:  # a part that needs what the small batch lacks (a teacher's log-probs, ...)
        assert ex.error == str(e)
        return
    if not torch.isfinite(expected).all():  # the method itself cannot score this batch: the explorer says so
        assert ex.error is not None and "non-finite" in ex.error
        return
    assert ex.error is None, ex.error
    assert ex.data["gc"].abs().max() > 0
    assert torch.allclose(ex.data["gc"], expected, atol=1e-12, rtol=0), row.name
    assert ex.data["agree"] and ex.data["oracle"] < wc.ORACLE_TOL


def test_any_composition_has_parts_compose_numbers(ex):
    choose(ex, advantage="rloo", policy="sapo", kl="k2", kl_in="loss", aggregation="seq-mean-token-sum-norm", drift=0.6)
    mine = parts.compose(advantage="rloo", policy="sapo", kl="k2", aggregation="seq-mean-token-sum-norm")
    assert torch.allclose(ex.data["gc"], independent_gc(mine, 0.6), atol=1e-12, rtol=0)
    assert ex.data["label"] == "rloo × sapo × k2 × seq-mean-token-sum-norm"
    assert "rloo × sapo × k2 × seq-mean-token-sum-norm" in ex.table.value


def test_every_axis_and_the_slider_change_the_gc(ex):
    base = dict(advantage="grpo", policy="vanilla", kl="k3", kl_in="loss", aggregation="seq-mean-token-mean", drift=0.3)
    choose(ex, **base)
    before = ex.data["gc"].clone()
    for axis, other in (("advantage", "rloo"), ("policy", "cispo"), ("kl", "k2"), ("kl_in", "reward"),
                        ("aggregation", "token-mean"), ("drift", 0.8), ("kl", None)):
        choose(ex, **{**base, axis: other})
        assert ex.error is None, (axis, ex.error)
        assert (ex.data["gc"] - before).abs().max() > 1e-3, axis
    main, = [k for k, c in ex.controls.items() if MAIN in c._dom_classes]
    assert main == "drift"


def test_a_refused_choice_shows_the_package_message(ex):
    choose(ex, advantage="grpo", policy="vanilla", kl=None, kl_in="reward", aggregation="token-mean")
    with pytest.raises(ValueError) as why:
        parts.compose(advantage="grpo", policy="vanilla", kl=None, kl_in="reward")
    assert ex.error == str(why.value) and html.escape(str(why.value)) in ex.table.value
    assert ex.maths.value == ""  # no formula of the previous choice is left standing
    ex.train()  # the button: no training, the message instead
    assert html.escape(str(why.value)) in ex.trained_html.value
    choose(ex, advantage="gae", kl="k1", kl_in="loss")
    assert "gae" in ex.error and "kl_in='reward'" in ex.error
    choose(ex, kl_in="reward")
    assert ex.error is None and ex.data["agree"]


def test_every_option_of_every_axis_gives_numbers_or_a_message(ex):
    """Nothing is refused silently and nothing raises past the explorer: each option, alone, on GRPO's parts."""
    base = dict(advantage="grpo", policy="vanilla", kl="k3", kl_in="loss", aggregation="seq-mean-token-mean", drift=0.5)
    for axis in ("advantage", "policy", "kl", "aggregation"):
        for _, value in ex.controls[axis].options:
            choose(ex, **{**base, axis: value})
            if ex.error is None:
                assert ex.data["agree"], (axis, value, ex.data["oracle"])
                assert torch.isfinite(ex.data["gc"]).all()
            else:
                assert html.escape(ex.error) in ex.table.value


def test_the_oracle_can_say_differ():
    m = wc.method_of("grpo", "vanilla", "k3")
    wrong = dataclasses.replace(m, coefficient=lambda step: 1.5 * m.coefficient(step))  # a GC off by a factor
    assert wc.coefficient(m, 0.3)[2] < wc.ORACLE_TOL < wc.coefficient(wrong, 0.3)[2]


@pytest.mark.parametrize("aggregation", list(parts.AGGREGATIONS))
@pytest.mark.parametrize("kl", [None, "k1", "k2", "k3"])
def test_the_formula_agrees_with_the_numbers(aggregation, kl):
    """Each composed line w_i (P + K): w_i is the torch row factor for answers of 1 and 2 tokens (L = 17), and K,
    at numbers, is the KL part's own tensor GC piece; P = 0 isolates K, K's symbols at 0 isolate w."""
    m = wc.method_of("grpo", "vanilla", kl, "loss", aggregation)
    lines = wc.composed(m)
    mask = torch.tensor([[1.0, 0.0], [1.0, 1.0]], dtype=torch.float64)
    w = nb_policy_gradient.row_factor(mask, aggregation, group_size=2, max_len=17.0)[:, 0].tolist()
    ell, ref = torch.tensor([[-0.7, 0.0], [-1.1, -0.4]], dtype=torch.float64), torch.tensor([[-0.2, 0.0], [-1.5, -0.9]],
                                                                                               dtype=torch.float64)
    k_piece = None
    if kl is not None:
        v = parts.View.of(step_from_tensors(ell, mask, type("cfg", (), {"beta": 0.04})(), logp_ref=ref), m.hparams)
        k_piece = parts.KL_TERMS[kl].gc(v)
    for eq, (i, s) in zip(lines, [(1, 1), (2, 1), (2, 2)]):
        rhs, P = eq.rhs, sp.Symbol(f"P_{i},{s}")
        values = {"L": 17.0, "beta": 0.04, f"ell_{i},{s}": float(ell[i - 1, s - 1]),
                  f"ell^ref_{i},{s}": float(ref[i - 1, s - 1])}
        at = {x: values[x.name] for x in rhs.free_symbols if x.name in values}
        assert {x.name for x in rhs.free_symbols} <= set(values) | {P.name}
        assert float(rhs.diff(P).subs(at)) == pytest.approx(w[i - 1], abs=1e-12)
        expected = 0.0 if kl is None else w[i - 1] * float(k_piece[i - 1, s - 1])
        assert float(rhs.subs({**at, P: 0})) == pytest.approx(expected, abs=1e-12)


def test_the_button_trains_the_composition_shown(ex, monkeypatch):
    seen = []

    def fake(method, steps=10, preset="auto"):
        seen.append((method, steps))
        return {"before": 0.25, "after": 0.5, "sampled_first": 0.125, "sampled_last": None, "steps": steps,
                "seconds": 1.0}
    monkeypatch.setattr(wc, "train_briefly", fake)
    choose(ex, advantage="rloo", policy="cispo", kl="k3", kl_in="loss", aggregation="token-mean")
    button, = [c for box in ex.children if hasattr(box, "children") for c in box.children
               if c.__class__.__name__ == "Button"]
    button.click()
    (method, steps), = seen
    assert method.composition.parts == parts.compose("rloo", "cispo", "k3").composition.parts
    assert method.hparams.aggregation == "token-mean" and steps == 10
    assert "0.250 -&gt; 0.500" in ex.trained_html.value and "—" in ex.trained_html.value  # no accuracy: a dash


def test_training_briefly_really_trains(monkeypatch):
    """The real path on the tiny preset: the SFT model's and the trained policy's accuracy, two steps recorded."""
    r = wc.train_briefly(wc.method_of("rloo", "cispo", "k3", "loss", "token-mean"), steps=2, preset="tiny")
    assert r["steps"] == 2 and 0 <= r["before"] <= 1 and 0 <= r["after"] <= 1 and r["seconds"] > 0
    assert r["sampled_first"] is not None


def test_the_explorer_speaks_chinese():
    i18n.set_language("zh")
    try:
        ex = wc.compose_explorer()
        assert "用部件组合" in ex.children[0].value and "组一组回答" not in ex.maths.value
        assert "预言机" in ex.table.value and "组合出的 GC" in ex.maths.value
        assert ex.controls["kl"].options[0][0] == "无：没有 KL 项"
    finally:
        i18n.set_language("en")
