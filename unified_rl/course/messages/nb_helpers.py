"""Sentences, table headers and labels of the nb_* helpers (what the notebooks print and show)."""

MESSAGES = {}

# nb_basics.py
MESSAGES.update({
    'nb.method': ('method',
        '方法'),
    'nb.basics.data_source': ('data source D',
        '数据来源 D'),
    'nb.basics.reward_fn': ('reward function',
        '奖励函数'),
    'nb.basics.gc': ('gradient coefficient GC',
        '梯度系数 GC'),
    'nb.basics.also': ('also',
        '此外'),
    'nb.basics.in_words': ('in words',
        '一句话说明'),
    'nb.basics.human': ('none: the data is human-written (human selection)',
        '无：数据由人撰写（人工筛选）'),
    'nb.basics.defaults': ('its own defaults: ',
        '它自己的默认值：'),
    'nb.basics.input_token': ('input token',
        '输入 token'),
    'nb.basics.target': ('target o_t',
        '目标 o_t'),
    'nb.basics.target_id': ('target id',
        '目标 id'),
    'nb.basics.mask': ('mask (counts in eq 6)',
        'mask（是否计入公式 6）'),
    'nb.basics.alpha': ('length power α',
        '长度幂次 α'),
    'nb.basics.long': ('|o| of the long responses',
        '长回答的 |o|'),
    'nb.basics.short': ('|o| of the short responses',
        '短回答的 |o|'),
    'nb.basics.n_long': ('how many long responses',
        '长回答的个数'),
    'nb.basics.n_short': ('how many short responses',
        '短回答的个数'),
    'nb.basics.gc_each': ('GC of each response',
        '每个回答的 GC'),
    'nb.basics.w_token': ("weight of each token's ∇log π",
        '每个 token 的 ∇log π 的权重'),
    'nb.basics.w_total': ('total weight of each response',
        '每个回答的总权重'),
    'nb.basics.response': ('response',
        '回答'),
    'nb.basics.w_per_token': ('weight per token',
        '每个 token 的权重'),
    'nb.basics.w_response': ('weight of the response',
        '回答的权重'),
    'nb.basics.title': ('SFT: the coefficient behind a length normalisation',
        'SFT：长度归一化背后的系数'),
    'nb.basics.note': ('GC<sub>i</sub> = B·|o<sub>i</sub>|<sup>α</sup> / Σ<sub>j</sub> |o<sub>j</sub>|<sup>α</sup>. α = 0 is eq 7 (GC = 1: every response the same total weight); α = 1 is one token mean over the batch (every token the same weight). Move α and the lengths.',
        'GC<sub>i</sub> = B·|o<sub>i</sub>|<sup>α</sup> / Σ<sub>j</sub> |o<sub>j</sub>|<sup>α</sup>。α = 0 就是公式 7（GC = 1：每个回答的总权重相同）；α = 1 是在整个批次上做一次 token 平均（每个 token 的权重相同）。移动 α 和各个长度试试。'),
    'nb.basics.ref_eq7': ('eq 7 (α = 0)', '公式 7（α = 0）'),
    'nb.basics.ref_token_mean': ('token mean (α = 1)', 'token 均值（α = 1）'),
    'nb.basics.prompt': ('prompt',
        '提示词'),
    'nb.basics.reference': ('reference',
        '参考答案'),
})
MESSAGES.update({
    "nb.before": ("before", "之前"),
    "nb.after": ("after", "之后"),
})

# nb_dpo.py
MESSAGES.update({
    'nb.dpo.x_chosen': ('x⁺ chosen, {name}',
        'x⁺ 被选中，{name}'),
    'nb.dpo.x_rejected': ('x⁻ rejected, {name}',
        'x⁻ 被拒绝，{name}'),
    'nb.dpo.log_ratios': ('log-ratios x⁺, x⁻',
        '对数比 x⁺、x⁻'),
    'nb.dpo.margin': ('margin x⁺ − x⁻',
        '间隔 x⁺ − x⁻'),
    'nb.dpo.mean_gc': ('mean GC c  (β/2 = {half_beta:g} at margin 0)',
        '平均 GC c（间隔为 0 时 β/2 = {half_beta:g}）'),
    'nb.step': ('step',
        '步数'),
})

# nb_grpo.py
MESSAGES.update({
    'nb.grpo.policy': ('policy pi_theta (trained)',
        '策略 pi_theta（训练）'),
    'nb.grpo.reference': ('reference pi_ref (frozen)',
        '参考模型 pi_ref（冻结）'),
    'nb.grpo.value': ('value model V_psi (trained)',
        '价值模型 V_psi（训练）'),
    'nb.grpo.total': ('total',
        '合计'),
    'nb.grpo.response_token': ('response token',
        '回答 token'),
})

