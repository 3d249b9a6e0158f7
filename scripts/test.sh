#!/usr/bin/env bash
# Set up a virtual environment with the test dependencies (idempotent) and run the whole suite.
# Needs only Python 3.11+ and pip. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
exec .venv/bin/python -m pytest "$@"
