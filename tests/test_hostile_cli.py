"""The command line on hostile ground: in a sandbox of things that are not the run's (a repository
with .git, user documents, another run folder, a folder whose name holds `[`, a symlink, a FIFO, a
file, the home and the current folder), every --out with every flag either trains into the folder
it names or refuses with one line and a non-zero exit, and no sentinel is ever deleted, moved or
changed; nothing hangs. Then the faults: damaged state, a full disk, out of memory, two writers."""

import hashlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time

import pytest
import torch
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from unified_rl import cli, runs

FLAGS = {"none": [], "overwrite": ["--overwrite"], "resume": ["--resume"], "both": ["--overwrite", "--resume"]}
TRAIN = ["train", "sft", "--preset", "tiny", "--steps", "1", "--quiet"]


@pytest.fixture(autouse=True)
def uncapped(monkeypatch):
    """Every run here trains what it asks for (the cache is conftest.py's private_home_caches)."""
    monkeypatch.delenv("UNIFIED_RL_MAX_STEPS", raising=False)


@pytest.fixture(scope="module")
def a_run(private_home_caches, tmp_path_factory):
    """A finished one-step tiny SFT run folder, as `train` leaves it (copied into each sandbox)."""
    out = tmp_path_factory.mktemp("made") / "run"
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("UNIFIED_RL_CACHE", str(private_home_caches))
        assert outcome(*TRAIN, "--out", out) is None
    return out


def outcome(*argv):
    """None if `main` succeeded, else its one-line refusal (asserted: one line, non-zero exit)."""
    try:
        cli.main([str(a) for a in argv])
    except SystemExit as e:
        assert e.code not in (0, None), e.code
        text = e.code if isinstance(e.code, str) else f"exit status {e.code}"
        assert "\n" not in text.strip() and text.strip(), text
        return text
    return None


def make_sandbox(root, a_run):
    """The user's world: everything here but the run folder a case names must survive untouched."""
    (root / "repo" / ".git").mkdir(parents=True)
    (root / "repo" / ".git" / "HEAD").write_text("ref: refs/heads/main\n")
    (root / "repo" / "paper.tex").write_text("\\section{mine}\n")
    (root / "docs" / "sub").mkdir(parents=True)
    (root / "docs" / "notes.txt").write_text("my notes\n")
    (root / "docs" / "sub" / "draft.md").write_text("# draft\n")
    (root / "home").mkdir()
    (root / "home" / ".bashrc").write_text("export X=1\n")
    (root / "work").mkdir()
    (root / "work" / "todo.txt").write_text("todo\n")
    for name in ("other-run", "exp1", "exp[12]", "with-eval"):
        shutil.copytree(a_run, root / name)
    (root / "with-eval" / "eval.json").write_text('{"mine": true}\n')
    (root / "with-eval" / "checkpoint" / "NOTE").write_text("mine too\n")
    # an interrupted save of exp1 in the layout older versions left beside a folder: never ours to move
    shutil.copytree(a_run, root / ".exp1.new-999999999")
    (root / "link").symlink_to(root / "docs", target_is_directory=True)
    os.mkfifo(root / "fifo")
    (root / "file.txt").write_text("a file\n")
    (root / "empty").mkdir()


def snapshot(root, skip=None):
    """{relative path: (kind, content hash or link target)} of the whole tree, links not followed."""
    out = {}
    for d, dirs, files in os.walk(root):
        for name in dirs + files:
            path = os.path.join(d, name)
            rel = os.path.relpath(path, root)
            if skip and (rel == skip or rel.startswith(skip + os.sep)):
                continue
            if os.path.islink(path):
                out[rel] = ("link", os.readlink(path))
            elif os.path.isdir(path):
                out[rel] = ("dir", None)
            elif os.path.isfile(path):
                out[rel] = ("file", hashlib.sha1(open(path, "rb").read()).hexdigest())
            else:
                out[rel] = ("other", os.lstat(path).st_mode)
    return out


