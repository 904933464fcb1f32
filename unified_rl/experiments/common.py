"""What the §5.2 experiments share, in one import (`from . import common`; the notebooks use it too).

It is three modules, one job each:
- `runner`: budgets per preset, the arguments every experiment takes, the SFT model each seed starts
  from, RL labs on a chosen question pool, timing and progress, and `Experiment` (`begin`, `seed_labs`,
  `finish`), what every `run()` shares;
- `measure`: Pass@K / Maj@K curves, greedy accuracy, statistics over seeds;
- `records`: provenance, writing NAME.json and NAME.png, and loading a cached or shipped result.
"""

from .measure import evaluate_policy, fmt, mean_curves, pass_maj_curve, powers_of_two, stats
from .records import (REVIVED, SHIPPED, SHIPPED_SEEDS, cached_result_path, check_result_free, cpu_kernels,
                      load_cached, load_full, load_shipped, provenance, write_result)
from .runner import (PHASES, Clock, Experiment, Progress, begin, check_fits, check_run_args, lab_on, phase,
                     pick_budget, sft_model, sft_preset)

__all__ = ["evaluate_policy", "fmt", "mean_curves", "pass_maj_curve", "powers_of_two", "stats", "REVIVED",
           "SHIPPED", "SHIPPED_SEEDS", "cached_result_path", "check_result_free", "cpu_kernels", "load_cached",
           "load_full", "load_shipped", "provenance", "write_result", "PHASES", "Clock", "Experiment", "Progress",
           "begin", "check_fits", "check_run_args", "lab_on", "phase", "pick_budget", "sft_model", "sft_preset"]
