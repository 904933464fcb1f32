"""Notebook 08's printed sentences in Chinese (i18n.tr): data source, noisy reward and reward function."""

SENTENCES = {
    "preset {name}; experiments: {experiments}": "预设 {name}；实验：{experiments}",
    "human selection": "人工筛选",
    "{name:13s} data source {source:20s} reward {reward:12s} GC {gc}":
        "{name:13s} 数据来源 {source:20s} 奖励 {reward:12s} GC {gc}",
    "{model:17s} greedy: two-digit {two:.3f}, three-digit {three:.3f}":
        "{model:17s} 贪心准确率：两位数 {two:.3f}，三位数 {three:.3f}",
    "{arm:17s} batch accuracy (first 5 steps) {first:.2f} -> (last 5) {last:.2f}":
        "{arm:17s} 批次准确率（前 5 步）{first:.2f} -> （后 5 步）{last:.2f}",
    "data-source: {seeds} seeds, {preset} preset, from {path}": "data-source：{seeds} 个随机种子，{preset} 预设，来自 {path}",
    "E[noisy reward] = {expected}   slope in r: {slope}": "E[噪声奖励] = {expected}   对 r 的斜率：{slope}",
    "simulated at epsilon = 0.2: E[noisy | r=1] = {r1:.3f}, E[noisy | r=0] = {r0:.3f}":
        "在 epsilon = 0.2 下模拟：E[噪声奖励 | r=1] = {r1:.3f}，E[噪声奖励 | r=0] = {r0:.3f}",
    "at accuracy 0.3, eps 0.2: RFT keeps {kept:.3f} of the samples, {precision:.3f} of them right "
    "(Bayes: {bayes:.3f}); DPO pairs reversed: {reversed_pairs:.3f}; right samples GRPO pushes down: {pushed_down:.3f}":
        "准确率 0.3、eps 0.2 时：RFT 保留 {kept:.3f} 的样本，其中 {precision:.3f} 是正确的"
        "（贝叶斯公式：{bayes:.3f}）；DPO 偏好对被颠倒的比例：{reversed_pairs:.3f}；"
        "GRPO 压低的正确样本比例：{pushed_down:.3f}",
    "SFT start: {accuracy:.3f}": "SFT 起点：{accuracy:.3f}",
    "noisy-reward: {seeds} seeds, {preset} preset, from {path}": "noisy-reward：{seeds} 个随机种子，{preset} 预设，来自 {path}",
    "n/a": "无",
    "reward model trained on {samples} samples in {cpu_s} CPU s; AUC on its training samples {train_auc}, "
    "on held-out SFT samples {val_auc}, on the trained policy's samples {policy_auc}":
        "奖励模型在 {samples} 个样本上训练，用时 {cpu_s} CPU 秒；AUC：在它的训练样本上 {train_auc}，"
        "在留出的 SFT 样本上 {val_auc}，在训练后策略的样本上 {policy_auc}",
    "{arm:8s} held-out {accuracy:.3f} after {samples} samples, {cpu_s:.0f} CPU s":
        "{arm:8s} 留出准确率 {accuracy:.3f}，用了 {samples} 个样本、{cpu_s:.0f} CPU 秒",
    "reward-function: {seeds} seeds, {preset} preset, from {path}":
        "reward-function：{seeds} 个随机种子，{preset} 预设，来自 {path}",
}
