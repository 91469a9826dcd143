#!/usr/bin/env python3
"""Times commands side by side: RUNS rounds, each command once per round (interleaved, so load
changes hit both alike), after one warm-up round. Prints the median and spread, and each
command's time as a ratio of the first one's.

usage: timing.py RUNS "label=command" "label=command" ...
"""
import shlex, statistics, subprocess, sys, time

runs = int(sys.argv[1])
commands = [arg.split("=", 1) for arg in sys.argv[2:]]
times = {label: [] for label, _ in commands}
for round_ in range(runs + 1):
    for label, command in commands:
        start = time.perf_counter()
        result = subprocess.run(shlex.split(command), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        elapsed = time.perf_counter() - start
        if result.returncode not in (0, 1):
            sys.exit(f"{label} failed with exit status {result.returncode}")
        if round_ > 0:
            times[label].append(elapsed)
first = statistics.median(times[commands[0][0]])
for label, _ in commands:
    median = statistics.median(times[label])
    print(f"{label:<40} median {median * 1000:9.1f} ms  (min {min(times[label]) * 1000:.1f}, max {max(times[label]) * 1000:.1f})  {median / first:6.2f}x the first")
