"""`make book`: the course as a static website, every notebook executed, readable with no install.

    python scripts/build_book.py [--out build/book] [--reuse] [--allow-errors] [--only 00,01] [--jobs N]
                                 [--cap 12=3] [--no-zh] [--zh-max-steps N] [--zh-execute 00,06]
Steps: execute each course/*.ipynb in a fresh kernel (nbclient, widget state kept; --jobs notebooks
at once, default one per core, each in its own process, the longest first), turn its
widgets into static HTML (scripts/book_static.py), put a note and the Colab/Binder links on top,
then build the pages with Jupyter Book 1.x (which works offline) without executing again.
This is the one execution of the course in `make test`: every notebook runs to its end even when a
cell fails (the error is kept in OUT/executed/NAME.ipynb), tests/test_notebooks_executed.py reads
those copies as the notebook test (one test per notebook, the failing cell's traceback shown), and a
failing cell stops the build before the pages are made, so no site shows a broken notebook. Equations
render with MathJax 3 copied from the installed django-static-mathjax into the site, so no page
asks a CDN for anything. The site is OUT/html; OUT/build.json records the seconds each step took.
--reuse keeps executed notebooks newer than their source and run under the same step cap (for
editing the site's look).

Both editions: each English notebook with a Chinese twin in course/zh/ is executed a second time as
that twin (into OUT/executed/zh/), and becomes the page zh/NAME.html; every page has a language
switch to its twin (English <-> 中文), and Chinese text is drawn with the font the package ships
(copied into the site's _static beside book/_static/zh.css, which declares it a web font). --zh-max-steps N runs the twins with UNIFIED_RL_MAX_STEPS=N (their code is
the English code, tests/test_zh_edition.py checks that; the cap keeps the second execution cheap,
and the Chinese page's note says its runs were capped). --cap 12=3 caps English notebooks the same
way (`make test` caps notebook 12's live training on the pretrained LLM; their pages say so). --zh-execute 00,06 executes only those
twins (`make test` does, to stay within its time): the other twins' pages are built from their
unexecuted source and say so, and OUT/build.json records `"executed": false` for them, which
tests/test_notebooks_executed.py reads (it then checks the twin's code against the English copy that ran).
"""

import argparse
import datetime
import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import time
import tomllib

import nbformat

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
sys.path.insert(0, HERE)

import book_static  # noqa: E402
from colab import LINK_TAG, SETUP_TAG, colab_url, repository  # noqa: E402


ZH = "zh"  # the Chinese edition's folder, in course/ and in the site
# the package's CJK font subset and its licence: zh.css's @font-face draws the site's Chinese with it
FONT_FILES = [os.path.join(REPO, "unified_rl", "course", "fonts", n) for n in ("wqy-microhei-subset.ttf",
                                                                              "LICENSE-Apache-2.0.txt")]


def binder_url(owner_repo, name):
    return f"https://mybinder.org/v2/gh/{owner_repo}/HEAD?urlpath=lab/tree/course/{name}"


def execute(src, dst, max_steps=None):
    """Run notebook `src` top to bottom in a fresh kernel, past failing cells, write it to `dst`;
    seconds taken. max_steps: UNIFIED_RL_MAX_STEPS for the kernel (it inherits this environment)."""
    from nbclient import NotebookClient

    nb = nbformat.read(src, as_version=4)
    # files a notebook writes land here, a folder per notebook (notebooks run at once must not share one)
    workdir = os.path.join(os.path.dirname(dst), "_run", os.path.splitext(os.path.basename(dst))[0])
    os.makedirs(workdir, exist_ok=True)
    env_backend = os.environ.pop("MPLBACKEND", None)  # Agg would drop the inline figures
    env_cap = os.environ.get("UNIFIED_RL_MAX_STEPS")
    if max_steps is not None:
        os.environ["UNIFIED_RL_MAX_STEPS"] = str(max_steps)
    t0 = time.perf_counter()
    try:
        NotebookClient(nb, timeout=1800, kernel_name="python3", store_widget_state=True,
                       allow_errors=True, resources={"metadata": {"path": workdir}}).execute()
    except Exception as e:  # a cell past its timeout, a dead kernel: the notebook did not finish
        nb.metadata["execution_failure"] = f"{type(e).__name__}: {e}"[:4000]
    finally:
        if env_backend is not None:
            os.environ["MPLBACKEND"] = env_backend
        if max_steps is not None:
            os.environ.pop("UNIFIED_RL_MAX_STEPS", None)
            if env_cap is not None:
                os.environ["UNIFIED_RL_MAX_STEPS"] = env_cap
    nb.metadata["unified_rl_max_steps"] = max_steps  # what --reuse must match
    nbformat.write(nb, dst)
    return round(time.perf_counter() - t0, 1)


