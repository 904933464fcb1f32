"""Widget labels, titles and notes of the policy-family and preference-family explorers."""

MESSAGES = {}

# widgets_policy_gradient.py
MESSAGES.update({
    "w.pg.curve.grpo_clip": ("GRPO / PPO clip", "GRPO / PPO 裁剪"),
    "w.pg.curve.dapo_clip_higher": ("DAPO clip-higher", "DAPO 放宽上界的裁剪（clip-higher）"),
    "w.pg.curve.cispo_weight": ("CISPO weight", "CISPO 权重"),
    "w.pg.curve.gspo": ("GSPO: o₁'s 1st token at r (ε 3e-4/4e-4)", "GSPO：o₁ 的第 1 个 token 取 r（ε 3e-4/4e-4）"),
    "w.pg.curve.grpo_length": ("GRPO: A-hat, 1/|o|", "GRPO：A-hat，1/|o|"),
    "w.pg.curve.token_mean": ("group-token-mean (DAPO)", "按组的 token 均值（DAPO）"),
    "w.pg.curve.constant_l": ("constant L = {L} (Dr. GRPO)", "常数 L = {L}（Dr. GRPO）"),
    'w.pg.ratio_r': ('ratio r',
        '比率 r'),
    'w.pg.len': ('|o₁| (tokens)',
        '|o₁|（token 数）'),
    'w.pg.o1_wrong': ('o₁ wrong',
        'o₁ 错误'),
    'w.pg.o1_right': ('o₁ right',
        'o₁ 正确'),
    'w.pg.xlabel1': ("ratio r = π_θ/π_old of o₁'s tokens",
        'o₁ 各 token 的比率 r = π_θ/π_old'),
    'w.pg.gc_token': ('GC of a token of o₁',
        'o₁ 中一个 token 的 GC'),
    'w.pg.xlabel2': ('|o₁| (the others: 8 tokens)',
        '|o₁|（其他回答：8 个 token）'),
    'w.pg.push': ('push per token: GC / |o₁|',
        '每个 token 的推动：GC / |o₁|'),
    'w.pg.agg_title': ('the aggregations, at r = 1',
        '各种聚合方式，r = 1 时'),
    'w.pg.gspo_row': ("GSPO, o₁'s 1st token at r",
        'GSPO，o₁ 的第 1 个 token 在 r 处'),
    'w.pg.seq_ratio': ('sequence ratio s = r^(1/|o₁|)',
        '序列比率 s = r^(1/|o₁|)'),
    'w.pg.gc_that': ('GC of that token',
        '该 token 的 GC'),
    'w.pg.gc_others': ("GC of o₁'s other tokens",
        'o₁ 其他 token 的 GC'),
    'w.pg.push_row': ('push per token (GC / |o₁|)',
        '每个 token 的推动（GC / |o₁|）'),
    'w.pg.title': ('The policy family: ratio, clip and length',
        '策略梯度家族：比率、裁剪与长度'),
    'w.pg.note': ("o₁ and three 8-token answers (one right, two wrong) to one question. Left: where each clip stops the push (0) or caps it (CISPO); GSPO moves one token of o₁ and clips the sequence ratio s at 1 - 3e-4 / 1 + 4e-4 (red band, in r): one GC on every token. Right: with a negative advantage, GRPO's 1/|o| pushes a longer wrong answer down less per token; a constant L does not.",
        '同一道题的 o₁ 和另外三个 8-token 的答案（一个正确，两个错误）。左图：每种裁剪在哪里停止推动（0）或给推动设上限（CISPO）；GSPO 移动 o₁ 的一个 token，并把序列比率 s 裁剪在 1 - 3e-4 / 1 + 4e-4（红色带，以 r 表示）：每个 token 上同一个 GC。右图：优势为负时，GRPO 的 1/|o| 对更长的错误答案每个 token 往下推得更少；常数 L 则不会。'),
})
MESSAGES.update({
    "w.pg.clips_right": ("o₁ right: the clips", "o₁ 正确：各种裁剪"),
    "w.pg.clips_wrong": ("o₁ wrong: the clips", "o₁ 错误：各种裁剪"),
})

