"""The command line answers --help, `methods` and any argument error from the shipped catalogue, without
importing torch, transformers, NumPy or the registries; the catalogue is the registries' own; a typo
gets the closest name; `evaluate --out` to a place that cannot be written is refused before anything
is loaded, and the probe leaves nothing behind. (bench/cli_startup.py times these commands.)"""

import json
import os
import subprocess
import sys

import pytest

from unified_rl import catalogue, cli, cli_args

HEAVY = ("torch", "transformers", "numpy", "huggingface_hub", "tokenizers", "safetensors")
REGISTRIES = ("unified_rl.methods", "unified_rl.presets", "unified_rl.experiments", "unified_rl.worlds",
              "unified_rl.trainer", "unified_rl.distributed")

# `python -m unified_rl ARGS` run by runpy in a fresh interpreter, which then writes the modules it
# imported to the file named first (the exit status and output are the command's own)
PROBE = """
import json, runpy, sys
record, sys.argv = sys.argv[1], ["unified_rl", *sys.argv[2:]]
try:
    runpy.run_module("unified_rl", run_name="__main__", alter_sys=True)
finally:
    with open(record, "w") as f:
        json.dump(sorted(sys.modules), f)
"""


def fresh(*args, tmp_path):
    """(the finished process, the modules it imported): `python -m unified_rl ARGS` in a new interpreter."""
    record = os.path.join(tmp_path, "modules.json")
    r = subprocess.run([sys.executable, "-c", PROBE, record, *map(str, args)], capture_output=True, text=True,
                       timeout=120)
    with open(record) as f:
        return r, json.load(f)


def heavy(modules):
    return [m for m in modules if m.split(".")[0] in HEAVY or m in REGISTRIES]


@pytest.mark.parametrize("args", [["--help"], ["methods"], ["methods", "--help"], ["train", "--help"],
                                  ["evaluate", "--help"], ["reproduce", "--help"], ["train", "gpro"],
                                  ["train", "grpo", "--stpes", "3", "--out", "x"], ["trian"],
                                  ["evaluate", "ckpt", "--k", "1,a", "--out", "e.json"]])
def test_help_methods_and_argument_errors_import_nothing_heavy(args, tmp_path):
    r, modules = fresh(*args, tmp_path=tmp_path)
    assert r.returncode == (2 if any(a in args for a in ("gpro", "--stpes", "trian", "1,a")) else 0), r.stderr
    assert heavy(modules) == [], heavy(modules)
    assert "unified_rl.catalogue" in modules  # the names came from the shipped file
    assert "Traceback" not in r.stderr and len(r.stderr.strip().splitlines()) <= 1


def test_the_shipped_catalogue_is_the_registries():
    """catalogue.json equals what the live registries give; a stale one fails here (rerun
    `python -m unified_rl.catalogue --write`)."""
    assert catalogue.shipped() == catalogue.build()


def test_a_drifted_catalogue_is_caught(tmp_path, monkeypatch):
    """The check sees one changed summary, a missing method and a preset of another kind."""
    live = catalogue.build()
    for change in (lambda s: s["methods"][5].update(summary="something else"), lambda s: s["methods"].pop(),
                   lambda s: s["presets"][0].update(kind="pretrained")):
        drifted = json.loads(json.dumps(live))
        change(drifted)
        path = tmp_path / "catalogue.json"
        path.write_text(json.dumps({"sections": drifted}))
        assert catalogue.shipped(str(path)) != live
        monkeypatch.setattr(catalogue, "PATH", str(path))
        with pytest.raises(SystemExit, match="differs from the registries"):
            catalogue.main(["--check"])


def test_a_fresh_process_lists_what_the_registries_list(tmp_path, capsys):
    """`methods` from the shipped file (a new interpreter) prints what it prints from the live registries."""
    import unified_rl.methods  # noqa: F401 (imported: this process reads the registries live)
    cli.main(["methods"])
    live = capsys.readouterr().out
    r, modules = fresh("methods", tmp_path=tmp_path)
    assert r.stdout == live and "unified_rl.methods" not in modules
    assert "dpo_loss = sigmoid | hinge" in live and "grpo-passk" in live


def error_of(capsys, *argv):
    with pytest.raises(SystemExit) as e:
        cli.main([str(a) for a in argv])
    err = capsys.readouterr().err
    assert e.value.code == 2 and len(err.strip().splitlines()) == 1, err
    return err.strip()


@pytest.mark.parametrize("argv, says", [
    (["train", "gpro", "--out", "x"], "train: error: argument METHOD: invalid choice: 'gpro' (did you mean 'grpo'?)"),
    (["train", "grpo-proces", "--out", "x"], "(did you mean 'grpo-process'?)"),
    (["train", "grpo", "--stpes", "3", "--out", "x"],
     "train: error: unrecognized arguments: --stpes 3 (did you mean --steps?)"),
    (["train", "grpo", "--stpes=3", "--out", "x"], "(did you mean --steps?)"),
    (["evaluate", "c", "--smaples", "3", "--out", "x"], "evaluate: error: unrecognized arguments: --smaples 3 "
                                                         "(did you mean --samples?)"),
    (["train", "grpo", "--stpes", "3", "--sede", "1", "--out", "x"],
     "(--stpes: did you mean --steps?) (--sede: did you mean --seed?)"),
    (["train", "grpo", "--preset", "cpy", "--out", "x"], "argument --preset: invalid choice: 'cpy' (did you mean 'cpu'?)"),
    (["reproduce", "figure-7", "--out", "x"], "argument NAME: invalid choice: 'figure-7' (did you mean 'figure7'?)"),
    (["reproduce", "figure7", "--preset", "llm-cpy", "--out", "x"], "invalid choice: 'llm-cpy' (choose from 'cpu', "),
    (["trian"], "unified_rl: error: argument command: invalid choice: 'trian' (did you mean 'train'?)"),
    (["evalute"], "(did you mean 'evaluate'?)"),
    (["train", "dpp", "--out", "x"], "invalid choice: 'dpp' (did you mean 'dppo'?)"),  # one letter short of a row
    (["train", "xyz", "--out", "x"], "invalid choice: 'xyz' (choose from 'sft', 'rft', "),
    (["train", "grpo", "--out", "x", "--bogus"], "unrecognized arguments: --bogus (see --help)"),  # not "--out"
    (["train", "grpo", "--out", "x", "-v"], "unrecognized arguments: -v (see --help)"),
])
def test_a_typo_gets_the_closest_name_in_one_line(argv, says, capsys):
    assert says in error_of(capsys, *argv)


