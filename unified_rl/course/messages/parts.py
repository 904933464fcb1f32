"""The parts' summaries (unified_rl/parts/, Part.summary) in Chinese, and the words that name a composition.

`parts_text.summary` shows the Chinese only while the English here is the part's current summary
(tests/test_package_text.py checks that every registered part has an entry and that each still matches).
"""

MESSAGES = {
    "parts.kl_in_reward": ("{kl} in the reward", "{kl}（在奖励中）"),
    # advantage estimators
    "part.summary.advantage.one":
        ("1 on every token: imitate the response (human-selected data)",
         "每个 token 上都是 1：模仿这个回答（人工筛选的数据）"),
    "part.summary.advantage.indicator":
        ("I(o): 1 for a correct sample, 0 for a wrong one",
         "I(o)：正确的样本为 1，错误的样本为 0"),
    "part.summary.advantage.grpo":
        ("r minus its group's mean, over the group's std (or the batch's, or none: Dr. GRPO)",
         "r 减去组内均值，再除以组内 std（或批次的 std，或不除：Dr. GRPO）"),
    "part.summary.advantage.rloo":
        ("r minus the mean of the other samples of its group",
         "r 减去同组其他样本的均值"),
    "part.summary.advantage.reinforce_plus_plus":
        ("returns with the KL in them, normalised over the whole batch's tokens",
         "含 KL 的回报，在整个批次的 token 上归一化"),
    "part.summary.advantage.remax":
        ("r minus the reward of the greedy answer to the same question",
         "r 减去同一问题贪心回答的奖励"),
    "part.summary.advantage.gpg":
        ("alpha (r - group mean): no std",
         "alpha (r - 组内均值)：不除以 std"),
    "part.summary.advantage.opo":
        ("r minus the length-weighted mean reward of its group",
         "r 减去同组按长度加权的平均奖励"),
    "part.summary.advantage.grpo_passk":
        ("only each group's best answer gets an advantage, r_max - r_second",
         "每组只有最好的回答得到优势 r_max - r_second"),
    "part.summary.advantage.gdpo":
        ("several rewards, each normalised in its group before they are summed",
         "多个奖励，每个先在组内归一化，再相加"),
    "part.summary.advantage.gae":
        ("generalized advantage estimation with a learned value model",
         "用学到的价值模型做广义优势估计（GAE）"),
    "part.summary.advantage.process":
        ("per-step rewards normalised over the group, summed from each token onward",
         "逐步奖励在组内归一化，再从每个 token 往后求和"),
    "part.summary.advantage.maxrl":
        ("r minus its group's mean, over that mean: 1/p weighting of the right answers",
         "r 减去组内均值，再除以这个均值：正确回答按 1/p 加权"),
    "part.summary.advantage.opd":
        ("log pi_teacher - log pi_theta of each token: the reverse KL to a frozen teacher as a reward",
         "每个 token 的 log pi_teacher - log pi_theta：把到冻结教师模型的反向 KL 当作奖励"),
    "part.summary.advantage.reward_norm":
        ("r minus its group's or the batch's mean, over the group's or the batch's std (or none)",
         "r 减去组内或批次的均值，再除以组内或批次的 std（或不除）"),
    # policy terms
    "part.summary.policy.vanilla":
        ("PPO's clipped ratio: rho A inside the clip range, 0 where it binds (clip-higher, dual clip, sequence "
         "ratio as options)",
         "PPO 的裁剪比率：在裁剪范围内为 rho A，裁剪起作用处为 0（clip-higher、双侧裁剪、序列比率为可选项）"),
    "part.summary.policy.reinforce":
        ("A log pi: the advantage is the coefficient, no ratio, no clip",
         "A log pi：优势就是系数，没有比率，也不裁剪"),
    "part.summary.policy.gspo":
        ("one clipped importance ratio per sequence, exp(mean_t log r), on every token",
         "每个序列一个裁剪后的重要性比率 exp(mean_t log r)，作用在每个 token 上"),
    "part.summary.policy.cispo":
        ("a clipped stop-gradient ratio weighs every token, none dropped",
         "裁剪后截断梯度的比率给每个 token 加权，一个也不丢"),
    "part.summary.policy.sapo":
        ("a smooth sigmoid gate of the ratio instead of the hard clip",
         "用比率的平滑 sigmoid 门代替硬裁剪"),
    "part.summary.policy.vespo":
        ("a stop-gradient Gamma weight of the sequence's ratio on A log pi",
         "在 A log pi 上乘以序列比率的 Gamma 权重（停止梯度）"),
    "part.summary.policy.geo_mean":
        ("the geometric mean of token ratios clipped in log space, per sequence",
         "每个序列取在对数空间裁剪后的 token 比率的几何平均"),
    "part.summary.policy.clip_cov":
        ("PPO's clip, and no gradient on a few tokens of high A-log-prob covariance",
         "PPO 的裁剪，另外在少数 A 与对数概率协方差高的 token 上不传梯度"),
    "part.summary.policy.kl_cov":
        ("no clip; a |log r| penalty on the tokens of highest A-log-prob covariance",
         "不裁剪；在 A 与对数概率协方差最高的 token 上加 |log r| 惩罚"),
    "part.summary.policy.dro":
        ("A minus beta times the log-ratio to the sampler: a quadratic pull instead of a clip",
         "A 减去 beta 乘以相对采样策略的对数比：用二次拉回代替裁剪"),
    "part.summary.policy.dft":
        ("A times the token's own probability (not differentiated): SFT rescaled by pi_theta",
         "A 乘以该 token 自己的概率（不求导）：按 pi_theta 重新缩放的 SFT"),
    "part.summary.policy.gkd":
        ("the generalized JSD between the student's and the teacher's coin (the sampled token, the rest): GKD on "
         "the sampled token",
         "学生与教师的两点分布（采样的 token／其余）之间的广义 JSD：只在采样 token 上的 GKD"),
    "part.summary.policy.dppo_kl":
        ("A r on the tokens whose binary KL to pi_old stays under delta: a KL trust region",
         "在相对 pi_old 的二元 KL 不超过 delta 的 token 上为 A r：一个 KL 信赖域"),
    "part.summary.policy.dppo_tv":
        ("A r on the tokens whose probability moved less than delta against A's push: a TV trust region",
         "在概率逆着 A 的推动方向移动不到 delta 的 token 上为 A r：一个全变差（TV）信赖域"),
    "part.summary.policy.kimi15":
        ("A minus tau times the log-ratio to the sampler, per token (ROLL) or per response (the paper)",
         "A 减去 tau 乘以相对采样策略的对数比，逐 token（ROLL）或逐回答（论文）"),
    "part.summary.policy.topr":
        ("A on the rows with reward > 0 (no ratio), A min(rho, 1) on the others: tapered off-policy",
         "奖励 > 0 的行上为 A（没有比率），其余行上为 A min(rho, 1)：逐渐减弱的异策略修正"),
    # KL terms, and the other per-token terms beside the policy term
    "part.summary.kl.k1":
        ("k1 = log(pi / pi_ref): unbiased, high variance; in the loss its gradient is 0 in expectation",
         "k1 = log(pi / pi_ref)：无偏、方差大；放在损失里时其梯度的期望为 0"),
    "part.summary.kl.k2":
        ("k2 = (log(pi / pi_ref))^2 / 2: biased, low variance; its gradient follows KL(pi || pi_ref)",
         "k2 = (log(pi / pi_ref))^2 / 2：有偏、方差小；其梯度沿 KL(pi || pi_ref) 的梯度"),
    "part.summary.kl.k3":
        ("k3 = pi_ref/pi - 1 - log(pi_ref/pi) >= 0: eq 19's penalty; with use_bias_correction_kl, rho k3",
         "k3 = pi_ref/pi - 1 - log(pi_ref/pi) >= 0：公式 19 的惩罚；开启 use_bias_correction_kl 时为 rho k3"),
    "part.summary.term.entropy_bonus":
        ("c times the estimated mean entropy: -rho log pi per sampled token, TRL's bonus in expectation",
         "c 乘以估计的平均熵：每个采样 token 上为 -rho log pi，期望上等于 TRL 的熵奖励"),
    "part.summary.term.log_ratio_sq":
        ("-tau (log pi_theta - log pi_old)^2 per token: a squared pull toward the sampler (Kimi K2.5)",
         "每个 token 上为 -tau (log pi_theta - log pi_old)^2：把策略平方地拉向采样策略（Kimi K2.5）"),
    "part.summary.term.positive_nll":
        ("mu times the mean log pi of the rows with reward > 0: SFT on the right answers beside the RL term",
         "mu 乘以奖励 > 0 的行的平均 log pi：在强化学习项之外，再对正确回答做 SFT"),
    # aggregations
    "part.summary.aggregation.seq-mean-token-mean":
        ("each response's mean over its tokens, then the mean over responses",
         "先在每个回答的 token 上取平均，再在回答之间取平均"),
    "part.summary.aggregation.token-mean":
        ("every token of the batch weighs the same",
         "批次中每个 token 的权重相同"),
    "part.summary.aggregation.seq-mean-token-sum":
        ("each response's token sum (log pi(o|q)), then the mean over responses",
         "先对每个回答的 token 求和（log pi(o|q)），再在回答之间取平均"),
    "part.summary.aggregation.seq-mean-token-sum-norm":
        ("the mean over responses of each token sum over a constant L",
         "每个回答的 token 之和除以常数 L，再在回答之间取平均"),
    "part.summary.aggregation.group-token-mean":
        ("every token of a question's group weighs the same, then the mean over groups",
         "同一问题的一组回答中每个 token 的权重相同，再在组之间取平均"),
    "part.summary.aggregation.token-sum":
        ("the batch's sum of every token's term, no normaliser",
         "整个批次所有 token 的项之和，不做归一化"),
    # token masks
    "part.summary.mask.truncated":
        ("rows cut at the sampling budget leave the loss and every normaliser",
         "在采样预算处被截断的行不进入损失，也不计入任何归一化因子"),
    "part.summary.mask.entropy":
        ("only the tokens of highest entropy (the forks of reasoning) get a GC",
         "只有熵最高的 token（推理的岔路口）才有 GC"),
    "part.summary.mask.off-policy-sequence":
        ("a negative-advantage row the update has moved far from its sampler gets GC 0",
         "优势为负、且被更新推离采样策略很远的行，GC 为 0"),
    "part.summary.mask.tis":
        ("each token's GC times min(pi_old / pi_sampler, C): the sampler's tokens reweighted to the learner's",
         "每个 token 的 GC 乘以 min(pi_old / pi_sampler, C)：把采样策略的 token 重新加权成学习者的"),
    "part.summary.mask.mis":
        ("GC 0 on the tokens whose pi_old / pi_sampler leaves a band [low, high] (IcePop with tis)",
         "pi_old / pi_sampler 超出区间 [low, high] 的 token 上 GC 为 0（IcePop，与 tis 一起用）"),
    # the preference family: how each response is scored, and the loss of the two scores
    "part.summary.pair_scores.log_ratio":
        ("log pi_theta(o) - log pi_ref(o), summed or averaged over the response's tokens",
         "log pi_theta(o) - log pi_ref(o)，在回答的 token 上求和或取平均"),
    "part.summary.pair_scores.logp":
        ("log pi_theta(o) alone, summed or averaged over the response's tokens: no reference model",
         "只用 log pi_theta(o)，在回答的 token 上求和或取平均：不需要参考模型"),
    "part.summary.pair_loss.sigmoid":
        ("-log sigma(beta (s+ - s-)): DPO's loss; the push fades as the margin grows, never reverses",
         "-log sigma(beta (s+ - s-))：DPO 的损失；间隔越大推力越弱，但从不反向"),
    "part.summary.pair_loss.sigmoid_norm":
        ("sigmoid on per-token mean scores whatever the norm setting: DeepSeekMath's eq 12",
         "无论 norm 设置如何，都在逐 token 平均的分数上用 sigmoid：DeepSeekMath 的公式 12"),
    "part.summary.pair_loss.hinge":
        ("max(0, 1 - beta (s+ - s-)): push by beta until the margin passes 1/beta, then not at all",
         "max(0, 1 - beta (s+ - s-))：间隔超过 1/beta 之前以 beta 推动，之后完全不推"),
    "part.summary.pair_loss.ipo":
        ("(s+ - s- - 1/(2 beta))^2: regress the margin onto a target; linear, reverses past it",
         "(s+ - s- - 1/(2 beta))^2：把间隔回归到一个目标上；线性，超过目标后反向"),
    "part.summary.pair_loss.exo_pair":
        ("the pair's softmax pulled to (1 - eps, eps): a target margin logit(1 - eps), pushed back past it",
         "把这对回答的 softmax 拉向 (1 - eps, eps)：目标间隔为 logit(1 - eps)，超过后被推回"),
    "part.summary.pair_loss.nca_pair":
        ("each score against 0 on its own: the chosen pulled to beta s+ = log 2, the rejected pushed down",
         "每个分数各自与 0 比较：被选中的回答被拉到 beta s+ = log 2，被拒绝的回答被压低"),
    "part.summary.pair_loss.robust":
        ("DPO's loss unbiased under labels flipped with probability eps (sigmoid at eps = 0)",
         "在标签以概率 eps 翻转时仍无偏的 DPO 损失（eps = 0 时就是 sigmoid）"),
    "part.summary.pair_loss.bco_pair":
        ("each response on its own: -log sigma(beta s+) - log sigma(-beta s-), no pair coupling",
         "每个回答各自处理：-log sigma(beta s+) - log sigma(-beta s-)，两者之间没有耦合"),
    "part.summary.pair_loss.sppo_hard":
        ("each score regressed onto its own target, +1/(2 beta) chosen and -1/(2 beta) rejected",
         "每个分数回归到自己的目标：被选中的为 +1/(2 beta)，被拒绝的为 -1/(2 beta)"),
    "part.summary.pair_loss.aot":
        ("the batch's policy margins and pi_ref's margins, each sorted, matched by rank (a batch loss)",
         "批次中策略的间隔和 pi_ref 的间隔各自排序，再按名次配对（一个批次级的损失）"),
    "part.summary.pair_loss.aot_unpaired":
        ("the batch's chosen scores and rejected scores, each sorted, matched by rank (a batch loss)",
         "批次中被选中回答的分数和被拒绝回答的分数各自排序，再按名次配对（一个批次级的损失）"),
    "part.summary.pair_loss.apo_zero":
        ("raise the chosen and lower the rejected response, each against pi_ref on its own",
         "提高被选中的回答、压低被拒绝的回答，各自相对于 pi_ref"),
    "part.summary.pair_loss.apo_down":
        ("lower the chosen response and the rejected one more: for chosen answers worse than the model's",
         "压低被选中的回答，把被拒绝的回答压得更低：用于被选中的答案不如模型自己的情形"),
    "part.summary.pair_loss.discopop":
        ("a blend of the logistic and exponential losses of the margin, weighted by sigma(u / tau)",
         "间隔的 logistic 损失与指数损失的混合，权重为 sigma(u / tau)"),
    "part.summary.pair_loss.sft":
        ("SFT on the chosen responses (their log-probs, no pi_ref); the rejected get nothing",
         "在被选中的回答上做 SFT（用它们的对数概率，不用 pi_ref）；被拒绝的回答什么也得不到"),
    "part.summary.pair_loss.simpo":
        ("-log sigma(beta (s+ - s-) - gamma): DPO's loss with a target margin gamma",
         "-log sigma(beta (s+ - s-) - gamma)：带目标间隔 gamma 的 DPO 损失"),
    "part.summary.pair_loss.kto":
        ("unpaired: raise desirable, lower undesirable responses around z0, the batch's mean score",
         "不配对：围绕 z0（批次的平均分数）提高理想的回答、压低不理想的回答"),
    "part.summary.pair_loss.apo_zero_unpaired":
        ("KTO with z0 = 0: raise desirable and lower undesirable responses, each against pi_ref",
         "z0 = 0 的 KTO：提高理想的回答、压低不理想的回答，各自相对于 pi_ref"),
    "part.summary.pair_loss.odds_ratio":
        ("-lam log sigma(log odds+ - log odds-), odds = P / (1 - P): ORPO's odds-ratio term",
         "-lam log sigma(log odds+ - log odds-)，odds = P / (1 - P)：ORPO 的优势比项"),
}
