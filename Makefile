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

test: $(STAMP)  ## every test: the package, every notebook, the browser checks
	$(BIN)/pytest -q tests
	$(BIN)/pytest -q --nbval-lax --nbval-cell-timeout=600 -p no:randomly course/

test-fast: $(STAMP)  ## the package's tests only
	$(BIN)/pytest -q tests -m "not slow and not browser"

student: $(STAMP)  ## student copies of every notebook, into build/student/
	$(BIN)/python -m unified_rl.course.student course build/student

bench: $(STAMP)  ## benchmarks: writes bench/results.json
	$(BIN)/python bench/run.py

clean:
	rm -rf $(VENV) build .pytest_cache
