#!/usr/bin/env python3
"""The read-only cache's gap, real against simulated, for one single-server matrix cell.

  python3 conformance/gap_analyze.py CELL SIM_TRIALS_CSV

The gap is the time from the server's change (the victim's DOWN register, cancel or eviction,
whichever came first) to the next refresh of its read-only response cache, when its GET /apps
stops serving the victim as UP. The model draws it anew in each trial (the cache timer's phase,
uniform over its interval). A real server that outlives its trials keeps one phase for a whole
run, so its gaps are a few values, not a uniform draw; that alone can move a cell's means.

Reads the cell's quiet trials (real.csv, and real-events.csv's srv_readonly_refresh_ms, logged
since the rig turned on ResponseCacheImpl's DEBUG log) and the simulator's trials.csv of the
cell's scenario (`eureka-sim run conformance/cells/CELL/scenario.toml --out DIR`, then
DIR/trials.csv). Prints both gap distributions, the real last dead hit and dead hits, and the
simulated ones over all trials and over the simulated trials whose gap lies within WINDOW_MS of
each real trial's own gap (each real trial weighs the same).
"""
import csv
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import matrix  # noqa: E402

# How close a simulated trial's gap must be to a real trial's to stand in for it.
WINDOW_MS = 50


def quantiles(values):
    if not values:
        return "n=0"
    s = sorted(values)
    pick = lambda p: s[min(len(s) - 1, int(p * len(s)))]
    return "n=%d min=%d p10=%d median=%d p90=%d max=%d mean=%.2f" % (
        len(s), s[0], pick(0.1), pick(0.5), pick(0.9), s[-1], statistics.fmean(s))


def real_trials(cell):
    out = matrix.results_dir(cell)
    events = {r["trial"]: r for r in matrix.read_rows(os.path.join(out, "real-events.csv"))}
    rows = []
    for r in matrix.read_rows(os.path.join(out, "real.csv")):
        ev = events.get(r["trial"], {})
        if not matrix.is_quiet(cell, r) or not r.get("last_dead_hit_ms"):
            continue
        changes = [int(ev[k]) for k in matrix.SERVER_EVENTS if ev.get(k, "").lstrip("-").isdigit()]
        refresh = ev.get("srv_readonly_refresh_ms", "")
        gap = int(refresh) - min(changes) if changes and refresh.lstrip("-").isdigit() else None
        rows.append({"trial": int(r["trial"]), "gap": gap, "last_dead_hit_ms": int(r["last_dead_hit_ms"]),
                     "dead_hits": int(r["dead_hits"])})
    return rows


def sim_trials(path):
    rows = []
    for r in matrix.read_rows(path):
        if r["server_removed_ms"] and r["readonly_removed_ms"] and r["last_dead_hit_ms"]:
            rows.append({"gap": int(r["readonly_removed_ms"]) - int(r["server_removed_ms"]),
                         "last_dead_hit_ms": int(r["last_dead_hit_ms"]), "dead_hits": int(r["dead_hits"])})
    return rows


def matched_mean(real, sim, key):
    """The mean of `key` over the simulated trials near each real trial's gap, each real trial
    weighing the same; None when a real trial has no simulated trial near it."""
    means = []
    for r in real:
        near = [s[key] for s in sim if abs(s["gap"] - r["gap"]) <= WINDOW_MS]
        if not near:
            return None
        means.append(statistics.fmean(near))
    return statistics.fmean(means)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    name, sim_path = sys.argv[1], sys.argv[2]
    cells = {c["name"]: c for c in matrix.load_matrix()}
    if name not in cells:
        sys.exit("no cell %r in %s" % (name, matrix.MATRIX))
    cell = cells[name]
    if cell["servers"] != 1:
        sys.exit("%s runs %d servers: this compares one server's gap" % (name, cell["servers"]))
    real = real_trials(cell)
    sim = sim_trials(sim_path)
    timed = [r for r in real if r["gap"] is not None]
    print("cell %s: %d quiet real trials, %d with the cache refresh logged; %d simulated" % (
        name, len(real), len(timed), len(sim)))
    print("gap, real:      " + quantiles([r["gap"] for r in timed]))
    print("gap, simulated: " + quantiles([s["gap"] for s in sim]))
    print("per real trial (trial: gap ms): " + ", ".join("%d: %d" % (r["trial"], r["gap"]) for r in timed))
    for key in ("last_dead_hit_ms", "dead_hits"):
        print("%s: real %s" % (key, quantiles([r[key] for r in real])))
        print("%s: simulated, all trials %s" % (key, quantiles([s[key] for s in sim])))
        for label, subset in (("the logged trials", timed),):
            if not subset:
                continue
            m = matched_mean(subset, sim, key)
            print("%s: over %s real mean %.1f, simulated at their gaps (+-%d ms) %s" % (
                key, label, statistics.fmean(r[key] for r in subset), WINDOW_MS,
                "no simulated trial near some gap" if m is None else "%.1f" % m))


if __name__ == "__main__":
    main()
