"""A cache of SFT checkpoints, so every notebook and command can start RL from the same SFT model
without depending on another notebook having run first.

Location: $UNIFIED_RL_CACHE, else ~/.cache/unified_rl. A checkpoint's folder name holds a hash of
the preset, so changing a preset's defaults never reuses a stale model.
"""

import hashlib
import json
import os
from dataclasses import asdict


def cache_dir():
    return os.environ.get("UNIFIED_RL_CACHE", os.path.join(os.path.expanduser("~"), ".cache", "unified_rl"))


def _key(preset, seed):
    blob = json.dumps({"task": asdict(preset.task), "model": asdict(preset.model), "sft": asdict(preset.sft),
                       "n_sft": preset.n_sft, "n_rl": preset.n_rl, "split": preset.seed, "seed": seed},
                      sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()[:10]


def sft_checkpoint(preset, seed=0, progress=True):
    """Path of the SFT checkpoint for `preset` and `seed`, training it first if it is not cached."""
    from .trainer import train  # late import: trainer uses this module

    path = os.path.join(cache_dir(), f"sft-{preset.name}-{seed}-{_key(preset, seed)}")
    ckpt = os.path.join(path, "checkpoint")
    if not os.path.exists(os.path.join(ckpt, "config.json")):
        tmp = path + f".tmp{os.getpid()}"
        train("sft", preset=preset, seed=seed, out=tmp, progress=progress, _cap=False)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        if os.path.exists(os.path.join(ckpt, "config.json")):  # another process finished first
            return ckpt
        if os.path.exists(path):
            import shutil
            shutil.rmtree(path)
        os.replace(tmp, path)
    return ckpt
