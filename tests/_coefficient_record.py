"""Every registered method's coefficient on fixed ragged float64 batches, under every setting that changes it.

`cases()` yields (key, method, settings, inputs) for each method of METHODS: its default settings, each hparams
field and each RLConfig field a coefficient reads moved one at a time, and every pair of its choice fields; each on
four kinds of update (on-policy, off-policy with ratios across the clip range, off-policy with ratios near 1 for the
sequence-level clips, and a second reward draw). `compute(case)` is the coefficient the registry gives now, through
`wiring.coefficient_of` on `paradigm.step_from_tensors`. `python tests/_coefficient_record.py --write` writes the
record, tests/fixtures/coefficient-record.json; tests/test_coefficient_record.py holds every method to it (1e-12).
"""

import dataclasses
import itertools
import json
import os
import sys
import typing

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
RECORD = os.path.join(HERE, "fixtures", "coefficient-record.json")
CFG_FIELDS = {"beta": 0.1, "clip_eps": 0.2, "dpo_beta": 0.5}  # the RLConfig fields coefficients read, as recorded
CFG_MOVES = {"beta": 0.3, "clip_eps": 0.1, "dpo_beta": 1.5}
T = 7


def _mask(lengths, prompt=2):
    m = torch.zeros(len(lengths), T, dtype=torch.float64)
    for i, n in enumerate(lengths):
        m[i, prompt:prompt + n] = 1  # response tokens after a prompt, padding after
    return m


def layout(method):
    """(rows, group_size, kind) of a method's batches: pairs and KTO's halves, ReMax's (sampled, greedy) pairs."""
    from unified_rl.data import GreedyBaselinePairs, LabelledSamples, PreferencePairs
    src = method.data_source
    if isinstance(src, type) and issubclass(src, PreferencePairs):
        return 8, 1, "pairs"
    if isinstance(src, type) and issubclass(src, LabelledSamples):
        return 8, 1, "labelled"
    if isinstance(src, type) and issubclass(src, GreedyBaselinePairs):
        return 8, 2, "remax"
    return 12, 4, "groups"


# rewards by layout and draw: groups with 1 and 3 right and one all wrong (no signal); pairs chosen then rejected;
# ReMax's (sampled, greedy) pairs won, lost, tied right and tied wrong; KTO's labels mixed
SCORES = {"groups": ((1, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0), (0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 0, 1)),
          "pairs": ((1, 1, 1, 1, 0, 0, 0, 0),) * 2,
          "remax": ((1, 0, 0, 1, 1, 1, 0, 0), (0, 1, 1, 0, 0, 0, 1, 1)),
          "labelled": ((1, 0, 0, 1, 1, 0, 1, 0), (0, 1, 1, 1, 0, 0, 1, 0))}
LENGTHS = {8: (5, 1, 3, 5, 2, 4, 5, 3), 12: (5, 1, 3, 5, 2, 4, 5, 3, 4, 4, 1, 5)}


def inputs(method, update, draw):
    """The tensors of one recorded step: update in on/off/near, draw 0 or 1 (another seed for every tensor)."""
    B, G, kind = layout(method)
    g = torch.Generator().manual_seed(1000 * draw + {"on": 0, "off": 1, "near": 2}[update])
    mask = _mask(LENGTHS[B])
    logp = -(torch.rand(B, T, generator=g, dtype=torch.float64) * 2 + 0.05) * mask
    logp_ref = (logp + (torch.rand(B, T, generator=g, dtype=torch.float64) - 0.5) * 0.8) * mask
    noise = (torch.rand(B, T, generator=g, dtype=torch.float64) - 0.5)
    logp_old = {"on": logp, "off": logp + noise * 0.9, "near": logp + noise * 8e-4}[update] * mask
    scores = torch.tensor(SCORES[kind][draw], dtype=torch.float64)
    if method.name == "gdpo":  # two reward columns: the rule's 0/1 and an overlong penalty <= 0
        scores = torch.stack([scores, -torch.rand(B, generator=g, dtype=torch.float64) * 0.5], -1)
    adv = torch.randn(B, T, generator=g, dtype=torch.float64) * mask
    truncated = torch.tensor([i % 5 == 1 for i in range(B)])
    entropy = torch.rand(B, T, generator=g, dtype=torch.float64) * mask
    return dict(logp=logp, logp_ref=logp_ref, logp_old=logp_old, scores=scores, adv=adv, mask=mask,
                group_size=G, truncated=truncated, entropy=entropy)


def _alternatives(method, f, value):
    """Other values of one hparams field: its choices, the str values other methods give a field of that name,
    the other bool, a number moved."""
    from unified_rl.methods import METHODS
    if "choices" in f.metadata:
        return [c for c in f.metadata["choices"] if c != value]
    if isinstance(value, bool):
        return [not value]
    if isinstance(value, str):
        seen = {getattr(m.hparams, f.name) for m in METHODS.values() if m.hparams is not None and hasattr(m.hparams, f.name)}
        from unified_rl.coefficients import AGGREGATIONS
        if f.name == "aggregation":
            seen |= set(AGGREGATIONS)
        return sorted(seen - {value})
    if value is None:
        return []
    return [value * 1.5 + 0.05]


