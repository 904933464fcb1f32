"""Give every course notebook an "Open in Colab" link and a first code cell that installs the package on Colab.

    python scripts/colab.py [NOTEBOOK ...]      (default: every course/*.ipynb)
Idempotent: the two cells are found by their tags and rewritten, never added twice, so rerun it
after adding a notebook or changing [project.urls] Repository in pyproject.toml (a fork does that).
The install cell acts only where `google.colab` is imported (Colab's kernel imports it at start);
anywhere else it changes nothing. Tests: tests/test_colab.py.
"""

import glob
import os
import re
import sys
import tomllib

import nbformat

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LINK_TAG, SETUP_TAG = "colab-link", "colab-install"


def repository():
    """(url, "owner/repo") from pyproject.toml's [project.urls] Repository."""
    with open(os.path.join(REPO, "pyproject.toml"), "rb") as f:
        url = tomllib.load(f)["project"]["urls"]["Repository"].rstrip("/")
    m = re.fullmatch(r"https://github\.com/([\w.-]+/[\w.-]+?)(\.git)?", url)
    if not m:
        raise ValueError(f"[project.urls] Repository must be https://github.com/OWNER/REPO, not {url!r}")
    return url, m.group(1)


def colab_url(owner_repo, name, branch="main"):
    return f"https://colab.research.google.com/github/{owner_repo}/blob/{branch}/course/{name}"


def link_source(owner_repo, name):
    binder = f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/course/{name}"
    return (f"[Open in Colab]({colab_url(owner_repo, name)}) (a free GPU; the next cell installs the package there)"
            f" · [Binder]({binder}) (CPU, nothing to install)")


def setup_source(url):
    return f'''# On Colab: install this course's package. Anywhere else this cell does nothing.
import sys

if "google.colab" in sys.modules:
    import importlib
    import subprocess

    subprocess.run([sys.executable, "-m", "pip", "install", "-q", "ipywidgets>=8",
                    "unified_rl @ git+{url}"], check=True)
    importlib.invalidate_caches()'''


def _tagged(nb, tag):
    return [i for i, c in enumerate(nb.cells) if tag in c.get("metadata", {}).get("tags", [])]


def _put(nb, tag, cell_type, source, index):
    """Rewrite the cell tagged `tag`, or insert one at `index`; True if the notebook changed."""
    found = _tagged(nb, tag)
    for extra in reversed(found[1:]):  # never more than one
        del nb.cells[extra]
    if found:
        cell = nb.cells[found[0]]
        if cell.cell_type == cell_type and cell.source == source:
            return len(found) > 1
        nb.cells[found[0]] = _new(cell_type, source, tag)
        return True
    nb.cells.insert(index, _new(cell_type, source, tag))
    return True


def _new(cell_type, source, tag):
    make = nbformat.v4.new_code_cell if cell_type == "code" else nbformat.v4.new_markdown_cell
    return make(source, metadata={"tags": [tag]})


def stamp(path, url, owner_repo) -> bool:
    """Put the link after the title and the install cell before the first code cell; True if changed."""
    nb = nbformat.read(path, as_version=4)
    name = os.path.basename(path)
    title = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown" and c.source.lstrip().startswith("#")
                  and LINK_TAG not in c.get("metadata", {}).get("tags", [])), -1)
    changed = _put(nb, LINK_TAG, "markdown", link_source(owner_repo, name), title + 1)
    first_code = next((i for i, c in enumerate(nb.cells) if c.cell_type == "code"
                       and SETUP_TAG not in c.get("metadata", {}).get("tags", [])), len(nb.cells))
    changed |= _put(nb, SETUP_TAG, "code", setup_source(url), first_code)
    setup = _tagged(nb, SETUP_TAG)[0]
    if any(c.cell_type == "code" for c in nb.cells[:setup]):  # it must run first: move it
        cell = nb.cells.pop(setup)
        first_code = next(i for i, c in enumerate(nb.cells) if c.cell_type == "code")
        nb.cells.insert(first_code, cell)
        changed = True
    if changed:
        for i, cell in enumerate(nb.cells):  # ids as nbstripout numbers them, so the file stays stripped
            cell["id"] = str(i)
        nbformat.write(nb, path)
    return changed


def main(paths=None):
    url, owner_repo = repository()
    paths = paths or sorted(glob.glob(os.path.join(REPO, "course", "*.ipynb")))
    for path in paths:
        print(f"{'updated' if stamp(path, url, owner_repo) else 'unchanged'}  {os.path.relpath(path, REPO)}")


if __name__ == "__main__":
    main(sys.argv[1:])
