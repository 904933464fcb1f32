"""The methods' summaries and the first docstring lines notebook 00's method table shows, in Chinese.

(The parts' summaries, which the table shows for what a method computes once per batch, are in parts.py.)

`i18n.t_of(key, english)` shows the Chinese only while the English here is the package's current text
(tests/test_package_text.py checks that every entry still matches, so an edit in the package is noticed).
"""

MESSAGES = {
    # Method.summary (unified_rl/methods/): notebook 00 and notebook 09's "what it changes"
    'method.summary.sft':
        ('imitate human-written solutions',
         '模仿人类写的解答'),
    'method.summary.rft':
        ("imitate the SFT model's correct samples",
         '模仿 SFT 模型答对的样本'),
    'method.summary.online-rft':
        ("imitate the policy's own correct samples",
         '模仿策略自己答对的样本'),
    'method.summary.dpo':
        ('raise correct over incorrect SFT samples, relative to pi_ref',
         '相对 pi_ref，抬高 SFT 的正确样本、压低错误样本'),
    'method.summary.ppo':
        ('policy gradient with GAE advantages from a learned value model',
         '用学到的价值模型给出的 GAE 优势做策略梯度'),
    'method.summary.grpo':
        ('policy gradient with group-relative advantages and a k3 KL penalty',
         '用组内相对优势和 k3 KL 惩罚做策略梯度'),
    'method.summary.grpo-process':
        ('GRPO with per-step (process) rewards',
         '带逐步（过程）奖励的 GRPO'),
    'method.summary.ipo':
        ('regress the log-ratio margin onto 1/(2 tau): no saturation, pulls back past it',
         '把对数比的差距回归到 1/(2 tau)：不会饱和，超过后会被拉回'),
    'method.summary.simpo':
        ('DPO on mean log-probs with a target margin gamma, no reference model',
         '在平均对数概率上做 DPO，带目标间隔 gamma，不需要参考模型'),
    'method.summary.kto':
        ('unpaired: raise desirable, lower undesirable samples around a reference point z0',
         '不成对：围绕参考点 z0 抬高理想样本、压低不理想样本'),
    'method.summary.orpo':
        ('SFT on the chosen answer plus an odds-ratio penalty on the rejected, no reference',
         '在被选中的回答上做 SFT，再对被拒绝的回答加一个优势比（odds ratio）惩罚，不需要参考模型'),
    'method.summary.dr-grpo':
        ('GRPO without the std and the 1/|o| (a constant normaliser)',
         '去掉标准差和 1/|o|（换成常数归一化）的 GRPO'),
    'method.summary.dapo':
        ('clip-higher, dynamic sampling, a token mean per question, overlong shaping; no KL',
         'clip-higher、动态采样、每个问题内的 token 平均、超长惩罚；不用 KL'),
    'method.summary.gspo':
        ('one importance ratio per sequence, clipped at the sequence level; no KL',
         '每个序列一个重要性比率，在序列层面裁剪；不用 KL'),
    'method.summary.cispo':
        ('a clipped stop-gradient ratio weighs every token, none dropped; no KL',
         '裁剪后截断梯度的比率给每个 token 加权，一个也不丢；不用 KL'),
    'method.summary.rloo':
        ('REINFORCE with the leave-one-out baseline: k/(k-1) (r - mean), no std; no KL',
         '以留一法为基线的 REINFORCE：k/(k-1) (r - mean)，不除以标准差；不用 KL'),
    'method.summary.reinforce++':
        ('returns with the k1 KL in them, normalised over the whole batch',
         '回报中含 k1 KL，在整个批次上归一化'),
    'method.summary.remax':
        ("REINFORCE with the greedy answer's reward as the baseline; no KL",
         '以贪心回答的奖励为基线的 REINFORCE；不用 KL'),
    # first docstring lines: notebook 00's method table
    'doc.FixedDataset':
        ('SFT: batches of the limited human-written dataset (reward = human selection).',
         'SFT：有限的人类书写数据集中的批次（奖励 = 人类筛选）。'),
    'doc.coefficients.sft':
        ('Eq 7: GC = 1 on every token of the human-written response.',
         '公式 7：在人类书写回答的每个 token 上 GC = 1。'),
    'doc.FrozenPolicySamples':
        ('Offline: samples of the frozen SFT model pi_sft (the reference copy), never of pi_theta.',
         '离线：冻结的 SFT 模型 pi_sft（参考副本）的样本，从不来自 pi_theta。'),
    'doc.RuleReward':
        ('The rule-based outcome reward as a `reward(rollout)` callable.',
         '基于规则的结果奖励，是一个 `reward(rollout)` 可调用对象。'),
    'doc.coefficients.rft':
        ('Eq 10: GC = I(o), 1 when the sampled answer is correct, else 0 (the sample is dropped).',
         '公式 10：GC = I(o)，采样的答案正确时为 1，否则为 0（该样本被丢弃）。'),
    'doc.coefficients.online_rft':
        ('Eq 11: the same GC as RFT, I(o); only the data source differs (samples of the current policy).',
         '公式 11：GC 与 RFT 相同，为 I(o)；只有数据来源不同（当前策略的样本）。'),
    'doc.PolicySamples':
        ('Online: group_size samples per question from the current policy pi_theta.',
         '在线：每个问题从当前策略 pi_theta 采 group_size 个样本。'),
    'doc.PreferencePairs':
        ('DPO: for a question, a correct sample of pi_sft is chosen (o+) and an incorrect one rejected (o-).',
         'DPO：对一个问题，pi_sft 的一个正确样本被选中（o+），一个错误样本被拒绝（o-）。'),
    'doc.coefficients.dpo':
        ('Eq 14, exact: +c on chosen tokens, -c on rejected ones, c = beta * sigmoid(beta x- - beta x+).',
         '公式 14，精确形式：被选中回答的 token 上为 +c，被拒绝回答的 token 上为 -c，c = beta * sigmoid(beta x- - beta x+)。'),
    'doc.coefficients.ppo':
        ('Eq 18: GC = A_t (from GAE), taken on-policy (pi_old = pi_theta) as the paper does.',
         '公式 18：GC = A_t（来自 GAE），与论文一样在同策略（pi_old = pi_theta）下取值。'),
    'doc.Critic':
        ("PPO's value model V_psi (a copy of the policy's trunk with a scalar head) and its loss.",
         'PPO 的价值模型 V_psi（策略主干的副本加一个标量输出头）及其损失。'),
    'doc.coefficients.grpo':
        ('Eq 21: GC = A-hat_{{i,t}} + beta * (pi_ref / pi_theta - 1).',
         '公式 21：GC = A-hat_{{i,t}} + beta * (pi_ref / pi_theta - 1)。'),
    # -- the methods TRL and verl ship
    'method.summary.sapo':
        ('a smooth sigmoid gate of the ratio instead of the hard clip; no KL',
         '用重要性比率的平滑 sigmoid 门代替硬裁剪；不用 KL'),
    'method.summary.vespo':
        ("a stop-gradient Gamma weight of the sequence's ratio on A log pi; no KL",
         '在 A log pi 上乘以序列比率的 Gamma 权重（停止梯度）；不用 KL'),
    'method.summary.luspo':
        ("GSPO's clipped sequence ratio with each sequence's term times its length; no KL",
         'GSPO 的裁剪序列比率，每个序列的项再乘以它的长度；不用 KL'),
    'method.summary.gmpo':
        ('the geometric mean of token ratios clipped in log space, per sequence; no KL',
         '每个序列取在对数空间裁剪后的 token 比率的几何平均；不用 KL'),
    'method.summary.clip-cov':
        ("PPO's clip, and no gradient on a few tokens of high A-log-prob covariance; no KL",
         'PPO 的裁剪，另外在少数 A 与对数概率协方差高的 token 上不传梯度；不用 KL'),
    'method.summary.kl-cov':
        ('no clip; a |log r| penalty on the tokens of highest A-log-prob covariance; no KL',
         '不裁剪；在 A 与对数概率协方差最高的 token 上加 |log r| 惩罚；不用 KL'),
    'method.summary.gpg':
        ('REINFORCE on alpha (r - mean): no ratio, no clip, no std, no KL',
         '在 alpha (r - mean) 上做 REINFORCE：没有重要性比率、不裁剪、不除以标准差、不用 KL'),
    'method.summary.opo':
        ('REINFORCE on whole sequences with the length-weighted mean reward as baseline; no KL',
         '在整个序列上做 REINFORCE，以按长度加权的平均奖励为基线；不用 KL'),
    'method.summary.grpo-passk':
        ("GRPO where only each group's best answer gets an advantage, r_max - r_second",
         '只有每组最好的回答得到优势 r_max - r_second 的 GRPO'),
    'method.summary.gdpo':
        ('GRPO on several rewards, each normalised in its group before they are summed',
         '多个奖励的 GRPO：每个奖励先在组内归一化，再相加'),
    'method.summary.maxrl':
        ("PPO's clip on (r - p) / p: a question's right answers weigh 1/p, its success rate p; no KL",
         'PPO 的裁剪作用在 (r - p) / p 上：一个问题的正确回答按 1/p 加权，p 是它的成功率；不用 KL'),
    'method.summary.dro':
        ("GRPO's advantage with a quadratic pull of each token's log-ratio toward the sampler, no clip; no KL",
         'GRPO 的优势，加上把每个 token 的对数比拉回采样策略的二次项，不裁剪；不用 KL'),
    'method.summary.dppo':
        ("r - group mean on the tokens whose probability moved less than 0.15 against A's push: no ratio clip; no KL",
         'r 减去组内均值，只作用在概率朝 A 推动方向的变化不超过 0.15 的 token 上：不裁剪重要性比率；不用 KL'),
    'method.summary.dppo-kl':
        ("r - group mean on the tokens whose binary KL to pi_old stays under 0.05 against A's push; no KL",
         'r 减去组内均值，只作用在朝 A 推动方向、到 pi_old 的二元 KL 不超过 0.05 的 token 上；不用 KL'),
    # -- a teacher as the reward, and SFT's relatives
    'method.summary.opd':
        ("each sampled token's log pi_teacher - log pi_theta as its reward: the reverse KL to a frozen teacher",
         '每个采样 token 的 log pi_teacher - log pi_theta 就是它的奖励：到冻结教师模型的反向 KL'),
    'method.summary.gkd':
        ("the generalized JSD of the sampled token's coin to the teacher's, on own samples half the batches",
         '采样 token 的两点分布（该 token／其余）到教师模型两点分布的广义 JSD；一半的批次用策略自己的样本'),
    'method.summary.sdft':
        ('on-policy distillation from the starting model shown the reference answer',
         '同策略蒸馏，教师是看到参考答案的起始模型'),
    'method.summary.opsd':
        ('on-policy distillation from the policy itself shown the reference answer (no gradient through it)',
         '同策略蒸馏，教师是看到参考答案的策略自己（梯度不经过它）'),
    'method.summary.dft':
        ("SFT with each token's gradient scaled by its own probability",
         'SFT，但每个 token 的梯度乘以它自己的概率'),
    'method.summary.self-distill':
        ("SFT on the policy's own samples, right or wrong: RFT without its filter",
         '在策略自己的样本上做 SFT，不论对错：去掉筛选的 RFT'),
}
