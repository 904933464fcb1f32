"""What notebooks 07 and 12 and the README's Figure 7 paragraphs may say in numbers, built from the shipped
results, the budgets, the rule (experiments/verdicts.py) and bench/trl_graduation.json, for
test_experiments.py's census: every quoted fragment must be in its text, and every number left outside the
fragments must be a name (an equation, a section, a year), a budget's or the rule's value, or listed with
the cell that prints it."""

import json
import math
import os
import re

import numpy as np

from unified_rl.course.nb_pass_maj import maj_at_k_iid, pass_at_k_iid, sharpen
from unified_rl.experiments import common, figure7, real_model, verdicts
from unified_rl.parts.sampler_corrections import MisSettings, TisSettings
from unified_rl.presets import get_preset

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# numbers that name something rather than measure it (masked before counting), and code, math and links
NAMES = [r"(?m)^#.*$", r"(?s)```.*?```", r"(?s)\$\$.+?\$\$", r"(?<![\\$])\$[^$\n]+?\$", r"`[^`\n]*`", r"\]\([^)]*\)",
         r"https?://\S+", r"\d+(?:\.\d+)?e[−+-]?\d+", r"\beqs?[.-]? ?\d+(?:[–-]\d+)?(?:(?:,| and) \d+)*", r"§\s?\d+(?:\.\d+)*",
         r"[Nn]otebooks? \d\d(?:[–-]\d\d)?(?:(?:,| and|'s) \d\d)*", r"\bQ\d\b", r"\b[Ss]ections? \d+(?:(?:,| and) \d+)*",
         r"\bFigure \d+", r"arXiv \d+\.\d+", r"\b(?:19|20)\d\d\b", r"@\d+", r"\bK = \d+", r"K ≤ \d+",
         r"\b\w*[A-Za-z_]\w*\d\w*|\b\d+[A-Za-z_]\w*"]
NUMBER = re.compile(r"(?<![\w.])[−+-]?\d+(?:[.,]\d+)*(?:\s?%)?")
WORDS = {"0", "1", "2"}  # indices and counting words ("seeds 0, 1, 2", "0 where the mask is 0", "K = 1")


def norm(n):
    return n.replace(" %", "%").lstrip("+-−")  # a sign outside a fragment: a range's dash ("16-19")


def unaccounted(text, fragments, allowed):
    """(fragments missing from `text`, numbers of `text` outside every fragment and name and not allowed)."""
    for pattern in NAMES[:3]:  # headings, fenced code and display math, read line by line
        text = re.sub(pattern, " ", text)
    text, fragments = re.sub(r"\s+", " ", text), [re.sub(r"\s+", " ", f) for f in fragments]
    missing = [f for f in fragments if f not in text]
    for f in sorted(fragments, key=len, reverse=True):
        text = text.replace(f, " ")
    for pattern in NAMES[3:]:
        text = re.sub(pattern, " ", text)
    ok = {norm(a) for a in allowed} | WORDS
    return missing, [n for n in NUMBER.findall(text) if norm(n) not in ok]


def ci(c):
    return f"[{c[0]:+.3f}, {c[1]:+.3f}]"


def seq(xs, spec="+.3f", last=" and "):
    xs = [format(x, spec) for x in xs]
    return ", ".join(xs[:-1]) + last + xs[-1]


def rule_numbers(m):
    """The rule's own numbers as prose writes them, for m verdicts read together."""
    return {f"{verdicts.ALPHA:g}", f"{verdicts.MARGIN:g}", "95 %", f"{100 * (1 - verdicts.ALPHA / m):g} %", str(m)}


