"""Notebook 13's printed sentences in Chinese (i18n.tr): teachers (OPD, GKD) and a sampler that is not the learner."""

SENTENCES = {
    # setup, and the teacher
    "preset {name}: {questions} questions x {G} answers per step, lr {lr}":
        "预设 {name}：每步 {questions} 个问题 x {G} 个回答，学习率 {lr}",
    "held-out greedy accuracy: the SFT model {start:.3f}, the teacher after {steps} GRPO steps {teacher:.3f}":
        "留出集贪心准确率：SFT 模型 {start:.3f}，训练了 {steps} 步 GRPO 的教师模型 {teacher:.3f}",
    # 2. OPD's coefficient, derived
    "dJ/dz_k = E_v[(log q_v - log p_v) d log p_v / dz_k] for k = 1, 2, 3; the reward's own gradient averages to 0":
        "对 k = 1, 2, 3 都有 dJ/dz_k = E_v[(log q_v - log p_v) d log p_v / dz_k]；奖励自身的梯度平均为 0",
    "GC of the first token with the stop-gradient: {gc}; without it: {leaked}":
        "有停止梯度时第一个 token 的 GC：{gc}；没有时：{leaked}",
    # 3. autograd on the model
    "{positions} response positions, every token of the vocabulary: OPD's coefficient against -grad KL(pi_theta "
    "|| pi_T), largest relative difference {opd:.1e}; with the reward left in the graph {leaked:.2f}":
        "{positions} 个回答位置，词表中的每个 token：OPD 的系数与 -grad KL(pi_theta || pi_T) 相比，最大相对差 {opd:.1e}；"
        "把奖励留在计算图中时为 {leaked:.2f}",
    "{name:<14} max |grad_theta J - grad_theta surrogate| = {diff:.1e}":
        "{name:<14} |grad_theta J - grad_theta 替代损失| 的最大值 = {diff:.1e}",
    # 4. GKD
    "the package's gkd against sympy at beta = 0, 0.3 and 1, three (p, q) each: equal to 1e-12":
        "软件包的 gkd 与 sympy 在 beta = 0、0.3 和 1 处各比较三组 (p, q)：相差不到 1e-12",
    "gkd, beta = {beta}: max |grad_theta J - grad_theta surrogate| = {diff:.1e}":
        "gkd，beta = {beta}：|grad_theta J - grad_theta 替代损失| 的最大值 = {diff:.1e}",
    "gkd_lambda = {lam}: {rows} rows, {given} of them the SFT set's reference solutions; the sampler's "
    "log-probs recorded on {recorded} of them":
        "gkd_lambda = {lam}：{rows} 行，其中 {given} 行是 SFT 数据集的参考解答；记录了采样器对数概率的有 {recorded} 行",
    "top token: pi_T {sharp:.3f} at temperature 1, {soft:.3f} at 3; OPD's GC at pi_theta = 0.2: {opd1:+.3f} -> "
    "{opd3:+.3f}; GKD's (beta 0.5): {gkd1:+.3f} -> {gkd3:+.3f}":
        "排名第一的 token：温度 1 时 pi_T 为 {sharp:.3f}，温度 3 时为 {soft:.3f}；pi_theta = 0.2 时 OPD 的 GC："
        "{opd1:+.3f} -> {opd3:+.3f}；GKD 的（beta 0.5）：{gkd1:+.3f} -> {gkd3:+.3f}",
    # 5. a sampler that is not the learner
    "the ratio the wrong way round": "比率取反了",
    "the truncation on the advantage": "截断加在了优势上",
    "TIS's GC of the first token at the first update: {gc}": "第一次更新时 TIS 给第一个 token 的 GC：{gc}",
    "{name}: {gc}": "{name}：{gc}",
    "| sampler | tokens | std of log rho, per token | max abs(log rho) | rho > 2 (TIS) | outside [0.5, 5] (MIS) "
    "| std of log rho, per answer | answers outside [0.5, 5] |\n|---|---|---|---|---|---|---|---|\n":
        "| 采样器 | token 数 | log rho 的标准差（每个 token） | 最大 abs(log rho) | rho > 2（TIS） | 在 [0.5, 5] 之外（MIS） "
        "| log rho 的标准差（每个回答） | 在 [0.5, 5] 之外的回答 |\n|---|---|---|---|---|---|---|---|\n",
    "{name:<11} on a Q4_1 sampler's batch (max abs(log rho) {rho:.3f}): relative max |grad_theta J - "
    "grad_theta surrogate| = {diff:.1e}":
        "{name:<11} 在 Q4_1 采样器的批次上（最大 abs(log rho) {rho:.3f}）：|grad_theta J - grad_theta 替代损失| "
        "的最大相对值 = {diff:.1e}",
    "lag {lag}: {n} tokens, std of log rho {std:.4f}, max abs(log rho) {top:.4f}, rho > 2 on {tis:.1%}, "
    "outside [0.5, 5] on {mis:.1%}":
        "滞后 {lag}：{n} 个 token，log rho 的标准差 {std:.4f}，最大 abs(log rho) {top:.4f}，rho > 2 的占 {tis:.1%}，"
        "在 [0.5, 5] 之外的占 {mis:.1%}",
    "C = 1.05 and [0.97, 1.03] at lag {lag}: TIS binds on {tis:.1%} of the tokens, MIS masks {mis:.1%}":
        "C = 1.05 和 [0.97, 1.03]，滞后 {lag}：TIS 对 {tis:.1%} 的 token 起作用，MIS 掩去 {mis:.1%}",
    # 6. training
    "grpo + tis, lag {lag}": "grpo + tis，滞后 {lag}",
    "grpo, lag {lag}": "grpo，滞后 {lag}",
    "{label:<18} held-out accuracy {acc0:.3f} -> {acc:.3f}; {tokens:.0f} tokens sampled; {seconds:.1f} s":
        "{label:<18} 留出集准确率 {acc0:.3f} -> {acc:.3f}；采样了 {tokens:.0f} 个 token；{seconds:.1f} 秒",
    "grpo + tis: the cap bound the weight of {n} of {total} tokens ({share:.2%})":
        "grpo + tis：上限约束了 {total} 个 token 中 {n} 个的权重（{share:.2%}）",
    "GRPO's clip fraction, largest over every step of every run: {clipped}":
        "GRPO 的裁剪比例，在每次运行的每一步中取最大：{clipped}",
    "SFT model": "SFT 模型",
    "teacher": "教师模型",
}
