"""Notebook 09's tables are read from the package: every registered method appears exactly once."""

import re

from unified_rl.course import nb_summary
from unified_rl.methods import METHODS


def test_the_two_tables_cover_every_method_once():
    paper = [r["method"] for r in nb_summary.gc_rows(check=False)]
    later = [r["method"] for r in nb_summary.later_rows()]
    assert sorted(paper + later) == sorted(METHODS) and not set(paper) & set(later)
    assert {"dr-grpo", "dapo", "gspo", "cispo", "rloo", "ipo", "simpo", "kto", "orpo"} <= set(later)


def test_later_rows_name_each_paper_and_keep_the_markdown_table_whole():
    rows = nb_summary.later_rows()
    assert all("arXiv" in r["paper"] for r in rows)
    table = nb_summary.markdown_table(rows).splitlines()
    bars = lambda line: len(re.findall(r"(?<!\\)\|", line))  # unescaped | only
    # an unescaped | inside a cell (e.g. "1/|o|") would split it into more columns
    assert all(bars(line) == bars(table[0]) for line in table[2:])
