# Two commands are the whole set-up: `make lab` and `make test`.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed

.PHONY: lab test test-fast test-notebooks test-browser student bench clean

$(STAMP): pyproject.toml constraints.txt
	$(PY) -m venv $(VENV)
	$(BIN)/pip install -q --upgrade pip
	$(BIN)/pip install -q -c constraints.txt -e ".[test]"
	touch $(STAMP)

lab: $(STAMP)  ## create the environment and open JupyterLab on the course
	$(BIN)/jupyter lab course/

# One torch thread per process: the models are tiny, and two threads fighting over two busy cores
# ran the suite 7x slower (127 s vs 19 s for the lab's tests on a loaded machine).
TEST_ENV := OMP_NUM_THREADS=1

test: $(STAMP)  ## every test: the package, every notebook, the browser checks
	$(TEST_ENV) $(BIN)/pytest -q tests
	$(TEST_ENV) $(BIN)/pytest -q --nbval-lax --nbval-cell-timeout=600 course/

test-fast: $(STAMP)  ## the package's tests only
	$(TEST_ENV) $(BIN)/pytest -q tests -m "not slow and not browser"

student: $(STAMP)  ## student copies of every notebook, into build/student/
	$(BIN)/python -m unified_rl.course.student course build/student

bench: $(STAMP)  ## benchmarks (TRL comparison included): writes bench/results.json
	$(BIN)/pip install -q -c constraints.txt -e ".[test,bench]"
	$(TEST_ENV) $(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build .pytest_cache
