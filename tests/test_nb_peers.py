"""Notebook 10's map of TRL's and verl's configs and its explorer (course/nb_peers.py, widgets_peers.py)."""

import dataclasses
import math

import pytest
import torch

from unified_rl import methods, peers
from unified_rl.course import nb_peers, widgets_peers
from unified_rl.course.i18n import set_language
from unified_rl.methods import METHODS


def test_every_row_is_what_the_map_returns():
    rows = nb_peers.trl_rows()
    assert len(rows) == len(nb_peers.TRL_LOSS_TYPES) + len(nb_peers.TRL_OPTIONS)
    for (fields, _), (config, here, gc) in zip(nb_peers.TRL_LOSS_TYPES, rows):
        name, _ = peers.from_trl(**fields)
        assert here.startswith(f"`{name}`") and gc and fields["loss_type"] in config
    loss_types = {f["loss_type"] for f, _ in nb_peers.TRL_LOSS_TYPES}
    assert loss_types == {"grpo", "dr_grpo", "dapo", "bnpo", "luspo", "cispo", "sapo", "vespo"}  # TRL 1.16's all
    delta = dict((c, h) for c, h, _ in rows)["`delta=1.5`"]
    assert delta == "`grpo`: `delta=1.5`"  # an option row shows only what the option changes
    for ((est, mode, agg), _), (_, here, _) in zip(nb_peers.VERL, nb_peers.verl_rows()):
        assert here.startswith(f"`{peers.from_verl(est, mode, agg)[0]}`")
    table = nb_peers.markdown(rows, "TRL")
    assert all(line.count(" | ") == 2 for line in table.splitlines()[2:])  # |o_i| is escaped, never a new cell


def test_the_map_speaks_chinese():
    set_language("zh")
    try:
        rows = nb_peers.trl_rows() + nb_peers.verl_rows()
        assert all(any("\u4e00" <= ch <= "\u9fff" for ch in gc) for _, _, gc in rows)
        assert "配置" in nb_peers.markdown(rows, "TRL").splitlines()[0]
    finally:
        set_language("en")


def test_a_newly_registered_member_is_left_out_until_a_run_covers_it(monkeypatch):
    live = [m.name for m in methods.POLICY_GRADIENT]
    assert nb_peers.left_out(live) == []
    new = dataclasses.replace(METHODS["grpo"], name="my-method")
    monkeypatch.setattr(methods, "POLICY_GRADIENT", methods.POLICY_GRADIENT + (new,))
    assert nb_peers.left_out(live) == ["my-method"]
    assert nb_peers.left_out(["grpo", "dapo"])[:2] == ["dr-grpo", "gspo"]  # the registry's order


def test_the_explorer_curves_are_the_methods_coefficients():
    ratios = [0.5, 1.0, 1.5]
    wrong, right = widgets_peers.curves(ratios, False), widgets_peers.curves(ratios, True)
    a_wrong, a_right = -0.5, 0.5 / torch.tensor([1., 1., 0., 0.]).std().item()  # A of o1 in its group
    for c in (wrong, right):  # on-policy every shape gives A
        assert all(math.isclose(v[1], a_wrong if c is wrong else a_right, rel_tol=1e-5) for v in c.values())
    assert wrong["grpo"][0] == 0 and wrong["grpo"][2] < 0  # PPO's clip: A < 0 cut below 1 - eps only
    assert wrong["grpo + delta"][2] == 0  # ... and past delta with TRL's two-sided clip
    assert right["grpo"][2] == 0 and math.isclose(right["cispo"][2], 1.2 * a_right, rel_tol=1e-5)  # capped, not cut
    assert 0 < abs(wrong["sapo"][0]) < abs(a_wrong)  # the gate fades, never cuts
    assert abs(right["vespo"][2]) < 1e-3 * abs(right["vespo"][1])  # W = 1.5^8: phi(W) is almost 0
    ex = widgets_peers.loss_explorer(ratio=1.5, right=True)
    assert ex.data["gc"]["grpo"] == 0 and ex.data["gc"]["sapo"] > 0
