#!/usr/bin/env bash
# `llmtool batch` against the ideal (concurrency / latency), and its memory at a million rows;
# see bench/batch.py.
exec python3 "$(dirname "$0")/batch.py" "$@"
