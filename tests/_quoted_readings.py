"""What notebooks 08, 10 and 11 may say of their shipped multi-seed experiments, for test_experiments.py's census:
each verdict, interval, count and sign count their prose quotes, rebuilt here from the shipped per-seed numbers
through `verdicts.family` (the comparisons are typed here, not read from `course/readings.py`, so that a change
of what is read together shows), and the numbers a cell prints or a budget names. A verdict word or an "every
seed" the prose types outside these fragments is a typed verdict (`typed_verdicts`)."""

import os
import re

import nbformat
import numpy as np

from _quoted_numbers import REPO, rule_numbers
from unified_rl.experiments import common, verdicts
from unified_rl.text import english

T_ONE = verdicts.t_quantile(1 - verdicts.ALPHA / 2, 2)  # one interval alone at 95 %, over 3 seeds
TYPED = re.compile(r"\*(?:raised|lowered|no change|no clear change)\*|\b(?:raised|lowered|no clear change)\b|"
                   r"\bevery seed\b|\beach of the \d+ seeds\b|\ball (?:three|3) seeds\b|\bahead\b|\bbehind\b|"
                   r"\bbeat\b|\bcannot be told apart\b")


def cells(notebook, ids, lang=""):
    """The Markdown of `notebook`'s cells `ids` (the twin's with lang="zh"), joined."""
    nb = nbformat.read(os.path.join(REPO, "course", lang, f"{notebook}.ipynb"), as_version=4)
    by_id = {c.get("id"): c for c in nb.cells}
    return "\n\n".join(by_id[i].source for i in ids)


def typed_verdicts(text, fragments):
    """Verdict words and sign-count verdicts ("every seed", "ahead") left in `text` outside every fragment."""
    for f in sorted(fragments, key=len, reverse=True):
        text = text.replace(f, " ")
    return TYPED.findall(re.sub(r"`[^`\n]*`|\$[^$\n]+\$", " ", text))


def minus(x, spec="+.3f"):
    return format(x, spec).replace("-", "\u2212")


def ci(v):
    return f"[{minus(v['interval'][0])}, {minus(v['interval'][1])}]"


def _seq(xs, last=" and "):
    xs = [minus(x) for x in xs]
    return ", ".join(xs[:-1]) + last + xs[-1]


def family(per_arm, pairs):
    """verdicts.family over `pairs` [(arm, reference)] of per-seed accuracies {arm: [...]}, keyed by arm."""
    a = {k: np.asarray(v, dtype=float) for k, v in per_arm.items()}
    return verdicts.family({f"{x} - {y}": (a[x] - a[y], a[y]) for x, y in pairs})


def word(v):
    return english(v["verdict"])


# ---- the comparisons each notebook reads together (course/readings.py's module doc says why)

def policy_pairs(r):
    seq = "dr-grpo (seq-mean-token-mean)"
    out = [(a, "grpo") for a in r["arms"] if a != "grpo"]
    return out + ([("dr-grpo", seq), ("dr-grpo (token-mean)", seq)] if seq in r["arms"] else [])


def preference_pairs(r):
    return [(a, "dpo") for a in r["arms"] if a != "dpo"] + [("orpo", "sft-on-chosen"), ("ipo", "dpo-fast")]


def accuracies(r):
    """{arm: per-seed final held-out greedy accuracy} of a shipped result, read straight from its JSON layout."""
    seeds = r["per_seed"]
    if r["experiment"].startswith("policy-family") or r["experiment"] == "noisy-reward":
        return {a: [s["runs"][a]["accuracy"] for s in seeds] for a in seeds[0]["runs"]}
    if r["experiment"] == "preference-family":
        return {a: [s["arms"][a]["accuracy"] for s in seeds] for a in r["arms"]}
    if r["experiment"] == "data-source":
        return {a: [s[a]["in-distribution"]["greedy"] for s in seeds] for a in r["arms"]}
    return {a: [s["arms"][a]["final_accuracy"] for s in seeds] for a in r["arms"]}


PAIRS = {"policy-family": policy_pairs, "policy-family-peers": policy_pairs, "preference-family": preference_pairs,
         "data-source": lambda r: [(a, "sft-questions") for a in r["arms"][1:]],
         "noisy-reward": lambda r: [(f"{m}@0.2", f"{m}@0.0") for m in r["methods"]],
         "reward-function": lambda r: [(a, "outcome") for a in r["arms"] if a != "outcome"]}


