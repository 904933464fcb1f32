"""Sentences, table headers and labels of nb_preference (notebook 11): its findings quote measured numbers."""

MESSAGES = {
    "nb.pref.row": ("row (first half | second half)", "行（前一半 | 后一半）"),
    "nb.pref.one_scale": ("GC (one scale, ±{vmax:.3g})", "GC（同一刻度，±{vmax:.3g}）"),
    "nb.pref.x_label": ("x = Δ mean log π per token since SFT", "x = 自 SFT 以来每个 token 平均 log π 的变化 Δ"),
    "nb.pref.x_title": ("fixed pairs: x⁺ chosen (solid), x⁻ rejected (dashed)", "固定的偏好对：x⁺ 被选中（实线），x⁻ 被拒绝（虚线）"),
    "nb.pref.arm_head": ("| arm | held-out accuracy | x⁺ = Δ mean log π(o⁺) | x⁻ = Δ mean log π(o⁻) | margin | pairs with x⁺ < 0 |",
                         "| 组 | 留出集准确率 | x⁺ = Δ mean log π(o⁺) | x⁻ = Δ mean log π(o⁻) | 间隔 | x⁺ < 0 的对 |"),
    "nb.pref.cmp_head": ("| arm | method, settings | lr | held-out accuracy | per seed | vs SFT | x⁺ at the end | x⁻ at the end | "
                         "pairs whose x⁺ a DPO step lowers |",
                         "| 组 | 方法，设置 | lr | 留出集准确率 | 每个种子 | 相对 SFT | 结束时的 x⁺ | 结束时的 x⁻ | "
                         "一步 DPO 会降低其 x⁺ 的对 |"),
    "nb.pref.sft_model": ("SFT model", "SFT 模型"),
    "nb.pref.cos": ("At the SFT model the cosine between a pair's ∇x⁺ and ∇x⁻ averages {sft} over the seeds; "
                    "after DPO at 2e-5 it is {fast} (median {median}).",
                    "在 SFT 模型处，一对的 ∇x⁺ 与 ∇x⁻ 之间的余弦在各种子上平均为 {sft}；以 2e-5 做 DPO 之后为 {fast}（中位数 {median}）。"),
    "nb.pref.fast_end": ("DPO at 2e-5: x⁺ ended below zero on {below} of {n} seeds ({x_plus}, against {x_minus} "
                         "for x⁻), on {fell} of the pairs, while the margin grew to {margin}.",
                         "以 2e-5 做 DPO：在 {n} 个种子中有 {below} 个的 x⁺ 最终低于零（{x_plus}，而 x⁻ 为 {x_minus}），"
                         "涉及 {fell} 的偏好对，同时间隔增长到 {margin}。"),
    "nb.pref.own_rate": ("DPO at its own rate: x⁺ peaked at step {lo:.0f} to {hi:.0f} and was lower at the end "
                         "on {fell} of {n} seeds, ending at {x_plus} with {below} of the pairs below zero (cosine {cos}).",
                         "以它自己的学习率做 DPO：x⁺ 在第 {lo:.0f} 到 {hi:.0f} 步达到峰值，并在 {n} 个种子中的 {fell} 个上"
                         "结束时更低，最终为 {x_plus}，有 {below} 的偏好对低于零（余弦 {cos}）。"),
    "nb.pref.lowered": ("Pairs whose x⁺ a plain-gradient DPO step would lower: {sft} at the SFT model, {fast} after DPO at 2e-5.",
                        "一步普通梯度的 DPO 会降低其 x⁺ 的偏好对：在 SFT 模型处为 {sft}，以 2e-5 做 DPO 之后为 {fast}。"),
    "nb.pref.x_end": ("x⁺ at the end: ORPO {orpo}, SFT on the chosen answers {sft}, IPO {ipo}; held-out accuracy "
                      "IPO {acc_ipo}, DPO at IPO's rate {acc_fast}; IPO minus it on the same seed: {said}.",
                      "结束时的 x⁺：ORPO {orpo}，在被选中答案上做 SFT {sft}，IPO {ipo}；留出集准确率 IPO {acc_ipo}，"
                      "以 IPO 的学习率做 DPO {acc_fast}；同一随机种子上 IPO 减去它：{said}。"),
    "nb.pref.sft_seeds": ("SFT models of the seeds: {accs} held-out accuracy.", "各种子的 SFT 模型的留出集准确率：{accs}。"),
    "nb.pref.four": ("DPO, IPO, SimPO, KTO: {accs} (mean ± std over the seeds).",
                     "DPO、IPO、SimPO、KTO：{accs}（各随机种子上的均值 ± 标准差）。"),
    "nb.pref.lifted": ("Those four lifted the weaker SFT models by {lo:.2f} to {hi:.2f}; on the strong one "
                       "(seed {seed}: {sft:.3f}) they ended at {after_lo:.3f} to {after_hi:.3f}.",
                       "这四种方法使较弱的 SFT 模型的准确率上升了 {lo:.2f} 到 {hi:.2f}；在较强的那个上"
                       "（种子 {seed}：{sft:.3f}）它们最终为 {after_lo:.3f} 到 {after_hi:.3f}。"),
    "nb.pref.orpo": ("ORPO {orpo} (strong seed {strong:.3f}); SFT on the chosen answers alone (ORPO with λ = 0) {sft}; "
                     "ORPO minus it on the same seed: {said}.",
                     "ORPO {orpo}（强种子 {strong:.3f}）；只在被选中答案上做 SFT（λ = 0 的 ORPO）{sft}；"
                     "同一随机种子上 ORPO 减去它：{said}。"),
    "nb.pref.fast": ("DPO at 2e-5 {acc}; minus DPO at its own rate on the same seed: {said}, below it on {below} of "
                     "{n} seeds (a description, not a verdict); its held-out accuracy peaked at step {lo:.0f} to {hi:.0f}.",
                     "以 2e-5 做 DPO {acc}；同一随机种子上减去以它自己学习率做的 DPO：{said}，在 {n} 个种子中的 {below} 个上"
                     "低于它（这是描述，不是结论）；它的留出集准确率在第 {lo:.0f} 到 {hi:.0f} 步达到峰值。"),
}

