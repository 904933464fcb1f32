"""Every notebook opens in Colab and installs the package there, and the install cell is a no-op elsewhere."""

import glob
import json
import os
import shutil
import subprocess
import sys
import types
from pathlib import Path

import nbformat
import pytest

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import colab  # noqa: E402

NOTEBOOKS = sorted(glob.glob(str(REPO / "course" / "*.ipynb")))
URL, OWNER_REPO = colab.repository()


def _cells(nb, tag):
    return [c for c in nb.cells if tag in c.get("metadata", {}).get("tags", [])]


@pytest.mark.parametrize("path", NOTEBOOKS, ids=os.path.basename)
def test_notebook_has_colab_link_and_install_cell(path):
    nb = nbformat.read(path, as_version=4)
    name = os.path.basename(path)
    (link,) = _cells(nb, colab.LINK_TAG)
    assert colab.colab_url(OWNER_REPO, name) in link.source
    (setup,) = _cells(nb, colab.SETUP_TAG)
    first_code = next(c for c in nb.cells if c.cell_type == "code")
    assert first_code is setup, "the install cell must be the first code cell"
    assert setup.source == colab.setup_source(URL)
    assert nb.cells.index(link) < nb.cells.index(setup)


def _installed():
    """The distributions this Python sees, as a subprocess lists them."""
    code = "import importlib.metadata as m, json; print(json.dumps(sorted(f'{d.name}=={d.version}' for d in m.distributions())))"
    return json.loads(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def test_install_cell_changes_nothing_outside_colab(tmp_path):
    before = _installed()
    r = subprocess.run([sys.executable, "-c", colab.setup_source(URL) + "\nprint('modules:', 'subprocess' in dir())"],
                       capture_output=True, text=True, cwd=tmp_path, timeout=60)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "modules: False"  # the install branch never ran
    assert r.stderr == ""
    assert _installed() == before
    assert list(tmp_path.iterdir()) == []  # and wrote nothing


def test_install_cell_installs_from_the_repository_on_colab(monkeypatch):
    calls = []
    fake = types.SimpleNamespace(run=lambda cmd, check: calls.append(cmd))
    monkeypatch.setitem(sys.modules, "google.colab", types.ModuleType("google.colab"))
    monkeypatch.setitem(sys.modules, "subprocess", fake)
    exec(colab.setup_source(URL), {})
    assert len(calls) == 1
    cmd = calls[0]
    assert cmd[:4] == [sys.executable, "-m", "pip", "install"]
    assert f"unified_rl @ git+{URL}" in cmd


def test_stamping_is_idempotent_and_keeps_notebooks_stripped(tmp_path):
    for path in NOTEBOOKS[:2] + NOTEBOOKS[-1:]:
        shutil.copy(path, tmp_path)
    copies = sorted(glob.glob(str(tmp_path / "*.ipynb")))
    for p in copies:
        colab.stamp(p, URL, OWNER_REPO)
    first = {p: Path(p).read_text() for p in copies}
    for p in copies:
        assert not colab.stamp(p, URL, OWNER_REPO), f"{p} changed on a second run"
        nb = nbformat.read(p, as_version=4)
        assert len(_cells(nb, colab.LINK_TAG)) == len(_cells(nb, colab.SETUP_TAG)) == 1
        nbformat.validate(nb)
    assert {p: Path(p).read_text() for p in copies} == first
    nbstripout = shutil.which("nbstripout") or os.path.join(os.path.dirname(sys.executable), "nbstripout")
    if os.path.exists(nbstripout):
        assert subprocess.run([nbstripout, "--verify", *copies]).returncode == 0


def test_a_fork_gets_its_own_links(tmp_path):
    path = tmp_path / "nb.ipynb"
    shutil.copy(NOTEBOOKS[0], path)
    colab.stamp(str(path), "https://github.com/someone/fork", "someone/fork")
    text = path.read_text()
    assert "github/someone/fork/blob/main/course/nb.ipynb" in text and "git+https://github.com/someone/fork" in text
    assert "unified-rl/unified_rl" not in "".join(c.source for c in _cells(nbformat.reads(text, 4), colab.SETUP_TAG))
