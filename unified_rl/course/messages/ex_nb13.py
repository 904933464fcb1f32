"""Texts of the exercises of `unified_rl.course.ex.nb13_teachers`: titles, hints, case names, why-nots."""

MESSAGES = {
    "nb13.q1.title": ("Q1: implement OPD's coefficient", "Q1：实现 OPD 的系数"),
    "nb13.q1.hint1": (
        "Each response token's reward is the teacher's log-ratio to the policy, `teacher_logp - logp`; with "
        "REINFORCE's policy term the coefficient is that reward itself, 0 off the mask.",
        "每个回答 token 的奖励是教师模型对策略的对数比 `teacher_logp - logp`；在 REINFORCE 的策略项下，系数就是这个奖励本身，"
        "掩码之外为 0。"),
    "nb13.q1.hint2": (
        "The reward is a number fixed before the update: `.detach()` it. Left in the graph, `- logp` inside it sends "
        "a gradient of its own into `logp` through eq 5's surrogate, and the update is no longer the reverse KL's.",
        "奖励是更新之前就固定的数：对它 `.detach()`。如果留在计算图里，其中的 `- logp` 会经过公式 5 的替代损失向 `logp` "
        "送去自己的梯度，更新就不再是反向 KL 的梯度了。"),
    "nb13.q1.case.teacher_agrees": ("the teacher agrees with the policy on every token",
                                    "教师模型在每个 token 上都与策略一致"),
    "nb13.q1.case.ragged_batch": ("a ragged batch", "长度参差的批次"),
    "nb13.q2.title": ("Q2: implement OPD on a stale sampler's batch, with TIS", "Q2：在陈旧采样器的批次上实现带 TIS 的 OPD"),
    "nb13.q2.hint1": (
        "The ratio TIS reads is `rho_s = exp(logp_old - sampler_logp)`: the learner at the batch's start over the "
        "sampler that drew the token. Its weight is `min(rho_s, cap)`.",
        "TIS 读取的比率是 `rho_s = exp(logp_old - sampler_logp)`：批次开始时的学习者除以抽出这个 token 的采样器。"
        "它的权重是 `min(rho_s, cap)`。"),
    "nb13.q2.hint2": (
        "Multiply OPD's reward `(teacher_logp - logp).detach()` by that weight, on the mask. The cap bounds the "
        "weight, not the reward and not their product.",
        "把 OPD 的奖励 `(teacher_logp - logp).detach()` 乘以这个权重，只在掩码上。上限约束的是权重，"
        "不是奖励，也不是两者的乘积。"),
    "nb13.q2.case.sampler_is_the_learner": ("the sampler is the learner: rho_s = 1", "采样器就是学习者：rho_s = 1"),
    "nb13.q2.case.one_token_past_the_cap": ("one token's rho_s past the cap, one below 1",
                                            "一个 token 的 rho_s 超过上限，一个小于 1"),
    "nb13.q2.case.ragged_batch": ("a ragged batch", "长度参差的批次"),
    "nb13.q3.title": ("Q3: implement GKD's coefficient at beta", "Q3：实现 β 下 GKD 的系数"),
    "nb13.q3.hint1": (
        "Write p = exp(logp) (detached) and q = exp(teacher_logp); the mixture's mass on the sampled token is "
        "`m = (1 - beta) * p + beta * q`, and each coin is (mass, 1 - mass).",
        "令 p = exp(logp)（detach）、q = exp(teacher_logp)；混合分布在被采样 token 上的质量是 "
        "`m = (1 - beta) * p + beta * q`，每枚硬币是（质量，1 − 质量）。"),
    "nb13.q3.hint2": (
        "The GC is minus the derivative of the JSD in log p: `-(1 - beta) * p * (log(p / m) - log((1 - p) / (1 - m)))`, "
        "0 off the mask.",
        "GC 是 JSD 对 log p 的导数取负：`-(1 - beta) * p * (log(p / m) - log((1 - p) / (1 - m)))`，掩码之外为 0。"),
    "nb13.q3.case.teacher_agrees": ("the teacher agrees with the policy", "教师模型与策略一致"),
    "nb13.q3.case.ragged_batch": ("a ragged batch", "长度参差的批次"),
    "nb13.q4.title": (
        "Q4: predict TIS's GC of one token (OPD's reward +0.8, pi_old 0.3, pi_sampler 0.1, C = 2)",
        "Q4：预测一个 token 在 TIS 下的 GC（OPD 的奖励 +0.8，pi_old 0.3，pi_sampler 0.1，C = 2）"),
    "nb13.q4.hint1": ("rho_s = pi_old / pi_sampler = 3.", "rho_s = pi_old / pi_sampler = 3。"),
    "nb13.q4.hint2": ("The weight is min(3, C); the GC is that weight times the reward.",
                      "权重是 min(3, C)；GC 是这个权重乘以奖励。"),
    "nb13.q5.title": (
        "Q5: why does GRPO's clip never act on a stale batch at one update per batch?",
        "Q5：每个批次只更新一次时，为什么 GRPO 的裁剪从不作用于陈旧的批次？"),
    "nb13.q5.option.old_is_learner": (
        "GRPO's ratio is pi_theta / pi_old, and pi_old is the learner at the batch's start, not the sampler: at the "
        "first update the ratio is 1, whatever drew the tokens",
        "GRPO 的比率是 pi_theta / pi_old，而 pi_old 是批次开始时的学习者，不是采样器：第一次更新时比率为 1，"
        "不管 token 是谁抽出的"),
    "nb13.q5.option.lag_small": (
        "the lag was too small for any token's ratio to leave [1 - eps, 1 + eps]",
        "滞后太小，没有一个 token 的比率离开 [1 - eps, 1 + eps]"),
    "nb13.q5.option.kl_term": (
        "the KL term to pi_ref pulls the stale tokens back, so the clip has nothing to do",
        "对 pi_ref 的 KL 项把陈旧的 token 拉回来，所以裁剪无事可做"),
    "nb13.q5.option.group_mean": (
        "the group's mean reward cancels the sampler's bias within each group",
        "组内平均奖励在每组内抵消了采样器的偏差"),
    "nb13.q5.hint": (
        "Which two policies does GRPO's ratio compare, and which policy is the batch's first update made from?",
        "GRPO 的比率比较的是哪两个策略？批次的第一次更新又是从哪个策略出发的？"),
    "nb13.q5.why.lag_small": (
        "Section 5 measured pi_old / pi_sampler leaving 1 as soon as the lag is 1 step; the clip never sees those "
        "ratios, because it reads pi_theta / pi_old.",
        "第 5 节测得，滞后只要有 1 步，pi_old / pi_sampler 就离开了 1；裁剪从来看不到这些比率，因为它读的是 pi_theta / pi_old。"),
    "nb13.q5.why.kl_term": (
        "The KL term pulls towards pi_ref, the SFT model, not towards the learner; and it is a term of the GC, not "
        "a clip of the ratio.",
        "KL 项拉向的是 pi_ref（SFT 模型），不是学习者；而且它是 GC 中的一项，不是对比率的裁剪。"),
    "nb13.q5.why.group_mean": (
        "The baseline centres the rewards; it does not reweight which policy drew each token.",
        "基线只是把奖励居中；它不会按哪个策略抽出了每个 token 来重新加权。"),
}
