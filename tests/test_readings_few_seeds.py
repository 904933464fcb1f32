"""A learner's own run of one or two seeds read through notebooks 08, 10 and 11's verdicts (course/readings.py):
no verdict, no degenerate interval, no NaN in what is printed."""

import copy
import re

import pytest

from unified_rl.course import readings
from unified_rl.course.i18n import set_language
from unified_rl.experiments import common, verdicts


@pytest.mark.parametrize("lang", ["en", "zh"])
@pytest.mark.parametrize("seeds", [1, 2])
def test_a_run_of_fewer_seeds_than_the_rule_needs_prints_no_verdict_and_no_nan(seeds, lang):
    r = copy.deepcopy(common.load_shipped("policy-family"))
    r["per_seed"] = r["per_seed"][:seeds]
    set_language(lang)
    try:
        decided = readings.decide(r)
        text = "\n".join(readings.summary(decided)) + "\n" + readings.table(decided)
    finally:
        set_language("en")
    assert not re.search(r"\b(nan|inf)\b", text, re.I), text
    assert all(str(v["verdict"]) not in verdicts.WORDS[:3] for v in decided.values())  # no raised/lowered/no change
    if seeds == 1:  # one seed is no interval, not the degenerate [x, x]
        v = next(iter(decided.values()))
        assert readings.interval(v) == "—" and f"[{v['mean']:+.3f}, {v['mean']:+.3f}]" not in text
    else:
        assert str(verdicts.MIN_SEEDS) in text
