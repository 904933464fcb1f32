"""Package text the Chinese edition still shows in English, listed so that it cannot lag silently.

A method's summary (catalogue key `method.summary.NAME`, area `#: methods` of the .po files in
unified_rl/course/locale/) and a derivation's notes, claims and case labels (English templates, area
`#: derivations` of the zh .po) each need Chinese. Whoever adds such text without writing Chinese lists it here instead: the tests then
accept the missing translation (the Chinese edition shows the English), and every test run's summary and
`python scripts/zh_sync.py --status` (exit 1) name each entry until a translator moves it into its
catalogue and deletes it here. An entry that already has Chinese fails tests/test_package_text.py.
"""

TO_TRANSLATE = {
    # "method.summary.NAME": "the method's summary, as in its Method",
    # "An English template of a derivation's {field}": "the derivation it belongs to",
}


def report():
    """Lines naming each entry still to translate (none when the edition is complete)."""
    if not TO_TRANSLATE:
        return []
    return [f"{len(TO_TRANSLATE)} package text(s) await Chinese (unified_rl/course/to_translate.py):"] + \
        [f"  {key!r} ({where})" for key, where in TO_TRANSLATE.items()]
