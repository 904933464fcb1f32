"""Sentences, table headers and labels of nb_teachers and widgets_teachers (notebook 13): teachers, stale samples."""

MESSAGES = {}

# nb_teachers.py: the live runs' plot
MESSAGES.update({
    "nb13.plot.accuracy": ("held-out greedy accuracy", "留出集贪心准确率"),
    "nb13.plot.eval_accuracy": ("greedy accuracy (eval questions)", "贪心准确率（评估问题）"),
    "nb13.plot.step": ("step", "步数"),
    "nb13.plot.tokens": ("tokens sampled", "已采样的 token 数"),
    "nb13.plot.per_step": ("accuracy per step", "每步的准确率"),
    "nb13.plot.per_token": ("accuracy per sampled token", "每个采样 token 的准确率"),
    "nb13.plot.teachers_title": (
        "Teachers on the lab: {seeds} seed(s), {steps} steps per arm, a {teacher}-step GRPO teacher",
        "实验环境中的教师模型：{seeds} 个随机种子，每个实验组 {steps} 步，教师是训练了 {teacher} 步的 GRPO 模型"),
})

# nb_teachers.py: the shipped experiments, in words computed from the result
MESSAGES.update({
    "nb13.verdict.raised": (
        "{label}: {mean:+.3f}; its simultaneous {level:.2%} interval over the seeds ({m} verdicts read together), "
        "[{lo:+.3f}, {hi:+.3f}], lies above 0: {verdict}.",
        "{label}：{mean:+.3f}；它跨随机种子的 {level:.2%} 联合区间（{m} 个结论一起读）[{lo:+.3f}, {hi:+.3f}] "
        "整个在 0 之上：{verdict}。"),
    "nb13.verdict.lowered": (
        "{label}: {mean:+.3f}; its simultaneous {level:.2%} interval over the seeds ({m} verdicts read together), "
        "[{lo:+.3f}, {hi:+.3f}], lies below 0: {verdict}.",
        "{label}：{mean:+.3f}；它跨随机种子的 {level:.2%} 联合区间（{m} 个结论一起读）[{lo:+.3f}, {hi:+.3f}] "
        "整个在 0 之下：{verdict}。"),
    "nb13.verdict.no_change": (
        "{label}: {mean:+.3f}; its simultaneous {level:.2%} interval over the seeds ({m} verdicts read together), "
        "[{lo:+.3f}, {hi:+.3f}], lies inside +/- {margin}: {verdict} (any difference is smaller than the margin "
        "the course names).",
        "{label}：{mean:+.3f}；它跨随机种子的 {level:.2%} 联合区间（{m} 个结论一起读）[{lo:+.3f}, {hi:+.3f}] "
        "落在 +/- {margin} 之内：{verdict}（任何差别都小于课程所说的界限）。"),
    "nb13.verdict.unclear": (
        "{label}: {mean:+.3f}; its simultaneous {level:.2%} interval over the seeds ({m} verdicts read together), "
        "[{lo:+.3f}, {hi:+.3f}], holds 0 and reaches past +/- {margin}: {verdict}. These seeds tell the two arms "
        "neither apart nor equal.",
        "{label}：{mean:+.3f}；它跨随机种子的 {level:.2%} 联合区间（{m} 个结论一起读）[{lo:+.3f}, {hi:+.3f}] "
        "包含 0，又超出 +/- {margin}：{verdict}。这些随机种子既不能把两个实验组分开，也不能说明它们相同。"),
    "nb13.verdict.none": (
        "{label}: {mean:+.3f} over {n} seed(s): {verdict}.",
        "{label}：{n} 个随机种子上的均值 {mean:+.3f}：{verdict}。"),
    "nb13.descriptive": (
        "{label}: {mean:+.3f}, 95 % interval over the seeds [{lo:+.3f}, {hi:+.3f}] (descriptive: no verdict).",
        "{label}：{mean:+.3f}，跨随机种子的 95 % 区间 [{lo:+.3f}, {hi:+.3f}]（只作描述，不下结论）。"),
    "nb13.too_few": (
        "No comparison gets a verdict: {n} seed(s), and the rule needs {needed}.",
        "没有一个比较得出结论：只有 {n} 个随机种子，而规则需要 {needed} 个。"),
    "nb13.teachers.head": (
        "| model | held-out greedy accuracy | per seed | tokens sampled | gain per 1000 tokens |",
        "| 模型 | 留出集贪心准确率 | 各随机种子 | 已采样的 token 数 | 每 1000 个 token 的提高 |"),
    "nb13.teachers.budget": (
        "{seeds} seed(s); each arm {steps} steps from the seed's SFT model, the teacher {teacher} GRPO steps; "
        "{n} held-out questions answered greedily by every model.",
        "{seeds} 个随机种子；每个实验组从该随机种子的 SFT 模型出发训练 {steps} 步，教师模型训练了 {teacher} 步 GRPO；"
        "每个模型都贪心回答 {n} 道留出问题。"),
    "nb13.stale.head": (
        "| lag (steps) | {corrections} |",
        "| 滞后（步） | {corrections} |"),
    "nb13.stale.budget": (
        "{seeds} seed(s); GRPO, {steps} steps per arm, samples {lags} steps stale; verdicts at lag {primary} only; "
        "{n} held-out questions answered greedily by every model.",
        "{seeds} 个随机种子；GRPO 每个实验组 {steps} 步，样本滞后 {lags} 步；只在滞后 {primary} 处下结论；"
        "每个模型都贪心回答 {n} 道留出问题。"),
})

