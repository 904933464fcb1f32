"""Shared fixtures: float64 for exact gradient comparisons in the core tests; the lab's tokenizer and a
ragged rollout for the model tests."""

import pytest
import torch

from unified_rl.sampling import rollout_from_texts
from unified_rl.task import TaskConfig, make_problem
from unified_rl.tokenizer import build_tokenizer


@pytest.fixture
def f64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)


@pytest.fixture(scope="session")
def tok():
    """The lab's character tokenizer (built in code, nothing downloaded)."""
    return build_tokenizer()


@pytest.fixture(scope="module")
def batch(tok):
    """A rollout whose prompts have different lengths (left padding) and responses too."""
    probs = [make_problem((3, 4), TaskConfig(1)), make_problem((123, 456), TaskConfig(3)),
             make_problem((1, 2, 3), TaskConfig(1, 3))]
    return rollout_from_texts(tok, probs, [p.solution for p in probs])


@pytest.fixture(scope="session", autouse=True)
def private_home_caches(tmp_path_factory):
    """Nothing the suite writes lands in the user's home: the SFT cache, matplotlib's and Hugging
    Face's caches point into this session's temporary folder."""
    base = tmp_path_factory.mktemp("home-caches")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UNIFIED_RL_CACHE", str(base / "unified_rl"))
        mp.setenv("MPLCONFIGDIR", str(base / "matplotlib"))
        mp.setenv("HF_HOME", str(base / "huggingface"))
        mp.setenv("XDG_CACHE_HOME", str(base / "xdg-cache"))
        yield base
