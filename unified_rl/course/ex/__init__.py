"""Exercises, one module per notebook (`nb01_sft`, ...); `example` shows the pattern.

A notebook does `from unified_rl.course.ex.nb01_sft import q1, q2` and calls `q1.check()`.
`exercises.exercises_in(module)` lists a module's exercises for the generic checker tests.
"""
