#!/usr/bin/env python3
"""Stages and breaker probes of a Ribbon-caller run (rig.py run --caller ribbon).

  python3 conformance/ribbon_analyze.py conformance/results/Hoxton.SR12-ribbon/ <strategy>

Reads real-<strategy>-events.csv, logs/<strategy>-<trial>.csv (the caller-log window of each
trial) and probe-<strategy>-caller-ribbon.csv (the caller's read-only probe of Ribbon's server
list and ServerStats, copied from the run folder). Prints, per trial, ms after the stop: the
server event (eviction for kill-9, the DOWN register otherwise), the first Ribbon server list
without the victim, and the send times of the failed requests to the victim. Then, over all
trials: the gap before each failed request, and for the breaker's probes (the 4th, 5th and 6th
failure) the wait after the blackout (1, 2, 3 s) ended, which is where the model's fixed-rate
tie shows (README.md, "Checked against the real stack").
"""
import csv
import math
import os
import sys


def pct(vals, p):
    s = sorted(vals)
    return s[max(0, math.ceil(p / 100.0 * len(s)) - 1)]


def spread(vals):
    return "%s / %s / %s / %s" % (min(vals), pct(vals, 50), pct(vals, 90), max(vals))


def main(folder, strategy):
    with open(os.path.join(folder, "real-%s-events.csv" % strategy)) as f:
        events = list(csv.DictReader(f))
    probe = []
    with open(os.path.join(folder, "probe-%s-caller-ribbon.csv" % strategy)) as f:
        for ln in f:
            t, kind, detail = ln.rstrip("\n").split(",", 2)
            probe.append((int(t), kind, detail))
    probe.sort()
    server_col = "srv_evict_ms" if strategy == "kill-9" else "srv_status_register_ms"
    dead_seqs, server_to_gone = [], []
    for e in sorted(events, key=lambda e: int(e["trial"])):
        stop, victim = int(e["stop_serving_epoch_ms"]), e["victim"]
        with open(os.path.join(folder, "logs", "%s-%s.csv" % (strategy, e["trial"]))) as f:
            rows = list(csv.DictReader(f))
        dead = sorted(int(r["rel_stop_serving_ms"]) for r in rows
                      if r["chosen_instance_id"] == victim and r["outcome"] != "ok"
                      and int(r["rel_stop_serving_ms"]) >= 0)
        gone = next((t - stop for t, kind, d in probe
                     if t >= stop and kind == "list" and victim not in d.split()), None)
        srv = int(float(e[server_col])) if e[server_col] else None
        if gone is not None and srv is not None:
            server_to_gone.append(gone - srv)
        dead_seqs.append(dead)
        print("trial %2s %s  server %5s  ribbon list without it %5s  failed requests %s"
              % (e["trial"], victim, srv, gone, dead))
    print("server event -> Ribbon list without it (ms): %s" % spread(server_to_gone))
    for i in range(max(len(s) for s in dead_seqs)):
        gaps = [s[i] - (s[i - 1] if i else 0) for s in dead_seqs if len(s) > i]
        line = "failure %d: gap after the previous one (the stop for the first) %s" % (i + 1, spread(gaps))
        if i >= 3:
            waits = [g - 1000 * (i - 2) for g in gaps]
            line += "; wait after the %d-s blackout: mean %.0f ms, < 25 ms in %d of %d" % (
                i - 2, sum(waits) / len(waits), sum(1 for w in waits if w < 25), len(waits))
        print(line)


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