# --out value -> (the folder it names, relative to the sandbox, or None) and, per flag set, whether
# the run may proceed there; every other pairing must be refused.
CASES = {
    "": (None, {}), "   ": (None, {}),
    "new": ("new", {"none": True, "overwrite": True}),
    "new/deeper": ("new", {"none": True, "overwrite": True}),
    "empty": ("empty", {"none": True, "overwrite": True}),
    "other-run": ("other-run", {"overwrite": True, "resume": True}),
    "exp[12]": ("exp[12]", {"overwrite": True, "resume": True}),
    "exp1": ("exp1", {"overwrite": True, "resume": True}),
    "with-eval": ("with-eval", {"resume": True}),  # resume keeps eval.json; overwrite refuses it
    "docs": (None, {}), "repo": (None, {}), "link": (None, {}), "fifo": (None, {}),
    "file.txt": (None, {}), "file.txt/under": (None, {}), "home": (None, {}), ".": (None, {}),
    "..": (None, {}), "work": (None, {}), "/": (None, {}), "/proc/self": (None, {}), "/dev/null": (None, {}),
    "link/inside": ("docs/inside", {"none": True, "overwrite": True}),
}


@pytest.mark.slow
@pytest.mark.parametrize("flags", list(FLAGS))
def test_every_out_and_flag_trains_where_named_or_refuses_touching_nothing(flags, a_run, tmp_path, monkeypatch):
    for value, (target, allowed) in CASES.items():
        root = tmp_path / f"box-{len(os.listdir(tmp_path))}"
        root.mkdir()
        make_sandbox(root, a_run)
        monkeypatch.chdir(root / "work")
        monkeypatch.setenv("HOME", str(root / "home"))
        out = value if value.startswith("/") or not value.strip() else str(root / value)
        if value in (".", ".."):
            out = value
        before = snapshot(root, skip=target if allowed.get(flags) else None)
        user_files = {k: v for k, v in snapshot(root / target).items()} if target and os.path.isdir(root / target) \
            else {}
        msg = outcome(*TRAIN, "--out", out, *FLAGS[flags])
        after = snapshot(root, skip=target if allowed.get(flags) else None)
        assert after == before, (value, flags, msg, set(before) ^ set(after))
        if allowed.get(flags):
            assert msg is None, (value, flags, msg)
            folder = root / value  # through the link for link/inside
            assert runs.is_complete(folder) and runs.manifest(folder) is not None
            kept = snapshot(folder)
            own = set(runs.manifest(folder)) | {"checkpoint"}
            for rel, v in user_files.items():  # what the run did not write is still there, unchanged
                if rel not in own:
                    assert kept.get(rel) == v, (value, flags, rel)
        else:
            assert msg is not None, (value, flags)
        for sentinel in ("repo/.git/HEAD", "docs/notes.txt", "home/.bashrc", "work/todo.txt"):
            assert (root / sentinel).exists()
        assert not os.path.lexists(root / "work" / "checkpoint")
        assert os.path.exists("/dev/null") and not os.path.isdir("/dev/null")


def test_the_refusals_say_what_the_folder_is(a_run, tmp_path, monkeypatch):
    make_sandbox(tmp_path, a_run)
    monkeypatch.chdir(tmp_path / "work")
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    said = {(v, *f): outcome(*TRAIN, "--out", v if v in (".", "..") else tmp_path / v, *f)
            for v, f in [("docs", []), ("docs", ["--overwrite"]), ("other-run", []), ("with-eval", ["--overwrite"]),
                         ("link", ["--overwrite"]), ("fifo", []), ("repo", ["--overwrite"]), ("home", ["--overwrite"]),
                         (".", ["--overwrite"]), ("..", ["--overwrite"]), ("new", ["--resume", "--overwrite"]),
                         ("docs", ["--resume"]), ("file.txt", [])]}
    assert "is not a run folder" in said["docs",] and "already holds" not in said["docs",]
    assert "--overwrite replaces only a run folder" in said["docs", "--overwrite"]
    assert "holds no saved run state" in said["docs", "--resume"] and "not a run folder" in said["docs", "--resume"]
    assert "already holds a run" in said["other-run",]
    assert "did not write ('checkpoint/NOTE', 'eval.json')" in said["with-eval", "--overwrite"]
    assert "symbolic link" in said["link", "--overwrite"] and "not a plain folder" in said["fifo",]
    assert "is a file" in said["file.txt",]
    assert "repository root" in said["repo", "--overwrite"] and "home folder" in said["home", "--overwrite"]
    assert "current folder" in said[".", "--overwrite"] and "current folder" in said["..", "--overwrite"]
    assert "give one of them" in said["new", "--resume", "--overwrite"]
    for empty in ("", " \t"):
        assert outcome(*TRAIN, "--out", empty) == "exit status 2"


