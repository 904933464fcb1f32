"""A training run killed right after one of its saves: what the resume tests interrupt."""

from unified_rl import loop


def killed(fn, after=2):
    """fn() with a KeyboardInterrupt raised right after the run folder's save of step `after` (the save itself
    completes, as when a process is killed between two steps); the exception that stopped fn, or None."""
    real = loop.runs.save_run

    def save_then_die(run, replace=True):
        done = real(run, replace)
        if len(run.metrics) == after:
            raise KeyboardInterrupt
        return done

    loop.runs.save_run = save_then_die
    try:
        fn()
    except (KeyboardInterrupt, SystemExit) as e:  # a rank of a distributed run may leave by SystemExit
        return e
    finally:
        loop.runs.save_run = real
    return None