def notebook_12():
    """(fragments, allowed numbers) of notebook 12's Markdown."""
    r, lab = common.load_shipped("real-model"), common.load_shipped("figure7")
    b, ks, base = r["budget"], r["k"], r["mean"]["base"]
    c = lambda arm, key, k: r["change"][arm][key][ks.index(k)]  # noqa: E731
    v = lambda arm, key: r["verdicts"]["arms"][arm][key]  # noqa: E731
    g, d = "grpo", "dpo-on-policy"
    K, top, m = r["verdicts"]["k"], ks[-1], v(g, "pass_at_k")["family"]
    sweep = r["budgets_considered"]
    room = r["headroom"]
    seeds = lambda arm, k: c(arm, "pass_at_k", k)["per_seed"]  # noqa: E731
    sd = lambda xs: float(np.std(xs, ddof=1))  # noqa: E731
    t1, tm = verdicts.t_quantile(0.975, r["seeds"] - 1), verdicts.t_quantile(1 - verdicts.ALPHA / (2 * m), r["seeds"] - 1)
    alone = __import__("unified_rl.course.nb_real_model", fromlist=["x"]).one_seed(r, g, 0, top)
    dl = lab["delta_rl_minus_sft"]
    bench = json.load(open(os.path.join(REPO, "bench", "trl_graduation.json")))
    frags = [
        f"({r['seeds']} seeds; {b['n_test']} held-out questions × {b['samples']} samples at T = {b['temperature']};",
        f"greedy accuracy is {sweep[str(b['max_new_tokens'])]['greedy']:.3f} with "
        f"{sweep[str(b['max_new_tokens'])]['greedy_cut']:.1%} of its greedy replies and {base['sampled_cut']:.1%} of its "
        f"sampled replies cut off (at 16 tokens: {sweep['16']['greedy']:.3f}, {sweep['16']['greedy_cut']:.1%} cut)",
        f"Pass@1 = Maj@1 is {base['pass_at_k'][0]:.3f}, its Maj@{top} {base['maj_at_k'][-1]:.3f} and its Pass@{top} "
        f"{base['pass_at_k'][-1]:.3f}",
        f"({seq([s['base']['pass_at_k'][-1] for s in r['per_seed']], '.3f', ', ')})",
        f"GRPO changed Maj@{K} by {v(g, 'maj_at_k')['mean']:+.3f} and Pass@{K} by {v(g, 'pass_at_k')['mean']:+.3f}, "
        f"on-policy DPO by {v(d, 'maj_at_k')['mean']:+.3f} and {v(d, 'pass_at_k')['mean']:+.3f}",
        f"{ci(v(g, 'maj_at_k')['interval'])}, {ci(v(g, 'pass_at_k')['interval'])}, {ci(v(d, 'maj_at_k')['interval'])} "
        f"and {ci(v(d, 'pass_at_k')['interval'])}, all reach below 0",
        f"the printed verdict is \"{r['verdicts']['arms'][g]['sentence']}\"",
        f"put each at {100 * (1 - verdicts.ALPHA / m):g} %: t = {tm:.2f} standard errors either side, where one verdict at "
        f"95 % would take {t1:.2f}",
        f"(95 % over seeds {ci(c(g, 'maj_at_k', K)['seeds_ci'])} and {ci(c(d, 'maj_at_k', K)['seeds_ci'])}, in the tables)",
        f"(GRPO: {c(g, 'maj_at_k', 1)['mean']:+.3f} at K = 1, {c(g, 'maj_at_k', top)['mean']:+.3f} at K = {top})",
        f"GRPO {seq(seeds(g, 1), last=', ')}, DPO {seq(seeds(d, 1), last=', ')}",
        f"at K = 1, {ci(c(g, 'pass_at_k', 1)['seeds_ci'])}, reaches below 0 and DPO's, {ci(c(d, 'pass_at_k', 1)['seeds_ci'])},",
        f"(sd {sd(seeds(g, 1)):.3f} against {sd(seeds(d, 1)):.3f}), and an interval over three seeds reaches {t1:.2f} "
        f"standard errors",
        f"from {c(g, 'pass_at_k', 1)['mean']:+.3f} (GRPO) and {c(d, 'pass_at_k', 1)['mean']:+.3f} (DPO) at K = 1 to "
        f"{c(g, 'pass_at_k', top)['mean']:+.3f} for both at K = {top}",
        f"{room['at_ceiling'][-1]} of the {room['questions']} questions start at Pass@{top} = 1 on every seed (fewer than "
        f"{top} of their {b['samples']} samples wrong), so Pass@{top} can rise on {room['can_rise'][-1]} questions only, "
        f"and its mean by at most {room['largest_rise'][-1]:.3f}. Both methods moved it by {c(g, 'pass_at_k', top)['mean']:+.3f}, "
        f"with 95 % intervals over seeds of {ci(c(g, 'pass_at_k', top)['seeds_ci'])} and {ci(c(d, 'pass_at_k', top)['seeds_ci'])}",
        f"Seed 0 alone had GRPO's Pass@{top} at {alone['mean']:+.3f}, with its questions' interval {ci(alone['questions_ci'])} "
        f"below 0",
        f"Seeds 1 and 2 gave {seeds(g, top)[1]:+.3f} and {seeds(g, top)[2]:+.3f}",
        f"the lab reads \"{lab['verdict']['sentence']}\"",
        f"There RL minus SFT was {dl['pass_at_k'][0]['mean']:+.3f} at K = 1, and at K = {lab['k'][-1]} "
        f"{dl['maj_at_k'][-1]['mean']:+.3f} on Maj@K and {dl['pass_at_k'][-1]['mean']:+.3f} on Pass@K",
        f"(+{c(g, 'pass_at_k', 1)['mean']:.3f} and +{c(d, 'pass_at_k', 1)['mean']:.3f} at K = 1, "
        f"{c(g, 'pass_at_k', top)['mean']:+.3f} at K = {top}, where {room['at_ceiling'][-1]} of the {room['questions']} "
        "questions were already at 1)",
        f"over {r['seeds']} seeds",
        f"so each of the four is *{v(g, 'maj_at_k')['verdict']}*",
        f"neither method's Maj@{K} nor its Pass@{K} is decided ({v(g, 'maj_at_k')['verdict']})",
        # section 7: bench/trl_graduation.py's measurement
        f"{bench['questions']} questions × {bench['group_size']} replies of SmolLM2, β = {bench['beta']:g}, prompts of "
        f"{bench['prompt_lengths'][0]} and {bench['prompt_lengths'][1]} tokens, so that TRL left-padded "
        f"{bench['rows_left_padded_by_trl']} of the {bench['rows']} rows",
        f"(largest difference {bench['trl_advantages_vs_ours_eps_1e-4']})",
        f"all {bench['params_compared']} parameter tensors agree to {bench['max_rel_diff_our_eps_1e-4']:.1e} relative",
        f"the difference is {bench['max_rel_diff_our_eps_1e-6']:.1e}",
        f"it is {bench['max_rel_diff_mismatched_rewards']:.1f}, so",
        f"{bench['max_rel_diff_our_eps_1e-6']:.1e} of the gradient above",
        f"for the experiment's {b['grpo_steps']} steps the two schedules are the same",
    ]
    assert len({str(v(arm, key)["verdict"]) for arm in (g, d) for key in ("maj_at_k", "pass_at_k")}) == 1  # "each of the four"
    assert all(c(arm, "maj_at_k", K)["seeds_ci"][0] > 0 for arm in (g, d))  # "read alone, ... would be raised"
    assert c(g, "pass_at_k", 1)["seeds_ci"][0] < 0 < c(d, "pass_at_k", 1)["seeds_ci"][0]  # "reaches below 0 ... does not"
    assert all(x > 0 for arm in (g, d) for k in ks for x in c(arm, "maj_at_k", k)["per_seed"])  # "on every seed at every K"
    assert all(x > 0 for arm in (g, d) for x in seeds(arm, 1))  # "Pass@1 rose on every seed too"
    assert b["grpo_steps"] == b["dpo_steps"]  # "8 training steps each"
    p = real_model.world(real_model.BUDGETS["cpu"])
    allowed = {str(b["n_test"]), str(b["samples"]), str(b["temperature"]), str(b["grpo_steps"]), str(p.rl.group_size),
               str(p.rl.prompts_per_step), str(p.llm.micro_batch), str(K), str(r["seeds"]), "0", "1 %",
               *(str(n) for n in b["budgets_considered"]), str(p.rl.prompts_per_step * p.rl.group_size),
               str(trl_no_warmup_below()), *rule_numbers(m), f"{tm:.2f}", f"{t1:.2f}",
               "134.5",  # SmolLM2's parameters in millions: cell 6 prints the count (134,515,008)
               "4",  # the 4-bit quantised copy (Q4_1), the oracle's 4-token replies (cell 10's max_new_tokens=4)
               "1.16"}  # TRL's version in which the advantage's eps is 1e-4 (bench/trl_graduation.py)
    return frags, allowed