# widgets_preference.py
MESSAGES.update({
    'w.pref.margin': ('margin',
        '间隔'),
    'w.pref.target': ('IPO target 1/(2τ)',
        'IPO 目标 1/(2τ)'),
    'w.pref.xlabel': ('margin (DPO, IPO: x⁺ − x⁻; SimPO, ORPO: l⁺ − l⁻)',
        '间隔（DPO、IPO：x⁺ − x⁻；SimPO、ORPO：l⁺ − l⁻）'),
    'w.pref.desirable': ('desirable',
        '期望的'),
    'w.pref.undesirable': ('undesirable',
        '不期望的'),
    'w.pref.kto_x': ('x − z₀ (KTO, one response)',
        'x − z₀（KTO，单个回答）'),
    'w.pref.method': ('method',
        '方法'),
    'w.pref.col_chosen': ('GC on chosen / desirable',
        '被选中 / 期望回答上的 GC'),
    'w.pref.col_rejected': ('GC on rejected / undesirable',
        '被拒绝 / 不期望回答上的 GC'),
    'w.pref.kto_row': ('KTO (at x − z₀ = margin)',
        'KTO（在 x − z₀ = 间隔 处）'),
    'w.pref.logp_rejected': ('mean log π(o⁻) (ORPO)', '平均 log π(o⁻)（ORPO）'),
    'w.pref.title': ('The preference family: GC against the margin',
        '偏好优化家族：GC 随间隔的变化'),
    'w.pref.note': ("DPO's push fades as the margin grows; IPO's shrinks linearly and reverses past its target; ORPO adds SFT's 1; KTO pushes hardest at its reference point z₀.",
        'DPO 的推动随间隔增大而减弱；IPO 的推动线性减小，并在超过目标后反向；ORPO 加上 SFT 的 1；KTO 在其参考点 z₀ 处推得最猛。'),
})

# widgets_peers.py
MESSAGES.update({
    "w.peers.title": ("The loss shapes of TRL and verl: one token's GC against its ratio",
                      "TRL 和 verl 的损失形状：一个 token 的 GC 随其比率的变化"),
    "w.peers.note": ("Every token of o₁ at the ratio r, the three other answers on-policy. GRPO's clip cuts the push "
                     "to 0 outside its range; delta also cuts a wrong answer's token once r passes it; SAPO's gate "
                     "fades it smoothly; CISPO caps a weight and never cuts; GMPO clips each log-ratio; VESPO weighs "
                     "the whole sequence's ratio W = r⁸.",
                     "o₁ 的每个 token 都在比率 r 处，另外三个回答处于同策略。GRPO 的裁剪在范围外把推动切成 0；delta 在 r "
                     "超过它后也切断错误回答的 token；SAPO 的门平滑地减弱推动；CISPO 给权重设上限、从不切断；GMPO 裁剪每个"
                     "对数比；VESPO 按整个序列的比率 W = r⁸ 加权。"),
    "w.peers.title_wrong": ("o₁ wrong (A < 0)", "o₁ 错误（A < 0）"),
    "w.peers.title_right": ("o₁ right (A > 0)", "o₁ 正确（A > 0）"),
    "w.peers.curve.grpo": ("GRPO / PPO clip", "GRPO / PPO 裁剪"),
    "w.peers.curve.grpo + delta": ("GRPO + delta (TRL, verl's dual clip)", "GRPO + delta（TRL；verl 的双重裁剪）"),
    "w.peers.curve.sapo": ("SAPO gate", "SAPO 门"),
    "w.peers.curve.cispo": ("CISPO weight", "CISPO 权重"),
    "w.peers.curve.gmpo": ("GMPO (log-space clip)", "GMPO（对数空间裁剪）"),
    "w.peers.curve.vespo": ("VESPO (W = r⁸)", "VESPO（W = r⁸）"),
})

# widgets_preference.dpo_loss_explorer, TRL's DPO loss types
MESSAGES.update({
    "w.dl.margin": ("margin s⁺ − s⁻", "间隔 s⁺ − s⁻"),
    "w.dl.s_minus": ("s⁻ (the rejected's log-ratio)", "s⁻（被拒绝回答的对数比）"),
    "w.dl.dpo": ("sigmoid (DPO), chosen", "sigmoid（DPO），被选中"),
    "w.dl.chosen": ("{loss}: chosen", "{loss}：被选中"),
    "w.dl.rejected": ("{loss}: rejected", "{loss}：被拒绝"),
    "w.dl.xlabel": ("margin s⁺ − s⁻ (log-ratios, one token each)", "间隔 s⁺ − s⁻（对数比，各一个 token）"),
    "w.dl.title": ("TRL's DPO loss types: GC against the margin", "TRL 的 DPO 损失类型：GC 随间隔的变化"),
    "w.dl.note": ("One pair of one-token responses, so sums and per-token means agree; a longer response multiplies "
                  "the GC by its length under sums. The table: every loss type at this point.",
                  "一对各只有一个 token 的回答，所以求和与逐 token 平均一致；在求和约定下，更长的回答会把 GC "
                  "乘以它的长度。表格：每种损失类型在这一点上的值。"),
})