# nb_peers.py: what a TRL / verl config means here
MESSAGES.update({
    "nb.peers.head": ("| {peer} config | here | what it changes in the GC |", "| {peer} 配置 | 这里的对应 | 它改变 GC 的什么 |"),
    "nb.peers.two_rewards": ("(two reward functions)", "（两个奖励函数）"),
    "nb.peers.gc.grpo": ("each response averaged over its tokens (eq 19's 1/|o|); TRL's defaults: A's eps 1e-4, "
                         "the KL as r k3", "每个回答在自己的 token 上取平均（公式 19 的 1/|o|）；TRL 的默认："
                         "A 的 eps 为 1e-4，KL 取 r k3"),
    "nb.peers.gc.dr_grpo": ("row factor |o_i| / L, L = max_completion_length: every token pushed alike, whatever "
                            "the length", "行因子 |o_i| / L，L = max_completion_length：无论长度，每个 token 被推动得一样"),
    "nb.peers.gc.dapo": ("row factor B |o_i| / sum_j |o_j| over the whole batch (DAPO's paper: per group)",
                         "行因子 B |o_i| / sum_j |o_j|，在整个批次上（DAPO 论文：在每组内）"),
    "nb.peers.gc.bnpo": ("dapo's factor within each micro-batch: per group when a micro-batch is one group",
                         "在每个微批次内取 dapo 的因子：一个微批次正好是一组时，就是在组内"),
    "nb.peers.gc.luspo": ("the sequence ratio s_i on every token, times |o_i|: GC = |o_i| s_i A_i, or 0 where clipped",
                          "每个 token 上是序列比率 s_i，再乘以 |o_i|：GC = |o_i| s_i A_i，被裁剪处为 0"),
    "nb.peers.gc.cispo": ("never 0: a stop-gradient weight min(r, epsilon_high) times A (TRL's bound is epsilon_high "
                          "itself; unset, it is epsilon = 0.2)", "从不为 0：停止梯度的权重 min(r, epsilon_high) 乘以 A"
                          "（TRL 的上界就是 epsilon_high 本身；不设置时等于 epsilon = 0.2）"),
    "nb.peers.gc.sapo": ("a smooth gate 4 sigma(1 - sigma) r A in place of the clip's jump to 0",
                         "用平滑的门 4 sigma(1 - sigma) r A 代替裁剪突然降为 0"),
    "nb.peers.gc.vespo": ("a Gamma weight phi(W) of the sequence's ratio W = prod r, never a hard 0",
                          "序列比率 W = prod r 的 Gamma 权重 phi(W)，从不硬性为 0"),
    "nb.peers.gc.scale_batch": ("A divided by the batch's reward std instead of each group's",
                                "A 除以整个批次奖励的标准差，而不是每组的"),
    "nb.peers.gc.scale_none": ("A = r - group mean: no std (Dr. GRPO)", "A = r - 组均值：不除以标准差（Dr. GRPO）"),
    "nb.peers.gc.epsilon_high": ("the push on A > 0 tokens stops at r > 1 + epsilon_high instead of 1 + epsilon",
                                 "A > 0 的 token 在 r > 1 + epsilon_high 时才停止推动，而不是 1 + epsilon"),
    "nb.peers.gc.delta": ("A < 0 tokens whose ratio passed delta get 0", "比率已超过 delta 的 A < 0 的 token 得到 0"),
    "nb.peers.gc.sequence": ("one ratio per response, exp(mean log r), on every token (GSPO)",
                             "每个回答一个比率 exp(mean log r)，作用在每个 token 上（GSPO）"),
    "nb.peers.gc.beta": ("+ beta r x, x = log(pi_ref/pi): the r k3 penalty follows KL(pi || pi_ref)",
                         "+ beta r x，x = log(pi_ref/pi)：r k3 惩罚跟随 KL(pi || pi_ref)"),
    "nb.peers.gc.plain_k3": ("+ beta (pi_ref/pi - 1): eq 21's k3 term, which follows KL(pi_ref || pi)",
                             "+ beta (pi_ref/pi - 1)：公式 21 的 k3 项，跟随 KL(pi_ref || pi)"),
    "nb.peers.gc.truncated": ("0 on responses cut at the budget, which leave every normaliser",
                              "在预算处被截断的回答上为 0，并且它们不计入任何归一化"),
    "nb.peers.gc.entropy": ("0 on tokens below the batch's top-entropy quantile", "低于批次高熵分位数的 token 上为 0"),
    "nb.peers.gc.off_policy": ("0 on a response with A < 0 whose mean log(pi_old/pi) passed the threshold",
                               "A < 0 且平均 log(pi_old/pi) 超过阈值的回答上为 0"),
    "nb.peers.gc.gdpo": ("A from each reward normalised in its group, summed, normalised over the batch",
                         "A 来自：每个奖励先在组内归一化，相加后再在整个批次上归一化"),
    "nb.peers.gc.verl_vanilla": ("PPO's clip, token-mean over the batch, and a dual clip: A < 0 tokens past "
                                 "r = 3 get 0", "PPO 的裁剪，在整个批次上按 token 平均，再加双重裁剪：比率超过 3 的 "
                                 "A < 0 的 token 得到 0"),
    "nb.peers.gc.gmpo": ("A rho_i, rho_i the geometric mean of the clipped ratios; 0 on tokens outside the clip",
                         "A rho_i，rho_i 是裁剪后比率的几何平均；在裁剪范围外的 token 上为 0"),
    "nb.peers.gc.clip_cov": ("PPO's GC, 0 on a few drawn tokens of high A-log-prob covariance",
                             "PPO 的 GC，在少数随机抽取的、A 与对数概率协方差高的 token 上为 0"),
    "nb.peers.gc.kl_cov": ("r A with no clip, minus coef sign(log r) on the top-covariance tokens",
                           "不裁剪的 r A，在协方差最高的 token 上再减去 coef sign(log r)"),
    "nb.peers.gc.gpg": ("alpha (r - mean) with no ratio: the same GC at every update of a batch",
                        "没有比率的 alpha (r - mean)：同一批次的每次更新 GC 都相同"),
    "nb.peers.gc.opo": ("|o_i| (r_i - b), b the length-weighted mean reward", "|o_i| (r_i - b)，b 是按长度加权的平均奖励"),
    "nb.peers.gc.passk": ("only each group's best answer: (r_max - r_second) / std", "只有每组最好的回答：(r_max - r_second) / std"),
    "nb.peers.gc.reinforce_pp": ("r - group mean, normalised over every token of the batch",
                                 "r - 组均值，在批次的所有 token 上归一化"),
    "nb.peers.gc.rloo": ("|o_i| (r_i - mean of the others): a token sum", "|o_i| (r_i - 其他回答的均值)：按 token 求和"),
})

