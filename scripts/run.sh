#!/usr/bin/env bash
# Set up a virtual environment (idempotent) and run the bot on embedded defaults.
# With no platform token configured this is the local console on a SQLite file.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --disable-pip-version-check -e . >.venv/install.log 2>&1 \
  || { cat .venv/install.log; exit 1; }
# Bytecode for our own modules, written even where PYTHONDONTWRITEBYTECODE is set (it only stops
# Python writing it as it imports): compiling ~200 modules from source would be most of every start.
.venv/bin/python -m compileall -q bot core >/dev/null 2>&1 || true
exec .venv/bin/python -m bot run "$@"