def test_resume_and_its_saves_keep_what_the_run_did_not_write(a_run, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(a_run, out)
    (out / "eval.json").write_text("mine")  # README: evaluate ... --out runs/grpo/eval.json
    (out / "checkpoint" / "NOTE").write_text("mine too")
    assert outcome("train", "sft", "--preset", "tiny", "--steps", "3", "--save-every", "1", "--quiet",
                   "--out", out, "--resume") is None
    assert (out / "eval.json").read_text() == "mine" and (out / "checkpoint" / "NOTE").read_text() == "mine too"
    summary = json.load(open(out / "summary.json"))
    assert summary["steps_done"] == 3 == len(open(out / "metrics.jsonl").readlines())
    assert "overwrite replaces only the run's own files" in outcome(*TRAIN, "--out", out, "--overwrite")
    assert (out / "eval.json").read_text() == "mine"


def test_a_name_with_brackets_recovers_only_itself(a_run, tmp_path):
    """`exp[12]`'s recovery must never touch `exp1` or a leftover beside it (no glob on names)."""
    for name in ("exp1", "exp[12]"):
        shutil.copytree(a_run, tmp_path / "p[a]" / name)
    shutil.copytree(a_run, tmp_path / "p[a]" / ".exp1.new-999999999")
    before = snapshot(tmp_path, skip=os.path.join("p[a]", "exp[12]"))
    assert outcome(*TRAIN, "--out", tmp_path / "p[a]" / "exp[12]", "--overwrite") is None
    assert snapshot(tmp_path, skip=os.path.join("p[a]", "exp[12]")) == before


def test_a_killed_runs_summary_says_the_steps_its_weights_have(tmp_path, monkeypatch):
    from unified_rl import loop
    real = loop.runs.save_run

    def die_after_first(run, replace=True):
        real(run, replace)
        raise KeyboardInterrupt

    monkeypatch.setattr(loop.runs, "save_run", die_after_first)
    msg = outcome("train", "sft", "--preset", "tiny", "--steps", "3", "--save-every", "1", "--quiet",
                  "--out", tmp_path / "run")
    assert msg.endswith("interrupted")
    summary = json.load(open(tmp_path / "run" / "summary.json"))
    assert summary["steps"] == 3 and summary["steps_done"] == 1


@pytest.fixture
def resumable(a_run, tmp_path):
    out = tmp_path / "run"
    shutil.copytree(a_run, out)
    return out


def resume(out, *more):
    return outcome(*TRAIN[:-3], "--steps", "2", "--quiet", "--out", out, "--resume", *more)


@pytest.mark.parametrize("summary", ["[]", "null", '"text"', '{"method": "sft"}'])
def test_a_damaged_summary_is_one_line(resumable, summary):
    data = json.load(open(resumable / "summary.json"))
    text = summary if summary != '{"method": "sft"}' else json.dumps({k: v for k, v in data.items() if k != "init"})
    (resumable / "summary.json").write_text(text)
    assert "is not a run this package saved, or it is damaged" in resume(resumable)


def test_a_state_of_another_model_size_or_with_missing_keys_is_one_line(resumable, tmp_path):
    state = torch.load(resumable / "state.pt", weights_only=True)
    bigger = {k: torch.zeros(v.shape[0] * 2, *v.shape[1:]) if v.dim() else v for k, v in state["ref"].items()}
    torch.save({**state, "ref": bigger}, resumable / "state.pt")
    assert "does not fit this run (another model size" in resume(resumable)
    torch.save({k: v for k, v in state.items() if k != "optimizer"}, resumable / "state.pt")
    assert "missing optimizer" in resume(resumable)
    torch.save({**state, "step": 5}, resumable / "state.pt")
    assert "state.pt is at step 5 but metrics.jsonl holds 1 rows" in resume(resumable)
    torch.save(state, resumable / "state.pt")
    from unified_rl.models import ModelConfig, build_policy, save_checkpoint
    from unified_rl.tokenizer import build_tokenizer
    tok = build_tokenizer()
    shutil.rmtree(resumable / "checkpoint")
    save_checkpoint(build_policy(tok, ModelConfig(n_layer=1, n_embd=64, n_head=2, n_positions=32)), tok,
                    resumable / "checkpoint")  # a sound checkpoint, of another size than its state.pt
    assert "does not fit this run (another model size" in resume(resumable)


def wrong_size_config(folder):
    cfg = json.load(open(folder / "checkpoint" / "config.json"))
    json.dump({**cfg, "n_embd": cfg["n_embd"] * 2}, open(folder / "checkpoint" / "config.json", "w"))


def test_a_config_of_another_size_is_our_one_line(resumable):
    wrong_size_config(resumable)
    assert "does not match the sizes of its weights" in resume(resumable)


@pytest.mark.slow
@pytest.mark.parametrize("command", ["train", "evaluate"])
def test_transformers_load_report_is_not_shown(resumable, tmp_path, command):
    """A real process: transformers' handler writes to the stderr it found first, which in-process
    capture cannot see."""
    wrong_size_config(resumable)
    argv = ((*TRAIN[:-3], "--steps", "2", "--out", resumable, "--resume") if command == "train" else
            ("evaluate", resumable / "checkpoint", "--preset", "tiny", "--k", "1", "--out", tmp_path / "e.json"))
    p = cli_process(*argv)
    _, err = p.communicate(timeout=300)
    assert p.returncode == 1 and "does not match the sizes of its weights" in err
    assert len(err.strip().splitlines()) == 1, err  # no LOAD REPORT, no MISMATCH table


def test_resume_refuses_what_changes_the_run(a_run, tmp_path):
    out = tmp_path / "dapo"
    assert outcome("train", "dapo", "--preset", "tiny", "--steps", "1", "--quiet", "--out", out) is None
    from unified_rl.trainer import train
    with pytest.raises(ValueError, match="hparams.clip_eps_high differ now"):
        train("dapo", preset="tiny", steps=2, out=str(out), resume=True, progress=False, clip_eps_high=0.5)
    assert "--init is not used by --resume" in outcome("train", "dapo", "--preset", "tiny", "--steps", "2", "--quiet",
                                                        "--out", out, "--resume", "--init", out / "checkpoint")
    shutil.copytree(a_run, tmp_path / "sft")
    summary = json.load(open(tmp_path / "sft" / "summary.json"))
    json.dump({**summary, "version": "0.0.1"}, open(tmp_path / "sft" / "summary.json", "w"))
    assert "saved by unified_rl 0.0.1" in resume(tmp_path / "sft")


def test_fewer_steps_than_done_are_refused(a_run, tmp_path):
    out = tmp_path / "run"
    assert outcome("train", "sft", "--preset", "tiny", "--steps", "2", "--quiet", "--out", out) is None
    assert "has done 2 steps; --steps 1 is fewer" in outcome(*TRAIN, "--out", out, "--resume")


def test_a_full_disk_during_a_save_is_one_line_and_keeps_the_old_run(resumable, monkeypatch):
    before = snapshot(resumable)

    def full(*a, **k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(runs.torch, "save", full)
    msg = outcome(*TRAIN, "--out", resumable, "--overwrite")
    assert "No space left on device" in msg
    assert snapshot(resumable) == before and runs.is_complete(resumable)


@pytest.mark.parametrize("error", [MemoryError, lambda: torch.OutOfMemoryError("CUDA out of memory. Tried")])
def test_out_of_memory_in_evaluate_is_one_line(a_run, tmp_path, monkeypatch, error):
    from unified_rl import evaluation

    def oom(*a, **k):
        raise error()

    monkeypatch.setattr(evaluation, "evaluate", oom)
    msg = outcome("evaluate", a_run / "checkpoint", "--preset", "tiny", "--k", "1", "--out", tmp_path / "e.json")
    assert "out of memory" in msg


@pytest.mark.parametrize("value", ["inf", "nan", "0", "-1", "-inf", "1e999"])
def test_a_temperature_must_be_finite_and_positive(a_run, tmp_path, value, capsys):
    assert outcome("evaluate", a_run / "checkpoint", "--preset", "tiny", "--k", "1", f"--temperature={value}",
                   "--out", tmp_path / "e.json") == "exit status 2"
    assert "expected a finite number > 0" in capsys.readouterr().err
    assert not (tmp_path / "e.json").exists()


@pytest.mark.parametrize("value", ["٣", "1_0", "+2", "2.0", "-1", "0x3", "²"])
def test_the_step_cap_takes_ascii_digits_only(tmp_path, monkeypatch, value):
    monkeypatch.setenv("UNIFIED_RL_MAX_STEPS", value)
    assert "ASCII digits only" in outcome(*TRAIN, "--out", tmp_path / "run")
    assert not (tmp_path / "run").exists()


def test_a_cap_that_changes_the_run_says_so(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("UNIFIED_RL_MAX_STEPS", " 1 ")
    assert outcome("train", "sft", "--preset", "tiny", "--steps", "3", "--quiet", "--out", tmp_path / "run") is None
    assert "UNIFIED_RL_MAX_STEPS=1 caps this sft run at 1 of 3 steps" in capsys.readouterr().err
    assert len(open(tmp_path / "run" / "metrics.jsonl").readlines()) == 1
    outcome(*TRAIN, "--out", tmp_path / "run2")
    assert "caps" not in capsys.readouterr().err  # a cap above the run's steps changes nothing: no word


def test_an_empty_cache_variable_is_unset_and_an_unwritable_cache_is_found_before_training(tmp_path, monkeypatch):
    from unified_rl import cache
    monkeypatch.setenv("UNIFIED_RL_CACHE", "")
    assert cache.cache_dir() == os.path.join(os.path.expanduser("~"), ".cache", "unified_rl")
    monkeypatch.setenv("UNIFIED_RL_CACHE", "  ")
    assert cache.cache_dir() != "  " and os.path.isabs(cache.cache_dir())
    (tmp_path / "a-file").write_text("x")
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "a-file" / "cache"))  # root cannot write there either
    trained = []
    monkeypatch.setattr(cache, "fit", lambda *a, **k: trained.append(1))
    msg = outcome("train", "grpo", "--preset", "tiny", "--steps", "1", "--quiet", "--out", tmp_path / "g")
    assert "cannot write" in msg and "UNIFIED_RL_CACHE" in msg and not trained
    assert not (tmp_path / "g").exists()


def test_users_sft_run_becomes_the_cache_entry(tmp_path, monkeypatch, capsys):
    from unified_rl import cache
    from unified_rl.presets import get_preset
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "cache"))
    assert outcome("train", "sft", "--preset", "tiny", "--quiet", "--out", tmp_path / "sft") is None
    entry = cache.entry(get_preset("tiny"), 0)
    assert runs.is_complete(entry)
    mine = open(tmp_path / "sft" / "checkpoint" / "model.safetensors", "rb").read()
    assert open(os.path.join(entry, "checkpoint", "model.safetensors"), "rb").read() == mine
    capsys.readouterr()
    assert outcome("train", "grpo", "--preset", "tiny", "--steps", "1", "--out", tmp_path / "g") is None
    assert "building the SFT model cache" not in capsys.readouterr().err  # started from the user's model
    assert outcome("train", "sft", "--preset", "tiny", "--steps", "1", "--quiet", "--seed", "3",
                   "--out", tmp_path / "short") is None
    assert not runs.is_complete(cache.entry(get_preset("tiny"), 3))  # a shorter run is not the model


