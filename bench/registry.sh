#!/usr/bin/env bash
# The tool library against nginx, publishing and search; see bench/registry.py.
exec python3 "$(dirname "$0")/registry.py" "$@"
