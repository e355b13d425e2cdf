#!/usr/bin/env bash
# The main job on embedded defaults: a game of four bots played by mail
# (local Maildir transport, SQLite) from the first mail to the winner.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh
exec .venv/bin/pbem demo "$@"
