"""Every method's coefficient equals its record: nothing moves by accident when the code around it changes.

tests/fixtures/coefficient-record.json holds, for every registered method, its coefficient under each setting that
can change it (defaults, each field moved, every pair of choice fields) on fixed ragged float64 batches, on-policy,
off-policy and near-on-policy, with two reward draws (tests/_coefficient_record.py wrote it). Each must agree to
1e-12 of the record's largest entry, and a case recorded as a ValueError must still be refused.
"""

import json

import pytest
import torch

import _coefficient_record as R
from unified_rl.methods import METHODS

TOL = 1e-12


@pytest.fixture(scope="module")
def record():
    with open(R.RECORD) as f:
        return json.load(f)


def mismatches(record, name):
    """The recorded cases of `name` whose coefficient differs from the record now, with their worst difference."""
    bad, seen = [], 0
    for k, want in record.items():
        case = R.parse(k)
        if case[0] != name:
            continue
        seen += 1
        got = R.compute(*case)
        if isinstance(want, str) or isinstance(got, str):
            if isinstance(want, str) != isinstance(got, str):
                bad.append((case, want if isinstance(want, str) else "a coefficient", got if isinstance(got, str) else "a coefficient"))
            continue
        want = torch.tensor(want, dtype=torch.float64)
        gap = float((got - want).abs().max())
        if gap > TOL * max(1.0, float(want.abs().max())):
            bad.append((case, gap))
    assert seen, f"no recorded case for {name}"
    return bad


def _recorded_names():
    with open(R.RECORD) as f:
        return list(dict.fromkeys(R.parse(k)[0] for k in json.load(f)))


@pytest.mark.parametrize("name", _recorded_names())
def test_every_method_equals_its_record(record, name):
    bad = mismatches(record, name)
    assert not bad, f"{name}: {len(bad)} recorded cases changed, e.g. {bad[:3]}"


def test_every_recorded_method_is_still_registered(record):
    """Methods registered since the record are held by the oracles, not by it; none recorded may go."""
    recorded = {R.parse(k)[0] for k in record}
    assert recorded <= set(METHODS), sorted(recorded - set(METHODS))


def test_a_change_of_one_part_in_a_billion_is_caught(record, monkeypatch):
    """The negative control: GRPO's coefficient scaled by 1 + 1e-9, and its advantage's eps moved."""
    import dataclasses
    grpo = METHODS["grpo"]
    monkeypatch.setitem(METHODS, "grpo", dataclasses.replace(grpo, coefficient=lambda s: grpo.coefficient(s) * (1 + 1e-9)))
    assert len(mismatches(record, "grpo")) > 100
    monkeypatch.setitem(METHODS, "grpo", dataclasses.replace(
        grpo, coefficient=lambda s: grpo.coefficient(dataclasses.replace(s, hp=dataclasses.replace(s.hp, adv_eps=1.1e-6)))))
    assert mismatches(record, "grpo")
