"""A cache of SFT checkpoints, so every notebook and command can start RL from the same SFT model
without depending on another notebook having run first.

Location: $UNIFIED_RL_CACHE, else ~/.cache/unified_rl. An entry is a run folder (runs.py) whose
name holds a hash of everything that changes the model: the preset's task, model, SFT settings and
split sizes (n_test too: the split depends on it), the seed, and the code that trains it
(`code_version`), so a change to any of them never reuses a stale model.
"""

import ast
import functools
import hashlib
import json
import os
import dataclasses
import sys
from dataclasses import asdict

from . import __version__, distributed, runs
from .lab import make_lab, seed_everything
from .text import Text
from .loop import fit
from .methods import SFT
from .wiring import configure
from .worlds import run_record

PACKAGE = os.path.dirname(os.path.abspath(__file__))
SFT_CODE = ("task.py", "tokenizer.py", "models.py", "sampling.py", "data/core.py", "paradigm.py", "wiring.py",
            "loop.py", "lab.py", "presets.py")
"""The modules whose code decides the SFT model (comments and docstrings aside)."""


def cache_dir():
    """$UNIFIED_RL_CACHE, else ~/.cache/unified_rl; an empty or blank value counts as unset (never the
    current folder)."""
    return os.environ.get("UNIFIED_RL_CACHE", "").strip() or os.path.join(os.path.expanduser("~"), ".cache",
                                                                          "unified_rl")


def _code(path):
    """A module's code without comments and docstrings: editing prose keeps its version."""
    tree = ast.parse(open(path).read())
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(body, list) and body and isinstance(body[0], ast.Expr) \
                and isinstance(getattr(body[0], "value", None), ast.Constant) and isinstance(body[0].value.value, str):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree)


def code_version(files=None):
    """The package version and a hash of the code of `files` (paths under the package; default: all
    of it but the course helpers): what a cached model or result was made by."""
    if files is None:
        files = sorted(os.path.relpath(os.path.join(d, f), PACKAGE) for d, _, fs in os.walk(PACKAGE)
                       for f in fs if f.endswith(".py") and "course" not in os.path.relpath(d, PACKAGE).split(os.sep))
    return f"{__version__}-{_hash(tuple(files))}"


@functools.lru_cache(maxsize=None)
def _hash(files):
    """Hash of the code of `files`, once per process (a run's code does not change under it)."""
    h = hashlib.sha1()
    for rel in files:
        h.update(rel.encode() + _code(os.path.join(PACKAGE, rel)).encode())
    return h.hexdigest()[:8]


def _key(preset, seed):
    blob = json.dumps({"task": asdict(preset.task), "model": asdict(preset.model), "sft": asdict(preset.sft),
                       "n_sft": preset.n_sft, "n_rl": preset.n_rl, "n_test": preset.n_test, "split": preset.seed,
                       "seed": seed, "code": code_version(SFT_CODE)}, sort_keys=True)
    return hashlib.sha1(blob.encode()).hexdigest()[:10]


def entry(preset, seed=0):
    """The cache folder of the SFT model of `preset` and `seed`."""
    return os.path.join(cache_dir(), f"sft-{preset.name}-{seed}-{_key(preset, seed)}")


def sft_checkpoint(preset, seed=0, progress=True):
    """Path of the SFT checkpoint for `preset` and `seed`, training it first if it is not cached.
    The cache folder is probed for writing before any training; a process that finds another one
    building the same entry waits for it and reuses its model."""
    path = entry(preset, seed)
    if not runs.is_complete(path) and not distributed.saves_models():  # rank 0 of a started group builds it
        distributed.wait_for(lambda: runs.is_complete(path), f"the SFT cache entry {path}")
    if not runs.is_complete(path):
        try:  # an unwritable cache is found now, not after SFT has trained
            runs.probe(path)
        except ValueError as e:
            raise ValueError(f"{e} (the SFT model cache: set UNIFIED_RL_CACHE to a folder you can write)") from None
        # under torchrun every rank asks before it joins the others (trainer.ready_before_ranks): one
        # builds it, the others wait here on its file lock, in no collective, and then read it
        with runs.hold(path, wait=True), distributed.suspended():
            runs.recover(path)
            if not runs.is_complete(path):
                _build(path, preset, seed, progress)
    return os.path.join(path, "checkpoint")


def _build(path, preset, seed, progress):
    if os.path.exists(os.path.join(path, runs.STATE)) or os.path.exists(os.path.join(path, "checkpoint")):
        print(Text("rebuilding the incomplete SFT cache entry {path}", path=path), file=sys.stderr)
    sft_preset, hp = configure(SFT, preset, {})
    print(Text("building the SFT model cache for preset {preset} seed {seed} (first run only): {steps} steps into {path}",
               preset=preset.name, seed=seed, steps=sft_preset.sft.steps, path=path), file=sys.stderr, flush=True)
    seed_everything(seed)
    lab = make_lab(sft_preset, seed)
    run = fit(SFT, lab, hp, sft_preset.sft.steps, _summary(preset, seed, lab), progress=progress,
              label="SFT cache")
    run.out = path
    runs.save_run(run, replace=False)  # a process that finished first keeps its entry


def _summary(preset, seed, lab):
    return {"method": SFT.name, "preset": preset.name, "steps": preset.sft.steps, "seed": seed,
            "init": None, "device": str(lab.device), "code": code_version(SFT_CODE), "version": __version__,
            "config": asdict(preset), **run_record(preset)}


def adopt(run, preset, seed):
    """Make the user's finished SFT run the cache entry of `preset` and `seed` if the entry is
    missing and the run is exactly the model the cache would train (all its steps, from scratch,
    the default evaluation schedule): later runs start from it instead of training it again."""
    path = entry(preset, seed)
    if runs.is_complete(path) or len(run.metrics) != preset.sft.steps:
        return False
    try:
        runs.probe(path)
    except ValueError:
        return False  # an unwritable cache: the run is saved where asked, the cache is built later
    copy = dataclasses.replace(run, out=path, summary=_summary(preset, seed, run.lab))
    if runs.save_run(copy, replace=False):
        print(Text("this run is now the SFT model cache for preset {preset} seed {seed}: later runs start from it "
                   "({path})", preset=preset.name, seed=seed, path=path), file=sys.stderr)
        return True
    return False
