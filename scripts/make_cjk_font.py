"""Build the Chinese figures' font: a subset of WenQuanYi Micro Hei (Apache-2.0) shipped in the package.

    python scripts/make_cjk_font.py /usr/share/fonts/truetype/wqy/wqy-microhei.ttc

(the .ttc is in Debian's `fonts-wqy-microhei`; `apt-get download fonts-wqy-microhei` and `dpkg -x` it
anywhere). The subset keeps the 3,755 common characters of GB 2312 level 1, every character of the
package's Chinese text and of the Chinese notebooks, CJK punctuation and full-width forms, and ASCII;
hinting is dropped (figures are drawn anti-aliased). It is renamed "WenQuanYi Micro Hei Subset" so it
never shadows a full install of the font. tests/test_cjk_font.py checks that it covers every character
the package's Chinese can put on a figure; rerun this script when it fails.
"""

import glob
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
OUT = os.path.join(ROOT, "unified_rl", "course", "fonts", "wqy-microhei-subset.ttf")
FAMILY = "WenQuanYi Micro Hei Subset"


def gb2312_level1():
    """The 3,755 most common Chinese characters (GB 2312 level 1, rows 16-55), and GB 2312's symbols (rows 1-9)."""
    chars = set()
    for hi in list(range(0xA1, 0xAA)) + list(range(0xB0, 0xD8)):
        for lo in range(0xA1, 0xFF):
            try:
                chars.add(bytes([hi, lo]).decode("gb2312"))
            except UnicodeDecodeError:
                continue
    return chars


def course_chars():
    """Every non-ASCII character of the package's Chinese text and of the Chinese notebooks and docs."""
    from unified_rl.course.cjk_font import package_chinese_text
    text = package_chinese_text()
    for path in glob.glob(os.path.join(ROOT, "course", "zh", "*")):
        with open(path, encoding="utf-8") as f:
            text += f.read()
    return {c for c in text if ord(c) > 0x7F}


def main(source):
    from fontTools import subset
    from fontTools.ttLib import TTFont
    chars = gb2312_level1() | course_chars() | {chr(c) for c in range(0x20, 0x7F)}
    chars |= {chr(c) for c in range(0x3000, 0x3040)} | {chr(c) for c in range(0xFF01, 0xFF5F)}
    font = TTFont(source, fontNumber=0)  # 0: WenQuanYi Micro Hei (1 is its monospaced twin)
    options = subset.Options()
    options.hinting = False
    options.layout_features = []
    options.name_IDs = [0, 1, 2, 3, 4, 5, 6, 13, 14]  # copyright, names, version, licence
    sub = subset.Subsetter(options)
    sub.populate(unicodes=[ord(c) for c in chars])
    sub.subset(font)
    for rec in font["name"].names:  # the family and full names: a subset must not pass for the whole font
        if rec.nameID in (1, 4, 16):
            rec.string = FAMILY
        elif rec.nameID == 6:
            rec.string = FAMILY.replace(" ", "")
    font.save(OUT)
    print(f"{OUT}: {len(chars)} characters asked, {len(font.getBestCmap())} mapped, "
          f"{os.path.getsize(OUT) / 1e6:.2f} MB")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python scripts/make_cjk_font.py PATH/TO/wqy-microhei.ttc")
    main(sys.argv[1])