@pytest.mark.slow
def test_an_adopted_entry_is_the_model_the_cache_would_have_trained(tmp_path, monkeypatch):
    from unified_rl import cache
    from unified_rl.presets import get_preset
    tiny = get_preset("tiny")
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "built"))
    built = open(os.path.join(cache.sft_checkpoint(tiny, 2, progress=False), "model.safetensors"), "rb").read()
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "adopted"))
    assert outcome("train", "sft", "--preset", "tiny", "--seed", "2", "--quiet", "--out", tmp_path / "sft") is None
    adopted = os.path.join(cache.entry(tiny, 2), "checkpoint", "model.safetensors")
    assert open(adopted, "rb").read() == built


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(name=st.text(st.sampled_from("ab[]*?-. é\\'"), min_size=1, max_size=6),
       contents=st.sampled_from(["absent", "empty", "user", "run", "run+user"]),
       flags=st.sampled_from(list(FLAGS)))
def test_any_name_and_contents_lose_no_user_file(a_run, tmp_path_factory, name, contents, flags):
    """Refusals are checked at once; a run that may proceed is not trained (fit is not reached):
    what is asserted is that nothing but the run's own files is ever touched."""
    root = tmp_path_factory.mktemp("prop")
    (root / "beside").mkdir()
    (root / "beside" / "keep.txt").write_text("keep")
    shutil.copytree(a_run, root / "beside-run")
    out = root / name
    if os.path.basename(str(out)) in ("", ".", "..") or not name.strip(". "):
        return
    if contents != "absent":
        out.mkdir(exist_ok=True)
    if "run" in contents:
        shutil.rmtree(out)
        shutil.copytree(a_run, out)
    if "user" in contents:
        (out / "mine.txt").write_text("mine")
    before = snapshot(root)
    try:
        runs.check_out(str(out), overwrite="--overwrite" in FLAGS[flags], resume="--resume" in FLAGS[flags])
        ok = True
    except ValueError as e:
        ok = False
        assert "\n" not in str(e)
    assert snapshot(root) == before
    expect = {"none": contents in ("absent", "empty"), "overwrite": contents in ("absent", "empty", "run"),
              "resume": "run" in contents, "both": False}[flags]
    assert ok == expect, (name, contents, flags)


