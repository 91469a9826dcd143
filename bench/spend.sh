#!/usr/bin/env bash
# The Control Center's spend page over 1,000,000 runs, on SQLite and PostgreSQL; see bench/spend.py.
exec python3 "$(dirname "$0")/spend.py" "$@"