def test_a_suggestion_prefers_a_transposition_and_names_a_tie():
    names = ["gspo", "grpo", "gmpo", "gdpo"]  # difflib rates "gpro" equally close to all four
    assert cli_args.suggest("gpro", names) == "did you mean 'grpo'?"
    assert cli_args.suggest("gxpo", names) == "did you mean 'gspo' or 'grpo' or 'gmpo' or 'gdpo'?"
    assert cli_args.suggest("zzz", names) == ""


@pytest.fixture
def nothing_loaded(monkeypatch):
    """`evaluate` fails the test if it gets as far as choosing the questions or loading a model."""
    from unified_rl import worlds

    def loaded(*a, **k):
        raise AssertionError("evaluate went past its --out check")
    for name in ("evaluation_preset", "splits_of"):  # the first two things it asks of worlds.py
        monkeypatch.setattr(worlds, name, loaded)
    monkeypatch.setattr(cli, "_evaluate", loaded)


def listing(folder):
    return sorted(os.path.relpath(os.path.join(d, f), folder) for d, ds, fs in os.walk(folder) for f in ds + fs)


def refusal(*argv):
    with pytest.raises(SystemExit) as e:
        cli.main([str(a) for a in argv])
    assert isinstance(e.value.code, str) and "\n" not in e.value.code
    return e.value.code


def test_an_unwritable_out_is_refused_before_anything_is_loaded(nothing_loaded, tmp_path):
    (tmp_path / "a-file").write_text("mine")
    before = listing(tmp_path)
    assert "a-file is not a folder" in refusal("evaluate", "ckpt", "--out", tmp_path / "a-file" / "sub" / "e.json")
    assert "a-file is not a folder" in refusal("evaluate", "ckpt", "--out", tmp_path / "a-file" / "e.json")
    assert "is a folder; give a file name such as" in refusal("evaluate", "ckpt", "--out", tmp_path)
    if os.path.isdir("/proc/self"):  # a kernel's folder: no file can be made in it
        assert "cannot be written: creating a file in /proc" in refusal("evaluate", "ckpt", "--out", "/proc/x/e.json")
    assert listing(tmp_path) == before and (tmp_path / "a-file").read_text() == "mine"
    with pytest.raises(AssertionError, match="went past"):  # a writable --out does get that far
        cli.main(["evaluate", "ckpt", "--out", str(tmp_path / "new" / "e.json")])
    assert listing(tmp_path) == before


@pytest.fixture
def read_only_folder(tmp_path):
    """A folder this user may not create a file in: one made read-only; as root, who writes in any
    folder, the kernel's /sys/kernel (sysfs makes no files, whoever asks)."""
    if os.geteuid() != 0:
        ro = tmp_path / "ro"
        ro.mkdir()
        ro.chmod(0o555)
        yield str(ro)
        ro.chmod(0o755)
    elif os.path.isdir("/sys/kernel"):
        yield "/sys/kernel"
    else:
        pytest.skip("as root, with no /sys/kernel: no folder here refuses a new file")


@pytest.mark.parametrize("out", ["e.json", "new/deeper/e.json"])
def test_a_read_only_folder_is_refused_in_one_line_before_torch_is_imported(read_only_folder, out, tmp_path):
    ro, before = read_only_folder, sorted(os.listdir(read_only_folder))
    r, modules = fresh("evaluate", "ckpt", "--out", os.path.join(ro, out), tmp_path=tmp_path)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1, r.stderr
    assert r.stderr.startswith(f"python -m unified_rl evaluate: error: --out {os.path.join(ro, out)} cannot be "
                               f"written: creating a file in {ro}: "), r.stderr  # then the system's reason
    assert heavy(modules) == [] and sorted(os.listdir(ro)) == before


@pytest.mark.parametrize("tmpfile", ["O_TMPFILE", "a named file"])
def test_the_probe_leaves_no_file_and_changes_none(tmpfile, tmp_path, monkeypatch):
    if tmpfile != "O_TMPFILE":  # a system without it: the probe's own named file, removed
        monkeypatch.delattr(os, "O_TMPFILE", raising=False)
    (tmp_path / "old.json").write_text("kept")
    os.utime(tmp_path / "old.json", (1e9, 1e9))
    before = listing(tmp_path)
    cli_args.check_writable(str(tmp_path / "e.json"))
    cli_args.check_writable(str(tmp_path / "a" / "b" / "e.json"))
    cli_args.check_writable(str(tmp_path / "old.json"))  # replaced at the end: opened now, not truncated
    assert listing(tmp_path) == before and (tmp_path / "old.json").read_text() == "kept"
    assert os.stat(tmp_path / "old.json").st_mtime == 1e9