def cli_process(*argv, **kw):
    return subprocess.Popen([sys.executable, "-m", "unified_rl", *map(str, argv)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env={**os.environ, "OMP_NUM_THREADS": "1"}, **kw)


@pytest.mark.slow
def test_two_writers_into_one_folder_exactly_one_proceeds(tmp_path):
    out = tmp_path / "run"
    argv = ("train", "sft", "--preset", "tiny", "--steps", "40", "--save-every", "1000", "--quiet", "--out", out)
    procs = [cli_process(*argv), cli_process(*argv)]
    results = [(p.wait(timeout=300), p.stderr.read()) for p in procs]
    codes = sorted(rc for rc, _ in results)
    assert codes[0] == 0 and codes[1] != 0, results
    err = [e for rc, e in results if rc][0]
    assert ("in use by another run" in err or "already holds a run" in err) and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert len(open(out / "metrics.jsonl").readlines()) == 40


def _steps_done(out):
    """The steps the run folder's weights have (0 while none is saved or a save is being moved in)."""
    try:
        return json.loads((out / "summary.json").read_text())["steps_done"]
    except (OSError, ValueError, KeyError):
        return 0


@pytest.mark.slow
def test_a_killed_writers_lock_is_not_stale_and_fifo_never_hangs(tmp_path):
    out = tmp_path / "run"
    p = cli_process("train", "sft", "--preset", "tiny", "--steps", "100000", "--save-every", "1", "--quiet",
                    "--out", out)
    deadline = time.time() + 120
    while not runs.is_complete(out) and time.time() < deadline:
        time.sleep(0.2)
    p.send_signal(signal.SIGKILL)
    p.wait(timeout=30)
    assert os.path.exists(out / runs.LOCK)  # the dead process's lock file: the kernel released its lock
    killed_at = _steps_done(out)
    r = cli_process("train", "sft", "--preset", "tiny", "--steps", "100000", "--save-every", "1", "--quiet",
                    "--out", out, "--resume")
    deadline = time.time() + 120  # it runs, the stale lock did not stop it: it saves a step beyond the kill
    while r.poll() is None and _steps_done(out) <= killed_at and time.time() < deadline:
        time.sleep(0.2)
    exited = r.poll() is not None
    r.kill()
    _, err = r.communicate(timeout=30)
    assert not exited and "in use" not in err, err
    assert _steps_done(out) > killed_at
    os.mkfifo(tmp_path / "fifo")
    f = cli_process("train", "sft", "--preset", "tiny", "--steps", "1", "--quiet", "--out", tmp_path / "fifo",
                    "--overwrite")
    _, err = f.communicate(timeout=120)
    assert f.returncode != 0 and "not a plain folder" in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("method,setting,value,says", [
    ("ppo", "epochs", 0, "rl.epochs must be > 0"), ("grpo", "lr", -1.0, "rl.lr must be > 0"),
    ("grpo", "lr", float("nan"), "rl.lr must be > 0"), ("sft", "lr", float("inf"), "sft.lr must be > 0"),
    ("grpo", "group_size", 0, "rl.group_size must be > 0"), ("grpo", "prompts_per_step", 0, "prompts_per_step"),
    ("grpo", "temperature", 0.0, "rl.temperature must be > 0"), ("ppo", "clip_eps", -0.1, "rl.clip_eps must be >= 0"),
    ("grpo", "beta", -1.0, "rl.beta must be >= 0"), ("ppo", "gamma", 1.5, "rl.gamma must be in [0, 1]"),
    ("ppo", "lam", -0.1, "rl.lam must be in [0, 1]"), ("ppo", "epochs", 1.5, "rl.epochs must be a whole number"),
    ("sft", "batch_size", 0, "sft.batch_size must be > 0")])
def test_settings_out_of_range_are_named_before_anything_runs(method, setting, value, says, tmp_path):
    from unified_rl.trainer import train
    with pytest.raises(ValueError, match=says.replace("[", r"\[").replace("]", r"\]")):
        train(method, preset="tiny", steps=1, progress=False, out=str(tmp_path / "run"), **{setting: value})
    assert not (tmp_path / "run").exists()


def test_fit_itself_refuses_zero_epochs():
    from unified_rl import loop
    from unified_rl.lab import make_lab
    from unified_rl.methods import get_method
    lab = make_lab("tiny")
    lab = __import__("dataclasses").replace(lab, preset=lab.preset.with_(rl={"epochs": 0}))
    with pytest.raises(ValueError, match="epochs .* must be a whole number >= 1, got 0"):
        loop.fit(get_method("grpo"), lab, None, 1, {}, progress=False)


def test_reproduce_refuses_to_overwrite_a_result(tmp_path):
    (tmp_path / "figure7.json").write_text('{"mine": 1}')
    msg = outcome("reproduce", "figure7", "--preset", "tiny", "--seeds", "1", "--quiet", "--out", tmp_path)
    assert "figure7.json exists; pass --overwrite" in msg
    assert (tmp_path / "figure7.json").read_text() == '{"mine": 1}'
    from unified_rl.experiments.common import check_result_free
    check_result_free("figure7", str(tmp_path), overwrite=True)  # the flag lets it through


def test_only_a_full_seed_run_becomes_the_result_the_notebooks_show(tmp_path, monkeypatch, capsys):
    import matplotlib.pyplot as plt
    from unified_rl.experiments import common
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "cache"))
    shipped = common.load_full("figure7", "cpu")
    assert shipped["seeds"] == common.SHIPPED_SEEDS and "shipped" in shipped["loaded_from"]
    plot = lambda r: plt.figure()  # noqa: E731
    common.write_result("figure7", str(tmp_path / "one"), {"seeds": 1, "x": 1}, plot, cache_key="cpu")
    assert "notebooks keep showing the 3-seed result" in capsys.readouterr().err
    assert not os.path.exists(common.cached_result_path("figure7", "cpu"))
    assert "shipped" in common.load_full("figure7", "cpu")["loaded_from"]
    os.makedirs(os.path.dirname(common.cached_result_path("figure7", "cpu")), exist_ok=True)
    json.dump({"seeds": 1}, open(common.cached_result_path("figure7", "cpu"), "w"))  # written by another way
    assert "shipped" in common.load_full("figure7", "cpu")["loaded_from"]
    common.write_result("figure7", str(tmp_path / "three"), {"seeds": 3, "x": 3}, plot, cache_key="cpu")
    assert common.load_full("figure7", "cpu")["x"] == 3
    with pytest.raises(ValueError, match="Out of range float values are not JSON compliant"):
        common.write_result("figure7", str(tmp_path / "nan"), {"seeds": 3, "x": float("inf")}, plot)