def trl_no_warmup_below():
    """The smallest step count with a warm-up (nb_real_model.trl_warmup): W = steps // 10 >= 2."""
    from unified_rl.course.nb_real_model import trl_warmup
    return next(s for s in range(1, 100) if trl_warmup(s)["warmup_steps"])


def notebook_07():
    """(fragments, allowed numbers) of notebook 07's Markdown."""
    full = common.load_shipped("figure7")
    v, d, ks, b = full["verdict"], full["delta_rl_minus_sft"], full["k"], figure7.Budget()
    K, top, room = v["k"], ks[-1], full["headroom"]
    mean = lambda key, k: d[key][ks.index(k)]["mean"]  # noqa: E731
    alone = verdicts.t_interval(v["pass_at_k"]["per_seed"])
    seeds = [figure7.per_question(full, seed) for seed in range(full["seeds"])]
    rare = [(s["sft"] > 0) & (s["sft"] < 0.1) for s in seeds]
    h = full["headline"]
    pm = lambda key: h[key]  # noqa: E731
    frags = [
        f"The SFT models' Maj@{K} were {seq(v['sft_maj_per_seed'], '.3f')}",
        f"\"{v['sentence']}\"",
        f"RL raised Maj@{K} on every seed (by {seq(v['maj_at_k']['per_seed'])}), and its simultaneous interval, "
        f"{ci(v['maj_at_k']['interval'])}, lies above 0",
        f"Pass@{K} rose on every seed too (by {seq(v['pass_at_k']['per_seed'])}), but its simultaneous interval, "
        f"{ci(v['pass_at_k']['interval'])}, reaches below 0",
        f"its 95 % interval over seeds, {ci(alone)}, would lie above 0",
        f"({mean('maj_at_k', 1):+.3f} at K = 1, {mean('maj_at_k', top):+.3f} at K = {top})",
        f"({mean('pass_at_k', 1):+.3f} at K = 1, {mean('pass_at_k', K):+.3f} at K = {K}, {mean('pass_at_k', top):+.3f} at K = {top})",
        f"{room['at_ceiling'][-1]} of the {room['questions']} held-out questions start at Pass@{top} = 1 on every seed, so "
        f"Pass@{top} can rise on {room['can_rise'][-1]} of them only, and its mean by at most {room['largest_rise'][-1]:.3f}",
        f"({h['greedy accuracy (RL questions)']['sft'].replace(' +/- ', ' ± ')} right)",
        f"({h['greedy accuracy (RL questions)']['rl'].replace(' +/- ', ' ± ')} after RL)",
        f"RL solved {seq([s['gained'] for s in seeds], 'd')} held-out questions that no SFT sample had solved, and lost "
        f"{seq([s['lost'] for s in seeds], 'd')}",
        f"({seq([int(x.sum()) for x in rare], 'd')} of them), most were solved *more* often after RL "
        f"({seq([int((s['rl'][x] > s['sft'][x]).sum()) for s, x in zip(seeds, rare)], 'd')})",
        f"mid-range Maj@{K} ({min(v['sft_maj_per_seed']):.3f} to {max(v['sft_maj_per_seed']):.3f}), GRPO on SFT questions "
        f"raised Maj@{K} by {pm(f'RL - SFT, Maj@{K}').replace(' +/- ', ' ± ')} on every seed",
        f"and Pass@{K} by {pm(f'RL - SFT, Pass@{K}').replace(' +/- ', ' ± ')} on every seed",
        f"on every seed ({v['maj_at_k']['verdict']}, by the course's verdict rule)",
        f"leaves undecided ({v['pass_at_k']['verdict']})",
    ]
    assert alone[0] > 0 and v["maj_at_k"]["interval"][0] > 0 > v["pass_at_k"]["interval"][0]
    frags += [f"| {x.replace(' +/- ', ' ± ')} " for x in _table_07(h)]
    assert v["mid_range_start"] and all(x > 0 for key in ("maj_at_k", "pass_at_k") for x in v[key]["per_seed"])
    assert full["pass_at_k_rl_below_sft_from_k"] is None  # "never below SFT's for K <= 64"
    assert all(d["maj_at_k"][i]["mean"] <= d["maj_at_k"][i + 1]["mean"] + 1e-12 for i in range(len(ks) - 1))  # "grows"
    frags += _sharpening()
    p = get_preset("cpu")
    allowed = {str(p.n_sft), str(b.sft_steps), str(b.rl_questions), f"{p.n_rl:,}", str(b.samples), str(b.temperature),
               str(b.rl_steps), str(p.sft.steps), *(f"{x:g}" for x in b.mid_range), str(full["seeds"]), str(K),
               *rule_numbers(2),
               "30", "64",  # the small run's GRPO steps and held-out questions (cell 27's code)
               "10 %",  # "solved in fewer than 10 % of its samples": the threshold the per-question counts use
               "40 %", "50 %",  # question A's right answer and question B's dominant wrong one (cell 19's code)
               "0.1",  # question B's right answer, cell 11's p and Q5's per-sample probability (cells 11, 19, 50)
               "8", "16",  # cell 11's k and n (and the toy list's eight answers)
               "3", "4", "5"}  # Q4's answers and their 3-subsets
    return frags, allowed


