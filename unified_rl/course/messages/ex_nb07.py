"""Texts of the exercises of `unified_rl.course.ex.nb07_pass_maj`: titles, hints, solutions' prose, why-nots."""

MESSAGES = {
    'nb07.q1.title': (
        'Q1: pass@4 by hand (n = 8, c = 2)',
        'Q1：手算 pass@4（n = 8，c = 2）'),
    'nb07.q1.hint1': (
        'Count the 4-subsets of the 8 samples that hold no correct sample: C(6, 4) of C(8, 4).',
        '数一数 8 个样本中不含任何正确样本的 4 元子集：C(8, 4) 个中的 C(6, 4) 个。'),
    'nb07.q1.hint2': (
        '1 - C(6, 4) / C(8, 4) = 1 - 15 / 70.',
        '1 - C(6, 4) / C(8, 4) = 1 - 15 / 70。'),
    'nb07.q1.solution': (
        '```python\npass_4_of_8 = 1 - math.comb(6, 4) / math.comb(8, 4)   # 0.7857\n```',
        '```python\npass_4_of_8 = 1 - math.comb(6, 4) / math.comb(8, 4)   # 0.7857\n```'),
    'nb07.q2.title': (
        'Q2: derive pass@2 in terms of n and c',
        'Q2：用 n 和 c 推导 pass@2'),
    'nb07.q2.hint1': (
        'pass@2 = 1 - P(both samples of a random pair are wrong).',
        'pass@2 = 1 - P(随机一对样本都错)。'),
    'nb07.q2.hint2': (
        'There are C(n, 2) = n(n-1)/2 pairs, and C(n-c, 2) = (n-c)(n-c-1)/2 of them are all wrong.',
        '共有 C(n, 2) = n(n-1)/2 对，其中 C(n-c, 2) = (n-c)(n-c-1)/2 对全错。'),
    'nb07.q2.solution': (
        '```python\npass_at_2 = 1 - (n - c) * (n - c - 1) / (n * (n - 1))\n```',
        '```python\npass_at_2 = 1 - (n - c) * (n - c - 1) / (n * (n - 1))\n```'),
    'nb07.q3.title': (
        'Q3: implement maj@1',
        'Q3：实现 maj@1'),
    'nb07.q3.hint1': (
        "With k = 1 the 'vote' is a single answer: maj@1 is the chance that one random answer is right.",
        'k = 1 时“投票”只有一个答案：maj@1 就是随机一个答案正确的概率。'),
    'nb07.q3.hint2': (
        'Count the answers equal to `correct` (an unparsable answer, None, is never right) and divide by n.',
        '数出等于 `correct` 的答案（无法解析的答案 None 永远不算对），再除以 n。'),
    'nb07.q4.title': (
        'Q4: maj@3 by hand',
        'Q4：手算 maj@3'),
    'nb07.q4.hint1': (
        'There are C(4, 3) = 4 subsets of three answers. List them.',
        '三个答案的子集共有 C(4, 3) = 4 个。把它们列出来。'),
    'nb07.q4.hint2': (
        'Two subsets hold both 7s (7 wins); two hold one 7, one 3, one 5: a three-way tie, which counts 1/3.',
        '两个子集包含两个 7（7 胜出）；另两个各含一个 7、一个 3、一个 5：三方平局，记 1/3。'),
    'nb07.q4.solution': (
        '```python\nmaj_3 = (1 + 1 + 1/3 + 1/3) / 4   # = 2/3\n```',
        '```python\nmaj_3 = (1 + 1 + 1/3 + 1/3) / 4   # = 2/3\n```'),
    'nb07.q5.title': (
        'Q5: Pass@64 of a 10 % question',
        'Q5：一道正确率 10 % 的题的 Pass@64'),
    'nb07.q5.hint': (
        'With independent samples, Pass@K = 1 - P(all K wrong) = 1 - (1 - p)^K.',
        '样本独立时，Pass@K = 1 - P(K 个全错) = 1 - (1 - p)^K。'),
    'nb07.q5.solution': (
        '```python\npass_64_at_p01 = 1 - 0.9 ** 64   # 0.9988: almost always solved\n```',
        '```python\npass_64_at_p01 = 1 - 0.9 ** 64   # 0.9988: almost always solved\n```'),
    'nb07.q3.case.one_right_of_three': (
        'one right of three',
        '三个中一个正确'),
    'nb07.q3.case.the_majority_is_wrong': (
        'the majority is wrong',
        '多数是错的'),
    'nb07.q3.case.unparsable_answers_never_win': (
        'unparsable answers never win',
        '无法解析的答案永远不会胜出'),
    'nb07.q3.case.first_answer_wrong': (
        'first answer wrong',
        '第一个答案错误'),
}
