"""Fixtures for the browser tests: a private JupyterLab server and Debian's Chromium driven by playwright.

The server serves a temporary folder holding a copy of `course/` (so a run can never rewrite a
notebook) with config, data, runtime, settings and workspace folders of its own, autosave off and
every cell attached to the page, and the package's JupyterLab extension (labextension/, installed
as a wheel installs it) on its path. Chromium is the system one: `playwright install` is never run.
`latin_only_fonts` makes a machine without CJK fonts for it: a fontconfig that sees only DejaVu and
Liberation (so CI's or a desktop's own CJK fonts cannot hide a missing web font).
On a failed test the page is saved to build/browser-screenshots/. Without Chromium or playwright the
tests are skipped, unless UNIFIED_RL_REQUIRE_BROWSER=1 (CI), which makes that a failure.
"""

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync"]
SCREENSHOTS = REPO / "build" / "browser-screenshots"
SETTINGS = {  # JupyterLab user settings for the test server only
    "@jupyterlab/docmanager-extension/plugin": {"autosave": False},
    "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},  # every cell in the DOM
    "@jupyterlab/apputils-extension/notification": {"fetchNews": "false", "checkForUpdates": False},
}


def pytest_collection_modifyitems(items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.browser)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    rep = outcome.get_result()
    setattr(item, f"rep_{rep.when}", rep)  # read by the `page` fixture to screenshot failures


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Lab:
    """A running JupyterLab: `url(path)` gives the address of a file under `root`."""

    def __init__(self, root, port, token, proc):
        self.root, self.port, self.token, self.proc = root, port, token, proc

    def url(self, rel):
        return f"http://127.0.0.1:{self.port}/lab/tree/{rel}?reset&token={self.token}"

    def api(self, path, method="GET"):
        req = urllib.request.Request(f"http://127.0.0.1:{self.port}{path}", method=method,
                                     headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.read()


def _missing(why):
    """Skip for want of a browser; fail instead where UNIFIED_RL_REQUIRE_BROWSER=1 says one must be there."""
    if os.environ.get("UNIFIED_RL_REQUIRE_BROWSER", "").strip() == "1":
        pytest.fail(f"{why}, and UNIFIED_RL_REQUIRE_BROWSER=1 requires the browser tests to run")
    pytest.skip(why)


@pytest.fixture(scope="session")
def lab(tmp_path_factory):
    if not os.path.exists(CHROMIUM):
        _missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        import playwright.sync_api  # noqa: F401 - only whether it imports
    except ImportError:
        _missing("playwright is missing (pip install playwright)")
    base = tmp_path_factory.mktemp("lab")
    root, private = base / "root", base / "private"
    root.mkdir()
    if (REPO / "course").is_dir():
        shutil.copytree(REPO / "course", root / "course", ignore=shutil.ignore_patterns(".ipynb_checkpoints"))
    env = dict(os.environ)
    for var in ("JUPYTER_CONFIG_DIR", "JUPYTER_DATA_DIR", "JUPYTER_RUNTIME_DIR", "JUPYTERLAB_SETTINGS_DIR",
                "JUPYTERLAB_WORKSPACES_DIR", "IPYTHONDIR"):
        env[var] = str(private / var.lower())
        os.makedirs(env[var])
    for plugin, values in SETTINGS.items():
        path = Path(env["JUPYTERLAB_SETTINGS_DIR"]) / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))
    # the package's JupyterLab extension, installed from the files a wheel would carry (an editable
    # install carries none): JupyterLab looks in JUPYTER_PATH's labextensions/ first
    prefix = private / "prefix"
    r = subprocess.run([sys.executable, str(REPO / "labextension" / "install.py"), str(prefix)],
                       capture_output=True, text=True)
    if r.returncode:
        pytest.fail(f"installing the JupyterLab extension failed: {r.stderr.strip()}")
    env["JUPYTER_PATH"] = os.pathsep.join(filter(None, [str(prefix / "share" / "jupyter"), env.get("JUPYTER_PATH")]))
    env.pop("MPLBACKEND", None)  # the kernel must keep the inline backend
    # the widgets are under test here, not training (nbval runs the full notebooks): cap each train()
    env.setdefault("UNIFIED_RL_MAX_STEPS", "2")
    port, token = _free_port(), "url-browser-test"
    proc = subprocess.Popen(
        [sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1", f"--port={port}",
         f"--ServerApp.root_dir={root}", f"--IdentityProvider.token={token}", "--LabApp.news_url=None",
         "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate", "--LabApp.extension_manager=readonly",
         f"--LabApp.workspaces_dir={env['JUPYTERLAB_WORKSPACES_DIR']}"],
        env=env, cwd=root, stdout=open(base / "server.log", "wb"), stderr=subprocess.STDOUT,
        start_new_session=True)  # its own process group: the kernels it starts end with it
    server = Lab(root, port, token, proc)
    try:
        for _ in range(120):
            if proc.poll() is not None:
                pytest.fail(f"JupyterLab exited: {(base / 'server.log').read_text()[-2000:]}")
            try:
                server.api("/api/status")
                break
            except OSError:
                time.sleep(0.5)
        else:
            pytest.fail("JupyterLab did not answer within 60 s")
        yield server
    finally:
        try:
            server.api("/api/shutdown", method="POST")  # stops the kernels too
            proc.wait(timeout=20)
        except (OSError, subprocess.TimeoutExpired):
            pass
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=20)


