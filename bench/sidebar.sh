#!/usr/bin/env bash
# The workspace's sidebar at 10,000 conversations a member, on SQLite; see bench/sidebar.py.
exec python3 "$(dirname "$0")/sidebar.py" "$@"
