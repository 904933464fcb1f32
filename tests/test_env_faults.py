"""A fresh machine's launch environment (launch.py, distributed.init): a WORLD_SIZE without the rest of
torchrun's variables, or a rank whose rank 0 never starts, ends in one line and a non-zero exit before
anything is trained or written, and fast (UNIFIED_RL_DIST_TIMEOUT=1), not in a silent one-process run
or a 66-line DistNetworkError traceback after the timeout."""

import os
import socket
import subprocess
import sys
import time

import pytest
import torch.distributed as dist
from test_hostile_cli import outcome  # one line and a non-zero exit, asserted

from unified_rl import distributed, launch

TRAIN = ["train", "sft", "--preset", "tiny", "--steps", "1", "--quiet"]
LAUNCH = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")


@pytest.fixture
def env(monkeypatch):
    """Set the launch variables given (the others unset) and a 1 s rendezvous; returns the setter."""
    monkeypatch.delenv("UNIFIED_RL_MAX_STEPS", raising=False)
    monkeypatch.setenv("UNIFIED_RL_DIST_TIMEOUT", "1")

    def set_(**values):
        for k in LAUNCH:
            monkeypatch.delenv(k, raising=False)
        for k, v in values.items():
            monkeypatch.setenv(k, str(v))
    return set_


def free_port():
    """A TCP port nothing listens on (bound once and released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("given,missing", [
    ({"WORLD_SIZE": 2}, "RANK, LOCAL_RANK, MASTER_ADDR, MASTER_PORT are not set"),
    ({"WORLD_SIZE": 2, "RANK": 1, "LOCAL_RANK": 1, "MASTER_ADDR": "127.0.0.1"}, "MASTER_PORT is not set"),
    ({"RANK": 0}, "LOCAL_RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT are not set"),
], ids=["world-size-alone", "no-master-port", "rank-alone"])
def test_an_incomplete_launch_is_refused_naming_what_it_lacks(env, tmp_path, given, missing):
    """WORLD_SIZE=2 without RANK trained silently as one process; now the missing variables are named."""
    env(**given)
    out = tmp_path / "run"
    msg = outcome(*TRAIN, "--out", out)
    assert msg and missing in msg and "torchrun" in msg
    assert not out.exists() and not dist.is_initialized() and distributed.current() is None
    with pytest.raises(ValueError, match=missing):  # the Python API joins the ranks the same way
        distributed.init()


@pytest.mark.parametrize("given,said", [
    ({"RANK": 2, "WORLD_SIZE": 2}, "RANK=2 is not below WORLD_SIZE=2"),
    ({"RANK": "one", "WORLD_SIZE": 2}, "RANK must be a whole number, got 'one'"),
], ids=["rank-too-high", "rank-not-a-number"])
def test_an_inconsistent_launch_is_refused(env, given, said):
    env(**given, LOCAL_RANK=0, MASTER_ADDR="127.0.0.1", MASTER_PORT=29500)
    with pytest.raises(ValueError, match=said):
        launch.environment()


def test_no_launch_or_a_world_of_one_is_one_process(env):
    env()
    assert launch.environment() is None
    env(WORLD_SIZE=1)
    assert launch.environment() is None
    env(RANK=1, LOCAL_RANK=1, WORLD_SIZE=4, MASTER_ADDR="h", MASTER_PORT=29500)
    assert launch.environment() == (1, 4, 1)


def test_a_rank_whose_rank_0_never_starts_says_so_within_the_timeout(env, tmp_path):
    port = free_port()
    env(WORLD_SIZE=2, RANK=1, LOCAL_RANK=1, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    out = tmp_path / "run"
    start = time.monotonic()
    msg = outcome(*TRAIN, "--out", out)
    assert msg and f"rank 1 of 2 could not reach rank 0 at 127.0.0.1:{port} within 1 s" in msg, msg
    assert "start every rank with torchrun" in msg
    assert time.monotonic() - start < 30 and not out.exists() and not dist.is_initialized()


def test_a_rank_0_whose_peers_never_start_says_so_within_the_timeout(env, tmp_path):
    port = free_port()
    env(WORLD_SIZE=2, RANK=0, LOCAL_RANK=0, MASTER_ADDR="127.0.0.1", MASTER_PORT=port)
    start = time.monotonic()
    msg = outcome(*TRAIN, "--out", tmp_path / "run")
    assert msg and f"rank 0 of 2 waited for the other ranks at 127.0.0.1:{port} for up to 1 s" in msg, msg
    assert time.monotonic() - start < 30 and not dist.is_initialized()


def test_the_lone_rank_as_a_user_starts_it_is_one_line_on_stderr(tmp_path):
    """The command as typed (a process of its own): exit status 1, one line, no traceback."""
    env = {k: v for k, v in os.environ.items() if k not in LAUNCH}
    env.update(WORLD_SIZE="2", RANK="1", LOCAL_RANK="1", MASTER_ADDR="127.0.0.1", MASTER_PORT=str(free_port()),
               UNIFIED_RL_DIST_TIMEOUT="1", OMP_NUM_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "unified_rl", *TRAIN, "--out", str(tmp_path / "run")],
                          capture_output=True, text=True, env=env, timeout=300)
    lines = done.stderr.strip().splitlines()
    assert done.returncode == 1 and len(lines) == 1, done.stderr
    assert "could not reach rank 0" in lines[0] and not (tmp_path / "run").exists()
