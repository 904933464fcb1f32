"""torchrun's environment, read before a rank waits for the others: an incomplete one, or a rank 0 that
is not there, ends in one line instead of a silent one-process run or a traceback after the timeout.

torchrun (and `accelerate launch`) sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT in
every rank; rank 0's launcher listens at MASTER_ADDR:MASTER_PORT (torch.distributed's TCP store).
"""

import os
import socket
import time

VARIABLES = ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_ADDR", "MASTER_PORT")
START = "start every rank with torchrun (it sets RANK, LOCAL_RANK, WORLD_SIZE, MASTER_ADDR and MASTER_PORT)"


def environment():
    """(rank, world size, local rank) of the launch the environment describes; None outside one
    (neither RANK nor a WORLD_SIZE above 1); ValueError naming what an incomplete one lacks."""
    env = {k: os.environ.get(k, "").strip() for k in VARIABLES}
    if not env["RANK"] and env["WORLD_SIZE"] in ("", "1"):
        return None
    for k in ("RANK", "LOCAL_RANK", "WORLD_SIZE", "MASTER_PORT"):
        if env[k] and not env[k].isdigit():
            raise ValueError(f"{k} must be a whole number, got {env[k]!r}; {START}")
    missing = [k for k in VARIABLES if not env[k]]
    if missing:
        said = f"WORLD_SIZE={env['WORLD_SIZE']}" if env["WORLD_SIZE"] else f"RANK={env['RANK']}"
        raise ValueError(f"{said} describes a distributed launch, but {', '.join(missing)} "
                         f"{'is' if len(missing) == 1 else 'are'} not set: {START}, or unset RANK and "
                         "WORLD_SIZE to train in one process")
    rank, size, local = int(env["RANK"]), int(env["WORLD_SIZE"]), int(env["LOCAL_RANK"])
    if not 0 <= rank < size:
        raise ValueError(f"RANK={rank} is not below WORLD_SIZE={size}: {START}")
    return rank, size, local


def wait_for_rank_0(rank, size, timeout):
    """Return once rank 0's launcher accepts a connection at MASTER_ADDR:MASTER_PORT; ValueError (one line)
    if it did not within `timeout` seconds. Rank 0 itself returns at once."""
    if rank == 0:
        return
    addr, port = os.environ["MASTER_ADDR"].strip(), int(os.environ["MASTER_PORT"])
    deadline = time.monotonic() + timeout
    while True:
        try:
            socket.create_connection((addr, port), timeout=max(0.1, min(5.0, deadline - time.monotonic()))).close()
            return
        except socket.gaierror:
            raise ValueError(f"rank {rank} of {size}: MASTER_ADDR={addr} is not a host name this machine can "
                             "resolve; give rank 0's address") from None
        except OSError:  # refused (nothing listens yet) or timed out
            if time.monotonic() >= deadline:
                raise ValueError(f"rank {rank} of {size} could not reach rank 0 at {addr}:{port} within {timeout} s: "
                                 f"{START}, and check that MASTER_ADDR and MASTER_PORT name rank 0") from None
            time.sleep(0.25)


def joined_failed(rank, size, timeout, error):
    """The one line for a process group that could not be formed (torch's DistNetworkError, DistStoreError)."""
    where = f"{os.environ.get('MASTER_ADDR', '').strip()}:{os.environ.get('MASTER_PORT', '').strip()}"
    first = (str(error).strip().splitlines() or [""])[0][:200]
    who = (f"rank 0 of {size} waited for the other ranks" if rank == 0
           else f"rank {rank} of {size} could not join rank 0")
    return ValueError(f"{who} at {where} for up to {timeout} s and the process group was not formed "
                      f"({type(error).__name__}: {first}): {START}")