def test_the_notebooks_long_cells_show_a_bar_over_their_arms(capsys):
    from unified_rl.course import nb_policy_gradient as nb_policy, nb_preference
    assert list(nb_policy.arms(["grpo", "dapo"])) == ["grpo", "dapo"]
    assert "training the arms" in capsys.readouterr().err  # tqdm.auto: a text bar outside Jupyter
    assert list(nb_preference.arms({"a": 1}.items())) == [("a", 1)]
    assert "2/2" not in capsys.readouterr().err and nb_preference.arms is nb_policy.arms
    for nb, call in (("10_beyond_grpo", "nb_policy.arms("), ("11_preference_family", "nb_preference.arms(")):
        cells = json.load(open(os.path.join(os.path.dirname(__file__), "..", "course", f"{nb}.ipynb")))["cells"]
        assert any(call in "".join(c["source"]) and "train(" in "".join(c["source"]) for c in cells), nb


def test_building_the_sft_cache_says_so_with_a_labelled_bar(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("UNIFIED_RL_CACHE", str(tmp_path / "cache"))
    assert outcome("train", "grpo", "--preset", "tiny", "--steps", "1", "--out", tmp_path / "g") is None
    err = capsys.readouterr().err
    assert "building the SFT model cache for preset tiny seed 0 (first run only)" in err
    assert "SFT cache" in err and "evaluating: greedy on 16 questions, then sampling 4 answers" in err


REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def check_binder(*args, cwd=REPO, tmp):
    """scripts/check_binder.sh --dry-run with a stand-in Python that reports runtime.txt's version."""
    want = open(os.path.join(REPO, "binder", "runtime.txt")).read().strip().split("-")[1]
    fake = tmp / "fake-python"
    fake.write_text(f"#!/bin/sh\necho {want}\n")
    fake.chmod(0o755)
    return subprocess.run(["bash", os.path.join(REPO, "scripts", "check_binder.sh"), *map(str, args)], cwd=cwd,
                          capture_output=True, text=True, timeout=60, env={**os.environ, "PYTHON": str(fake)})


def test_the_binder_check_uses_the_environment_it_builds(tmp_path):
    venv = tmp_path / "abs venv"
    r = check_binder("--dry-run", venv, tmp=tmp_path)
    assert r.returncode == 0, r.stderr
    steps = [line for line in r.stdout.splitlines() if line.startswith("+ ")]
    assert f"environment {venv}" in r.stdout
    assert not [s for s in steps if "pip install" in s and not s.startswith(f"+ {venv}/bin/python -m pip install")]
    assert any(s.startswith(f"+ env PATH={venv}/bin:") and s.endswith("bash binder/postBuild") for s in steps)
    kernel = [s for s in steps if "ipykernel install" in s]
    assert kernel and "--sys-prefix" in kernel[0] and kernel[0].startswith(f"+ {venv}/bin/python")
    name = kernel[0].split("--name ")[1].split()[0]
    assert steps[-1].startswith(f"+ {venv}/bin/python -m pytest") and f"--nbval-kernel-name {name}" in steps[-1]
    assert not venv.exists()  # a dry run builds nothing
    rel = check_binder("--dry-run", "rel", cwd=tmp_path, tmp=tmp_path)
    assert f"environment {tmp_path}/rel" in rel.stdout
    assert check_binder("a", "b", tmp=tmp_path).returncode == 2


def test_the_binder_check_never_deletes_a_folder_it_did_not_build(tmp_path):
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "thesis.tex").write_text("years of work")
    r = check_binder(mine, tmp=tmp_path)
    assert r.returncode == 1 and "was not built by this script" in r.stderr
    assert (mine / "thesis.tex").read_text() == "years of work"


