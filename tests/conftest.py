"""Shared fixtures: float64 by default for exact gradient comparisons in the core tests."""

import pytest
import torch


@pytest.fixture
def f64():
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield
    torch.set_default_dtype(old)