def decided(name):
    """(shipped result, its verdicts by `family`) for experiment `name`."""
    r = common.load_shipped(name)
    return r, family(accuracies(r), PAIRS[name](r))


def t_each(fam):
    v = next(iter(fam.values()))
    return verdicts.t_quantile(1 - verdicts.ALPHA / (2 * v["family"]), len(v["per_seed"]) - 1)


NOTEBOOK_10 = ("47", "49", "62", "64", "82")
NAMES_10 = {"remax": "ReMax", "reinforce++": "REINFORCE++", "rloo": "RLOO",
            "dr-grpo (seq-mean-token-mean)": "the seq-mean-token-mean Dr. GRPO arm"}  # a KeyError names a new one


def notebook_10():
    """(the policy-family cells of notebook 10, fragments, allowed numbers)."""
    r, f = decided("policy-family")
    p, g = decided("policy-family-peers")
    m, mp, n = len(f), len(g), r["seeds"]
    words = {k: word(v) for k, v in f.items()}
    assert set(words.values()) == {verdicts.UNCLEAR}  # "decide none", "the rule decides neither"
    assert all(v["interval"][0] < 0 < v["interval"][1] for v in f.values())  # "reaches below and above 0"
    below = sorted((a for a, _ in policy_pairs(r)[:len(r["arms"]) - 1] if max(f[f"{a} - grpo"]["per_seed"]) < 0),
                   key=lambda a: f[f"{a} - grpo"]["mean"])
    names = [NAMES_10[a] for a in below]
    seq = "dr-grpo (seq-mean-token-mean)"
    decided_p = [k for k, v in g.items() if word(v) != verdicts.UNCLEAR]
    assert decided_p == ["vespo - grpo"]  # "the rule decides one: VESPO"
    vespo, cov, opo = g["vespo - grpo"], g["clip-cov - grpo"], g["opo - grpo"]
    assert min(cov["per_seed"]) > 0 > max(opo["per_seed"])  # "above GRPO on each ... and OPO below it on each"
    assert all(9.5 < x < 11 for a in r["arms"] for x in (r["table"][a]["len_first"]["mean"], r["table"][a]["len_last10"]["mean"]))
    frags = [
        f"These {m} comparisons are read together, so each gets a simultaneous interval over the seeds at 1 − "
        f"{verdicts.ALPHA:g} / {m}",
        f"**Three seeds decide none of the {m} comparisons.** With {m} verdicts read together, each interval over {n} "
        f"seeds reaches {t_each(f):.2f} standard errors either side of its mean (one interval alone at 95 % would reach "
        f"{T_ONE:.2f}), and every one of them reaches below and above 0: *{words['remax - grpo']}*, ReMax's "
        f"{minus(f['remax - grpo']['mean'])} {ci(f['remax - grpo'])} included",
        f"{', '.join(names[:-1])} and {names[-1]} ended below GRPO on each of the {n} seeds",
        f"the std (the seq-mean-token-mean arm against GRPO, {minus(f[seq + ' - grpo']['mean'])} on average) and the "
        f"aggregation (the two other Dr. GRPO arms against that arm, {minus(f['dr-grpo - ' + seq]['mean'])} and "
        f"{minus(f['dr-grpo (token-mean) - ' + seq]['mean'])}), each on the same seed; the rule decides neither",
        f"whether that bought accuracy, three seeds do not decide (*{words['dapo - grpo']}*)",
        f"the rule reads its {mp} comparisons with GRPO together (m = {mp})",
        f"Of its {mp} comparisons the rule decides one: VESPO, *{word(vespo)}*, {minus(vespo['mean'])} {ci(vespo)}; its "
        f"three differences ({_seq(vespo['per_seed'])}) hardly differ, so even {t_each(g):.2f} standard errors make a "
        f"narrow interval. The other {mp - 1} are *{verdicts.UNCLEAR}*",
        f"Clip-Cov ended above GRPO on each of the {n} seeds ({minus(cov['mean'])} on average) and OPO below it on each "
        f"({minus(opo['mean'])})",
        f"three seeds decide none of section 11's {m} comparisons (*{verdicts.UNCLEAR}*) and one of section 13's {mp} "
        f"(VESPO, *{word(vespo)}*)",
    ]
    b = r["budget"]
    assert p["budget"]["rl_steps"] == b["rl_steps"] and p["seeds"] == n  # "with the budget of section 11's full run"
    allowed = {str(b["rl_steps"]), str(b["epochs"]), str(n), *rule_numbers(m), *rule_numbers(mp),
               "10"}  # "a column-by-column sum of about 10 tokens": every arm's mean length, asserted above
    return cells("10_beyond_grpo", NOTEBOOK_10), frags, allowed