def test_make_lab_allows_root_only_as_root():
    r = subprocess.run(["make", "-n", "-W", ".venv/.course", "lab"], cwd=REPO, capture_output=True, text=True,
                       timeout=60)
    line = [x for x in r.stdout.splitlines() if "jupyter lab" in x]
    assert line, r.stdout + r.stderr
    assert ("--allow-root" in line[-1]) == (os.geteuid() == 0)


@pytest.mark.slow
def test_sigkill_at_random_moments_always_leaves_a_consistent_run_and_the_users_file(tmp_path):
    import random
    out, rng = tmp_path / "run", random.Random(0)
    argv = ("train", "sft", "--preset", "tiny", "--steps", "400", "--save-every", "1", "--quiet", "--out", out)
    for kill in range(4):
        p = cli_process(*argv, *(["--resume"] if kill else []))
        deadline = time.time() + 120
        while not runs.is_complete(out) and time.time() < deadline:
            time.sleep(0.05)
        if kill == 0:
            (out / "eval.json").write_text("mine")
        time.sleep(rng.uniform(0.0, 1.5))
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=30)
        runs.recover(str(out))  # what the next command does first
        assert runs.is_complete(out) and (out / "eval.json").read_text() == "mine"
        summary = json.load(open(out / "summary.json"))
        rows = len(open(out / "metrics.jsonl").readlines())
        state = runs.load_state(str(out))
        assert summary["steps_done"] == rows == state["step"] and summary["steps"] == 400
        assert not (out / runs.STAGE).exists()
        assert sorted(runs.manifest(str(out))) == sorted(
            os.path.relpath(os.path.join(d, f), out) for d, _, fs in os.walk(out) for f in fs
            if f not in ("eval.json", runs.LOCK))


