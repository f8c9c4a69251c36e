#!/usr/bin/env python3
"""Time from a change on the tuning page to its first figures (eureka-sim serve).

    scripts/serve-latency.py [SCENARIO] [--changes N] [--bin PATH]

Starts `eureka-sim serve SCENARIO --port 0` (the bundled kill -9 by default; the release build,
target/release/eureka-sim, unless --bin or EUREKA_SIM names another), then makes the changes a
user makes on the page, one after the other: each opens /api/stream with the new settings, as
the page does, and the time is taken from the request to the end of the first `snapshot` event
(the quick estimate the page draws). Like the page, a change closes the previous stream, so no
baseline is cached from a complete run: every first snapshot runs the setting's first chunk and
the baseline's. Then the same once more letting each run complete (the baseline is then run
once and kept), for the time to the complete figures.

Prints each change's figures and the median and the worst. A benchmark, not a test: nothing
fails on a slow machine. Only 127.0.0.1 is contacted.
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# What a user tries on the kill -9 page: the fetch slider, the strategy, the caches.
CHANGES = [
    "fetch=25", "fetch=20", "fetch=15", "fetch=10", "fetch=5",
    "fetch=5&strategy=kill-15", "fetch=5&strategy=pause&wait=30",
    "fetch=5&strategy=service-registry&wait=30", "cache-update=5000",
    "cache-update=5000&ribbon-refresh=5000", "eviction=5000", "lease-renewal=10",
    "lease-expiration=30", "self-preservation=false", "instances=40", "release=Greenwich",
]


def first_event(url, whole):
    """Seconds to the first snapshot, and to the last one when `whole`; the trial counts."""
    start = time.perf_counter()
    first = None
    done = None
    with urllib.request.urlopen(url, timeout=300) as response:
        event = None
        for raw in response:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[len("event: "):]
            elif line == "" and event is not None:
                now = time.perf_counter() - start
                if event == "problem":
                    raise SystemExit("the server refused %s" % url)
                if first is None:
                    first = now
                if not whole:
                    break
                done = now
                event = None
    return first, done


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("scenario", nargs="?", default=None)
    parser.add_argument("--changes", type=int, default=len(CHANGES))
    parser.add_argument("--bin", default=os.environ.get("EUREKA_SIM",
                        os.path.join(ROOT, "target", "release", "eureka-sim")))
    args = parser.parse_args()
    if not os.access(args.bin, os.X_OK):
        sys.exit("no %s: run cargo build --release (or pass --bin)" % args.bin)
    command = [args.bin, "serve", "--port", "0"]
    if args.scenario:
        command.insert(2, args.scenario)
    server = subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, text=True)
    try:
        line = server.stdout.readline()
        base = next(w for w in line.split() if w.startswith("http://127.0.0.1:")).rstrip("/")
        print(line.strip())
        # The page's own first load, not counted.
        first_event(base + "/api/stream?", True)
        changes = (CHANGES * (1 + args.changes // len(CHANGES)))[: args.changes]
        firsts = []
        for q in changes:
            first, _ = first_event(base + "/api/stream?" + q, False)
            firsts.append(first)
            print("  %-45s first figures %6.1f ms" % (q, first * 1000))
        wholes = []
        for q in changes:
            _, done = first_event(base + "/api/stream?" + q + "&seed=2", True)
            wholes.append(done)
        ms = lambda xs: "median %.1f ms, worst %.1f ms" % (
            statistics.median(xs) * 1000, max(xs) * 1000)
        print("first figures after a change (%d changes): %s" % (len(firsts), ms(firsts)))
        print("complete figures after a change: %s" % ms(wholes))
    finally:
        server.terminate()
        server.wait()


if __name__ == "__main__":
    main()
