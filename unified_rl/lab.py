"""The lab a run trains in: the preset's questions, a tokenizer, the policy and its frozen reference.

`make_lab` builds one from a preset and, optionally, a checkpoint, through the preset's world
(worlds.py: the lab's GPT-2 or a pretrained chat model); a checkpoint is checked before it is
trusted (its config and weights load, its tokenizer is there and fits the model's vocabulary), so a
broken one is a one-line error rather than a run that silently scores 0.
"""

import os
import random
from dataclasses import dataclass

import numpy as np
import torch

from .models import pick_device
from .presets import get_preset
from .worlds import check_tokenizer_fits, load_checkpoint, splits_of, world_of  # noqa: F401 (public here)


def seed_everything(seed):
    """Seed Python's, NumPy's and torch's global RNGs (CUDA's included)."""
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


@dataclass
class Lab:
    """The world a run trains in: questions, tokenizer, the policy and its frozen reference."""

    preset: object
    tokenizer: object
    policy: torch.nn.Module
    ref: torch.nn.Module  # frozen copy of the starting policy: pi_sft / pi_ref
    device: torch.device
    seed: int
    sft_problems: list
    rl_problems: list
    test_problems: list
    teacher: object = None  # a frozen teacher loaded for a distillation method (data/teachers.py), or None

    @property
    def world(self):
        """The preset's world (worlds.world_of): what the loop reads its flags from."""
        return world_of(self.preset)


def make_lab(preset="auto", seed=0, init=None, device=None):
    """Questions from the preset's split, and a policy: `init` (a checkpoint path) or the world's start."""
    preset = get_preset(preset)
    device = pick_device(device)
    if device.type == "cpu" and preset.name in ("cpu", "tiny") and "OMP_NUM_THREADS" not in os.environ:
        # a 100K-parameter model gains nothing from a second thread, and on busy cores (Binder, a
        # laptop running JupyterLab) two threads fighting made notebooks 3-10x slower; set
        # OMP_NUM_THREADS to choose otherwise
        torch.set_num_threads(1)
    train_pool, test = splits_of(preset)
    tokenizer, policy, ref = world_of(preset).models(init, device)
    return Lab(preset, tokenizer, policy, ref, device, seed, train_pool[: preset.n_sft], train_pool, test)