# nb_summary.py (the dict keys of its rows stay English; the table headers follow the language)
MESSAGES.update({
    "nb.summary.human": ("human selection (the dataset)", "人工筛选（数据集）"),
    "nb.summary.value_model": ("value model", "价值模型"),
    "nb.summary.none": ("none", "无"),
    "nb.summary.col.method": ("method", "方法"),
    "nb.summary.col.equations": ("equations", "公式"),
    "nb.summary.col.data_source": ("data source", "数据来源"),
    "nb.summary.col.reward": ("reward", "奖励"),
    "nb.summary.col.advantage": ("advantage", "优势"),
    "nb.summary.col.critic": ("critic", "评论家"),
    "nb.summary.col.paper": ("paper", "论文"),
    "nb.summary.col.what_it_changes": ("what it changes", "它改变了什么"),
})

# nb_policy_gradient.py (notebook 10)
MESSAGES.update({
    "nb.accuracy": ("accuracy", "准确率"),
    "nb.pg.training": ("training the arms", "正在训练各组"),
    "nb.pg.method_head": ("| method | data source | reward | GC | paper |", "| 方法 | 数据来源 | 奖励 | GC | 论文 |"),
    "nb.pg.estimator_head": ("| estimator, used as | ", "| 估计量，用作 | "),
    "nb.pg.table_head": ("| arm | held-out accuracy | minus GRPO, same seed | length: first step -> last 10 | wrong / right "
                         "answers at the end | tokens with GC = 0 | samples per step |",
                         "| 组 | 留出集准确率 | 减去 GRPO（同一种子） | 长度：第一步 -> 最后 10 步 | 结束时错误 / 正确答案的长度 "
                         "| GC = 0 的 token | 每步样本数 |"),
    "nb.pg.sft_range": ("Each seed starts from its own SFT model, which scores {lo:.3f} to {hi:.3f} held out: "
                        "compare each arm with GRPO on the same seed.",
                        "每个种子从它自己的 SFT 模型出发，其留出集得分为 {lo:.3f} 到 {hi:.3f}：请在同一种子上把每一组与 GRPO 比较。"),
    "nb.pg.list_sep": (", ", "，"),
    "nb.pg.none": ("none", "无"),
    "nb.pg.dr_grpo": ("The Dr. GRPO arms share its advantage (no std) and differ only in aggregation. "
                      "`{std_only}` against GRPO isolates the std: {std}; each other aggregation against it: {items}.",
                      "几个 Dr. GRPO 组共用它的优势（不除以标准差），只在聚合方式上不同。"
                      "`{std_only}` 对比 GRPO 单独体现了标准差的作用：{std}；其他每种聚合方式对比它：{items}。"),
    "nb.pg.dapo": ("DAPO's dynamic sampling generated {samples:.0f} samples per step for the {rows} it trained on "
                   "({factor:.1f}x); its accuracy minus GRPO's: {said}.",
                   "DAPO 的动态采样每步生成 {samples:.0f} 个样本，用于它训练的 {rows} 个（{factor:.1f} 倍）；"
                   "它的准确率减去 GRPO 的：{said}。"),
    "nb.pg.clip": ("Clip fraction (tokens whose ratio left [1 - ε, 1 + ε] on a batch's last update), averaged over "
                   "a run's steps: at most {pct:.2f} % for any run (`{worst}`). It is a mean over the "
                   "steps, not a bound on each: the live runs above print their first step beside their mean.",
                   "裁剪比例（在一个批次的最后一次更新时比率离开 [1 - ε, 1 + ε] 的 token），在一次运行的各步上取平均："
                   "任何一次运行最多为 {pct:.2f} %（`{worst}`）。这是各步的平均，而不是每一步的上界：上面的实时运行"
                   "会把第一步的值打印在平均值旁边。"),
    "nb.pg.zero_gc": ("Share of tokens with GC 0: {items}.", "GC 为 0 的 token 比例：{items}。"),
    "nb.pg.lengths": ("Mean answer length: {first_lo:.2f} to {first_hi:.2f} tokens at the first step, {last_lo:.2f} "
                      "to {last_hi:.2f} over the last ten, under every arm.",
                      "平均答案长度：在每一组下，第一步为 {first_lo:.2f} 到 {first_hi:.2f} 个 token，最后十步为 "
                      "{last_lo:.2f} 到 {last_hi:.2f} 个。"),
    "nb.pg.mean_len": ("mean response length (tokens)", "平均回答长度（token 数）"),
    "nb.pg.len_title": ("response length of the batch", "批次的回答长度"),
})