NOTEBOOK_11 = ("24", "25", "27")


def notebook_11():
    """(section 7's and 8's cells of notebook 11, fragments, allowed numbers)."""
    r, f = decided("preference-family")
    m, n, seeds = len(f), r["seeds"], r["per_seed"]
    v = {k.split(" - ")[0] if k.endswith(" - dpo") else k: x for k, x in f.items()}
    ipo_fast, orpo_sft, fast = f["ipo - dpo-fast"], f["orpo - sft-on-chosen"], v["dpo-fast"]
    assert [k for k, x in f.items() if word(x) != verdicts.UNCLEAR] == ["simpo - dpo"]  # "the rule decides one"
    assert word(v["simpo"]) == verdicts.NO_CHANGE
    assert all(x["interval"][0] < -verdicts.MARGIN and x["interval"][1] > verdicts.MARGIN
               for x in (v["ipo"], v["kto"]))  # "their intervals reach past ±0.05"
    assert min(ipo_fast["per_seed"]) > 0 and max(fast["per_seed"]) < 0  # the sign counts the prose describes
    acc = r["accuracy"]
    assert sorted(acc, key=lambda a: -acc[a]["mean"])[:2] == ["orpo", "sft-on-chosen"]  # "the highest mean accuracies"
    strong = max(seeds, key=lambda s: s["sft"])
    four = ("dpo", "ipo", "simpo", "kto")
    assert all(s["arms"][a]["accuracy"] > s["sft"] for s in seeds if s is not strong for a in four)  # "lifted"
    assert all(strong["arms"][a]["accuracy"] <= strong["sft"] for a in four)  # "none improved the strong one"
    assert strong["arms"]["orpo"]["accuracy"] > strong["sft"]  # "it also improved the strong SFT model"
    frags = [
        f"IPO's accuracy was the higher on each of the {n} seeds (by {minus(ipo_fast['mean'])} on average), which the rule "
        f"leaves undecided (*{word(ipo_fast)}*, section 8)",
        f"these {m} comparisons are read together, each interval at 1 − {verdicts.ALPHA:g} / {m}",
        f"**Of the {m} comparisons the rule decides one.** SimPO minus DPO is *{word(v['simpo'])}*: its interval, "
        f"{ci(v['simpo'])}, lies inside ±{verdicts.MARGIN:g}. IPO and KTO against DPO are *{word(v['ipo'])}*: their "
        f"intervals reach past ±{verdicts.MARGIN:g}",
        f"its accuracy against DPO's is *{word(v['kto'])}*",
        f"But against DPO it is *{word(v['orpo'])}* ({minus(v['orpo']['mean'])} {ci(v['orpo'])}), and against SFT on the "
        f"chosen answers alone,",
        f"*{word(orpo_sft)}* too ({minus(orpo_sft['mean'])} {ci(orpo_sft)}): three seeds do not separate",
        f"DPO at twice its learning rate ended below DPO at its own rate on each of the {n} seeds (by "
        f"{-fast['max']:.3f} to {-fast['min']:.3f})",
        f"Three seeds still leave it undecided (*{word(fast)}*, {ci(fast)})",
        f"(ORPO and SFT on them) had the highest mean accuracies, and three seeds do not decide that either beats DPO",
    ]
    assert word(v["ipo"]) == word(v["kto"]) == word(v["sft-on-chosen"]) == verdicts.UNCLEAR  # "either beats DPO"
    b, rows = r["budget"], __import__("unified_rl.presets", fromlist=["x"]).get_preset(r["preset"]).rl.prompts_per_step
    allowed = {str(b["probe_pairs"]), str(b["steps"]), str(b["n_test"]), str(rows), str(2 * rows), str(n),
               *rule_numbers(m)}
    return cells("11_preference_family", NOTEBOOK_11), frags, allowed


