"""What the command line parses and `methods` prints, without importing torch: the registries' names and descriptions.

catalogue.json is generated from the live registries (`python -m unified_rl.catalogue --write`) and
tests/test_cli_fast.py checks that it equals them, so a fresh `python -m unified_rl --help` reads a
small JSON file instead of importing the trainer. A section whose registry this process has already
imported is read live instead (a method registered in a notebook is listed and trainable at once).
Adding a section is one entry in SECTIONS: a registry module and the function that describes it.
"""

import json
import os
import sys

PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "catalogue.json")
WRITE = "python -m unified_rl.catalogue --write"


def _name(obj):
    """A readable name for a component: a function's or class's own, else its class's."""
    return getattr(obj, "__name__", None) or type(obj).__name__


def _settings(m):
    """A method's settings that pick among named choices: [{"name", "choices"}], its default first."""
    import dataclasses

    if m.hparams is None:
        return []
    return [{"name": f.name, "choices": list(dict.fromkeys(map(str, [getattr(m.hparams, f.name),
                                                                      *f.metadata["choices"]])))}
            for f in dataclasses.fields(m.hparams) if "choices" in f.metadata]


def composition(m):
    """A method's GC as its parts (advantage x policy [x KL (where)], aggregation), or its coefficient's name."""
    c = m.composition
    if c is None:
        return _name(m.coefficient)
    if hasattr(c, "describe"):  # a preference composition: scores x loss, norm
        return c.describe()
    kl = f" x {c.kl} ({c.kl_in})" if c.kl else ""
    terms = "".join(f" + {t}" for t in c.terms)
    masks = f" [{', '.join(c.masks)}]" if c.masks else ""
    return f"{c.advantage} x {c.policy}{kl}{terms}, {m.hparams.aggregation}{masks}"


def methods():
    """Each method: its name, data source, reward, GC (its parts), paper, one-line summary and choice settings."""
    from .methods import METHODS

    return [{"name": m.name, "data_source": _name(m.data_source),
             "reward": _name(m.reward) if m.reward else "human selection", "gc": composition(m),
             "paper": m.paper, "summary": m.summary, "settings": _settings(m), "ships_in": list(m.ships_in),
             "composed": m.composition is not None} for m in METHODS.values()]


def parts():
    """Each axis of the coefficient: its parts, with aliases, summary, citation, where it ships and settings."""
    from .parts import REGISTRIES

    return {axis: [{"name": p.name, "aliases": list(p.aliases), "summary": p.summary, "cite": p.cite,
                    "ships_in": list(p.ships_in), "settings": [f.name for f in p.fields()]} for p in r.values()]
            for axis, r in REGISTRIES.items()}


def presets():
    """Each preset: its name and its world's kind ("lab": the course's own model; "pretrained")."""
    from .presets import PRESETS
    from .worlds import world_of

    return [{"name": name, "kind": world_of(name).kind} for name in PRESETS]


def experiments():
    """Each experiment `reproduce` runs, by name."""
    from .experiments import EXPERIMENTS

    return [{"name": name} for name in EXPERIMENTS]


# section -> (the module that holds its registry, the function that describes the registry)
SECTIONS = {"methods": ("unified_rl.methods", methods), "parts": ("unified_rl.parts", parts),
            "presets": ("unified_rl.presets", presets), "experiments": ("unified_rl.experiments", experiments)}


def build():
    """Every section, from the live registries (imports torch and the trainer)."""
    return {name: describe() for name, (_, describe) in SECTIONS.items()}


def shipped(path=None):
    """The sections as written to catalogue.json; {} when the file is missing."""
    try:
        with open(path or PATH, encoding="utf-8") as f:
            return json.load(f)["sections"]
    except FileNotFoundError:
        return {}


def load():
    """Every section: live where its registry is imported already (or nothing was shipped), else as shipped."""
    saved = shipped()
    return {name: describe() if module in sys.modules or name not in saved else saved[name]
            for name, (module, describe) in SECTIONS.items()}


def write(path=None):
    """Write the live registries' catalogue to `path` (catalogue.json)."""
    text = json.dumps({"generated_by": WRITE, "sections": build()}, indent=1, ensure_ascii=False) + "\n"
    with open(path or PATH, "w", encoding="utf-8") as f:
        f.write(text)


def main(argv=None):
    """--write: regenerate catalogue.json; --check: exit 1 if it differs from the live registries."""
    import argparse

    p = argparse.ArgumentParser(prog="python -m unified_rl.catalogue", description=main.__doc__)
    how = p.add_mutually_exclusive_group(required=True)
    how.add_argument("--write", action="store_true", help="regenerate catalogue.json from the registries")
    how.add_argument("--check", action="store_true", help="exit 1 if catalogue.json differs from them")
    if p.parse_args(argv).write:
        write()
        print(f"wrote {PATH}")
    elif shipped() != build():
        sys.exit(f"{PATH} differs from the registries: run `{WRITE}`")


if __name__ == "__main__":
    main()
