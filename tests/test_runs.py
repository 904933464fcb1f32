"""The run folder: never overwritten silently, never half-written, never a way to run code; the SFT
cache: keyed by what changes the model, a race loser leaves nothing, a broken entry is named."""

import json
import os
import pathlib
import pickle
import stat

import pytest
import torch

from unified_rl import cache, runs
from unified_rl.presets import get_preset
from unified_rl.trainer import train


@pytest.fixture(scope="module")
def finished(tmp_path_factory):
    """A finished one-step SFT run folder (copied by each test that changes it)."""
    out = str(tmp_path_factory.mktemp("runs") / "sft")
    train("sft", preset="tiny", steps=1, out=out, progress=False)
    return out


def copy_of(folder, tmp_path):
    import shutil
    dst = str(tmp_path / "run")
    shutil.copytree(folder, dst)
    return dst


def weights(out):
    from safetensors.torch import load_file
    return load_file(os.path.join(out, "checkpoint", "model.safetensors"))


def test_a_finished_run_is_complete(finished):
    assert runs.is_complete(finished)
    assert sorted(os.listdir(finished)) == [".unified_rl-run", "COMPLETE", "MANIFEST", "checkpoint", "metrics.jsonl",
                                            "state.pt", "summary.json"]
    listed = open(os.path.join(finished, "MANIFEST")).read().split()
    on_disk = [os.path.relpath(os.path.join(d, f), finished) for d, _, fs in os.walk(finished) for f in fs]
    assert sorted(listed) == sorted(on_disk)  # the manifest names every file the run wrote, and only those
    assert not [f for f in os.listdir(os.path.dirname(finished)) if f.startswith(".")]  # no leftovers


def test_an_existing_run_is_kept_unless_overwrite(finished, tmp_path):
    out = copy_of(finished, tmp_path)
    before = open(os.path.join(out, "summary.json")).read()
    with pytest.raises(ValueError, match="already holds a run.*--overwrite"):
        train("sft", preset="tiny", steps=2, out=out, progress=False)
    assert open(os.path.join(out, "summary.json")).read() == before
    run = train("sft", preset="tiny", steps=2, out=out, progress=False, overwrite=True)
    assert json.load(open(os.path.join(out, "summary.json")))["steps"] == 2 and len(run.metrics) == 2


def test_a_kill_during_a_save_leaves_the_old_complete_run(finished, tmp_path, monkeypatch):
    out = copy_of(finished, tmp_path)
    old_summary, old_weights = open(os.path.join(out, "summary.json")).read(), weights(out)

    def killed(*a, **k):
        raise KeyboardInterrupt  # the process dies while the new checkpoint is being written

    monkeypatch.setattr(runs, "save_checkpoint", killed)
    with pytest.raises(KeyboardInterrupt):
        train("sft", preset="tiny", steps=2, out=out, progress=False, overwrite=True)
    runs.recover(out)
    assert open(os.path.join(out, "summary.json")).read() == old_summary
    assert all(torch.equal(v, weights(out)[k]) for k, v in old_weights.items())
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]


@pytest.mark.parametrize("moved", [0, 1, 3, -1])  # -1: all but COMPLETE
def test_a_kill_inside_the_swap_is_finished_by_recover(finished, tmp_path, monkeypatch, moved):
    """A kill after the staging copy was complete and `moved` of its files were moved in: recover
    moves the rest in, COMPLETE last, and keeps a user's file in the folder."""
    out = copy_of(finished, tmp_path)
    (tmp_path / "run" / "eval.json").write_text("mine")
    run = train("sft", preset="tiny", steps=2, seed=9, progress=False)
    run.out = out
    real, calls = os.replace, []
    moved = moved if moved >= 0 else len(open(os.path.join(out, "MANIFEST")).read().split()) - 1

    def die_after(src, dst):
        if len(calls) == moved:
            raise KeyboardInterrupt
        calls.append(dst)
        return real(src, dst)

    monkeypatch.setattr(runs.os, "replace", die_after)
    with pytest.raises(KeyboardInterrupt):
        runs.save_run(run)
    monkeypatch.setattr(runs.os, "replace", real)
    assert not runs.is_complete(out)
    runs.recover(out)
    assert runs.is_complete(out) and json.load(open(os.path.join(out, "summary.json")))["seed"] == 9
    assert all(torch.equal(v, weights(out)[k]) for k, v in run.policy.state_dict().items() if k in weights(out))
    assert (tmp_path / "run" / "eval.json").read_text() == "mine"
    assert sorted(os.listdir(tmp_path)) == ["run"]
    assert not os.path.exists(os.path.join(out, ".unified_rl-save"))


class RunsCode:
    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (os.system, (f"touch {self.path}",))


def test_a_crafted_state_file_runs_no_code(finished, tmp_path):
    out = copy_of(finished, tmp_path)
    proof = tmp_path / "code-ran"
    with open(os.path.join(out, runs.STATE), "wb") as f:
        pickle.dump({"step": RunsCode(proof)}, f)
    assert not proof.exists()
    with pytest.raises(ValueError, match="not a run this package saved"):
        train("sft", preset="tiny", steps=2, out=out, resume=True, progress=False)
    assert not proof.exists()
    torch.save({"step": RunsCode(proof)}, os.path.join(out, runs.STATE))  # the torch.save route too
    with pytest.raises(ValueError, match="not a run this package saved"):
        runs.load_state(out)
    assert not proof.exists()