NOTEBOOK_08 = ("12", "25", "31", "45")


def _pm(s):
    return s.replace(" +/- ", " ± ")


def _plain(xs):
    """'a, b and c', unsigned, as the prose lists per-seed accuracies."""
    xs = [f"{x:.3f}" for x in xs]
    return ", ".join(xs[:-1]) + " and " + xs[-1]


def _data_source():
    r, f = decided("data-source")
    h, n, m = r["headline"], r["seeds"], len(f)
    seeds = r["per_seed"]
    diff = lambda a, b, key, test="in-distribution", k=32: [  # noqa: E731 a minus b within each seed
        (s[a][test][key][r["k"].index(k)] - s[b][test][key][r["k"].index(k)]) if isinstance(s[a][test][key], list)
        else s[a][test][key] - s[b][test][key] for s in seeds]
    unseen, harder, process = (f[f"{a} - sft-questions"] for a in ("unseen-questions", "harder-questions", "harder-process"))
    maj, pas = diff("unseen-questions", "sft-questions", "maj_at_k"), diff("unseen-questions", "sft-questions", "pass_at_k")
    assert min(unseen["per_seed"]) > 0 and unseen["interval"][0] < 0 < unseen["interval"][1]
    assert min(maj) < 0 < max(maj) and min(pas) < 0 < max(pas)  # "do not even agree in sign"
    assert [k for k, v in f.items() if word(v) != verdicts.UNCLEAR] == ["harder-process - sft-questions"]
    labels = {"sft": "(SFT model)", "sft-questions": "SFT questions", "unseen-questions": "unseen questions",
              "harder-questions": "harder questions", "harder-process": "harder, process reward"}
    rows = [f"| {labels[a]} | {_pm(h[f'{a} on in-distribution']['greedy'])} | {_pm(h[f'{a} on in-distribution']['Maj@32'])} "
            f"| {_pm(h[f'{a} on in-distribution']['Pass@32'])} | {_pm(h[f'{a} on harder']['steps right (greedy)'])} |"
            for a in labels]
    steps = diff("harder-process", "sft", "step_accuracy", "harder")
    greedy = diff("harder-process", "sft", "greedy")
    still = diff("harder-questions", "sft", "greedy")
    moved = [s["train"]["harder-questions"]["batch_accuracy_last"] for s in seeds]
    assert sum(x > 0 for x in moved) == 1 and min(greedy) == greedy[2]  # "on the third", "on one seed"
    assert all(s[a]["harder"]["greedy"] == 0 for s in seeds for a in labels)  # "no held-out three-digit sum right"
    frags = rows + [
        f"(greedy {_plain([s['sft']['in-distribution']['greedy'] for s in seeds])})",
        f"The {m} comparisons are read together, each interval at 1 − {verdicts.ALPHA:g} / {m}",
        f"Greedy accuracy was higher on each of the {n} seeds ({_seq(unseen['per_seed'])}), but the simultaneous interval, "
        f"{ci(unseen)}, reaches below 0: *{word(unseen)}*. In Maj@32 ({', '.join(map(minus, maj))}) and Pass@32 "
        f"({', '.join(map(minus, pas))}) the seeds do not even agree in sign",
        f"({100 * max(moved):.1f} % of those of the last 5 steps)",
        f"Two-digit accuracy changed by {_seq(still).replace('+', '')}; against GRPO on the SFT questions the arm is "
        f"*{word(harder)}* ({minus(harder['mean'])} {ci(harder)})",
        f"hardly changes ({', '.join(minus(x).replace('+0.000', '0.000') for x in steps)})",
        f"(−{-greedy[2]:.3f}; the other two seeds {minus(greedy[0])} and {minus(greedy[1])}). Against GRPO on the SFT "
        f"questions it is *{word(process)}* ({minus(process['mean'])} {ci(process)}), the one comparison of the {m} the "
        "rule decides",
        f"GRPO with process rewards on them is the arm the rule calls *{word(process)}*",
        f"questions on each of the {n} seeds ({minus(min(unseen['per_seed']))} to {minus(max(unseen['per_seed']))}), which "
        f"three seeds do not decide (*{word(unseen)}*)",
        f"and it is the arm the rule calls *{word(process)}* against the SFT questions",
    ]
    b = r["budget"]
    return frags, {str(b["rl_steps"]), str(b["n_test"]), str(b["k_problems"]), str(b["samples"]), str(n), "5",
                   *rule_numbers(m)}  # 5: the steps data_source averages a batch accuracy over (its [-5:])


