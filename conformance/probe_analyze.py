#!/usr/bin/env python3
"""Break a probed run (rig.py run ... --probe-ms N) into its propagation stages.

  python3 conformance/probe_analyze.py conformance/results/<train>/ <strategy>

Reads real-<strategy>.csv / real-<strategy>-events.csv and, from the newest
run-<strategy>-*/ folder, server-probe.csv (changes of the server's cached
/eureka/apps/delta and /eureka/apps payloads) and caller-probe.csv (caller Eureka
fetches and LoadBalancer cache reloads). Prints, per trial, ms after stop_serving:
server event (evict / DOWN / cancel) -> readOnly payload without the victim UP ->
first caller fetch without it -> first LB-cache reload without it -> last request chosen to it.
Also prints the periods of the caller's fetches and LB reloads and the phase (ms within
the second) of the server payload changes.
"""
import csv
import glob
import os
import statistics
import sys


def load_probe(path):
    rows = []
    with open(path) as f:
        for ln in f:
            parts = ln.rstrip("\n").split(",", 3)
            if len(parts) >= 3:
                rows.append(parts)
    return rows


def q(vals):
    if not vals:
        return "n=0"
    s = sorted(vals)
    return "n=%d min=%d median=%d p90=%d max=%d" % (len(s), s[0], s[len(s) // 2], s[min(len(s) - 1, int(0.9 * len(s)))], s[-1])


def main():
    out, strategy = sys.argv[1], sys.argv[2]
    run = sorted(glob.glob(os.path.join(out, "run-%s-*" % strategy)))[-1]
    rows = list(csv.DictReader(open(os.path.join(out, "real-%s.csv" % strategy))))
    evs = list(csv.DictReader(open(os.path.join(out, "real-%s-events.csv" % strategy))))
    sp = load_probe(os.path.join(run, "server-probe.csv"))
    cp = load_probe(os.path.join(run, "caller-probe.csv"))
    fetch_t = [int(r[0]) for r in cp if r[1] == "fetch"]
    lb_t = [int(r[0]) for r in cp if r[1] == "lb" and r[2] != "EXPIRED"]
    print("run:", run)
    print("caller fetch period ms:", q([b - a for a, b in zip(fetch_t, fetch_t[1:])]))
    print("caller LB-cache reload period ms:", q([b - a for a, b in zip(lb_t, lb_t[1:])]))
    dchg = [int(r[0]) for r in sp if r[1] == "delta"]
    print("server delta payload changes (epoch ms, phase):", [(t, t % 1000) for t in dchg])
    print("server delta payload change phase (ms within the second, as seen by a 25-ms poller):",
          q([t % 1000 for t in dchg]))
    print()
    print("trial victim srv_event readonly_gone fetch_gone lb_gone last_chosen  (ms after stop_serving)")
    stages = {"srv": [], "ro": [], "fetch": [], "lb": [], "last": []}
    for r, e in zip(rows, evs):
        v = e["victim"]
        s0 = int(r["stop_serving_epoch_ms"])
        srv = e["srv_evict_ms"] or e["srv_status_register_ms"] or e["srv_cancel_ms"]
        ro = next((int(x[0]) - s0 for x in sp if x[1] == "apps" and int(x[0]) >= s0
                   and ("%s:UP:" % v) not in x[3]), None)
        fe = next((int(x[0]) - s0 for x in cp if x[1] == "fetch" and int(x[0]) >= s0 and v not in x[2]), None)
        lb = next((int(x[0]) - s0 for x in cp if x[1] == "lb" and int(x[0]) >= s0 and x[2] != "EXPIRED"
                   and v not in x[2]), None)
        print(r["trial"], v, srv, ro, fe, lb, r["last_chosen_ms"])
        for k, val in (("srv", srv), ("ro", ro), ("fetch", fe), ("lb", lb), ("last", r["last_chosen_ms"])):
            if val not in (None, ""):
                stages[k].append(int(val))
    print()
    for k, vals in stages.items():
        print("%-6s %s" % (k, q(vals)))


if __name__ == "__main__":
    main()
