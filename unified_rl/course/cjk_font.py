"""The Chinese figures' font: a CJK font installed on the machine if matplotlib finds one, else the subset
of WenQuanYi Micro Hei (Apache-2.0) shipped in `unified_rl/course/fonts/`, so Chinese labels never
show as boxes (built by scripts/make_cjk_font.py; tests/test_cjk_font.py checks its coverage)."""

import os

FONT_DIR = os.path.join(os.path.dirname(__file__), "fonts")
SHIPPED = os.path.join(FONT_DIR, "wqy-microhei-subset.ttf")
SHIPPED_FAMILY = "WenQuanYi Micro Hei Subset"
# CJK fonts matplotlib may find, most complete first (Debian: fonts-noto-cjk, fonts-wqy-microhei, fonts-wqy-zenhei)
SYSTEM_FONTS = ("Noto Sans CJK SC", "Noto Sans CJK JP", "Noto Sans SC", "Source Han Sans SC", "WenQuanYi Micro Hei",
                "WenQuanYi Zen Hei", "SimHei", "Microsoft YaHei", "PingFang SC", "Heiti SC", "AR PL UMing CN")
_FILE_HINTS = ("cjk", "wqy", "sourcehan", "simhei", "msyh", "pingfang", "uming")


def package_chinese_text():
    """All the Chinese the package can show (its message catalogue and its sentences), as one string."""
    from .catalogue import mo_entries, path  # the compiled zh catalogue itself (i18n imports this module)
    with open(path("zh", "mo"), "rb") as f:
        return "\n".join(zh for zh in mo_entries(f.read()).values() if zh)


def cjk_families():
    """The CJK font families to append to matplotlib's font.family: the system's, then the shipped subset.

    Registers what it finds with matplotlib's font manager (fonts installed after matplotlib built its
    cache, and the shipped file); returns [] only when no system font exists and the shipped file is gone."""
    from matplotlib import font_manager
    fm = font_manager.fontManager
    names = {f.name for f in fm.ttflist}
    if not names.intersection(SYSTEM_FONTS):  # installed after matplotlib's font cache was built: add them
        for path in font_manager.findSystemFonts():
            if any(k in os.path.basename(path).lower() for k in _FILE_HINTS):
                try:
                    fm.addfont(path)
                except (OSError, RuntimeError, ValueError):  # an unreadable font file: skip it
                    continue
        names = {f.name for f in fm.ttflist}
    found = [n for n in SYSTEM_FONTS if n in names]
    if SHIPPED_FAMILY not in names and os.path.exists(SHIPPED):
        fm.addfont(SHIPPED)
        names.add(SHIPPED_FAMILY)
    if SHIPPED_FAMILY in names:
        found.append(SHIPPED_FAMILY)
    return found