def _noisy_reward():
    r, f = decided("noisy-reward")
    h, n, m, seeds = r["headline"], r["seeds"], len(f), r["per_seed"]
    names = {"rft": "RFT", "online-rft": "online RFT", "dpo": "DPO", "grpo": "GRPO"}
    runs = [s["runs"] for s in seeds]
    sft = [s["sft"] for s in seeds]
    change = r["change_vs_least_noise"]
    cell = lambda s: minus(s["mean"], "+.2f") + f" ± {s['std']:.2f}"  # noqa: E731
    at = {p: i for i, p in enumerate(r["flip_probs"])}
    means = {k.split("@")[0]: v["mean"] for k, v in f.items()}
    assert set(word(v) for v in f.values()) == {verdicts.UNCLEAR} and all(v["interval"][1] > 0 for v in f.values())
    assert min(means, key=means.get) == "rft" and max(means, key=means.get) == "grpo"
    online, grpo = [x["online-rft@0.4"]["accuracy"] for x in runs], [x["grpo@0.4"]["accuracy"] for x in runs]
    assert all(a < b for a, b in zip(online, sft)) and [a > b for a, b in zip(grpo, sft)] == [True, True, False]
    assert all(change[k][at[0.4]]["mean"] < 0 for k in change)  # "Every method's mean fell at 40 %"
    for p in (0.1, 0.2):  # "offline RFT's mean falls most at 10 % and at 20 %", the online methods' less
        assert min(change, key=lambda k: change[k][at[p]]["mean"]) == "rft"
    acc0 = {k: r["accuracy"][k][at[0.0]]["mean"] for k in r["methods"]}
    assert min(acc0, key=acc0.get) == "dpo"  # DPO "also gains least without noise"
    right = sorted(round(100 * x["rft@0.0"]["true_batch_accuracy"]) for x in runs)
    bayes = [round(100 * (1 - e) * 0.2 / ((1 - e) * 0.2 + e * 0.8)) for e in (0.1, 0.2, 0.4)]
    frags = [
        f"The SFT models start at {_pm(h['SFT held-out accuracy'])}",
        "| method | ε = " + " | ε = ".join(f"{p:g}" for p in r["flip_probs"]) + " |",
        *[f"| {names[k]} | " + " | ".join(_pm(h[k][f"p={p}"]) for p in r["flip_probs"]) + " |" for k in r["methods"]],
        f"differ ({_plain(sft)})",
        *[f"| {names[k]} | " + " | ".join(cell(s) for s in change[k][1:]) + " |" for k in r["methods"]],
        f"The {m} comparisons are read together, each interval at 1 − {verdicts.ALPHA:g} / {m}",
        f"**At 20 % the rule decides none of the four** (*{verdicts.UNCLEAR}*): the mean changes run from "
        f"{minus(means['rft'])} (RFT) to {minus(means['grpo'])} (GRPO), but every simultaneous interval reaches above 0",
        f"right only {right[0]}–{right[-1]} % of the time",
        f"At $a = 0.2$ that is {bayes[0]} % at ε = 0.1, {bayes[1]} % at ε = 0.2 and {bayes[2]} % at ε = 0.4",
        f"(online RFT {minus(change['online-rft'][at[0.1]]['mean'], '+.2f')}, GRPO "
        f"{minus(change['grpo'][at[0.1]]['mean'], '+.2f')})",
        f"on each of the {n} seeds ({_plain(online)} against {_plain(sft)})",
        f"({grpo[0]:.3f} and {grpo[1]:.3f}) and below on the third ({grpo[2]:.3f} against {sft[2]:.3f})",
        f"({minus(change['dpo'][at[0.4]]['mean'], '+.2f')} at 40 %)",
        f"At the paper's 20 % the rule decides none of the four methods' changes (*{verdicts.UNCLEAR}*)",
        f"at 40 % online RFT fell below its SFT model on each of the {n} seeds, GRPO on one",
        f"offline RFT lost most at {100 * r['flip_probs'][1]:g}–{100 * r['flip_probs'][2]:g} % noise",
    ]
    b = r["budget"]
    return frags, {str(b["rl_steps"]), str(n), *(f"{100 * p:g} %" for p in r["flip_probs"]), *rule_numbers(m),
                   "0.1", "0.2", "0.4"}  # the flip rates, as the Bayes bullet names them


