"""Put the JupyterLab extension where the lab finds it, as a wheel of the package does.

    python labextension/install.py [PREFIX]     (default: this Python's sys.prefix)

An editable install (`pip install -e .`: `make lab`, Binder) installs no data files, so the extension
that a wheel puts under PREFIX/share/jupyter/labextensions/ is copied there by this script instead.
The files are the ones pyproject.toml's [tool.setuptools.data-files] names for that folder (the built
extension and the package's CJK font), so the wheel and this copy cannot differ.
"""

import glob
import os
import shutil
import sys
import tomllib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
TARGET = "share/jupyter/labextensions/"


def data_files(pyproject=os.path.join(REPO, "pyproject.toml")):
    """[(destination folder under the prefix, [source files])] for the extension, globs expanded."""
    with open(pyproject, "rb") as f:
        table = tomllib.load(f).get("tool", {}).get("setuptools", {}).get("data-files", {})
    out = []
    for dest, patterns in table.items():
        if not dest.startswith(TARGET):
            continue
        files = []
        for pattern in patterns:
            found = sorted(glob.glob(os.path.join(REPO, pattern)))
            if not found:
                raise ValueError(f"{pattern} (pyproject.toml's data-files) matches no file: build the extension "
                                 "with labextension/build.sh")
            files += found
        out.append((dest, files))
    if not out:
        raise ValueError(f"pyproject.toml's data-files name no folder under {TARGET}")
    return out


def install(prefix):
    """Copy the extension's files under `prefix`; the folder of the extension written."""
    written = set()
    for dest, files in data_files():
        folder = os.path.join(prefix, dest)
        os.makedirs(folder, exist_ok=True)
        for path in files:
            shutil.copyfile(path, os.path.join(folder, os.path.basename(path)))
        written.add(os.path.join(prefix, TARGET, dest[len(TARGET):].split("/")[0]))
    return sorted(written)


def main(argv):
    if len(argv) > 1:
        sys.exit("usage: python labextension/install.py [PREFIX]")
    try:
        for folder in install(argv[0] if argv else sys.prefix):
            print(f"installed the JupyterLab extension in {folder}")
    except (ValueError, OSError) as e:
        sys.exit(f"labextension/install.py: {e}")


if __name__ == "__main__":
    main(sys.argv[1:])
