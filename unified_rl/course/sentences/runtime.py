"""The package's run-time messages in Chinese: {English template: Chinese template}.

What a Chinese reader sees besides the notebooks' sentences and the experiments' figures: the row
labels of a derivation's LaTeX display (`Derivation.latex`), and the messages the trainer and the SFT
cache print on stderr (`unified_rl.text.Text`, shown in Chinese once `set_language("zh")`). Exception
messages stay English (docs/ARCHITECTURE.md, "The Chinese edition"). tests/test_zh_runtime.py shows each.
"""

SENTENCES = {
    # derivations/core.py: Derivation.latex's rows
    "by hand": "手推",
    "printed": "论文印出",
    # trainer.py: $UNIFIED_RL_MAX_STEPS
    "UNIFIED_RL_MAX_STEPS={cap} caps this {method} run at {cap} of {steps} steps":
        "UNIFIED_RL_MAX_STEPS={cap}：这次 {method} 运行只训练 {steps} 步中的 {cap} 步",
    # cache.py: the SFT model cache
    "rebuilding the incomplete SFT cache entry {path}": "重新构建不完整的 SFT 缓存条目 {path}",
    "building the SFT model cache for preset {preset} seed {seed} (first run only): {steps} steps into {path}":
        "正在构建预设 {preset}、随机种子 {seed} 的 SFT 模型缓存（只在第一次运行时）：训练 {steps} 步，写入 {path}",
    "this run is now the SFT model cache for preset {preset} seed {seed}: later runs start from it ({path})":
        "这次运行现在就是预设 {preset}、随机种子 {seed} 的 SFT 模型缓存：之后的运行都从它开始（{path}）",
}