def _table_07(h):
    """The cells of section 6's table (mean ± std over seeds) as the headline holds them."""
    keys = ("greedy accuracy (held-out)", "Maj@1 = Pass@1", "Maj@16", "Pass@16", "Maj@64", "Pass@64")
    return [h[k][m] for m in ("sft", "rl") for k in keys] + [
        "+" + h[f"RL - SFT, {k}"] for k in ("Maj@16", "Pass@16", "Maj@64", "Pass@64")]


def _sharpening():
    """Section 4's numbers: two questions' answers raised to the power 3 (cell 19 computes and prints them)."""
    a = {"right": 0.4, "w1": 0.2, "w2": 0.2, "w3": 0.2}
    bq = {"right": 0.1, "w1": 0.5, "w2": 0.2, "w3": 0.2}
    sa, sb = sharpen(a, 3.0), sharpen(bq, 3.0)
    maj = lambda qs: np.mean([maj_at_k_iid(q, "right", 64) for q in qs])  # noqa: E731
    assert math.isclose(sa["right"], 0.727, abs_tol=5e-3) and sb["right"] < 0.01
    return [f"(0.40 → {sa['right']:.2f})", f"(0.10 → {sb['right']:.3f})",
            f"falls from {pass_at_k_iid(0.1, 64):.3f} to {pass_at_k_iid(sb['right'], 64):.2f}",
            f"a {100 * sb['right']:.1f} % answer", f"({maj([a, bq]):.3f} and {maj([sa, sb]):.3f} at K = 64)"]


