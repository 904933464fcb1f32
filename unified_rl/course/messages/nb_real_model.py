"""Table labels and sentences of `unified_rl.course.nb_real_model` (notebook 12)."""

MESSAGES = {
    # the rows of comparison_markdown; "@K" is replaced by "@{k}" in both languages
    'nb.real.greedy': ('greedy accuracy', '贪心解码准确率'),
    'nb.real.greedy_cut': ('greedy replies cut at the budget', '贪心回答被预算截断的比例'),
    'nb.real.sampled_cut': ('sampled replies cut at the budget', '采样回答被预算截断的比例'),
    'nb.real.maj_at_k': ('Maj@K', 'Maj@K'),
    'nb.real.pass_at_k': ('Pass@K', 'Pass@K'),
    'nb.real.reply_chars': ('mean reply length (characters)', '平均回答长度（字符数）'),
    'nb.real.strict_share': ('answer parsed strictly (#### N)', '答案按严格规则解析（#### N）'),
    'nb.real.lenient_only_share': ('answer parsed only leniently (a last number)', '答案只能按宽松规则解析（最后一个数）'),
    'nb.real.unparsed_share': ('no number at all', '完全没有数字'),
    # the head of per_k_markdown (descriptive, no verdicts): Pass@K, then Maj@K; each the base model, the arm,
    # the difference and its two 95 % intervals (over seeds, over questions); for Pass@K also the questions
    # whose base Pass@K is below 1 on some seed (the headroom)
    'nb.real.per_k_head': ('| K | Pass@K base | {arm} | difference | 95 % over seeds | 95 % over questions | can rise '
                           '| Maj@K base | {arm} | difference | 95 % over seeds | 95 % over questions |',
                           '| K | Pass@K 基座模型 | {arm} | 差值 | 95 % 区间（随机种子） | 95 % 区间（问题） | 还能提高的问题 '
                           '| Maj@K 基座模型 | {arm} | 差值 | 95 % 区间（随机种子） | 95 % 区间（问题） |'),
    # the head of verdict_markdown: one row per verdict of experiments.verdicts
    'nb.real.verdict_head': ('| verdict on | trained - start, per seed | mean | simultaneous interval (level, m) | verdict |',
                             '| 结论对象 | 训练后减起点，每个随机种子 | 均值 | 联合区间（置信水平，m） | 结论 |'),
    # one recorded reply of examples_markdown
    'nb.real.example': ('- *{question}* (answer {answer}) → `{reply}` {mark}',
                        '- *{question}*（答案 {answer}）→ `{reply}` {mark}'),
}