def chosen(name, prefixes):
    """Whether notebook `name` is among the comma-separated number prefixes (None or "all": every one)."""
    return prefixes in (None, "all") or name.split("_")[0] in prefixes.split(",")


def previous_seconds(report_path):
    """{key: seconds} of the last build, if it left a report: the longest notebooks are started first."""
    try:
        with open(report_path) as f:
            return {k: v["seconds"] for k, v in json.load(f)["notebooks"].items() if isinstance(v.get("seconds"), float)}
    except (OSError, ValueError, KeyError, TypeError):
        return {}


def _execute_job(job):
    key, src, dst, cap = job
    return key, execute(src, dst, cap)


def execute_all(run, jobs, previous):
    """Execute the notebooks of `run` ([(key, src, dst, max_steps)]), `jobs` at a time, each in its own
    process and kernel; {key: seconds}. The longest first (the last build's times; notebook 12, which
    loads a pretrained LLM, is assumed longest without them), so that the last to finish is a short one."""
    guess = {key: previous.get(key, 300.0 if os.path.basename(key).startswith("12") else 30.0) for key, *_ in run}
    order = sorted(run, key=lambda job: -guess[job[0]])
    out = {}
    if jobs == 1 or len(order) <= 1:
        for job in order:
            print(f"executing {job[0]} ...", flush=True)
            out.update([_execute_job(job)])
        return out
    import concurrent.futures
    import multiprocessing

    with concurrent.futures.ProcessPoolExecutor(jobs, mp_context=multiprocessing.get_context("spawn")) as pool:
        futures = []
        for job in order:
            futures.append(pool.submit(_execute_job, job))
        print(f"executing {len(order)} notebooks, {jobs} at a time: {', '.join(j[0] for j in order)}", flush=True)
        for f in concurrent.futures.as_completed(futures):
            key, sec = f.result()
            print(f"  executed {key} in {sec} s", flush=True)
            out[key] = sec
    return out


def mathjax_dir():
    spec = importlib.util.find_spec("mathjax")
    if spec is None:
        sys.exit("build_book: MathJax is missing: pip install -e '.[book]' (django-static-mathjax)")
    path = os.path.join(spec.submodule_search_locations[0], "static", "mathjax", "es5")
    if not os.path.isfile(os.path.join(path, "tex-mml-chtml.js")):
        sys.exit(f"build_book: no tex-mml-chtml.js under {path}")
    return path


def copy_font(static_dir):
    """Put the package's CJK font (and its licence) into the site's static folder, beside zh.css."""
    for path in FONT_FILES:
        shutil.copy(path, os.path.join(static_dir, os.path.basename(path)))