def _unwritable(tmp_path, how):
    """A path no process can create a folder at, root included (except by chmod, which root ignores)."""
    if how == "under a file":
        (tmp_path / "a-file").write_text("x")
        return tmp_path / "a-file" / "run"
    if how == "in /proc":  # a kernel file system: mkdir fails for root too
        return pathlib.Path("/proc") / f"unified-rl-{os.getpid()}" / "run"
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(stat.S_IRUSR | stat.S_IXUSR)
    return locked / "run"


@pytest.mark.parametrize("how", ["under a file", "in /proc", "read-only folder"])
def test_out_must_be_writable_before_training(tmp_path, how):
    if how == "in /proc" and not os.path.isdir("/proc/self"):
        pytest.skip("no /proc on this system")
    if how == "read-only folder" and os.geteuid() == 0:
        pytest.skip("root ignores a folder's write bit (the other two cases run as root)")
    out = _unwritable(tmp_path, how)
    try:
        with pytest.raises(ValueError, match="cannot write"):
            train("sft", preset="tiny", steps=1, out=str(out), progress=False)
    finally:
        if how == "read-only folder":
            out.parent.chmod(stat.S_IRWXU)
    assert not out.exists()


def test_out_writability_is_probed(tmp_path, monkeypatch):
    def refuse(*a, **k):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(runs.tempfile, "mkdtemp", refuse)
    with pytest.raises(ValueError, match="cannot write the run to .*Permission denied"):
        runs.check_out(str(tmp_path / "run"))


def test_a_race_loser_leaves_no_temporary_folder(finished, tmp_path):
    out = copy_of(finished, tmp_path)
    before = weights(out)
    run = train("sft", preset="tiny", steps=1, seed=5, progress=False)
    run.out = out
    assert runs.save_run(run, replace=False) is False  # a complete entry was there first: kept
    assert all(torch.equal(v, weights(out)[k]) for k, v in before.items())
    assert sorted(os.listdir(tmp_path)) == ["run"]


def test_the_cache_key_holds_what_changes_the_model(monkeypatch):
    tiny = get_preset("tiny")
    key = cache.entry(tiny)
    assert cache.entry(tiny.with_(n_test=17)) != key  # the split depends on n_test
    assert cache.entry(tiny.with_(sft={"lr": 1e-3})) != key and cache.entry(tiny, seed=1) != key
    assert cache.entry(tiny.with_(rl={"lr": 1e-3})) == key  # RL settings do not change the SFT model
    monkeypatch.setattr(cache, "__version__", "99.0")
    assert cache.entry(tiny) != key


def test_code_version_ignores_prose_only():
    assert cache._code(cache.__file__) == cache._code(cache.__file__)
    src = "def f(x):\n    '''doc'''\n    return x  # why\n"
    other = "def f(x):\n    '''other doc'''\n    # more why\n    return x\n"
    import ast
    def norm(s):
        path = "/tmp/_code_version_probe.py"
        open(path, "w").write(s)
        return cache._code(path)
    assert norm(src) == norm(other) != norm(src.replace("return x", "return x + 1"))
    ast.parse(src)


@pytest.mark.slow
def test_a_broken_cache_entry_is_named(monkeypatch):
    tiny = get_preset("tiny")
    ckpt = cache.sft_checkpoint(tiny, seed=7, progress=False)
    with open(os.path.join(ckpt, "model.safetensors"), "r+b") as f:
        f.truncate(100)
    with pytest.raises(ValueError, match=f"delete {os.path.dirname(ckpt)} to rebuild it"):
        train("grpo", preset="tiny", seed=7, progress=False)
    os.remove(os.path.join(os.path.dirname(ckpt), runs.MARKER))  # an entry a kill left unmarked is rebuilt
    assert cache.sft_checkpoint(tiny, seed=7, progress=False) == ckpt
    assert runs.is_complete(os.path.dirname(ckpt))
    train("grpo", preset="tiny", seed=7, steps=1, progress=False)


@pytest.mark.slow
def test_the_same_seed_gives_the_same_run_whether_or_not_the_cache_trained(tmp_path, monkeypatch):
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "fresh-cache"))
    first = train("grpo", preset="tiny", steps=2, seed=4, progress=False)  # trains the SFT model here
    second = train("grpo", preset="tiny", steps=2, seed=4, progress=False)  # reads it from the cache
    drop = lambda ms: [{k: v for k, v in m.items() if k != "seconds"} for m in ms]
    assert drop(first.metrics) == drop(second.metrics)
    assert all(torch.equal(a, b) for a, b in zip(first.policy.state_dict().values(),
                                                   second.policy.state_dict().values()))


def test_crafted_weights_in_a_checkpoint_run_no_code(tmp_path):
    from unified_rl.models import build_policy, load_policy, save_checkpoint
    from unified_rl.tokenizer import build_tokenizer
    tok, ckpt, proof = build_tokenizer(), tmp_path / "ckpt", tmp_path / "code-ran"
    save_checkpoint(build_policy(tok), tok, ckpt)
    os.remove(ckpt / "model.safetensors")
    torch.save({"transformer.wte.weight": RunsCode(proof)}, ckpt / "pytorch_model.bin")
    with pytest.raises(ValueError, match="could not load a model from"):
        load_policy(ckpt)
    assert not proof.exists()