@pytest.fixture(scope="session")
def playwright_driver():
    """The session's one playwright driver: the sync API runs one at a time in a process, so every
    browser of the session (the lab's, the font tests', the site's) is launched from it."""
    if not os.path.exists(CHROMIUM):
        _missing(f"{CHROMIUM} is missing (apt-get install chromium)")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _missing("playwright is missing (pip install playwright)")
    pw = sync_playwright().start()
    yield pw
    pw.stop()


@pytest.fixture(scope="session")
def browser(lab, playwright_driver, tmp_path_factory):
    home = tmp_path_factory.mktemp("chromium-home")  # nothing lands in the real home folder
    b = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                          env={**os.environ, "HOME": str(home)})
    yield b
    b.close()


@pytest.fixture
def page(browser, request):
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    p = context.new_page()
    yield p
    rep = getattr(request.node, "rep_call", None)
    if rep is not None and rep.failed:
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        name = "".join(c if c.isalnum() or c in "-_." else "_" for c in request.node.name)
        p.screenshot(path=str(SCREENSHOTS / f"{name}.png"), full_page=True)
    context.close()


LATIN_FAMILIES = ("DejaVu Sans", "DejaVu Sans Mono", "DejaVu Serif", "Liberation Sans", "Liberation Mono",
                  "Liberation Serif")
FONTS_CONF = """<?xml version="1.0"?>
<!DOCTYPE fontconfig SYSTEM "urn:fontconfig:fonts.dtd">
<fontconfig>
{dirs}
  <cachedir>{cache}</cachedir>
  <alias><family>sans-serif</family><prefer><family>DejaVu Sans</family></prefer></alias>
  <alias><family>serif</family><prefer><family>DejaVu Serif</family></prefer></alias>
  <alias><family>monospace</family><prefer><family>DejaVu Sans Mono</family></prefer></alias>
</fontconfig>
"""


def _fc_list(args, env=None):
    try:
        return subprocess.run(["fc-list", *args], capture_output=True, text=True, env=env).stdout
    except FileNotFoundError:
        _missing("fc-list is missing (apt-get install fontconfig)")


@pytest.fixture(scope="session")
def latin_only_fonts(tmp_path_factory):
    """{"env": the environment variables under which Chromium sees only the folders of the system's DejaVu
    and Liberation fonts (a private FONTCONFIG_FILE), "families": the font families it then sees}; fc-list
    checks that it sees fonts and that none of them covers Chinese."""
    dirs = sorted({os.path.dirname(line.strip()) for family in LATIN_FAMILIES
                   for line in _fc_list([family, "file"]).replace(":", "").splitlines() if line.strip()})
    if not dirs:
        _missing("neither DejaVu nor Liberation fonts are installed (apt-get install fonts-dejavu-core)")
    base = tmp_path_factory.mktemp("fontconfig")
    conf = base / "fonts.conf"
    conf.write_text(FONTS_CONF.format(dirs="\n".join(f"  <dir>{d}</dir>" for d in dirs), cache=base / "cache"))
    env = {"FONTCONFIG_FILE": str(conf)}
    seen = _fc_list([":", "family"], env={**os.environ, **env})
    assert seen.strip(), f"the private fontconfig ({conf}) sees no font"
    cjk = _fc_list([":lang=zh", "family"], env={**os.environ, **env})
    assert not cjk.strip(), f"a folder of {dirs} holds a CJK font: {cjk.strip()}"
    return {"env": env, "families": {f.strip() for line in seen.splitlines() for f in line.split(",") if f.strip()}}


@pytest.fixture(scope="session")
def latin_browser(playwright_driver, latin_only_fonts, tmp_path_factory):
    """Chromium on a machine without CJK fonts (`latin_only_fonts`)."""
    home = tmp_path_factory.mktemp("chromium-home-latin")
    b = playwright_driver.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS,
                                          env={**os.environ, "HOME": str(home), **latin_only_fonts["env"]})
    yield b
    b.close()