def write_config(src, url, owner_repo, names, zh_names=(), partial=False):
    """_config.yml and _toc.yml of the book (the table of contents follows course/'s notebooks).
    partial: only some notebooks are built (--only), so links to the others cannot resolve."""
    config = {
        "title": "unified_rl: one gradient for SFT, RFT, DPO, PPO and GRPO",
        "author": "the unified_rl authors",
        "copyright": str(datetime.date.today().year),
        "only_build_toc_files": True,
        "execute": {"execute_notebooks": "off"},  # executed above, once
        "repository": {"url": url, "path_to_book": "course", "branch": "main"},
        "launch_buttons": {"colab_url": "https://colab.research.google.com", "binderhub_url": "https://mybinder.org",
                           "notebook_interface": "jupyterlab"},
        "html": {"use_repository_button": True, "use_issues_button": False, "use_edit_page_button": False},
        "parse": {"myst_enable_extensions": ["dollarmath", "amsmath"]},
        "sphinx": {"config": {"mathjax_path": "mathjax/tex-mml-chtml.js", "html_static_path": ["_static"],
                              "html_css_files": ["static-widgets.css", "zh.css"],
                              "html_js_files": ["zh.js"], "nb_merge_streams": True,
                              # a table or an equation in a cell's Markdown output is drawn like one in a cell
                              "nb_render_markdown_format": "myst"}},
    }
    if partial:
        config["sphinx"]["config"]["suppress_warnings"] = ["myst.xref_missing"]
    toc = {"format": "jb-book", "root": "intro", "parts": [
        {"caption": "The course", "chapters": [{"file": os.path.splitext(n)[0]} for n in names]},
        {"caption": "Teaching with it", "chapters": [{"file": "INSTRUCTORS"}]}]}
    if zh_names:
        extra = [f"{ZH}/{n}" for n in ("README", "GLOSSARY") if os.path.exists(os.path.join(src, ZH, f"{n}.md"))]
        pages = extra[:1] + [f"{ZH}/{os.path.splitext(n)[0]}" for n in zh_names] + extra[1:]
        toc["parts"].append({"caption": "中文版", "chapters": [{"file": f} for f in pages]})
    for name, data in (("_config.yml", config), ("_toc.yml", toc)):
        with open(os.path.join(src, name), "w") as f:  # JSON is YAML: no YAML writer needed
            json.dump(data, f, indent=2)


def prepare(notebook, dst, owner_repo, name, zh=False, other=None, max_steps=None, ran=True):
    """An executed notebook as a page: static widgets, no Colab cells (the note has the links).
    zh: the page is the Chinese twin (zh/NAME); other: the other edition's page (the switch), or None;
    ran=False: `notebook` is a Chinese twin this build did not execute (its page says so)."""
    nb = nbformat.read(notebook, as_version=4)
    for tag in (SETUP_TAG, LINK_TAG):
        book_static.strip_setup_cells(nb, tag)
    widgets = book_static.static_widgets(nb, book_static.CAPTION_ZH if zh else book_static.CAPTION)
    book_static.amsmath_blocks(nb)
    title_at = next((i for i, c in enumerate(nb.cells) if c.cell_type == "markdown"
                     and c.source.lstrip().startswith("# ")), -1)
    stem, path = os.path.splitext(name)[0], f"{ZH}/{name}" if zh else name
    if zh:
        note = book_static.page_note_zh(colab_url(owner_repo, path), binder_url(owner_repo, path), widgets, max_steps,
                                        executed=ran)
    else:
        note = book_static.page_note(colab_url(owner_repo, path), binder_url(owner_repo, path), widgets, max_steps)
    nb.cells.insert(title_at + 1, nbformat.v4.new_markdown_cell(note))
    if other and title_at >= 0:  # the switch goes right under the title
        lines = nb.cells[title_at].source.split("\n")
        at = next(i for i, l in enumerate(lines) if l.lstrip().startswith("# ")) + 1
        lines[at:at] = ["", switch_cell(other, zh), ""]
        nb.cells[title_at].source = "\n".join(lines)
    elif other:
        nb.cells.insert(0, nbformat.v4.new_markdown_cell(switch_cell(other, zh)))
    errors = [o for c in nb.cells for o in c.get("outputs", []) if o.get("output_type") == "error"]
    errors += [nb.metadata["execution_failure"]] if nb.metadata.get("execution_failure") else []
    nbformat.write(nb, dst)
    return widgets, len(errors)


def switch_cell(other, zh):
    """The language switch: from a Chinese page to English, or from an English page to 中文."""
    return book_static.switch_html(other, "English", "en") if zh else book_static.switch_html(other, "中文", "zh-CN")