# notebook 11's map of TRL's DPOConfig.loss_type (nb_preference.trl_map_rows)
MESSAGES.update({
    "nb.pref.map_head": ("| TRL `loss_type` | the same loss here: `train(\"dpo\", ...)` | GC on the chosen: $a^+$ | on the rejected: $a^-$ "
                         "| what it changes in the coefficient plot | arXiv |\n|---|---|---|---|---|---|",
                         "| TRL `loss_type` | 这里的同一损失：`train(\"dpo\", ...)` | 被选中回答上的 GC：$a^+$ | 被拒绝回答上：$a^-$ "
                         "| 它在系数图上改变了什么 | arXiv |\n|---|---|---|---|---|---|"),
    "nb.pref.map.sigmoid": ("DPO as its paper writes it: on sums, so a longer response is pushed harder; fades as $u$ grows, never reverses",
                            "按 DPO 论文的写法：用求和，所以越长的回答被推得越用力；随 $u$ 增大而减弱，从不反向"),
    "nb.pref.map.hinge": ("a step: the full push $\\beta$ until $u$ reaches 1 (the margin $1/\\beta$), then nothing",
                          "一个台阶：在 $u$ 达到 1（间隔 $1/\\beta$）之前推动为 $\\beta$，之后为 0"),
    "nb.pref.map.ipo": ("a straight line: 0 at the target $1/(2\\beta)$, reversed past it (TRL: per-token means, $\\beta$ in $\\tau$'s place)",
                        "一条直线：在目标 $1/(2\\beta)$ 处为 0，超过后反向（TRL：逐 token 平均，$\\beta$ 充当 $\\tau$）"),
    "nb.pref.map.exo_pair": ("a bump that falls to 0 at $u=\\log\\frac{{1-\\varepsilon}}{{\\varepsilon}}$ and reverses past it",
                             "一个鼓包，在 $u=\\log\\frac{{1-\\varepsilon}}{{\\varepsilon}}$ 处降为 0，超过后反向"),
    "nb.pref.map.nca_pair": ("each response against $\\pi_{{ref}}$ alone: the chosen push turns negative once $\\beta s^+>\\log 2$; the rejected is always pushed down",
                             "每个回答只和 $\\pi_{{ref}}$ 比：一旦 $\\beta s^+>\\log 2$，被选中回答的推动变为负；被拒绝回答始终被往下推"),
    "nb.pref.map.robust": ("DPO's curve, lifted: it never fades to 0 (its floor is $\\beta\\varepsilon/(1-2\\varepsilon)$)",
                           "DPO 的曲线被整体抬高：它永远不会衰减到 0（下限是 $\\beta\\varepsilon/(1-2\\varepsilon)$）"),
    "nb.pref.map.bco_pair": ("no coupling: the chosen is raised and the rejected lowered, each against $\\pi_{{ref}}$ alone",
                             "没有耦合：被选中回答被抬高、被拒绝回答被压低，各自只和 $\\pi_{{ref}}$ 比"),
    "nb.pref.map.sppo_hard": ("two straight lines, one target each: $s^+\\to 1/(2\\beta)$, $s^-\\to -1/(2\\beta)$",
                              "两条直线，各有一个目标：$s^+\\to 1/(2\\beta)$，$s^-\\to -1/(2\\beta)$"),
    "nb.pref.map.aot": ("DPO with label smoothing on sorted margins: a pair gets the GC of the rank it holds in the batch",
                        "在排好序的间隔上做带标签平滑的 DPO：一对回答得到它在批次中所占名次的 GC"),
    "nb.pref.map.aot_unpaired": ("chosen and rejected log-ratios sorted apart: each response gets the GC of its own rank",
                                 "被选中与被拒绝回答的对数比分别排序：每个回答得到它自己名次的 GC"),
    "nb.pref.map.apo_zero": ("no coupling: chosen up, rejected down, each pushed hardest at its own $s=0$",
                             "没有耦合：被选中回答往上、被拒绝回答往下，各自在 $s=0$ 处推得最猛"),
    "nb.pref.map.apo_down": ("the chosen is pushed down wherever its own term outweighs the pair's; the rejected always down",
                             "只要被选中回答自己的项超过这对回答的项，它就被往下推；被拒绝回答始终被往下推"),
    "nb.pref.map.discopop": ("DPO's logistic loss blended with $e^{{-u}}$ by the weight $m$, whose own slope adds a term",
                             "DPO 的 logistic 损失与 $e^{{-u}}$ 按权重 $m$ 混合，$m$ 自身的斜率又多出一项"),
    "nb.pref.map.sft": ("SFT's flat 1 on the chosen (TRL: one mean over the batch's chosen tokens); no $\\pi_{{ref}}$, nothing on the rejected",
                        "在被选中回答上是 SFT 的常数 1（TRL：对批次中所有被选中 token 取一个平均）；不用 $\\pi_{{ref}}$，被拒绝回答上为 0"),
    "nb.pref.map.sigmoid_norm": ("the default here: DeepSeekMath's eq 12-14 on per-token means",
                                 "这里的默认值：DeepSeekMath 的公式 12–14，用逐 token 平均"),
})

