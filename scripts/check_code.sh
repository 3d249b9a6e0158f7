#!/usr/bin/env bash
# The hygiene gates CI runs before the tests (scripts/test.sh calls this): lint, format, types,
# complexity. Each prints its own findings; the first that fails stops the run.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
# `cmd; echo` rather than `cmd && echo`: under `set -e` a failure on the left of && does not stop the
# script, so lint and format findings used to print and pass.
echo "== ruff check"; "$PY" -m ruff check . --quiet; echo "clean"
echo "== ruff format --check"; "$PY" -m ruff format --check .; echo "formatted"
echo "== mypy (strict on core/ and bot/)"; "$PY" -m mypy
echo "== complexity (radon: new code <= 20, listed older functions may not grow)"; "$PY" scripts/check_complexity.py --top 3
