"""Notebook 07's printed sentences in Chinese (i18n.tr): Pass@K, Maj@K and the Figure 7 analogue."""

SENTENCES = {
    "preset {name}: {n_sft} SFT questions, {n_test} held-out questions":
        "预设 {name}：{n_sft} 道 SFT 问题，{n_test} 道留出问题",
    "n = {n} samples, c = {c} right, votes: {votes}":
        "n = {n} 个样本，c = {c} 个正确，票数：{votes}",
    "k = {k}: brute force {brute:>6} = {value:.4f}   metrics.pass_at_k {pkg:.4f}":
        "k = {k}：穷举 {brute:>6} = {value:.4f}   metrics.pass_at_k {pkg:.4f}",
    "k = {k}: brute force {brute:>7} = {value:.4f}   metrics.maj_at_k {pkg:.4f}":
        "k = {k}：穷举 {brute:>7} = {value:.4f}   metrics.maj_at_k {pkg:.4f}",
    # the three lines line up their numbers (a CJK character is two columns wide)
    "true pass@{k}       {value:.4f}": "真实 pass@{k}       {value:.4f}",
    "unbiased estimator  {value:.4f}": "无偏估计          {value:.4f}",
    "with replacement    {value:.4f}   (biased low)": "有放回估计        {value:.4f}   （偏低）",
    "toy question": "示例问题",
    "one question, eight answers": "一道题，八个答案",
    "alpha = {alpha:g}: p(right) on A, B = {p_right}; Pass@64 on B = {pass_64:.3f}":
        "alpha = {alpha:g}：A、B 上的 p(right) = {p_right}；B 上的 Pass@64 = {pass_64:.3f}",
    "Maj@64 before {before:.3f}, after {after:.3f}": "Maj@64 之前 {before:.3f}，之后 {after:.3f}",
    "two questions, before and after p^α / Z": "两道题，p^α / Z 之前与之后",
    "p(right) 0.30 but a wrong answer at 0.42: Maj@64 before {before:.3f}, after α = 2 {after:.3f}; Pass@64 {pass_64:.3f}":
        "p(right) 为 0.30，但有一个错误答案占 0.42：Maj@64 之前 {before:.3f}，α = 2 之后 {after:.3f}；"
        "Pass@64 {pass_64:.3f}",
    "64 answers laid out in proportion, all 64 voting: Maj@64 = {laid_out:.3f} (a fixed vote), "
    "where 64 independent draws give {drawn:.3f}":
        "按比例摆出 64 个答案、64 个全部投票：Maj@64 = {laid_out:.3f}（投票结果是固定的），"
        "而 64 次独立抽取给出 {drawn:.3f}",
    "loaded the full CLI run ({seeds} seeds) from {path}": "已从 {path} 载入完整的 CLI 运行（{seeds} 个随机种子）",
    "no cached full run: running a small one (1 seed, the shared SFT model)":
        "没有缓存的完整运行：运行一个小规模的（1 个随机种子，共享的 SFT 模型）",
    "seeds {seeds}, SFT steps {sft_steps}, GRPO steps {rl_steps} "
    "on {rl_questions} SFT questions, {k_problems} held-out questions x {samples} samples":
        "随机种子 {seeds} 个，SFT {sft_steps} 步，在 {rl_questions} 道 SFT 问题上 GRPO {rl_steps} 步，"
        "{k_problems} 道留出问题 x {samples} 个样本",
    "greedy accuracy SFT {sft:.3f} -> RL {rl:.3f} on held-out, {sft_rl:.3f} -> {rl_rl:.3f} on the RL questions":
        "贪心准确率：留出问题上 SFT {sft:.3f} -> RL {rl:.3f}，RL 训练问题上 {sft_rl:.3f} -> {rl_rl:.3f}",
    "RL's mean Pass@K is below SFT's from K = {k} (a description; None: at no K)":
        "从 K = {k} 起，RL 的 Pass@K 均值低于 SFT 的（只是描述；None 表示在任何 K 处都没有）",
    "can rise": "还能提高",
    "SFT Maj@{k} per seed: {per_seed} (mid-range: {mid_range})":
        "每个随机种子的 SFT Maj@{k}：{per_seed}（处于中间区间：{mid_range}）",
    "verdict: {sentence}": "结论：{sentence}",
    "{questions} questions; solved by some SFT sample but no RL sample: {lost}, the reverse: {gained}; "
    "more than half of the samples right: SFT {sft:.3f}, RL {rl:.3f}":
        "{questions} 道题；有 SFT 样本解出而没有 RL 样本解出的：{lost}，反过来的：{gained}；"
        "超过一半样本正确的比例：SFT {sft:.3f}，RL {rl:.3f}",
    "{seeds} seeds, {preset} preset, from {path}": "{seeds} 个随机种子，{preset} 预设，来自 {path}",
}