def add_switch(md_path, other, zh):
    """Put the language switch under the title of a Markdown page of the site."""
    with open(md_path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    at = next((i + 1 for i, l in enumerate(lines) if l.startswith("# ")), 0)
    lines[at:at] = ["", switch_cell(other, zh), ""]
    with open(md_path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", default=os.path.join(REPO, "build", "book"))
    ap.add_argument("--reuse", action="store_true", help="keep executed notebooks newer than their source")
    ap.add_argument("--allow-errors", action="store_true", help="build the pages even if a cell failed (its error shows)")
    ap.add_argument("--only", default="", help="comma-separated notebook prefixes (default: all)")
    ap.add_argument("--no-zh", action="store_true", help="the English edition only")
    ap.add_argument("--zh-dir", default=os.path.join(REPO, "course", ZH), help="the Chinese twins' folder")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1,
                    help="notebooks executed at once, each in its own kernel (default: one per CPU core)")
    ap.add_argument("--zh-execute", default=None,
                    help="comma-separated prefixes of the Chinese twins to execute (default: all); the others'"
                         " pages are built without outputs (their code is the English notebooks', which ran)")
    ap.add_argument("--cap", default="",
                    help="PREFIX=N,...: run those English notebooks with UNIFIED_RL_MAX_STEPS=N (their pages say so)")
    ap.add_argument("--zh-max-steps", type=int, default=None,
                    help="run the Chinese twins with UNIFIED_RL_MAX_STEPS=N (default: uncapped, as the English)")
    args = ap.parse_args()
    if args.zh_max_steps is not None and args.zh_max_steps < 0:
        sys.exit("build_book: --zh-max-steps must be >= 0")
    if args.jobs < 1:
        sys.exit("build_book: --jobs must be >= 1")
    caps = {}
    for item in filter(None, args.cap.split(",")):
        prefix, _, n = item.partition("=")
        if not prefix or not n.isdigit():
            sys.exit(f"build_book: --cap takes PREFIX=N items (e.g. 12=3), got {item!r}")
        caps[prefix] = int(n)
    t_start = time.perf_counter()
    url, owner_repo = repository()
    notebooks = sorted(glob.glob(os.path.join(REPO, "course", "[0-9]*.ipynb")))
    if args.only:
        notebooks = [n for n in notebooks if os.path.basename(n).split("_")[0] in args.only.split(",")]
    if not notebooks:
        sys.exit("build_book: no notebooks found under course/")
    names = [os.path.basename(n) for n in notebooks]
    zh_names = [] if args.no_zh else [n for n in names if os.path.isfile(os.path.join(args.zh_dir, n))]
    if zh_names and not os.path.isfile(os.path.join(args.zh_dir, "README.md")):
        sys.exit(f"build_book: {args.zh_dir}/README.md is missing (the Chinese edition's index page)")
    executed_dir, src = os.path.join(args.out, "executed"), os.path.join(args.out, "src")
    site = os.path.join(args.out, "html")
    if os.path.islink(site):  # a failed build must not leave the last site looking current
        os.remove(site)
    shutil.rmtree(os.path.join(args.out, "_build"), ignore_errors=True)
    os.makedirs(executed_dir, exist_ok=True)
    shutil.rmtree(src, ignore_errors=True)
    shutil.copytree(os.path.join(REPO, "book"), src)
    copy_font(os.path.join(src, "_static"))
    mathjax = mathjax_dir()
    shutil.copy(os.path.join(REPO, "course", "INSTRUCTORS.md"), os.path.join(src, "INSTRUCTORS.md"))
    if zh_names:
        os.makedirs(os.path.join(src, ZH))
        os.makedirs(os.path.join(executed_dir, ZH), exist_ok=True)
        for md in ("README.md", "GLOSSARY.md"):
            if os.path.isfile(os.path.join(args.zh_dir, md)):
                shutil.copy(os.path.join(args.zh_dir, md), os.path.join(src, ZH, md))
                add_switch(os.path.join(src, ZH, md), "../intro.html", zh=True)
        add_switch(os.path.join(src, "intro.md"), f"{ZH}/README.html", zh=False)
        add_switch(os.path.join(src, "INSTRUCTORS.md"), f"{ZH}/README.html", zh=False)
    report = {"notebooks": {}, "started": time.strftime("%Y-%m-%d %H:%M:%S"),
              "load_average_at_start": os.getloadavg(), "jobs": args.jobs}
    jobs = [(path, name, False) for path, name in zip(notebooks, names)]
    jobs += [(os.path.join(args.zh_dir, name), name, True) for name in zh_names]
    run, seconds = [], {}
    for path, name, zh in jobs:
        key = f"{ZH}/{name}" if zh else name
        done, cap = os.path.join(executed_dir, key), args.zh_max_steps if zh else caps.get(name.split("_")[0])
        if zh and not chosen(name, args.zh_execute):
            seconds[key] = "not executed"
        elif (args.reuse and os.path.exists(done) and os.path.getmtime(done) > os.path.getmtime(path)
                and nbformat.read(done, as_version=4).metadata.get("unified_rl_max_steps") == cap):
            seconds[key] = "reused"
        else:
            run.append((key, path, done, cap))
    seconds.update(execute_all(run, args.jobs, previous_seconds(os.path.join(args.out, "build.json"))))
    for path, name, zh in jobs:
        key = f"{ZH}/{name}" if zh else name
        executed = seconds[key] != "not executed"
        stem = os.path.splitext(name)[0]
        other = (f"../{stem}.html" if zh else f"{ZH}/{stem}.html" if name in zh_names
                 else f"{ZH}/README.html" if zh_names else None)
        widgets, errors = prepare(os.path.join(executed_dir, key) if executed else path, os.path.join(src, key),
                                  owner_repo, name, zh=zh, other=other,
                                  max_steps=args.zh_max_steps if zh else caps.get(name.split("_")[0]), ran=executed)
        report["notebooks"][key] = {"seconds": seconds[key], "widgets": widgets, "errors": errors, "executed": executed}
        report["notebooks"][key]["max_steps"] = args.zh_max_steps if zh else caps.get(name.split("_")[0])
        print(f"  {key}: {seconds[key]}{' s' if executed else ''}, {widgets} widgets made static, {errors} errors",
              flush=True)
    failed = [n for n, r in report["notebooks"].items() if r["errors"]]
    if failed and not args.allow_errors:
        with open(os.path.join(args.out, "build.json"), "w") as f:
            json.dump(report, f, indent=2)
        sys.exit(f"build_book: cells failed in {', '.join(failed)} (see {executed_dir}); no pages built")
    write_config(src, url, owner_repo, names, zh_names, partial=bool(args.only))
    t_pages = time.perf_counter()
    html_root = os.path.join(args.out, "_build", "html")
    jb = [sys.executable, "-c", "from jupyter_book.cli.main import main; main()", "build", src, "--path-output", args.out, "--builder", "html"]
    r = subprocess.run(jb + ["--warningiserror"] if not args.allow_errors else jb)
    if r.returncode:
        sys.exit(f"build_book: jupyter-book failed ({r.returncode})")
    # MathJax goes in after the build: in the book's own _static, Jupyter Book would add a script
    # tag for each of its hundreds of .js files to every page
    shutil.copytree(mathjax, os.path.join(html_root, "_static", "mathjax"))
    os.symlink(os.path.relpath(html_root, args.out), site)
    report.update(pages_seconds=round(time.perf_counter() - t_pages, 1),
                  total_seconds=round(time.perf_counter() - t_start, 1), load_average_at_end=os.getloadavg())
    with open(os.path.join(args.out, "build.json"), "w") as f:
        json.dump(report, f, indent=2)
    print(f"-> {site}/index.html ({report['total_seconds']} s in all)")


if __name__ == "__main__":
    main()
