#!/usr/bin/env bash
# What metrics and traces cost the library server under load; see bench/observability.py.
exec python3 "$(dirname "$0")/observability.py" "$@"
