"""The Chinese edition uses one set of terms: course/zh/GLOSSARY.md's table "不用的译法" lists the
variants (Python regular expressions) that must not appear in what a Chinese reader sees — the twins'
Markdown prose, course/zh/README.md, the message catalogue's and the sentences' Chinese — so the next
edit cannot bring one back. Also: each twin links to the glossary, and no space separates Chinese
from a bold or italic span where Markdown would still see the span without it."""

import re
import unicodedata
from pathlib import Path

import nbformat
import pytest

from unified_rl.course.i18n import CATALOGUE, SENTENCES

ZH = Path(__file__).resolve().parents[1] / "course" / "zh"
KEEP = re.compile(r"```.*?```|\$\$.+?\$\$|(?<![\\$])\$[^$\n]+?\$|`[^`\n]*`|\]\([^)\s]*\)|https?://\S+|<[^>\n]+>", re.S)
CJK = r"[\u4e00-\u9fff\u3000-\u303f\uff00-\uffef“”‘’…—]"


def forbidden():
    """[(regex, use instead)] from GLOSSARY.md's table of variants not used."""
    text = (ZH / "GLOSSARY.md").read_text(encoding="utf-8").split("## 不用的译法", 1)[1]
    rows = re.findall(r"^\| `(.+?)` \| (.*?) \|", text, re.M)
    return [(re.compile(pattern.replace("\\|", "|")), instead) for pattern, instead in rows]  # \| : a table's |


def prose(text):
    """Text a reader reads as words: code, math, links' targets, URLs and tags blanked."""
    return KEEP.sub(lambda m: "]" if m.group(0).startswith("](") else " ", text)


def texts():
    """(where, prose) for every piece of Chinese a reader sees."""
    out = []
    for path in sorted(ZH.glob("*.ipynb")):
        for i, cell in enumerate(nbformat.read(path, as_version=4).cells):
            if cell.cell_type == "markdown":
                out.append((f"{path.name} cell {i}", prose(cell.source)))
    out.append(("README.md", prose((ZH / "README.md").read_text(encoding="utf-8"))))
    out += [(f"message {k}", prose(zh)) for k, (_, zh) in CATALOGUE.items() if zh]
    out += [(f"sentence {en[:40]!r}", prose(zh)) for en, zh in SENTENCES.items()]
    return out


def variants(items, rules):
    return [f"{where}: {m.group(0)!r} (use {instead})" for where, text in items for rule, instead in rules
            for m in rule.finditer(text)]


def test_the_glossary_lists_the_variants():
    assert len(forbidden()) >= 12


def test_no_variant_the_glossary_forbids():
    found = variants(texts(), forbidden())
    assert not found, f"{len(found)} variants:\n" + "\n".join(found[:40])


PLANTED = ["式 5 的代理目标", "一个指示函数", "64 个固定样本对", "对数比率", "下一个单元会", "见式 12",
           "eq 5 的替代损失", "实验室中的图 7", "功劳分配", "这个包的测试", "沉默组", "2–3× 的时间",
           '“好”与"坏"的区别', "与论文的 Figure 7 一致", "**前置内容**：笔记本 00",
           "Pass@64 没有明显变化", "无明显变化", "## 7. 毕业：在 TRL 中", "按测量结果记功"]


def test_a_planted_variant_is_caught_and_the_right_words_are_not():
    rules = forbidden()
    for text in PLANTED:
        assert variants([("plant", text)], rules), f"no rule catches {text!r}"
    fine = "公式 5 的替代损失、示性函数、偏好对、对数比、下一个单元格、实验环境中的图 7、软件包包含、包括、“好”、没有明确变化"
    assert not variants([("fine", fine)], rules)


def _punct(c):
    return unicodedata.category(c)[0] in "PS"


def stray_spaces(text):
    """Spaces between Chinese and an emphasis span that CommonMark would still see without them."""
    out = []
    for m in re.finditer(r"(\*\*?)([^*\n]+?)\1", text):
        a, b, inner = m.start(), m.end(), m.group(2)
        if inner.strip() != inner:
            continue
        if a >= 2 and text[a - 1] == " " and re.match(CJK, text[a - 2]) and (_punct(text[a - 2]) or not _punct(inner[0])):
            out.append(text[a - 2:b])
        if b + 1 < len(text) and text[b] == " " and re.match(CJK, text[b + 1]) and (not _punct(inner[-1]) or _punct(text[b + 1])):
            out.append(text[a:b + 2])
    return out


