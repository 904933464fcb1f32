"""The course's shared helpers: exercises with checks, coefficient explorers, plots, student copies.

The notebooks under `course/` import these; none of them re-implements the package: every number a
widget or checker shows is computed by `unified_rl`'s own functions.
"""