# widgets_teachers.py: the teacher's temperature and GKD's beta
MESSAGES.update({
    "w.teach.title": ("A teacher's per-token coefficient: OPD and GKD", "教师给出的逐 token 系数：OPD 与 GKD"),
    "w.teach.note": (
        "The teacher's logits over five tokens, divided by its temperature; the sampled token is the one chosen. "
        "Every GC is the package's (parts/advantages/teacher.py, parts/policy_terms/gkd.py) with A = 1.",
        "教师模型对五个 token 的 logits 除以它的温度；被采样的是所选的那个 token。"
        "每个 GC 都由软件包计算（parts/advantages/teacher.py、parts/policy_terms/gkd.py），A = 1。"),
    "w.teach.p": ("π_θ of the sampled token", "被采样 token 的 π_θ"),
    "w.teach.temperature": ("teacher's temperature", "教师模型的温度"),
    "w.teach.token": ("sampled token", "被采样的 token"),
    "w.teach.rank": ("the teacher's no. {rank}", "教师模型的第 {rank} 名"),
    "w.teach.xlabel": ("π_θ of the sampled token", "被采样 token 的 π_θ"),
    "w.teach.ylabel": ("GC of the sampled token", "被采样 token 的 GC"),
    "w.teach.opd": ("OPD: log π_T − log π_θ", "OPD：log π_T − log π_θ"),
    "w.teach.gkd": ("GKD, β = {beta:.2f}", "GKD，β = {beta:.2f}"),
    "w.teach.forward": ("GKD, β = 0: forward KL", "GKD，β = 0：正向 KL"),
    "w.teach.reverse": ("GKD, β = 1: reverse KL", "GKD，β = 1：反向 KL"),
    "w.teach.q_line": ("π_θ = π_T: every GC is 0", "π_θ = π_T：每个 GC 都是 0"),
    "w.teach.dist": ("the teacher's distribution at temperature {tau:.2f}", "温度 {tau:.2f} 下教师模型的分布"),
    "w.teach.tokens": ("token (by the teacher's rank)", "token（按教师模型的排名）"),
    "w.teach.col_what": ("quantity", "量"),
    "w.teach.col_value": ("value", "值"),
    "w.teach.row_q": ("π_T of the sampled token", "被采样 token 的 π_T"),
})

# widgets_teachers.py: the sampler's ratio at each lag, TIS's cap and MIS's band
MESSAGES.update({
    "w.samp.title": ("A stale sampler's ratio, and what TIS and MIS do with it",
                     "陈旧采样器的比率，以及 TIS 和 MIS 如何处理它"),
    "w.samp.note": (
        "ρ_s = π_old / π_sampler of every token the lab's GRPO run drew at each lag (measured above). TIS weighs a "
        "token's GC by min(ρ_s, C); MIS keeps it only where low ≤ ρ_s ≤ high (parts/sampler_corrections.py).",
        "ρ_s = π_old / π_sampler：上面测得的实验环境 GRPO 运行在每个滞后下采样的每个 token。TIS 用 min(ρ_s, C) "
        "给 token 的 GC 加权；MIS 只在 low ≤ ρ_s ≤ high 时保留它（parts/sampler_corrections.py）。"),
    "w.samp.lag": ("lag (steps)", "滞后（步）"),
    "w.samp.cap": ("TIS's cap C", "TIS 的上限 C"),
    "w.samp.low": ("MIS's low", "MIS 的下界"),
    "w.samp.high": ("MIS's high", "MIS 的上界"),
    "w.samp.hist_x": ("log ρ_s = log π_old − log π_sampler", "log ρ_s = log π_old − log π_sampler"),
    "w.samp.hist_y": ("tokens", "token 数"),
    "w.samp.hist_title": ("lag {lag}: {n} tokens", "滞后 {lag}：{n} 个 token"),
    "w.samp.weight_x": ("ρ_s", "ρ_s"),
    "w.samp.weight_y": ("weight on the token's GC", "token 的 GC 上的权重"),
    "w.samp.none": ("no correction", "不修正"),
    "w.samp.col_lag": ("lag", "滞后"),
    "w.samp.col_tokens": ("tokens", "token 数"),
    "w.samp.col_std": ("std of log ρ_s", "log ρ_s 的标准差"),
    "w.samp.col_max": ("max |log ρ_s|", "最大 |log ρ_s|"),
    "w.samp.col_tis": ("TIS: share with ρ_s > C", "TIS：ρ_s > C 的比例"),
    "w.samp.col_mis": ("MIS: share masked", "MIS：被掩去的比例"),
})