def test_no_space_between_chinese_and_emphasis():
    found = [f"{where}: {s!r}" for where, text in texts() if where.endswith(tuple("0123456789")) or ".ipynb" in where
             for s in stray_spaces(text)]
    assert not found, "\n".join(found[:40])
    assert stray_spaces("这是 **梯度系数** 的定义") == ["是 **梯度系数**", "**梯度系数** 的"]
    assert stray_spaces("**短而温和。** 这里") == []  # a span ending in punctuation needs the space


@pytest.mark.parametrize("path", sorted(ZH.glob("*.ipynb")), ids=lambda p: p.name)
def test_each_twin_links_to_the_glossary(path):
    cells = nbformat.read(path, as_version=4).cells
    assert any("](GLOSSARY.md)" in c.source for c in cells if c.cell_type == "markdown")


def nested(text):
    """Full-width parentheses inside full-width parentheses (the inner group), in prose."""
    out, stack = [], []
    for j, ch in enumerate(text):
        if ch == "（":
            stack.append(j)
        elif ch == "）" and stack:
            a = stack.pop()
            if stack:
                out.append(text[a:j + 1])
    return out


def test_no_nested_parentheses_in_the_twins():
    found = [f"{where}: {s!r}" for where, text in texts() if ".ipynb" in where for s in nested(text)]
    assert not found, "\n".join(found[:40])
    assert nested("笔记本 00（公式 5 的统一范式（unified paradigm））") == ["（unified paradigm）"]
    assert nested("（提示，hint）和（参考解答）") == []


# the glossary's technical terms, glossed in English at their first use in each twin (everyday words
# such as 回答, 检查, 练习 are not); a term inside a longer one (策略 in 同策略) is not its use
TERMS = ("统一范式|数据来源|奖励函数|梯度系数|优势|策略|参考模型|监督微调|拒绝采样微调|在线拒绝采样微调|直接偏好优化|"
         "近端策略优化|组相对策略优化|价值函数|评论家|过程监督|结果监督|奖励模型|KL 散度|裁剪|重要性比率|同策略|异策略|基线|"
         "检查点|拒绝采样|偏好对|替代损失|留出集|提示词|探索器|实验组|回报|基线引理|分词器|实验环境|价值模型|停止梯度|间隔|"
         "几率比|预言机|核采样|分布外|自洽性|得分函数|微批次|对话模板|左填充|适配器|贪心解码|广义优势估计|TD 误差|隐式奖励|"
         "重要性权重|动态采样|似然位移|示性函数|对数比|信用分配|集合通信|数据并行|归一化因子").split("|")
NOT_A_USE = ["策略梯度", "参考策略", "当前策略", "策略模型", "优势估计", "优势函数", "基线模型", "回报率", "裁剪后", "对数比较"]
HEADING_OR_CODE = re.compile(KEEP.pattern + r"|^#.*$", re.S | re.M)


def unglossed(cells):
    """Terms whose first use (outside headings, code, math and parentheses) has no English gloss after it."""
    done, out = set(), []
    for source in cells:
        masked = HEADING_OR_CODE.sub(lambda m: "\0" * len(m.group(0)), source)
        hits = sorted((m.start(), t) for t in TERMS for m in re.finditer(re.escape(t), masked))
        for i, t in hits:
            longer = [u for u in TERMS + NOT_A_USE if t in u and u != t]
            if t in done or any(masked[i - k:i - k + len(u)] == u for u in longer for k in range(len(u))
                                if u[k:k + len(t)] == t):
                continue
            if masked[:i].count("（") > masked[:i].count("）"):
                continue
            done.add(t)
            after = masked[i + len(t):i + len(t) + 60]
            # a gloss, or a Chinese parenthesis already there (a second one would crowd it): the next use is not asked
            if not re.match(r"[*”’]*\s*（[^）]*[A-Za-z]", after) and not after.lstrip("*”’").startswith("（"):
                out.append(t)
    return out


@pytest.mark.parametrize("path", sorted(ZH.glob("*.ipynb")), ids=lambda p: p.name)
def test_each_term_is_glossed_in_english_at_its_first_use(path):
    cells = [c.source for c in nbformat.read(path, as_version=4).cells if c.cell_type == "markdown"]
    assert unglossed(cells) == []


def test_the_gloss_check_fails_on_an_unglossed_first_use():
    assert unglossed(["**统一范式**（unified paradigm）之后的统一范式"]) == []
    assert unglossed(["同策略（on-policy）里的策略是被训练的模型"]) == ["策略"]
    assert unglossed(["先说替代损失，再说替代损失（surrogate loss）"]) == ["替代损失"]
