"""What notebooks 08, 10 and 11 decide from their shipped multi-seed experiments, by the course's one verdict
rule (`experiments.verdicts`): one primary metric per experiment, chosen by the question the notebook asks
(the choice reads no result), the comparisons a notebook reads together (m of them), and each verdict from
`verdicts.family` on the per-seed numbers. A sign count ("below GRPO on 3 of 3 seeds") describes three seeds; it never decides.

The primary metric of each experiment: a difference on the same seed (the same SFT model, the same questions),
final held-out greedy accuracy minus a reference arm's.

- policy-family, policy-family-peers (notebook 10, sections 11 and 13): minus GRPO's. The question is how each
  of GRPO's successors trains the lab's model against GRPO itself. policy-family also reads each Dr. GRPO
  aggregation arm minus its seq-mean-token-mean arm (the same advantage, so the aggregation alone): m = 11 and 10.
- preference-family (notebook 11, section 8): minus DPO's at its own rate, the method the others modify, as
  notebook 10 reads against GRPO; with two contrasts section 7 and 8 ask about: ORPO minus SFT on the chosen
  answers (what ORPO's odds-ratio term adds) and IPO minus DPO at IPO's learning rate (the two GCs at one
  rate): m = 8. The change from the SFT model is shown, not decided.
- data-source (notebook 08, section 2): two-digit accuracy minus that of GRPO on the SFT questions (DeepSeekMath's
  pool): which pool to train on, m = 3. Greedy accuracy because its test is the largest (500 questions; Maj@K and
  Pass@K read 100) and every experiment of notebook 08 measures it; Maj@32 and Pass@32 are described.
- noisy-reward (notebook 08, section 3): accuracy at flip probability 0.2 minus at 0, same method: what the noise
  the paper reports in PRM800K ("approximately 20 %") costs each method, m = 4. Other flip rates are described.
- reward-function (notebook 08, section 4): with the process or the learned reward minus with the outcome reward
  (the rule on the final answer, the reward every other notebook trains on): which reward to use, m = 2.
"""

from ..experiments import verdicts
from ..text import english
from .i18n import t

PRIMARY_FLIP = 0.2
"""noisy-reward's primary flip probability: the share of wrong labels the paper reports for PRM800K."""
MINUS = " − "


def _accuracy(result, arm):
    """The per-seed final held-out accuracy of `arm`, as the experiment stores it."""
    seeds, name = result["per_seed"], result["experiment"]
    if name in ("policy-family", "policy-family-peers", "noisy-reward"):
        return [s["runs"][arm]["accuracy"] for s in seeds]
    if name == "preference-family":
        return [s["arms"][arm]["accuracy"] for s in seeds]
    if name == "data-source":
        return [s[arm]["in-distribution"]["greedy"] for s in seeds]
    if name == "reward-function":
        return [s["arms"][arm]["final_accuracy"] for s in seeds]
    raise ValueError(f"no primary metric for the experiment {name!r}")


def flip_pair(result):
    """(noisy arm's flip probability, least noisy one) that noisy-reward's verdicts read: PRIMARY_FLIP where the
    run measured it, else the measured rate closest to it."""
    least, *rest = sorted(result["flip_probs"])
    if not rest:
        raise ValueError(f"a noisy-reward run needs two flip probabilities, got {result['flip_probs']}")
    return min(rest, key=lambda p: abs(p - PRIMARY_FLIP)), least


def comparisons(result):
    """[(arm, reference arm)]: the differences one result's verdicts read together (module doc)."""
    name, arms = result["experiment"], list(result.get("arms") or ())
    if name in ("policy-family", "policy-family-peers"):
        out = [(a, "grpo") for a in arms if a != "grpo"]
        std_only = "dr-grpo (seq-mean-token-mean)"
        if std_only in arms:  # Dr. GRPO's advantage under each aggregation, against GRPO's aggregation
            out += [(a, std_only) for a in arms if a.split(" (")[0] == "dr-grpo" and a != std_only]
        return out
    if name == "preference-family":
        out = [(a, "dpo") for a in arms if a != "dpo"]
        return out + [pair for pair in (("orpo", "sft-on-chosen"), ("ipo", "dpo-fast")) if set(pair) <= set(arms)]
    if name == "data-source":
        return [(a, "sft-questions") for a in arms if a != "sft-questions"]
    if name == "noisy-reward":
        noisy, least = flip_pair(result)
        return [(f"{m}@{noisy}", f"{m}@{least}") for m in result["methods"]]
    if name == "reward-function":
        return [(a, "outcome") for a in arms if a != "outcome"]
    raise ValueError(f"no primary metric for the experiment {name!r}")


