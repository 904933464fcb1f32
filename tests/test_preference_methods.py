"""IPO, SimPO, KTO and ORPO as registered Methods: the coefficient the trainer calls is the pure GC
on its data source's row layout (x2, as DPO's), KTO's labels and z0 come from its batch, its data
source is unpaired with mismatched rows, and each method's settings are set through train()."""

import dataclasses

import pytest
import torch

from _killed import killed
from unified_rl import coefficients as C
from unified_rl.data import LabelledSamples
from unified_rl.methods import METHODS
from unified_rl.methods.preference import PREFERENCE
from unified_rl.paradigm import step_from_tensors
from unified_rl.presets import RLConfig
from unified_rl.trainer import make_lab, train

CFG = RLConfig()


def rows(seed, B=3, T=7):
    """2B rows of ragged masks and log-probs (< 0), with reference log-probs."""
    g = torch.Generator().manual_seed(seed)
    lengths = torch.randint(1, T + 1, (2 * B,), generator=g)
    mask = (torch.arange(T)[None] < lengths[:, None]).double()  # (2B, T)
    logp = (-2 * torch.rand(2 * B, T, generator=g, dtype=torch.float64) - 0.01) * mask
    logp_ref = (-2 * torch.rand(2 * B, T, generator=g, dtype=torch.float64) - 0.01) * mask
    return g, mask, logp, logp_ref


def test_every_method_is_registered_with_its_paper_and_settings():
    for m in PREFERENCE:
        assert METHODS[m.name] is m and "arXiv" in m.paper and m.objective is not None
        assert dataclasses.is_dataclass(m.hparams) and m.defaults["lr"] > 0
    assert not METHODS["simpo"].uses_ref and not METHODS["orpo"].uses_ref  # no reference model
    assert METHODS["ipo"].uses_ref and METHODS["kto"].uses_ref


@pytest.mark.parametrize("name", ["ipo", "simpo", "orpo"])
def test_a_pair_method_gives_twice_its_gc_on_the_pair_layout(name):
    _, mask, logp, logp_ref = rows(1)
    m = METHODS[name]
    uses_ref = m.uses_ref
    step = step_from_tensors(logp, mask, CFG, logp_ref=logp_ref if uses_ref else None, hp=m.hparams)
    B = len(mask) // 2
    hp = dataclasses.astuple(m.hparams)
    if uses_ref:
        want = C.ipo(logp[:B], logp_ref[:B], mask[:B], logp[B:], logp_ref[B:], mask[B:], *hp)
    else:
        want = getattr(C, name)(logp[:B], mask[:B], logp[B:], mask[B:], *hp)
    torch.testing.assert_close(m.coefficient(step), 2 * torch.cat(want))


def test_kto_reads_its_labels_and_z0_from_the_two_halves_of_the_batch():
    g, mask, logp, logp_ref = rows(2, B=4)
    scores = torch.randint(0, 2, (8,), generator=g).double()
    m = METHODS["kto"]
    hp = dataclasses.replace(m.hparams, kto_lam_d=1.5)
    coef = m.coefficient(step_from_tensors(logp, mask, CFG, logp_ref=logp_ref, scores=scores, hp=hp))
    z0 = C.kto_reference_point(logp[4:], logp_ref[4:], mask[4:])
    want = C.kto(logp[:4], logp_ref[:4], mask[:4], scores[:4], z0, hp.kto_beta, 1.5, hp.kto_lam_u)
    torch.testing.assert_close(coef, 2 * torch.cat([want, torch.zeros_like(want)]))
    assert (coef[:4][scores[:4] == 1] >= 0).all() and (coef[:4][scores[:4] == 0] <= 0).all()


def test_labelled_samples_are_unpaired_with_shifted_mismatched_rows():
    lab = make_lab("tiny")
    batch = LabelledSamples(lab).next_batch()
    B = 2 * lab.preset.rl.prompts_per_step
    assert len(batch) == 2 * B and batch.group_size == 1
    own, mismatched = batch.texts[:B], batch.texts[B:]
    assert mismatched == own[1:] + own[:1]  # (x_i, y_{i+1}), the paper's shift
    assert batch.problems[:B] == batch.problems[B:]
    assert len({p.prompt for p in batch.problems[:B]}) == B  # one response per question: no pairs


def test_settings_are_set_through_train():
    run = train("kto", preset="tiny", steps=1, kto_lam_d=2.5, kto_beta=0.3, progress=False)
    assert run.summary["hparams"] == {"kto_beta": 0.3, "kto_lam_d": 2.5, "kto_lam_u": 1.0, "kto_loss": "kto",
                                      "kto_norm": "mean"}
    with pytest.raises(ValueError, match="unknown setting"):
        train("kto", preset="tiny", steps=1, ipo_tau=1.0, progress=False)


@pytest.mark.slow
def test_a_resumed_kto_run_is_bit_for_bit_the_uninterrupted_one(tmp_path):
    """LabelledSamples keeps its question stream in the run state: killed after 2 steps and resumed,
    KTO ends where an uninterrupted run ends (labels from coins: the tiny model answers nothing right)."""
    import json
    import os

    coin = lambda rollout: torch.randint(0, 2, (len(rollout),)).float()  # noqa: E731
    kto = dataclasses.replace(METHODS["kto"], reward=coin)
    kw = dict(preset="tiny", steps=4, seed=2, progress=False, eval_every=2, save_every=1)
    full = train(kto, out=str(tmp_path / "full"), **kw)
    assert isinstance(killed(lambda: train(kto, out=str(tmp_path / "cut"), **kw), after=2), KeyboardInterrupt)
    resumed = train(kto, out=str(tmp_path / "cut"), resume=True, **kw)
    flat = lambda m: torch.cat([p.detach().flatten() for p in m.state_dict().values()])  # noqa: E731
    assert torch.equal(flat(resumed.policy), flat(full.policy))
    strip = lambda rows: [{k: v for k, v in r.items() if k != "seconds"} for r in rows]  # noqa: E731
    assert strip(resumed.metrics) == strip(full.metrics)
    assert len(open(os.path.join(tmp_path / "cut", "metrics.jsonl")).readlines()) == 4
    assert json.load(open(os.path.join(tmp_path / "cut", "summary.json")))["hparams"]["kto_lam_d"] == 5.0
