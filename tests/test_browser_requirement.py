"""Without Chromium or playwright the browser tests skip, unless UNIFIED_RL_REQUIRE_BROWSER=1 makes it a failure."""

import importlib.util
from pathlib import Path

import pytest

CONFTEST = Path(__file__).resolve().parent / "browser" / "conftest.py"


def _browser_conftest():
    spec = importlib.util.spec_from_file_location("browser_conftest_under_test", CONFTEST)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def test_a_missing_browser_skips_or_fails(monkeypatch):
    conf = _browser_conftest()
    monkeypatch.delenv("UNIFIED_RL_REQUIRE_BROWSER", raising=False)
    with pytest.raises(pytest.skip.Exception, match="chromium is missing"):
        conf._missing("chromium is missing")
    monkeypatch.setenv("UNIFIED_RL_REQUIRE_BROWSER", "1")
    with pytest.raises(pytest.fail.Exception, match="UNIFIED_RL_REQUIRE_BROWSER=1 requires"):
        conf._missing("chromium is missing")


def test_the_lab_fixture_asks_before_it_starts(monkeypatch, tmp_path):
    """The session fixture checks the browser first: with none there and the variable set, it fails at once."""
    conf = _browser_conftest()
    monkeypatch.setattr(conf, "CHROMIUM", str(tmp_path / "no-chromium"))
    monkeypatch.setenv("UNIFIED_RL_REQUIRE_BROWSER", "1")
    gen = conf.lab.__wrapped__(None) if hasattr(conf.lab, "__wrapped__") else None
    if gen is None:
        pytest.skip("this pytest does not expose the fixture function")
    with pytest.raises(pytest.fail.Exception, match="no-chromium is missing"):
        next(gen)
