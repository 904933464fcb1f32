"""Notebook 10's explorer: its numbers are the package's coefficients, and it responds to its controls."""
import ipywidgets as W
import pytest
import torch

from unified_rl.course import explorer as xp
from unified_rl.course.widgets_policy_gradient import MAX_LEN, length_pushes, policy_explorer, ratio_gcs
from unified_rl.methods import METHODS


def test_main_control_changes_the_output_and_tracks_stay_usable():
    ex = policy_explorer()
    assert ex.error is None and ex.image.value[:8] == b"\x89PNG\r\n\x1a\n"
    table, png = ex.table.value, ex.image.value
    ex.controls["ratio"].value = 0.6
    assert ex.error is None and ex.table.value != table and ex.image.value != png
    for c in ex.controls.values():
        if isinstance(c, (W.FloatSlider, W.IntSlider)):
            assert len(c.description) <= xp.SHORT and c.layout.width == xp.CONTROL_WIDTH


def test_clip_higher_and_cispo_where_grpo_stops():
    ex = policy_explorer(ratio=1.25, clip_eps=0.2, clip_eps_high=0.28, right=True)
    gc = ex.data["gc"]
    assert gc["GRPO / PPO clip"] == 0  # A > 0 past 1 + 0.2: the push stops
    assert gc["DAPO clip-higher"] == pytest.approx(gc["CISPO weight"]) and gc["DAPO clip-higher"] > 0
    with ex.hold():
        ex.controls["ratio"].value = 1.5  # past 1 + 0.28 too
    assert ex.data["gc"]["DAPO clip-higher"] == 0 and ex.data["gc"]["CISPO weight"] > 0


def hand_gcs(ratio, right, low, high):
    """o1's GC at `ratio` from the papers by hand: A = (r - mean) / (sample std + 1e-6) of the group (o1's reward,
    then 1, 0, 0); PPO's clip [1 - low, 1 + low], DAPO's [1 - low, 1 + high], CISPO's weight min(r, 1 + high)."""
    r = [float(right), 1.0, 0.0, 0.0]
    mean = sum(r) / 4
    a = (r[0] - mean) / ((sum((x - mean) ** 2 for x in r) / 3) ** 0.5 + 1e-6)
    inside = lambda up: not ((a > 0 and ratio > 1 + up) or (a < 0 and ratio < 1 - low))  # noqa: E731
    return {"GRPO / PPO clip": ratio * a * inside(low), "DAPO clip-higher": ratio * a * inside(high),
            "CISPO weight": min(ratio, 1 + high) * a}


# each (ratio, right) against the defaults (0.2, 0.28) and a range of neither default (0.15, 0.33)
CASES = [(1.1, True), (1.25, True), (1.3, True), (1.5, True), (0.7, False), (0.82, False), (1.1, False)]


@pytest.mark.parametrize("low, high", [(0.2, 0.28), (0.15, 0.33)])
@pytest.mark.parametrize("ratio, right", CASES)
def test_numbers_match_the_papers(ratio, right, low, high):
    got = ratio_gcs([ratio], right, 5, low, high)
    for key, want in hand_gcs(ratio, right, low, high).items():
        assert got[key][0].item() == pytest.approx(want, rel=1e-12, abs=1e-15), (key, ratio, right)


def test_the_cases_tell_the_clips_apart():
    """Each clip end binds in some case and not in another, so a slip in any of them changes a number."""
    zeros = {k: {(r, g, lo) for r, g in CASES for lo, hi in [(0.2, 0.28), (0.15, 0.33)]
                 if hand_gcs(r, g, lo, hi)[k] == 0} for k in ("GRPO / PPO clip", "DAPO clip-higher")}
    assert (1.3, True, 0.2) in zeros["DAPO clip-higher"] and (1.3, True, 0.15) not in zeros["DAPO clip-higher"]
    assert (0.82, False, 0.15) in zeros["GRPO / PPO clip"] and (0.82, False, 0.2) not in zeros["GRPO / PPO clip"]
    assert (0.7, False, 0.2) in zeros["GRPO / PPO clip"] and (1.25, True, 0.2) in zeros["GRPO / PPO clip"]


def test_length_bias_of_one_over_length():
    """A wrong answer (A < 0): GRPO's per-token push shrinks with |o|, Dr. GRPO's constant L keeps it."""
    push = length_pushes(torch.arange(1, MAX_LEN + 1), right=False)
    grpo, dr = push["GRPO: A-hat, 1/|o|"], push[f"constant L = {MAX_LEN} (Dr. GRPO)"]
    assert (grpo < 0).all() and (grpo.diff() > 0).all()  # less negative as the answer grows
    assert torch.allclose(dr, dr[0].expand_as(dr)) and (dr < 0).all()


def test_gspo_is_drawn_with_its_own_range_and_a_sequence_ratio():
    """GSPO's curve is not DAPO's: its clip range is 3e-4 / 4e-4 on s = r^(1/|o1|), one GC on every token."""
    from unified_rl.course.widgets_policy_gradient import GSPO_EPS, GSPO_EPS_HIGH, GSPO_KEY, gspo_sequence
    gspo = METHODS["gspo"].hparams
    assert (GSPO_EPS, GSPO_EPS_HIGH) == (gspo.gspo_clip_eps, gspo.gspo_clip_eps_high) == (3e-4, 4e-4)
    s, gc = gspo_sequence(1.002, True, 12)
    assert s == pytest.approx(1.002 ** (1 / 12), rel=1e-12) and 1 < s < 1 + GSPO_EPS_HIGH
    assert gc[0] > 0 and torch.allclose(gc, gc[0].expand_as(gc))  # s A on every token of o1
    s, gc = gspo_sequence(1.01, True, 12)  # s = 1.00083 > 1 + 4e-4: clipped, though DAPO's clip is far away
    assert s > 1 + GSPO_EPS_HIGH and (gc == 0).all()
    curves = ratio_gcs([1.01], True, 12, 0.2, 0.28)
    assert curves[GSPO_KEY][0] == 0 and curves["DAPO clip-higher"][0] > 0
    ex = policy_explorer(ratio=1.01, right=True, length=12)
    assert ex.data["gspo"]["s"] == pytest.approx(s) and ex.data["gspo"]["gc"] == [0.0] * 12
