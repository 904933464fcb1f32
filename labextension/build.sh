#!/usr/bin/env bash
# Rebuild labextension/built/ (committed) from labextension/src/: needs node >= 20 and npm (the builder,
# @jupyter/builder, is pinned by package-lock.json) and jupyter-builder, which comes with JupyterLab
# (the repository's .venv by default; PYTHON_BIN=DIR to use another). The build is deterministic: the
# same source gives the same files, whose names pyproject.toml's data-files match by pattern.
set -euo pipefail
cd "$(dirname "$0")"
bin=${PYTHON_BIN:-../.venv/bin}
npm ci --no-audit --no-fund
rm -rf built
PATH="$(cd "$bin" && pwd):$PATH" jupyter-builder build .