def readme():
    """(the README's real-model paragraph, fragments, allowed numbers): what the shipped run decided, in words,
    and a seed's time; the numbers themselves are docs/RESULTS.md's (results_page)."""
    text = open(os.path.join(REPO, "README.md"), encoding="utf-8").read()
    text = text[text.index("`reproduce real-model --seeds 3`"):text.index("Notebook 12 shows it beside")]
    r = common.load_shipped("real-model")
    arms = r["verdicts"]["arms"]
    verdict_words = {arms[a][k]["verdict"] for a in arms for k in ("maj_at_k", "pass_at_k")}
    sentences = {arms[a]["sentence"].split(": ", 1)[1] for a in arms}
    assert verdict_words == {"no clear change"} and len(arms) * 2 == 4 and len(sentences) == 1  # "none of the four"
    minutes = lambda s, m: (s[m]["wall_s"] + s[m].get("train_wall_s", 0)) / 60  # noqa: E731
    assert all(abs(s["base"]["cpu_s"] / 60 + sum(minutes(s, m) for m in r["arms"]) - 40) < 3 for s in r["per_seed"][1:])
    return text, [f'"{sentences.pop()}"', "decide none of the four verdicts"], {"40"}


def results_page():
    """(docs/RESULTS.md's real-model section, fragments, allowed numbers)."""
    text = open(os.path.join(REPO, "docs", "RESULTS.md"), encoding="utf-8").read()
    text = text[text.index("`reproduce real-model --seeds 3`"):]
    r, lab = common.load_shipped("real-model"), common.load_shipped("figure7")
    ks, K, top = r["k"], r["verdicts"]["k"], r["k"][-1]
    c = lambda arm, key, k: r["change"][arm][key][ks.index(k)]  # noqa: E731
    v = lambda arm, key: r["verdicts"]["arms"][arm][key]  # noqa: E731
    both = lambda x: f"{x['mean']:+.3f} {ci(x['seeds_ci'])} {ci(x['questions_ci'])}"  # noqa: E731
    g, d = "grpo", "dpo-on-policy"
    mean = lambda m, key: f"{r['mean'][m][key]:.3f}"  # noqa: E731
    greedy = lambda m: ", ".join(f"{s[m]['greedy']:.3f}" for s in r["per_seed"])  # noqa: E731
    rows = [f"| greedy accuracy ({r['budget']['max_new_tokens']} new tokens) | {mean('base', 'greedy')} | "
            f"{mean(g, 'greedy')} (seeds {greedy(g)}) | {mean(d, 'greedy')} ({greedy(d)}) |",
            f"| sampled replies cut at the budget | {mean('base', 'sampled_cut')} | {mean(g, 'sampled_cut')} | "
            f"{mean(d, 'sampled_cut')} |",
            f"| Pass@1 = Maj@1 | {r['mean']['base']['pass_at_k'][0]:.3f} | {both(c(g, 'pass_at_k', 1))} | "
            f"{both(c(d, 'pass_at_k', 1))} |"]
    for key, name in (("maj_at_k", "Maj"), ("pass_at_k", "Pass")):
        x, y = v(g, key), v(d, key)
        rows.append(f"| {name}@{K} | {r['mean']['base'][key][ks.index(K)]:.3f} | {x['mean']:+.3f} {ci(x['interval'])} "
                    f"{x['verdict']} | {y['mean']:+.3f} {ci(y['interval'])} {y['verdict']} |")
    for key, name in (("maj_at_k", "Maj"), ("pass_at_k", "Pass")):
        rows.append(f"| {name}@{top} | {r['mean']['base'][key][-1]:.3f} | {both(c(g, key, top))} | {both(c(d, key, top))} |")
    room, seeds = r["headroom"], lambda arm, k: c(arm, "pass_at_k", k)["per_seed"]  # noqa: E731
    alone = __import__("unified_rl.course.nb_real_model", fromlist=["x"]).one_seed(r, g, 0, top)
    minutes = lambda s, m: (s[m]["wall_s"] + s[m].get("train_wall_s", 0)) / 60  # noqa: E731
    late = r["per_seed"][1:]
    frags = rows + [
        f"(its Pass@{top} was {seq([s['base']['pass_at_k'][-1] for s in r['per_seed']], '.3f')})",
        f"for both methods: \"{r['verdicts']['arms'][g]['sentence']}\"",
        f"shrinks from {c(g, 'pass_at_k', 1)['mean']:+.3f} and {c(d, 'pass_at_k', 1)['mean']:+.3f} at K = 1 to "
        f"{c(g, 'pass_at_k', top)['mean']:+.3f} at K = {top}, where {room['at_ceiling'][-1]} of the {room['questions']} "
        f"questions start at Pass@{top} = 1 on every seed: Pass@{top} can rise on {room['can_rise'][-1]} questions only, "
        f"and its mean by at most {room['largest_rise'][-1]:.3f}",
        f"(GRPO {seq(seeds(g, 1), last=', ')})",
        f"(sd {np.std(seeds(g, 1), ddof=1):.3f} against {np.std(seeds(d, 1), ddof=1):.3f})",
        f"falling by {-alone['mean']:.3f} (the questions' interval {ci(alone['questions_ci'])} below 0); seeds 1 and 2 "
        f"gave {seeds(g, top)[1]:+.3f} and {seeds(g, top)[2]:+.3f}",
        f"two verdicts): \"{lab['verdict']['sentence']}\"",
        f"the shipped parts took {sum(minutes(s, m) for s in r['per_seed'] for m in ('base', *r['arms'])) / 60:.1f} hours",
    ]
    assert round(min(minutes(s, g) for s in late)) == 16 and round(max(minutes(s, g) for s in late)) == 19
    assert all(round(minutes(s, d)) == 13 for s in late) and all(round(s["base"]["cpu_s"] / 60) == 10 for s in late)
    assert all(abs(s["base"]["cpu_s"] / 60 + sum(minutes(s, m) for m in r["arms"]) - 40) < 3 for s in late)  # "about 40"
    b = r["budget"]
    allowed = {str(b["n_test"]), str(b["samples"]), str(b["temperature"]), str(b["grpo_steps"]), str(K), "4",
               str(r["seeds"]), *rule_numbers(4), "40", "10", "16", "19", "13"}  # the timings asserted above
    return text, frags, allowed