ON_POLICY = "reward model AUC on the trained policy's samples"


def _reward_function():
    r, f = decided("reward-function")
    h, n, m, seeds = r["headline"], r["seeds"], len(f), r["per_seed"]
    rm = [s["reward_model"] for s in seeds]
    process, learned = f["process - outcome"], f["learned - outcome"]
    assert word(process) == verdicts.UNCLEAR and word(learned) == verdicts.LOWERED
    assert all(x["val_auc"] > 0.6 for x in rm)  # "clearly better than chance"
    a, c = (s["arms"]["learned"]["curve"]["accuracy"] for s in seeds[:2])
    arms = r["arms"]
    rows = [f"| (SFT start, {__import__('unified_rl.presets', fromlist=['x']).get_preset(r['preset']).eval_problems} "
            f"questions) | {_pm(h['SFT held-out accuracy (eval set)'])} | | |"]
    rows += [f"| {x} | {_pm(h[x]['held-out accuracy'])} | {_pm(h[x]['CPU s'])} | {h[x]['samples']:,} |" for x in arms]
    acc = {x: h[x]["held-out accuracy"].split(" ")[0] for x in arms}
    b = r["budget"]
    drawn = b["rm_questions"] * b["rm_samples"]
    assert r["samples"]["learned"] - r["samples"]["outcome"] == drawn == rm[0]["train_samples"]
    frags = rows + [
        f"after {b['rl_steps']} GRPO steps ({r['samples']['outcome']:,} GRPO samples per arm; the learned arm also drew "
        f"{drawn:,} to train its reward model)",
        f"(from {h['SFT held-out accuracy (eval set)'].split(' ')[0]} to {acc['outcome']} and {acc['process']})",
        f"the {m} comparisons are read together, each interval at 1 − {verdicts.ALPHA:g} / {m}",
        f"Process against outcome is *{word(process)}* ({minus(process['mean'])} {ci(process)})",
        f"AUC of {_pm(h['reward model AUC on its training samples'])} on its training samples and "
        f"{_pm(h['reward model held-out AUC'])} on SFT samples",
        f"threshold, {_pm(h['reward model held-out accuracy'])}, is no better than always answering \"wrong\", "
        f"{_pm(h['majority-class baseline'])}",
        f"with only {round(100 * min(x['val_right_frac'] for x in rm))} % to {round(100 * max(x['val_right_frac'] for x in rm))} %",
        f"(held-out accuracy {a[0]:.3f} → {a[1]:.3f} and {c[0]:.3f} → {c[1]:.3f} after {b['eval_every']} steps)",
        f"collapses: {_pm(h['learned']['held-out accuracy'])} after {b['rl_steps']} steps (against the outcome reward "
        f"*{word(learned)}*, {minus(learned['mean'])} {ci(learned)})",
        f"AUC is {_pm(h[ON_POLICY])}",
        f"{drawn:,} extra samples",
        f"from {float(h['SFT held-out accuracy (eval set)'].split(' ')[0]):.2f} to {float(acc['outcome']):.2f}–"
        f"{float(acc['process']):.2f} in the mean (process against outcome: *{word(process)}*)",
        f"AUC {float(h['reward model held-out AUC'].split(' ')[0]):.2f} on held-out questions",
        f"collapsed to {float(acc['learned']):.2f} while the reward seen kept rising (against the outcome reward: "
        f"*{word(learned)}*)",
    ]
    return frags, {str(n), *rule_numbers(m), "0.5", "20 %"}  # 0.5: chance and the threshold; 20 %: the paper's


def notebook_08():
    """(the cells of notebook 08 that read its three shipped runs, fragments, allowed numbers)."""
    frags, allowed = [], set()
    for part in (_data_source, _noisy_reward, _reward_function):
        fr, al = part()
        frags += fr
        allowed |= al
    return cells("08_more_effective_rl", NOTEBOOK_08), frags, allowed
