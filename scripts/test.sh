#!/usr/bin/env bash
# Set up a virtual environment with the test dependencies (idempotent) and run the whole suite.
# Needs only Python 3.11+ and pip. Extra arguments go to pytest.
# PostgreSQL: the storage tests also run against TOKBOT_TEST_DATABASE_URL (default
# postgresql://postgres@127.0.0.1:5432/test) when a server answers there, and are skipped with one
# line at the end when none does; TOKBOT_TEST_REQUIRE_POSTGRES=1 (set by .ci/run) makes that a failure.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check --upgrade pip >/dev/null
.venv/bin/python -m pip install -q --disable-pip-version-check -e ".[test]"
# Hygiene first (ruff check + format, mypy strict on core/, complexity <= 25): CI fails on any of
# them. TOKBOT_SKIP_CHECKS=1 skips them for a quick local run of a few tests.
if [ "${TOKBOT_SKIP_CHECKS:-0}" != "1" ]; then
  bash scripts/check_code.sh
fi
exec .venv/bin/python -m pytest "$@"
