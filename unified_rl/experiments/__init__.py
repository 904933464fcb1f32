"""DeepSeekMath §5.2.2 and §5.2.3 as experiments on the lab: `python -m unified_rl reproduce NAME`.

Each experiment is a function (preset, out, seeds, progress) -> dict that writes OUT/NAME.json and
OUT/NAME.png; the dict's "headline" holds the numbers worth printing.
"""

EXPERIMENTS = {}
