"""Notebook 10's printed sentences in Chinese (i18n.tr): GRPO's successors, loss aggregation, the KL estimators."""

SENTENCES = {
    # 0. setup
    "preset {name}: {questions} questions x G = {G} answers per step, beta = {beta}, clip_eps = {clip_eps}":
        "预设 {name}：每步 {questions} 个问题 × G = {G} 个答案，beta = {beta}，clip_eps = {clip_eps}",
    # 2. loss aggregation
    "token-mean GC of o1's token and o2's two tokens: {gc} = A_i times 2|o_i|/3":
        "token-mean 下 o1 的 token 和 o2 的两个 token 的 GC：{gc} = A_i 乘以 2|o_i|/3",
    "{agg:<24} derived GC per token: {gc}": "{agg:<24} 推导出的每个 token 的 GC：{gc}",
    "{agg:<24} factor of the shortest answer ({n_short:.0f} tokens) {short:.3f}, "
    "of the longest ({n_long:.0f} tokens) {long:.3f}":
        "{agg:<24} 最短答案（{n_short:.0f} 个 token）的因子 {short:.3f}，最长答案（{n_long:.0f} 个 token）的因子 {long:.3f}",
    "group-token-mean: each question's total weight {lo:.3f} to {hi:.3f} (= G)":
        "group-token-mean（按组的 token 平均）：每个问题的总权重从 {lo:.3f} 到 {hi:.3f}（= G）",
    "token-mean (the batch's): {lo:.3f} to {hi:.3f}, in proportion to its answers' "
    "total length ({n_lo:.0f} to {n_hi:.0f} tokens)":
        "token-mean（整个批次的 token 平均）：从 {lo:.3f} 到 {hi:.3f}，与该问题各答案的总长度（{n_lo:.0f} 到 {n_hi:.0f} 个 token）成正比",
    # 3. the normaliser on several ranks
    "{name:<12} training moved a weight by up to {moved:.1e}; 2 ranks against 1 process: {same:.1e}; "
    "2 ranks each normalising by its own counts: {apart:.1e}":
        "{name:<12} 训练使一个权重最多移动了 {moved:.1e}；2 个 rank 与 1 个进程之差：{same:.1e}；"
        "2 个 rank 各自用本 rank 的计数归一化：{apart:.1e}",
    # 3. Dr. GRPO
    "length of the answer (tokens)": "答案的长度（token 数）",
    "push per token, GC/|o|": "每个 token 的推力，GC/|o|",
    "a right answer": "一个正确答案",
    "a wrong answer": "一个错误答案",
    "wrong answer, GRPO: {at4:.3f} per token at 4 tokens, {at16:.3f} at 16":
        "错误答案，GRPO：4 个 token 时每个 token {at4:.3f}，16 个 token 时 {at16:.3f}",
    "wrong answer, per-group token-mean: {at1:.3f} per token at 1 token, {at_max:.3f} at {max_len} ({change:+.0%})":
        "错误答案，按组的 token-mean：1 个 token 时每个 token {at1:.3f}，{max_len} 个 token 时 {at_max:.3f}（{change:+.0%}）",
    "GRPO: (r - mean) / std": "GRPO：(r - 均值) / 标准差",
    "Dr. GRPO: r - mean": "Dr. GRPO：r - 均值",
    "right answers out of G = {G}": "G = {G} 个答案中正确答案的个数",
    "total push on the question\n(relative to its maximum)": "问题上的总推力\n（相对于其最大值）",
    "1 right of {G}: relative weight {with_std:.2f} with the std, {without:.2f} without":
        "{G} 个中 1 个正确：除以标准差时相对权重为 {with_std:.2f}，不除时为 {without:.2f}",
    # 4. DAPO
    "plain batch: {silent:.0%} of its groups are all right or all wrong (GC 0 under DAPO)":
        "普通批次：{silent:.0%} 的组全对或全错（在 DAPO 下 GC 为 0）",
    "dynamic sampling: {groups} groups with signal, for {drawn} samples drawn instead of {plain}":
        "动态采样：{groups} 个携带信号的组，为此采样了 {drawn} 个样本，而不是 {plain} 个",
    "L_max = {L_max} tokens; answers of the plain batch: {lo:.0f} to {hi:.0f} tokens; "
    "{penalised:.1%} of them are penalised":
        "L_max = {L_max} 个 token；普通批次的答案长 {lo:.0f} 到 {hi:.0f} 个 token；其中 {penalised:.1%} 受到惩罚",
    # 5. GSPO
    "GC of token 1 = {gc} = s A": "token 1 的 GC = {gc} = s A",
    "proved: {claim}": "已证明：{claim}",
    "after one update: token ratios from {r_lo:.2f} to {r_hi:.2f} (std of log r {r_std:.3f}); "
    "sequence ratios s_i from {s_lo:.2f} to {s_hi:.2f} (std of log s {s_std:.3f})":
        "一次更新之后：token 比率从 {r_lo:.2f} 到 {r_hi:.2f}（log r 的标准差 {r_std:.3f}）；"
        "序列比率 s_i 从 {s_lo:.2f} 到 {s_hi:.2f}（log s 的标准差 {s_std:.3f}）",
    "GSPO's clip range is 1 - {eps_low:g} to 1 + {eps_high:g}; after this one update {outside:.0%} of the "
    "sequence ratios lie outside it":
        "GSPO 的裁剪范围是 1 - {eps_low:g} 到 1 + {eps_high:g}；这一次更新之后，{outside:.0%} 的序列比率落在它之外",
    # 7. RLOO, REINFORCE++, ReMax
    "REINFORCE++ advantage along answer {text!r}: {adv}": "REINFORCE++ 沿答案 {text!r} 的优势：{adv}",
    "ReMax rows: ": "ReMax 的行：",
    "greedy": "贪心",
    "sampled": "采样",
    "{name:<12} raw gradient norm {n:7.3f}: ": "{name:<12} 原始梯度范数 {n:7.3f}：",
    "clipped to 1, its step x {factor:.2f}": "被裁剪到 1，步长 × {factor:.2f}",
    "not clipped": "未被裁剪",
    "RLOO / Dr. GRPO: {ratio:.1f}x (the GC factor L k/(k-1) = {factor:.1f})":
        "RLOO / Dr. GRPO：{ratio:.1f} 倍（GC 因子 L k/(k-1) = {factor:.1f}）",
    # 8. autograd
    "{name:<12} max |grad J - grad surrogate| = {diff:.1e}": "{name:<12} |grad J - grad 替代损失| 的最大值 = {diff:.1e}",
    "{name:<20} max |grad_theta J - grad_theta surrogate| = {diff:.1e}":
        "{name:<20} |grad_theta J - grad_theta 替代损失| 的最大值 = {diff:.1e}",
    # 9. the KL estimators
    "{use}: GC term {gc}; proved: {claim} (and for z_2, z_3)": "{use}：GC 项 {gc}；已证明：{claim}（对 z_2、z_3 同样成立）",
    # 11. training
    "{name:<12} held-out {acc:.3f} (SFT {acc0:.3f})  length {len0:.2f} -> {len1:.2f}  "
    "clipped tokens: step 1 {clip1:.1%}, mean {clip_mean:.2%}  {seconds:.0f} s":
        "{name:<12} 留出准确率 {acc:.3f}（SFT {acc0:.3f}）  长度 {len0:.2f} -> {len1:.2f}  "
        "被裁剪的 token：第 1 步 {clip1:.1%}，平均 {clip_mean:.2%}  {seconds:.0f} 秒",
    "SFT: {sft}; wrong / right answers of the SFT model: {wrong:.2f} / {right:.2f} tokens":
        "SFT：{sft}；SFT 模型的错误 / 正确答案：{wrong:.2f} / {right:.2f} 个 token",
    # 12. four puzzles
    "{name:<8} objective {J:+.2e}   gradient norm {norm:.3f}": "{name:<8} 目标函数 {J:+.2e}   梯度范数 {norm:.3f}",
    "all-equal groups at pi_theta = pi_ref: every coefficient is exactly 0 -> {names}":
        "奖励全部相等的组，在 pi_theta = pi_ref 时：每个系数都恰好为 0 -> {names}",
    "epochs = {epochs}: clip fraction per step {fracs}": "epochs = {epochs}：每步的裁剪比例 {fracs}",
    "GRPO's loss on a fresh batch: {loss:.5f};  beta x mean k3 = {kl:.5f}":
        "GRPO 在一个新批次上的损失：{loss:.5f}；  beta × k3 的均值 = {kl:.5f}",
    "kl logged during training: {kl}": "训练中记录的 kl：{kl}",
    # exercises
    "the package: {adv}": "本软件包：{adv}",
    # 11 and 13: what a run leaves out, what a peer's config means
    "trained here: {live}; not trained here (section 13): {rest}": "这里训练了：{live}；这里没有训练（见第 13 节）：{rest}",
    "not in this comparison: {rest}": "不在这次对比中：{rest}",
    "TRL loss_type='dapo', epsilon_high=0.28 -> train({name!r}, **{settings})":
        "TRL 的 loss_type='dapo'、epsilon_high=0.28 -> train({name!r}, **{settings})",
    "our grpo in TRL: loss_type={loss!r}, use_bias_correction_kl={kl}; still different: {diffs}":
        "我们的 grpo 在 TRL 中：loss_type={loss!r}，use_bias_correction_kl={kl}；仍然不同的地方：{diffs}",
    # 14: a composition of one's own
    "{label}: max |grad J - grad surrogate| = {diff:.1e} on the small batch":
        "{label}：在这个小批次上 |grad J - grad 替代损失| 的最大值 = {diff:.1e}",
    "{label}: held-out greedy accuracy {before:.3f} -> {after:.3f} after {steps} steps ({seconds:.0f} s)":
        "{label}：训练 {steps} 步后（{seconds:.0f} 秒），留出集上的贪心准确率 {before:.3f} -> {after:.3f}",
}
