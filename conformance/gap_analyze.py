#!/usr/bin/env python3
"""The read-only cache's gap, real against simulated, for one matrix cell.

  python3 conformance/gap_analyze.py CELL SIM_DIR

The gap is the time from the server's change (the victim's DOWN register, cancel or eviction,
whichever came first) to the next refresh of its read-only response cache, when its GET /apps
stops serving the victim as UP. The model draws it anew in each trial (the cache timer's phase,
uniform over its interval). A real server that outlives its trials keeps one phase for a whole
run, so its gaps are a few values, not a uniform draw; that alone can move a cell's means.

Reads the cell's quiet trials (real.csv, and real-events.csv's srv_readonly_refresh_ms, logged
since the rig turned on ResponseCacheImpl's DEBUG log) and the simulator's trials.csv of the
cell's scenario (`eureka-sim run conformance/cells/CELL/scenario.toml --out SIM_DIR`: its
trials.csv and servers.csv). Prints both gap distributions per server, the real last dead hit
and dead hits, and the simulated ones over all trials and over the simulated trials whose gap at
every server lies within WINDOW_MS of a real trial's own (each real trial weighs the same).
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


def server_items(value):
    """"ms" (one server) or "a:ms;b:ms" (peers) -> {server name or "": ms}."""
    out = {}
    for item in filter(None, value.split(";")):
        name, _, ms = item.rpartition(":")
        if ms.lstrip("-").isdigit():
            out[name] = int(ms)
    return out


def real_trials(cell):
    out = matrix.results_dir(cell)
    events = {r["trial"]: r for r in matrix.read_rows(os.path.join(out, "real-events.csv"))}
    rows = []
    for r in matrix.read_rows(os.path.join(out, "real.csv")):
        ev = events.get(r["trial"], {})
        if not matrix.is_quiet(cell, r) or not r.get("last_dead_hit_ms"):
            continue
        changes = [server_items(ev.get(k, "")) for k in matrix.SERVER_EVENTS]
        gaps = {}
        for server, refresh in server_items(ev.get("srv_readonly_refresh_ms", "")).items():
            first = [c[server] for c in changes if server in c]
            if first:
                gaps[server] = refresh - min(first)
        rows.append({"trial": int(r["trial"]), "gaps": gaps, "last_dead_hit_ms": int(r["last_dead_hit_ms"]),
                     "dead_hits": int(r["dead_hits"])})
    return rows


def sim_trials(folder, single):
    """The simulated trials of `eureka-sim run ... --out folder`: trials.csv's figures and each
    server's gap from servers.csv (one server is named "", as the rig names it)."""
    gaps = {}
    for r in matrix.read_rows(os.path.join(folder, "servers.csv")):
        if r["server_removed_ms"] and r["readonly_removed_ms"]:
            name = "" if single else r["server"]
            gaps.setdefault(r["trial"], {})[name] = int(r["readonly_removed_ms"]) - int(r["server_removed_ms"])
    rows = []
    for r in matrix.read_rows(os.path.join(folder, "trials.csv")):
        if r["last_dead_hit_ms"]:
            rows.append({"gaps": gaps.get(r["trial"], {}), "last_dead_hit_ms": int(r["last_dead_hit_ms"]),
                         "dead_hits": int(r["dead_hits"])})
    return rows


def near(sim, real):
    """The simulated trials whose gap at every server with a logged real gap lies within
    WINDOW_MS of the real trial's."""
    return [s for s in sim if all(server in s["gaps"] and abs(s["gaps"][server] - g) <= WINDOW_MS
                                  for server, g in real["gaps"].items())]


def matched_mean(real, sim, key):
    """The mean of `key` over the simulated trials near each real trial's gaps, each real trial
    weighing the same; None when a real trial has no simulated trial near it."""
    means = []
    for r in real:
        close = [s[key] for s in near(sim, r)]
        if not close:
            return None
        means.append(statistics.fmean(close))
    return statistics.fmean(means)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    name, sim_dir = sys.argv[1], sys.argv[2]
    cells = {c["name"]: c for c in matrix.load_matrix()}
    if name not in cells:
        sys.exit("no cell %r in %s" % (name, matrix.MATRIX))
    cell = cells[name]
    real = real_trials(cell)
    sim = sim_trials(sim_dir, cell["servers"] == 1)
    timed = [r for r in real if r["gaps"]]
    servers = sorted({name for r in timed for name in r["gaps"]})
    print("cell %s: %d quiet real trials, %d with the cache refresh logged; %d simulated" % (
        name, len(real), len(timed), len(sim)))
    for server in servers:
        label = "server %s" % server if server else "the server"
        print("gap at %s, real:      %s" % (label, quantiles([r["gaps"][server] for r in timed if server in r["gaps"]])))
        print("gap at %s, simulated: %s" % (label, quantiles([s["gaps"][server] for s in sim if server in s["gaps"]])))
    print("per real trial (trial: gaps ms): " + ", ".join(
        "%d: %s" % (r["trial"], "/".join(str(r["gaps"][k]) for k in sorted(r["gaps"]))) for r in timed))
    for key in ("last_dead_hit_ms", "dead_hits"):
        print("%s: real %s" % (key, quantiles([r[key] for r in real])))
        print("%s: simulated, all trials %s" % (key, quantiles([s[key] for s in sim])))
        if timed:
            m = matched_mean(timed, sim, key)
            print("%s: over the logged trials real mean %.1f, simulated at their gaps (+-%d ms) %s" % (
                key, statistics.fmean(r[key] for r in timed), WINDOW_MS,
                "no simulated trial near some gap" if m is None else "%.1f" % m))


if __name__ == "__main__":
    main()