def test_a_metric_that_is_not_finite_is_named_and_the_last_save_kept(resumable):
    from unified_rl.trainer import train
    run = train("sft", preset="tiny", steps=1, progress=False)
    run.out, run.metrics[0]["coef_std"] = str(resumable), float("nan")
    before = snapshot(resumable)
    with pytest.raises(ValueError, match=r"step 1's metrics are not finite \(coef_std\)"):
        runs.save_run(run)
    assert snapshot(resumable) == before


def test_reproduce_says_what_its_long_phases_do(tmp_path, monkeypatch, capsys):
    from unified_rl import experiments
    from unified_rl.experiments import common
    from unified_rl.lab import make_lab
    lab = make_lab("tiny")

    def fake(preset, out, seeds, progress):  # an experiment's evaluation phase, in seconds not minutes
        common.evaluate_policy(lab.policy, lab.tokenizer, lab.test_problems, 2, 2)
        return {"headline": {}}

    monkeypatch.setitem(experiments.EXPERIMENTS, "figure7", fake)
    monkeypatch.setitem(common.PHASES, "on", False)
    assert outcome("reproduce", "figure7", "--preset", "tiny", "--out", tmp_path) is None
    assert "evaluating: greedy on 16 questions, then sampling 2 answers to each of 2" in capsys.readouterr().err
    assert outcome("reproduce", "figure7", "--preset", "tiny", "--out", tmp_path, "--quiet") is None
    assert "evaluating" not in capsys.readouterr().err
