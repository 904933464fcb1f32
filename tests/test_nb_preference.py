"""Notebook 11's helpers: every number they print is the package's, and each sentence follows its table."""
import math

import torch

from unified_rl import coefficients
from unified_rl.course import nb_preference
from unified_rl.experiments import common
from unified_rl.methods import METHODS
from unified_rl.trainer import make_lab


def test_gc_falloff_is_each_coefficients_own_shape():
    m = torch.tensor([0.0, 0.1, 0.5, 2.0], dtype=torch.float64)
    fall = nb_preference.gc_falloff(m, beta=0.5, tau=1.0)
    assert torch.allclose(fall["dpo"], 2 * torch.sigmoid(-0.5 * m))  # beta sigma(-beta m) / (beta / 2)
    assert torch.allclose(fall["ipo"], 1 - 2 * 1.0 * m)  # (1/tau - 2m) / (1/tau)


def test_coefficient_maps_share_one_colour_scale():
    rows = nb_preference.synthetic_rows(B=3, T=8)
    maps = nb_preference.coefficient_maps(rows)
    fig = nb_preference.plot_coefficient_maps(maps, rows["mask"])
    want = max(float(c.abs().max()) for c in maps.values())
    assert fig.vmax == want
    clims = {ax.images[0].get_clim() for ax in fig.axes if ax.images}
    assert clims == {(-want, want)}  # every panel, the same scale


class _Alternating:
    """A stand-in rule for a random tiny model that answers nothing right: every other sample is 'right'."""

    def __call__(self, rollout):
        return torch.arange(len(rollout)).remainder(2).float()


def test_generated_per_step_counts_what_each_source_samples(monkeypatch):
    import unified_rl.data.core as core
    monkeypatch.setattr(core, "RuleReward", _Alternating)
    torch.manual_seed(0)
    lab = make_lab("tiny", seed=0)
    cfg = lab.preset.rl
    work = nb_preference.generated_per_step(lab, ["dpo", "kto"], steps=2)
    assert work["kto"] == (2 * cfg.prompts_per_step, 4 * cfg.prompts_per_step)  # one sample per question, + mismatched
    generated, rows = work["dpo"]
    assert generated >= cfg.prompts_per_step * cfg.frozen_samples and generated % (cfg.frozen_samples) == 0
    assert rows <= 2 * cfg.prompts_per_step
    import unified_rl.sampling as sampling
    assert core.sample is sampling.sample  # restored after counting


def test_kto_regime_agrees_with_the_coefficient():
    torch.manual_seed(0)
    lab = make_lab("tiny", seed=0)
    batch = METHODS["kto"].data_source(lab).next_batch()
    import copy
    policy = copy.deepcopy(lab.policy)
    with torch.no_grad():  # move the policy away from pi_ref, so that z is not 0
        for p in policy.parameters():
            p.add_(0.05 * torch.randn_like(p))
    lab.policy = policy
    reg = nb_preference.kto_regime(policy, lab.ref, batch, beta=2.0, lam_d=3.0, lam_u=1.0)
    assert reg["z"].abs().max() > 1e-3
    n = len(batch) // 2
    from unified_rl.wiring import policy_logp
    with torch.no_grad():
        lp, ref = policy_logp(lab.policy, batch), policy_logp(lab.ref, batch)
    desirable = torch.ones(n)
    c = coefficients.kto(lp[:n], ref[:n], batch.mask[:n], desirable, reg["z0"], 2.0, 3.0, 1.0).sum(-1) / batch.mask[:n].sum(-1)
    assert torch.allclose(reg["gc_over_quarter"].to(c), c / (3.0 * 2.0 / 4), atol=1e-6)


def test_findings_follow_the_table():
    result = common.load_shipped("preference-family")
    text = "\n".join(nb_preference.findings(result) + nb_preference.alignment_findings(result))
    assert f"{result['accuracy']['orpo']['mean']:.3f}" in text and "0.372 / 0.358 / 0.836" in text
    planted = {**result, "accuracy": {**result["accuracy"], "orpo": {"mean": 0.123, "std": 0.0}}}
    assert "ORPO 0.123" in "\n".join(nb_preference.findings(planted))
    planted = {**result, "end": {**result["end"], "ipo": {**result["end"]["ipo"],
                                                           "x_chosen": {"mean": 0.5, "std": 0.0}}}}
    assert "IPO +0.500" in "\n".join(nb_preference.alignment_findings(planted))
    assert math.isclose(float(nb_preference.gc_falloff([0.0], 0.5, 1.0)["ipo"][0]), 1.0)


# ---- the map of TRL's loss types and what the runs leave out, read from the registry

def test_the_trl_map_has_one_row_per_loss_type_read_from_the_package(monkeypatch):
    from unified_rl.coefficients import dpo_losses

    assert set(nb_preference.TRL_GC) == set(dpo_losses.LOSS_TYPES)
    rows = nb_preference.trl_map_rows().splitlines()
    assert len(rows) == 2 + len(dpo_losses.LOSS_TYPES)
    assert all(r.count(" | ") == 5 for r in rows[2:]), "a cell holds a stray |: the table breaks"
    assert '`dpo_loss="sigmoid", dpo_norm="sum"`' in rows[2] and '"sigmoid_norm", dpo_norm="mean"' in rows[-1]
    # a loss type the package gains must appear in the map, or fail here for want of its GC
    monkeypatch.setattr(dpo_losses, "LOSS_TYPES", dpo_losses.LOSS_TYPES + ("new_loss",))
    import pytest
    with pytest.raises(KeyError, match="new_loss"):
        nb_preference.trl_map_rows()


def test_what_the_runs_leave_out_is_computed_from_the_registry(monkeypatch):
    import dataclasses

    from unified_rl import methods

    assert nb_preference.family() == ("dpo",) + tuple(m.name for m in methods.PREFERENCE)
    assert set(nb_preference.LIVE) <= set(nb_preference.family())  # the live runs train registered methods
    before = nb_preference.left_out(nb_preference.LIVE)  # a method the runs do not train is named, not an error
    new = dataclasses.replace(methods.PREFERENCE[0], name="newpo")
    monkeypatch.setattr(methods, "PREFERENCE", methods.PREFERENCE + (new,))
    assert nb_preference.left_out(nb_preference.LIVE) == before + ["newpo"]  # a method registered later is named
    rest = nb_preference.left_out({"dpo", "kto"})  # the family in the registry's order, less what is covered
    assert rest == [m.name for m in methods.PREFERENCE if m.name != "kto"] and rest[-1] == "newpo"