def rows(result):
    """{"arm − reference": (per-seed differences, per-seed reference values)}, the input of `verdicts.family`."""
    out = {}
    for arm, ref in comparisons(result):
        a, b = _accuracy(result, arm), _accuracy(result, ref)
        out[arm + MINUS + ref] = ([x - y for x, y in zip(a, b)], b)
    return out


def decide(result):
    """The verdicts of one shipped (or your own) result: `verdicts.family` over all of its comparisons."""
    return verdicts.family(rows(result))


def label(name):
    """'`arm` − `reference`' for a comparison's name."""
    return MINUS.join(f"`{part}`" for part in name.split(MINUS))


def interval(v):
    """The simultaneous interval as [low, high]; a dash for one seed, which gives no interval."""
    if len(v["per_seed"]) < 2:
        return "—"
    return f"[{v['interval'][0]:+.3f}, {v['interval'][1]:+.3f}]"


def said(v):
    """One comparison in a sentence: its mean, simultaneous interval and verdict."""
    return t("nb.read.said", mean=f"{v['mean']:+.3f}", interval=interval(v), verdict=v["verdict"])


def table(decided):
    """Markdown: a row per comparison: its per-seed differences, their mean, the simultaneous interval with its
    level and m, and the verdict."""
    head = t("nb.read.head")
    lines = [head, "|---|---:|---:|---:|---|"]
    for name, v in decided.items():
        lines.append(f"| {label(name)} | {', '.join(f'{d:+.3f}' for d in v['per_seed'])} | {v['mean']:+.3f} | "
                     f"{interval(v)} ({v['level']:.2%}, m = {v['family']}) | {v['verdict']} |")
    return "\n".join(lines)


def t_multiplier(decided):
    """(t for each of the m simultaneous intervals, t for one interval alone at 95 %), over the result's seeds."""
    v = next(iter(decided.values()))
    df = len(v["per_seed"]) - 1
    if df < 1:
        raise ValueError(f"a t interval needs 2 seeds or more, this result has {len(v['per_seed'])}")
    return verdicts.t_quantile(1 - (1 - v["level"]) / 2, df), verdicts.t_quantile(1 - verdicts.ALPHA / 2, df)


def groups(decided):
    """{verdict word (English): [comparison names]} in the order raised, lowered, no change, no clear change, other."""
    out = {}
    for name, v in decided.items():
        out.setdefault(english(v["verdict"]), []).append(name)
    order = {w: i for i, w in enumerate(verdicts.WORDS)}
    return dict(sorted(out.items(), key=lambda kv: order.get(kv[0], len(order))))


def summary(decided):
    """The verdicts in sentences: how the rule read them (m, seeds, t), then the comparisons under each word."""
    v = next(iter(decided.values()))
    if len(v["per_seed"]) < verdicts.MIN_SEEDS:  # e.g. a learner's own one-seed run: no verdict, and no interval
        out = [t("nb.read.too_few", n=len(v["per_seed"]), need=verdicts.MIN_SEEDS)]
    else:
        each, alone = t_multiplier(decided)
        out = [t("nb.read.rule", m=v["family"], n=len(v["per_seed"]), level=f"{v['level']:.2%}", each=each,
                 alone=alone, margin=verdicts.MARGIN)]
    for word, names in groups(decided).items():  # the numbers are the table's
        items = t("nb.pg.list_sep").join(label(n) for n in names)
        out.append(t("nb.read.group", word=decided[names[0]]["verdict"], n=len(names), m=v["family"], items=items))
    return out