def field_page():
    """(docs/RESULTS.md's section on the 2026 field, fragments, allowed numbers): the four experiments' shipped
    headlines and ratio counts."""
    text = open(os.path.join(REPO, "docs", "RESULTS.md"), encoding="utf-8").read()
    text = text[text.index("## The 2026 field"):text.index("## Figure 7 on a real language model")]
    t, s, p, o = (common.load_shipped(n) for n in ("teachers", "stale-samples", "sampler-precision", "real-model-opd"))
    acc = lambda r, arm: r["headline"][f"{arm} held-out greedy accuracy"]  # noqa: E731
    frags = [*(acc(t, a) for a in ("start", "teacher", "grpo", "opd", "sft-teacher")),
             *(acc(s, a) for a in ("none lag 8", "none lag 0", "tis lag 8", "mis lag 8")),
             *(acc(o, a) for a in ("teacher", "grpo", "opd", "base"))]
    frags += [v for r in (t, s, p, o) for k, v in r["headline"].items() if k.startswith("verdict, ")]
    q = p["ratios"]
    frags += [f"{q['bfloat16']['token']['std']:.4f} for bfloat16", f"{q['q8_0']['token']['std']:.4f} for Q8_0",
              f"{q['q4_1']['token']['std']:.4f} for Q4_1",
              f"of its {q['q4_1']['tokens']} sampled tokens TIS's cap truncates {q['q4_1']['token']['tis_truncated']} "
              f"and MIS's band masks {q['q4_1']['token']['mis_masked']} (bfloat16: "
              f"{q['bfloat16']['token']['tis_truncated']} and {q['bfloat16']['token']['mis_masked']})"]
    tb, sb, pb, ob = t["budget"], s["budget"], p["budget"], o["budget"]
    assert (pb["steps"], ob["steps"], pb["n_test"], ob["n_test"], pb["digits"]) == (8, 8, 32, 32, 1)  # "eight", "one-digit"
    allowed = {str(t["seeds"]), str(s["seeds"]), str(p["seeds"]), str(o["seeds"]), str(tb["teacher_steps"]),
               str(tb["rl_steps"]), str(sb["rl_steps"]), str(tb["n_test"]), *map(str, sb["lags"]), str(pb["n_test"]),
               str(ob["teacher_steps"]), *rule_numbers(3)}
    tis, mis = TisSettings(), MisSettings()  # "truncated at 2", "the ratio band [0.5, 5]": the parts' defaults
    allowed |= {f"{tis.sampler_correction_cap:g}", f"{mis.sampler_mask_low:g}", f"{mis.sampler_mask_high:g}"}
    return text, frags, allowed
