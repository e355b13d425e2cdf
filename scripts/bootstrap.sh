#!/usr/bin/env bash
# Create .venv and install pbem with its test tools. Idempotent and quiet.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.pbem-installed
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  .venv/bin/python -m pip install -q --upgrade pip >/dev/null
  .venv/bin/python -m pip install -q -e '.[test]'
  touch "$stamp"
fi
# The rules engine compiled with mypyc (issue 16); on any failure it warns and
# pbem runs as pure Python. Rebuilt only when a compiled source is newer.
if [ "${PBEM_NATIVE:-1}" != "0" ]; then
  if ! .venv/bin/python -c "import sys, pbem.native as n; sys.exit(0 if n.check().compiled else 1)" 2>/dev/null; then
    .venv/bin/python scripts/build_native.py || echo "warning: scripts/build_native.py failed; pure Python rules engine"
  fi
fi