def settings(method):
    """Every recorded setting of a method: {} (its defaults), one field moved at a time, every pair of choice fields."""
    hp = method.hparams
    fields = [f for f in dataclasses.fields(hp)] if hp is not None else []
    out = [{}]
    for f in fields:
        out += [{f.name: v} for v in _alternatives(method, f, getattr(hp, f.name))]
    out += [{k: v} for k, v in CFG_MOVES.items()]
    choice = [f for f in fields if isinstance(getattr(hp, f.name), str) or "choices" in f.metadata]
    for a, b in itertools.combinations(choice, 2):
        for va, vb in itertools.product(_alternatives(method, a, getattr(hp, a.name)),
                                        _alternatives(method, b, getattr(hp, b.name))):
            out.append({a.name: va, b.name: vb})
    return out


def compute(name, setting, update, draw):
    """The coefficient (B, T) float64 of METHODS[name] under `setting` on one recorded step, or the ValueError's text."""
    from unified_rl import paradigm, wiring
    from unified_rl.methods import METHODS
    from unified_rl.presets import RLConfig
    m, setting = translate(name, setting)
    x = inputs(m, update, draw)
    cfg_over = {k: setting.get(k, v) for k, v in CFG_FIELDS.items()}
    cfg = dataclasses.replace(RLConfig(), **cfg_over)
    hp_over = {k: v for k, v in setting.items() if k not in CFG_FIELDS}
    try:
        hp = dataclasses.replace(m.hparams, **hp_over) if m.hparams is not None else None
        step = paradigm.step_from_tensors(x["logp"], x["mask"], cfg, logp_ref=x["logp_ref"] if m.uses_ref else None,
                                          logp_old=x["logp_old"], scores=x["scores"], adv=x["adv"],
                                          group_size=x["group_size"], hp=hp, truncated=x["truncated"],
                                          entropy=x["entropy"])
        return wiring.coefficient_of(m, step)
    except ValueError as e:
        return f"ValueError: {e}"


# The settings' names and meanings as the record wrote them, and today's (tests/test_coefficient_record.py):
# verl's names win, so the per-group token mean is group-token-mean and the batch's is token-mean (REINFORCE++ and
# ReMax took "token-mean" over the batch already); "constant" with L = 1 is verl's seq-mean-token-sum; LUSPO's clip
# is its policy term's (gspo_*); REINFORCE++'s kl_in="loss" was a k3 penalty in the loss: another composition.
OLD_AGGREGATION = {"token-mean": "group-token-mean", "batch-token-mean": "token-mean"}
BATCH_TOKEN_MEAN = ("reinforce++", "remax")
TOKEN_SUM = ("rloo", "remax", "opo")  # recorded with the constant aggregation and L = 1 as their default
RENAMED = {"luspo_clip_eps": "gspo_clip_eps", "luspo_clip_eps_high": "gspo_clip_eps_high"}


def translate(name, setting):
    """(the Method, its settings today) of a recorded (name, settings)."""
    import dataclasses as dc
    from unified_rl.methods import METHODS, ROWS
    setting = {RENAMED.get(k, k): v for k, v in setting.items()}
    if "aggregation" in setting:
        agg = setting["aggregation"]
        setting["aggregation"] = "token-mean" if name in BATCH_TOKEN_MEAN and agg.endswith("token-mean") and agg != "seq-mean-token-mean" else OLD_AGGREGATION.get(agg, agg)
    if name in TOKEN_SUM and "max_len" in setting and "aggregation" not in setting:
        setting["aggregation"] = "constant"
    if name == "reinforce++" and setting.pop("kl_in", "return") == "loss":
        row = next(r for r in ROWS if r.name == name)
        return dc.replace(row, kl="k3", kl_in="loss").method(), setting
    return METHODS[name], setting


def cases():
    from unified_rl.methods import METHODS
    for name, m in METHODS.items():
        for setting in settings(m):
            for update, draw in (("on", 0), ("off", 0), ("near", 0), ("off", 1)):
                yield name, setting, update, draw


def key(name, setting, update, draw):
    return json.dumps([name, sorted(setting.items()), update, draw], default=str)


def parse(k):
    """(name, setting, update, draw) of a recorded key."""
    name, setting, update, draw = json.loads(k)
    return name, dict(setting), update, draw


def write():
    record = {}
    for case in cases():
        c = compute(*case)
        record[key(*case)] = c if isinstance(c, str) else [[float(v) for v in row] for row in c.tolist()]
    os.makedirs(os.path.dirname(RECORD), exist_ok=True)
    with open(RECORD, "w") as f:
        json.dump(record, f, separators=(",", ":"), sort_keys=True, allow_nan=False)
    print(f"{len(record)} cases -> {RECORD} ({os.path.getsize(RECORD) / 1e6:.2f} MB)")


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: python tests/_coefficient_record.py --write")
    write()