# readings.py: the verdicts notebooks 08, 10 and 11 read from their shipped runs (the course's one rule)
MESSAGES.update({
    "nb.read.head": ("| comparison, same seed | per seed | mean | simultaneous interval (level, m) | verdict |",
                     "| 比较（同一随机种子） | 每个随机种子 | 均值 | 联合区间（置信水平，m） | 结论 |"),
    "nb.read.said": ("{mean} {interval} ({verdict})", "{mean} {interval}（{verdict}）"),
    "nb.read.rule": ("By the course's verdict rule: {m} comparisons read together over {n} seeds, each simultaneous "
                     "interval at {level}: the mean ± {each:.2f} standard errors (one interval alone at 95 % would "
                     "take {alone:.2f}); no change only inside ±{margin}.",
                     "按课程的结论规则：{m} 个比较一起读，跨 {n} 个随机种子，每个联合区间的置信水平为 {level}："
                     "均值 ± {each:.2f} 个标准误（单独一个 95 % 区间只需 {alone:.2f} 个）；只有落在 ±{margin} 之内才是没有变化。"),
    "nb.read.too_few": ("By the course's verdict rule: {n} seed(s) give no verdict (it needs {need} or more); the "
                        "comparisons are listed under the rule's word for that.",
                        "按课程的结论规则：{n} 个随机种子不给出结论（至少需要 {need} 个）；各个比较列在规则为此所用的词之下。"),
    "nb.read.group": ("**{word}** ({n} of {m}): {items}.", "**{word}**（{m} 个中的 {n} 个）：{items}。"),
})
