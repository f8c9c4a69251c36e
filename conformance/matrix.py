#!/usr/bin/env python3
"""The conformance matrix driver (Python 3.11+ stdlib): real-stack cells declared once in
conformance/matrix.toml, run unattended, resumable, one cell at a time.

  python3 conformance/matrix.py gen [--check]          write (or check) conformance/cells/<cell>/
  python3 conformance/matrix.py status                 trials per cell, quiet or not, time left
  python3 conformance/matrix.py run [--cell NAME]...   run the missing real trials (all cells in
                                                       order, or the named ones); Ctrl-C is safe
  python3 conformance/matrix.py list                   the cells, one line each

A run appends each finished trial to conformance/results/matrix/<cell>/real.csv at once, so an
interrupted run loses at most the trial in progress, and `run` again continues where it stopped.
A trial's victim and delay depend only on the cell's seed and the trial's index, so a resumed
cell draws what an uninterrupted one would have.

Each trial records the machine's load: the 1-minute load average before and after, and how long
the rig's own threads waited for a CPU during the measurement window (summed over every thread
of every process the rig started, from /proc/<pid>/task/*/schedstat, per second of the window).
A trial is `quiet` when both stay under [quiet]'s limits; only quiet trials count towards a
cell's target, and `run` adds trials until the cell has that many quiet ones. Trials run under
load stay in real.csv with quiet = 0, for the record; the comparison leaves them out.

The rig only uses the loopback: 127.0.0.1 for one server, 127.0.0.2-4 for peers a-c (their own
addresses, FACTS.md §16), and for three peers a TCP proxy (netproxy.py) in front of every peer,
which lets the rig cut a link (partition) or make a peer refuse (restart) at a given time.
"""
import argparse
import csv
import json
import glob
import math
import os
import random
import signal
import subprocess
import sys
import threading
import time
import tomllib

CONF = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, CONF)
import netproxy  # noqa: E402
import rig       # noqa: E402

ROOT = os.path.dirname(CONF)
MATRIX = os.path.join(CONF, "matrix.toml")
CELLS_DIR = os.path.join(CONF, "cells")
RESULTS = os.path.join(CONF, "results", "matrix")
BASE_PROPERTIES = os.path.join(CONF, "compressed.properties")

# Three peers, each on its own loopback address (peers that share a host replicate to nobody:
# PeerEurekaNodes#isThisMyUrl compares host names, FACTS.md §16).
PEERS = [("a", "127.0.0.2"), ("b", "127.0.0.3"), ("c", "127.0.0.4")]
SERVER_PORT = 8761          # every server's own port, on its own address
FRONT_PORT = 18761          # the proxy in front of each peer, for the clients (services, callers)
SERVICE_BASE_PORT = 9100    # svc-k on 127.0.0.1:9100+k
CALLER_BASE_PORT = 9150     # callers that serve HTTP (gateway, zuul): 9150, 9151, ...


def link_port(src, dst):
    """The port of the proxy that carries peer src's replication to peer dst (on dst's address)."""
    return 18800 + 10 * src + dst


# ----------------------------------------------------------------------------- the matrix file

CELL_KEYS = {
    "name": str, "train": str, "boot": str, "caller": str, "service": str, "servers": int,
    "callers": list, "strategy": str, "wait-s": (int, float), "victims": int, "instances": int,
    "fault": str, "fault-peers": list, "fault-at-s": (int, float), "fault-for-s": (int, float),
    "fresh-server": bool, "trials": int, "seed": int, "max-wait-s": int, "properties": dict,
    "service-properties": dict, "caller-properties": dict, "verdict": str, "note": str,
}
STRATEGIES = ("kill-9", "kill-15", "service-registry", "pause")
FAULTS = ("none", "pause", "partition", "restart")
VERDICTS = ("pending", "agree", "modelled", "known-difference")
QUIET_KEYS = ("max-other-cpu",)


class MatrixError(Exception):
    pass


def load_matrix(path=MATRIX):
    """The cells of matrix.toml with [defaults] applied, checked key by key."""
    try:
        with open(path, "rb") as f:
            doc = tomllib.load(f)
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise MatrixError("%s: %s" % (path, e))
    defaults = doc.get("defaults", {})
    quiet = doc.get("quiet", {})
    if set(quiet) != set(QUIET_KEYS) or not all(isinstance(v, (int, float)) and v > 0 for v in quiet.values()):
        raise MatrixError("%s: [quiet] takes exactly %s, each a positive number" % (path, ", ".join(QUIET_KEYS)))
    cells, seen = [], set()
    for i, raw in enumerate(doc.get("cell", [])):
        where = "%s: cell[%d]%s" % (path, i, " (%s)" % raw["name"] if "name" in raw else "")
        cell = dict(defaults)
        cell.update(raw)
        for key, value in cell.items():
            want = CELL_KEYS.get(key)
            if want is None:
                raise MatrixError("%s: unknown key `%s`; allowed: %s" % (where, key, ", ".join(sorted(CELL_KEYS))))
            if not isinstance(value, want) or (want is int and isinstance(value, bool)):
                raise MatrixError("%s: `%s` = %r is not a %s" % (where, key, value, getattr(want, "__name__", want)))
        for key in ("name", "seed"):
            if key not in cell:
                raise MatrixError("%s: `%s` is required" % (where, key))
        checks = [
            (cell["name"] not in seen, "`name` %r is used twice" % cell["name"]),
            (cell["strategy"] in STRATEGIES, "`strategy` %r; allowed: %s" % (cell["strategy"], ", ".join(STRATEGIES))),
            (cell["fault"] in FAULTS, "`fault` %r; allowed: %s" % (cell["fault"], ", ".join(FAULTS))),
            (cell["verdict"] in VERDICTS, "`verdict` %r; allowed: %s" % (cell["verdict"], ", ".join(VERDICTS))),
            (cell["servers"] in (1, 3), "`servers` = %r; allowed: 1, 3" % cell["servers"]),
            (1 <= cell["victims"] < cell["instances"], "`victims` must be from 1 to instances - 1"),
            (cell["trials"] >= 1, "`trials` must be at least 1"),
            (cell["fault"] == "none" or cell["servers"] == 3, "a fault needs servers = 3"),
        ]
        for ok, problem in checks:
            if not ok:
                raise MatrixError("%s: %s" % (where, problem))
        seen.add(cell["name"])
        cell.setdefault("callers", [["server"]] if cell["servers"] == 1 else [[p] for p, _ in PEERS])
        cell.setdefault("fault-peers", [])
        if cell["fault"] != "none":
            for key in ("fault-at-s", "fault-for-s"):
                if key not in cell:
                    raise MatrixError("%s: fault %r needs `%s`" % (where, cell["fault"], key))
            known = {p for p, _ in PEERS}
            want_n = 2 if cell["fault"] == "partition" else 1
            if len(cell["fault-peers"]) != want_n or not set(cell["fault-peers"]) <= known:
                raise MatrixError("%s: `fault-peers` must name %d of %s" % (where, want_n, ", ".join(sorted(known))))
        names = {"server"} if cell["servers"] == 1 else {p for p, _ in PEERS}
        for reads in cell["callers"]:
            if not reads or not set(reads) <= names:
                raise MatrixError("%s: `callers` entries are lists of %s" % (where, ", ".join(sorted(names))))
        cell["quiet"] = quiet
        cells.append(cell)
    if not cells:
        raise MatrixError("%s: no [[cell]]" % path)
    return cells


def read_properties_lines(path):
    """(key, value) pairs of a .properties file, in order (comments and blank lines dropped)."""
    out = []
    with open(path, encoding="iso-8859-1") as f:
        for ln in f:
            ln = ln.strip()
            if ln and not ln.startswith(("#", "!")) and "=" in ln:
                k, v = ln.split("=", 1)
                out.append((k.strip(), v.strip()))
    return out


def cell_properties(cell):
    """The properties every process of the cell reads: compressed.properties with the cell's
    `properties` on top (a key the cell sets replaces the base line in place)."""
    props = dict(read_properties_lines(BASE_PROPERTIES))
    for k, v in cell.get("properties", {}).items():
        props[k] = str(v)
    if cell["servers"] == 3:
        # Each process's server list is its own (the rig gives it on the command line; the
        # scenario names the peers), so the shared file names none.
        props.pop("eureka.client.service-url.defaultZone", None)
    return props


def properties_text(cell):
    lines = ["# Generated by `python3 conformance/matrix.py gen` from conformance/matrix.toml (cell %s):" % cell["name"],
             "# conformance/compressed.properties with the cell's `properties` on top. Every real process",
             "# of the cell reads it, and so does the simulator (scenario.toml's spring-config).", ""]
    lines += ["%s=%s" % kv for kv in cell_properties(cell).items()]
    return "\n".join(lines) + "\n"


def toml_value(v):
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, (int, float)):
        return repr(v)
    if isinstance(v, list):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    return json.dumps(str(v))


def sim_train(train):
    """The simulator's release for a train name of the matrix (it knows Hoxton.SR12, 2025.1.4)."""
    return train


def shutdown_at_s(cell):
    """When the simulated stop comes: after every process is up and, for a cell whose server
    runs across trials (no fresh server), after the first MeasuredRate bucket has rolled twice
    (self-preservation reads the last complete 60-s bucket, FACTS.md §2.6)."""
    return 90 if cell["fresh-server"] else 200


def scenario_text(cell):
    """The simulator's side of the cell."""
    at = shutdown_at_s(cell)
    duration = at + max(60, cell["max-wait-s"]) + 30
    out = ["# Generated by `python3 conformance/matrix.py gen` from conformance/matrix.toml (cell %s)." % cell["name"],
           "# The real side reads cell.properties too; the rest is the rig's wiring (conformance/README.md).",
           "", "[simulation]",
           "duration-s = %d" % duration, "trials = 2000", "seed = %d" % cell["seed"], 'start = "cold"',
           "release = %s" % toml_value(sim_train(cell["train"])),
           "start-spread-s = 10", "context-start-ms = 3000", "context-start-spread-ms = 3000", ""]
    out += ["[server]", 'spring-config = "cell.properties"',
            "eureka.client.register-with-eureka = false", "eureka.client.fetch-registry = false", ""]
    if cell["servers"] == 3:
        for name, _ in PEERS:
            out += ["[[peer]]", "name = %s" % toml_value(name), ""]
    out += ["[clients]", 'spring-config = "cell.properties"']
    if cell["servers"] == 3:
        out.append("eureka.client.service-url.defaultZone = %s" % toml_value(",".join(p for p, _ in PEERS)))
    out += ["", "[[app]]", 'name = "svc"', "instances = %d" % cell["instances"]]
    service_props = dict(SERVICE_SIM.get(cell["service"], {}))
    if cell["service"] == "default" and cell["train"] != SERVICE_TRAIN:
        # The services are the 2025.1.4 ones (Boot 4: graceful shutdown unless told otherwise)
        # while `release` names the callers' train, whose Boot shuts down at once.
        service_props["server.shutdown"] = "graceful"
    service_props.update(cell.get("service-properties", {}))
    for k, v in sorted(service_props.items()):
        out.append("%s = %s" % (k, toml_value(v)))
    out.append("")
    sim = CALLER_SIM.get(cell["caller"])
    if sim is None:
        raise MatrixError("cell %s: caller %r has no entry in matrix.py's CALLER_SIM" % (cell["name"], cell["caller"]))
    for name, reads in caller_names(cell):
        out += ["[[caller]]", "name = %s" % toml_value(name), 'calls = "svc"', "rate-per-s = 20",
                "fixed-rate = true", "# The rig's callers only fetch (caller/src/main/resources/application.properties).",
                "eureka.client.register-with-eureka = false"]
        if sim["config"]:
            out.append("spring-config = %s" % toml_value(["../../" + f for f in sim["config"]]))
        # The properties rig.py gives this caller on its command line (its CALLERS entry), but
        # the port it serves on, say the same to the simulator.
        for k, v in sorted(rig.CALLERS.get(cell["caller"], {}).get("props", {}).items()):
            if k != "server.port":
                out.append("%s = %s" % (k, toml_value(v)))
        for k, v in sim["keys"]:
            out.append("%s = %s" % (k, toml_value(v)))
        if cell["servers"] == 3:
            out.append("eureka.client.service-url.defaultZone = %s" % toml_value(",".join(reads)))
        for k, v in sorted(cell.get("caller-properties", {}).items()):
            out.append("%s = %s" % (k, toml_value(v)))
        out.append("")
    for j in range(cell["victims"]):
        out += ["[[shutdown]]", 'instance = "svc-%d"' % j, "at-s = %d" % at,
                "strategy = %s" % toml_value(cell["strategy"])]
        if cell["strategy"] in ("service-registry", "pause"):
            out.append("wait-s = %s" % toml_value(cell["wait-s"]))
        out.append("")
    if cell["fault"] != "none":
        fat = at + cell["fault-at-s"]
        if cell["fault"] == "pause":
            out += ["[[fault]]", 'kind = "pause"', "target = %s" % toml_value(cell["fault-peers"][0]),
                    "at-s = %s" % toml_value(fat), "for-s = %s" % toml_value(cell["fault-for-s"])]
        elif cell["fault"] == "partition":
            out += ["[[fault]]", 'kind = "partition"', "between = %s" % toml_value(cell["fault-peers"]),
                    "at-s = %s" % toml_value(fat), "for-s = %s" % toml_value(cell["fault-for-s"])]
        else:
            out += ["[[fault]]", 'kind = "server-restart"', "target = %s" % toml_value(cell["fault-peers"][0]),
                    "at-s = %s" % toml_value(fat), "down-s = %s" % toml_value(cell["fault-for-s"])]
        out.append("")
    return "\n".join(out)


# The train of conformance/service (the default services and every server).
SERVICE_TRAIN = "2025.1.4"

# How the simulator says each rig caller (rig.py's CALLERS): the properties files it reads besides
# cell.properties (relative to conformance/), and the [[caller]] keys naming its HTTP stack
# (README "The callers' HTTP stacks"; src/scenario/call_policy.rs).
CALLER_SIM = {
    # BlockingLoadBalancerClient.choose + one plain HTTP request: one attempt, no breaker, as the
    # train's default caller (Spring Cloud Gateway without a Retry filter) does.
    "loadbalancer": {"config": [], "keys": []},
    "gateway": {"config": [], "keys": [("http-client", "gateway")]},
    "feign": {"config": [], "keys": [("http-client", "feign"), ("spring-retry", False)]},
    "webclient": {"config": [], "keys": [("http-client", "web-client")]},
    # @LoadBalanced RestTemplate without spring-retry: one attempt through Ribbon.
    "ribbon": {"config": ["compressed-ribbon.properties"],
               "keys": [("http-client", "rest-template"), ("spring-retry", False)]},
    "zuul": {"config": ["compressed-ribbon.properties"],
             "keys": [("http-client", "zuul"), ("spring-retry", False)]},
    "retry": {"config": ["compressed-ribbon.properties"],
              "keys": [("http-client", "rest-template"), ("spring-retry", True)]},
}

# [[app]] keys for the services a cell runs (the rig's SERVICES), beyond cell.properties.
SERVICE_SIM = {"default": {}, "hoxton": {}, "hoxton-sr9": {}}


def caller_names(cell):
    """(name, servers read) of each caller: `caller` alone, else caller-<servers>."""
    if len(cell["callers"]) == 1 and cell["servers"] == 1:
        return [("caller", cell["callers"][0])]
    return [("caller-" + "".join(reads), reads) for reads in cell["callers"]]


def gen(cells, check):
    stale = []
    for cell in cells:
        d = os.path.join(CELLS_DIR, cell["name"])
        for fname, text in (("cell.properties", properties_text(cell)), ("scenario.toml", scenario_text(cell))):
            path = os.path.join(d, fname)
            try:
                with open(path, encoding="iso-8859-1") as f:
                    same = f.read() == text
            except FileNotFoundError:
                same = False
            if same:
                continue
            stale.append(os.path.relpath(path, ROOT))
            if not check:
                os.makedirs(d, exist_ok=True)
                tmp = path + ".tmp"
                with open(tmp, "w", encoding="iso-8859-1") as f:
                    f.write(text)
                os.replace(tmp, path)
    if check and stale:
        print("stale (run `python3 conformance/matrix.py gen`): " + ", ".join(stale))
        return 1
    print(("checked" if check else "wrote") + " %d cell(s)%s" % (
        len(cells), "" if check else ", %d file(s) changed" % len(stale)))
    return 0


# ----------------------------------------------------------------------------- real results

REAL_HEADER = rig.HEADER + ["victims", "load1_start", "load1_end", "runq_ms_per_s", "trial_wall_s",
                            "started", "other_cpu"]
CALLERS_HEADER = ["trial", "caller", "reads", "dead_hits", "chosen", "ok_after_stop", "last_dead_hit_ms",
                  "last_chosen_ms", "errors", "unresolved"]
EVENTS_HEADER = ["trial", "victims", "stop_epoch_ms", "first_dead_hit_ms", "jvm_exit_ms", "fault",
                 "fault_on_ms", "fault_off_ms", "srv_cancel_ms", "srv_evict_ms", "srv_status_register_ms",
                 "srv_sup_timeouts", "restart_first_ok_ms", "ready_wait_s", "srv_readonly_refresh_ms"]


READONLY_REFRESH_LOGGER = "logging.level.com.netflix.eureka.registry.ResponseCacheImpl"
# The server-side events of a trial, by the line each server logs (AbstractInstanceRegistry).
SERVER_EVENTS = ("srv_cancel_ms", "srv_evict_ms", "srv_status_register_ms")


def server_event_times(lines, victims_pattern, since_ms):
    """One server's log lines -> epoch ms of its first cancel of a victim, first eviction and
    first DOWN / OUT_OF_SERVICE register of a victim from `since_ms`, and of the first read-only
    cache refresh after the earliest of those (when its GET /apps stops serving the victim as UP:
    the change invalidated the read-write cache, and the next refresh copies it; None when the
    server logged no refresh, as before the rig turned that log on)."""
    rx = {"srv_cancel_ms": r"Cancelled instance SVC/(%s)" % victims_pattern,
          "srv_evict_ms": r"Evicting \d+ items",
          "srv_status_register_ms": r"Registered instance SVC/(%s) with status (DOWN|OUT_OF_SERVICE)" % victims_pattern}
    times = {key: rig.first_match(lines, rx[key], since_ms)[0] for key in SERVER_EVENTS}
    changed = [t for t in times.values() if t is not None]
    times["srv_readonly_refresh_ms"] = (
        rig.first_match(lines, r"Updating the client cache from response cache$", min(changed) + 1)[0]
        if changed else None)
    return times


def results_dir(cell):
    return os.path.join(RESULTS, cell["name"])


def read_rows(path):
    try:
        with open(path, newline="") as f:
            return list(csv.DictReader(f))
    except FileNotFoundError:
        return []


def append_row(path, header, row):
    """Appends one row (writing the header first into a new file) and syncs it to disk. A file
    written with an older header is first rewritten with the new one (new columns empty)."""
    new = not os.path.exists(path) or os.path.getsize(path) == 0
    if not new:
        with open(path, newline="") as f:
            old = next(csv.reader(f), [])
        if old != header:
            rows = read_rows(path)
            tmp = path + ".tmp"
            with open(tmp, "w", newline="") as f:
                w = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
                w.writeheader()
                w.writerows(rows)
            os.replace(tmp, path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header)
        if new:
            w.writeheader()
        w.writerow(row)
        f.flush()
        os.fsync(f.fileno())


def is_quiet(cell, row):
    """The [quiet] rule (the comparison applies the same one: experiment/matrix.rs Quiet)."""
    try:
        return float(row["other_cpu"]) <= cell["quiet"]["max-other-cpu"]
    except (KeyError, TypeError, ValueError):
        return False


def cell_progress(cell):
    rows = read_rows(os.path.join(results_dir(cell), "real.csv"))
    quiet = sum(1 for r in rows if is_quiet(cell, r))
    walls = [float(r["trial_wall_s"]) for r in rows if r.get("trial_wall_s")]
    return rows, quiet, walls


def est_trial_s(cell, walls):
    """Seconds per trial: the cell's own mean so far, else a guess from what it waits for."""
    if walls:
        return sum(walls) / len(walls)
    guess = 50.0 if cell["fresh-server"] else 35.0
    return guess + max(0, cell["max-wait-s"] - 60) + (cell.get("fault-for-s", 0) or 0)


def fmt_dur(s):
    s = int(s)
    return "%dh%02dm" % (s // 3600, s % 3600 // 60) if s >= 3600 else "%dm%02ds" % (s // 60, s % 60)


def status(cells):
    total = 0.0
    print("%-30s %-11s %7s %7s %7s %9s %s" % ("cell", "train", "trials", "quiet", "target", "left", "verdict"))
    for cell in cells:
        rows, quiet, walls = cell_progress(cell)
        missing = max(0, cell["trials"] - quiet)
        left = missing * est_trial_s(cell, walls) * 1.1   # ~10 % of trials come out loaded
        total += left + (60 if missing else 0)
        print("%-30s %-11s %7d %7d %7d %9s %s" % (cell["name"], cell["train"], len(rows), quiet, cell["trials"],
                                                 fmt_dur(left) if missing else "-", cell["verdict"]))
    print("time left for the whole matrix: about %s (one cell at a time, start-ups included)" % fmt_dur(total))
    return 0


# ----------------------------------------------------------------------------- load

def load1():
    with open("/proc/loadavg") as f:
        return float(f.read().split()[0])


CLK_TCK = os.sysconf("SC_CLK_TCK")


def busy_jiffies():
    """The machine's busy CPU time so far (/proc/stat's cpu line less idle and iowait), jiffies."""
    with open("/proc/stat") as f:
        fields = [int(x) for x in f.readline().split()[1:]]
    return sum(fields) - fields[3] - (fields[4] if len(fields) > 4 else 0)


def rig_jiffies(pids):
    """{pid: utime + stime} of the rig's processes (every thread counted, /proc/<pid>/stat)."""
    out = {}
    for pid in pids:
        try:
            with open("/proc/%d/stat" % pid) as f:
                rest = f.read().rsplit(")", 1)[1].split()
            out[pid] = int(rest[11]) + int(rest[12])
        except (OSError, IndexError, ValueError):
            pass
    return out


def other_cpu(busy0, rig0, busy1, rig1, seconds):
    """CPUs' worth of work done by anything but the rig during a window: the machine's busy time
    less the rig's own (its processes alive at both ends, and the driver itself). A process of
    the rig that exits in the window (a stopped victim) takes what it used in it along, which
    counts as other work: a small overestimate on the safe side."""
    rig = sum(v - rig0[p] for p, v in rig1.items() if p in rig0 and v >= rig0[p])
    return max(0.0, (busy1 - busy0 - rig) / CLK_TCK / max(0.001, seconds))


def runq_snapshot(pids):
    """{(pid, tid): nanoseconds the thread has waited on a run queue} (schedstat field 2)."""
    snap = {}
    for pid in pids:
        base = "/proc/%d/task" % pid
        try:
            tids = os.listdir(base)
        except OSError:
            continue
        for tid in tids:
            try:
                with open("%s/%s/schedstat" % (base, tid)) as f:
                    snap[(pid, tid)] = int(f.read().split()[1])
            except (OSError, IndexError, ValueError):
                pass
    return snap


def runq_wait_ns(before, after):
    """Run-queue wait between two snapshots: threads alive at both ends count their difference,
    threads born in between all of theirs; threads that died in between (a killed victim) are
    lost, which can only make a trial look quieter by what they waited in their last moments."""
    return sum(v - before.get(k, 0) for k, v in after.items() if v >= before.get(k, 0))


# ----------------------------------------------------------------------------- the real side

def tally(rows, victims):
    """A trial's rows after the stop, split as the simulator counts them: the attempts sent to a
    victim, those it failed (a dead hit: refused, timed out, or `retried` by spring-retry), those
    it answered, and the requests that failed in the end (a retried first attempt is not one)."""
    chosen = [r for r in rows if r[1] in victims]
    dead = [r for r in chosen if r[2] != "ok"]
    ok = [r for r in chosen if r[2] == "ok"]
    errors = [r for r in rows if r[2] not in ("ok", "retried")]
    return chosen, dead, ok, errors


def caller_row(k, c, chosen, dead, ok, errors, serving, unresolved):
    rel = lambda v: "" if v is None else int(v - serving)
    return {"trial": k, "caller": c["name"], "reads": "+".join(c["reads"]),
            "dead_hits": len(dead), "chosen": len(chosen), "ok_after_stop": len(ok),
            "last_dead_hit_ms": rel(dead[-1][0] if dead else None),
            "last_chosen_ms": rel(chosen[-1][0] if chosen else None),
            "errors": len(errors), "unresolved": unresolved}


def write_trial_log(path, rows, serving):
    with open(path, "w") as f:
        f.write("send_epoch_ms,chosen_instance_id,outcome,latency_ms,rel_stop_serving_ms\n")
        for r in rows:
            f.write("%d,%s,%s,%d,%d\n" % (r + (r[0] - serving,)))


def rewrite_rows(path, header, rows):
    tmp = path + ".tmp"
    with open(tmp, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=header, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    os.replace(tmp, path)


# real-events.csv columns that hold a time relative to the stop-serving epoch ("ms" or, with
# several servers, "server:ms" items joined by ";").
RELATIVE_EVENTS = ("first_dead_hit_ms", "jvm_exit_ms", "fault_on_ms", "fault_off_ms", "srv_cancel_ms",
                   "srv_evict_ms", "srv_status_register_ms", "restart_first_ok_ms", "srv_readonly_refresh_ms")


def shift_relative(value, by):
    def one(item):
        name, _, ms = item.rpartition(":")
        return (name + ":" if name else "") + str(int(ms) + by)
    return value if value == "" else ";".join(one(i) for i in value.split(";"))


class TrialLog(rig.CallerLog):
    """A committed logs/<trial>-<caller>.csv (every row from 2 s before the stop on), read back
    as a caller log where the run's raw log is gone."""

    def poll(self):
        for r in read_rows(self.path):
            self.rows.append((int(r["send_epoch_ms"]), r["chosen_instance_id"], r["outcome"], int(r["latency_ms"])))


def retally(cell):
    """Counts a cell's finished trials again: from the raw caller logs of their runs (the run-*
    folders, kept on the machine that ran them) with the caller's current log reader, else from
    the committed trial logs, which hold every row from 2 s before the stop on. The stop-serving
    epoch is taken again from the strategy's rule (rig.serves_until_sigterm), and every time
    relative to it moves with it: how a /pause that stops the web server came to count from the
    pause, and a spring-retry caller's attempts became countable, after their trials had run."""
    out = results_dir(cell)
    real, callers_rows, events = (read_rows(os.path.join(out, f)) for f in ("real.csv", "real-callers.csv", "real-events.csv"))
    runs = {}
    for meta_path in sorted(glob.glob(os.path.join(out, "run-*", "run.json"))):
        with open(meta_path) as f:
            for t in json.load(f).get("trials", []):
                runs[int(t["trial"])] = os.path.dirname(meta_path)
    from_logs, kept = [], []
    for row in real:
        k = int(row["trial"])
        stop, old_serving = int(row["stop_epoch_ms"]), int(row["stop_serving_epoch_ms"])
        serving = old_serving if rig.serves_until_sigterm(cell["strategy"], cell["service"]) else stop
        if k not in runs and serving == old_serving:
            kept.append(k)
            continue
        victims = set(row["victims"].split("+"))
        all_chosen, all_dead, all_ok, all_errors = [], [], [], []
        for name, reads in caller_names(cell):
            log_path = os.path.join(out, "logs", "%d-%s.csv" % (k, name))
            t_end = max((int(r["send_epoch_ms"]) for r in read_rows(log_path)), default=stop)
            if k in runs:
                log = rig.caller_log(cell["caller"], os.path.join(runs[k], name + ".csv"))
            else:
                log = TrialLog(log_path)
                from_logs.append(k)
            log.poll()
            rows = log.between(stop, t_end)
            chosen, dead, ok, errors = tally(rows, victims)
            all_chosen += chosen
            all_dead += dead
            all_ok += ok
            all_errors += errors
            new = caller_row(k, {"name": name, "reads": reads}, chosen, dead, ok, errors, serving, row["unresolved"])
            if k not in runs:
                # A committed log may end before the trial's last failed request: keep its count.
                new.pop("errors")
            for r in callers_rows:
                if r["trial"] == row["trial"] and r["caller"] == name:
                    r.update({key: str(v) for key, v in new.items()})
            write_trial_log(log_path, log.between(stop - 2000, t_end), serving)
        total = caller_row(k, {"name": "", "reads": []}, sorted(all_chosen), sorted(all_dead), all_ok, all_errors,
                           serving, row["unresolved"])
        recounted = ("dead_hits", "chosen", "ok_after_stop", "last_dead_hit_ms", "last_chosen_ms")
        row.update({key: str(total[key]) for key in recounted + (("errors",) if k in runs else ())})
        row["stop_serving_epoch_ms"] = str(serving)
        for ev in events:
            if ev["trial"] == row["trial"]:
                for key in RELATIVE_EVENTS:
                    ev[key] = shift_relative(ev.get(key, ""), old_serving - serving)
                ev["first_dead_hit_ms"] = "" if not all_dead else str(min(all_dead)[0] - serving)
    rewrite_rows(os.path.join(out, "real.csv"), REAL_HEADER, real)
    rewrite_rows(os.path.join(out, "real-callers.csv"), CALLERS_HEADER, callers_rows)
    rewrite_rows(os.path.join(out, "real-events.csv"), EVENTS_HEADER, events)
    rig.say("%s: %d trial(s) counted again, from the committed trial logs (no run folder): %s; "
            "kept as they were (no run folder, nothing to move): %s" % (
                cell["name"], len(real) - len(kept), ", ".join(map(str, sorted(set(from_logs)))) or "none",
                ", ".join(map(str, kept)) or "none"))
    return 0


class CellRun:
    """One cell's real processes and trials (see the module doc)."""

    def __init__(self, cell, jvm):
        self.cell = cell
        self.out = results_dir(cell)
        self.run_dir = os.path.join(self.out, "run-%s" % time.strftime("%Y%m%d-%H%M%S"))
        self.logs_dir = os.path.join(self.out, "logs")
        os.makedirs(self.run_dir, exist_ok=True)
        os.makedirs(self.logs_dir, exist_ok=True)
        self.props_file = os.path.join(CELLS_DIR, cell["name"], "cell.properties")
        self.jvm = jvm
        self.ids = ["svc-%d" % i for i in range(cell["instances"])]
        self.ports = {sid: SERVICE_BASE_PORT + i for i, sid in enumerate(self.ids)}
        self.caller_spec = rig.CALLERS[cell["caller"]]  # checked by run()
        self.service_jar = rig.SERVICES[cell["service"]]["jar"]
        self.proxy = None
        if cell["servers"] == 1:
            self.servers = [{"name": "server", "host": "127.0.0.1", "url": "http://127.0.0.1:%d/eureka/" % SERVER_PORT}]
        else:
            self.servers = [{"name": n, "host": h, "url": "http://%s:%d/eureka/" % (h, FRONT_PORT)} for n, h in PEERS]
        self.by_name = {s["name"]: s for s in self.servers}
        self.callers = []
        for i, (name, reads) in enumerate(caller_names(cell)):
            self.callers.append({"name": name, "reads": reads, "port": CALLER_BASE_PORT + i,
                                 "csv": os.path.join(self.run_dir, name + ".csv")})
            self.callers[-1]["log"] = rig.caller_log(cell["caller"], self.callers[-1]["csv"])
        self.srv_log_offs = {}

    # -- processes
    def files(self, extra=()):
        return [self.props_file] + list(extra)

    def server_props(self, s):
        # ResponseCacheImpl logs each refresh of the read-only cache at DEBUG ("Updating the client
        # cache from response cache", its getCacheUpdateTask): the trial's srv_readonly_refresh_ms.
        props = [("rig.server-port", SERVER_PORT), (READONLY_REFRESH_LOGGER, "DEBUG")]
        if self.cell["servers"] == 3:
            i = [n for n, _ in PEERS].index(s["name"])
            others = ["http://%s:%d/eureka/" % (h, link_port(i, j)) for j, (n, h) in enumerate(PEERS) if j != i]
            props += [("server.address", s["host"]), ("eureka.instance.hostname", s["host"]),
                      ("eureka.client.service-url.defaultZone", ",".join(others))]
        return props

    def start_server(self, s):
        t0 = rig.now_ms()
        log = os.path.join(self.run_dir, s["name"] + ".log")
        self.srv_log_offs[s["name"]] = rig.file_size(log)
        rig.start_java(s["name"], "server", self.server_props(s), self.run_dir, self.jvm, files=self.files())
        direct = "http://%s:%d/eureka/apps" % (s["host"], SERVER_PORT)
        rig.wait_until(lambda: rig.http("GET", direct)[0] == 200, 180, "eureka server %s" % s["name"])
        s["start_epoch_ms"], s["up_epoch_ms"] = t0, rig.now_ms()

    def client_urls(self, names):
        return ",".join(self.by_name[n]["url"] for n in names)

    def start_service(self, sid):
        props = [("server.port", self.ports[sid]), ("eureka.instance.instance-id", sid),
                 ("rig.server-port", SERVER_PORT)]
        if self.cell["servers"] == 3:
            props.append(("eureka.client.service-url.defaultZone", self.client_urls([n for n, _ in PEERS])))
        props += sorted(self.cell.get("service-properties", {}).items())
        return rig.start_java(sid, "service", props, self.run_dir, self.jvm, jar=self.service_jar, files=self.files())

    def start_caller(self, c):
        props = [("rig.server-port", SERVER_PORT), ("caller.log-file", c["csv"]), ("caller.period-ms", 50)]
        if self.cell["servers"] == 3:
            props.append(("eureka.client.service-url.defaultZone", self.client_urls(c["reads"])))
        props += [(k, str(v).replace("{port}", str(c["port"]))) for k, v in sorted(self.caller_spec["props"].items())]
        props += sorted(self.cell.get("caller-properties", {}).items())
        rig.start_java(c["name"], "caller", props, self.run_dir, self.jvm, jar=self.caller_spec["jar"],
                       files=self.files(self.caller_spec["config"]))

    def registered_up(self, s):
        st, body = rig.http("GET", "http://%s:%d/eureka/apps/SVC" % (s["host"], SERVER_PORT))
        if st != 200:
            return set()
        try:
            inst = json.loads(body)["application"]["instance"]
        except Exception:
            return set()
        return {i["instanceId"] for i in inst if i.get("status") == "UP"}

    def all_up_everywhere(self):
        return all(self.registered_up(s) >= set(self.ids) for s in self.servers)

    def start_all(self):
        ports = [(s["host"], SERVER_PORT) for s in self.servers] + [("127.0.0.1", p) for p in self.ports.values()]
        ports += [("127.0.0.1", c["port"]) for c in self.callers]
        if self.cell["servers"] == 3:
            ports += [(h, FRONT_PORT) for _, h in PEERS]
        busy = [p for p in ports if rig.port_in_use(p[1], p[0])]
        if busy:
            raise RuntimeError("ports already in use: %s (a previous rig still running?)" % busy)
        t0 = time.time()
        if self.cell["servers"] == 3:
            self.proxy = netproxy.Proxy()
            for i, (n, h) in enumerate(PEERS):
                self.proxy.add("front-" + n, h, FRONT_PORT, h, SERVER_PORT)
                for j, (m, hm) in enumerate(PEERS):
                    if i != j:
                        self.proxy.add("%s>%s" % (n, m), hm, link_port(i, j), hm, SERVER_PORT)
        threads = [threading.Thread(target=self.start_server, args=(s,)) for s in self.servers]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        rig.say("%d server(s) up after %.1fs" % (len(self.servers), time.time() - t0))
        for sid in self.ids:
            self.start_service(sid)
        rig.wait_until(self.all_up_everywhere, 240, "every instance UP at every server")
        rig.say("services registered after %.1fs" % (time.time() - t0))
        for c in self.callers:
            self.start_caller(c)
        self.wait_steady(240)
        rig.say("steady traffic after %.1fs" % (time.time() - t0))
        if cell_properties(self.cell).get("eureka.server.enable-self-preservation", "true") == "true":
            # Self-preservation reads the last complete 60-s MeasuredRate bucket, 0 until the first
            # roll (FACTS.md §2.6): nothing is evicted before the second bucket is complete.
            warm = min(s["up_epoch_ms"] for s in self.servers) + 125_000 - rig.now_ms()
            if warm > 0:
                rig.say("self-preservation: waiting %.0f s for two MeasuredRate buckets" % (warm / 1000))
                time.sleep(warm / 1000)

    def wait_steady(self, timeout_s):
        def ok():
            for c in self.callers:
                c["log"].poll()
                seen = {r[1] for r in c["log"].since(rig.now_ms() - 2000) if r[2] == "ok"}
                if not all(s in seen for s in self.ids):
                    return False
            return self.all_up_everywhere()
        rig.wait_until(ok, timeout_s, "steady ok traffic from every caller to every instance", step=0.25)

    def settle_s(self):
        """After a fresh server: the longest client back-off the cell's intervals allow
        (rig.derived_settle_s)."""
        return rig.derived_settle_s(cell_properties(self.cell))

    def sup_timeouts(self, t_ms):
        """TimedSupervisorTask time-outs (heartbeat or fetch back-offs) in the services' and
        callers' logs from t_ms: (count, epoch ms of the last or None)."""
        n, last = 0, None
        for name in self.ids + [c["name"] for c in self.callers]:
            lines, _ = rig.log_lines_since(os.path.join(self.run_dir, name + ".log"), 0)
            for ln in lines:
                if "task supervisor timed out" in ln:
                    t = rig.parse_ts(ln)
                    if t is not None and t >= t_ms:
                        n += 1
                        last = t if last is None else max(last, t)
        return n, last

    def fresh_server(self):
        s = self.servers[0]
        p = rig.PROCS.pop(s["name"])
        os.kill(p.pid, signal.SIGTERM)
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
        rig.wait_until(lambda: not rig.port_in_use(SERVER_PORT, s["host"]), 30, "server port free")
        self.start_server(s)
        settle = self.settle_s() * 1000

        def ready():
            t = rig.now_ms()
            if t - s["up_epoch_ms"] < settle:
                return False
            last = self.sup_timeouts(s["start_epoch_ms"] - 15000)[1]
            return (last is None or t - last >= settle) and self.all_up_everywhere()
        rig.wait_until(ready, 300, "fresh server settled (%.0f s after the last back-off)" % (settle / 1000), step=0.5)

    # -- faults
    def fault_on(self):
        cell = self.cell
        kind, peers = cell["fault"], cell["fault-peers"]
        if kind == "pause":
            os.kill(rig.PROCS[peers[0]].pid, signal.SIGSTOP)
            return rig.now_ms()
        if kind == "partition":
            i, j = [[n for n, _ in PEERS].index(p) for p in peers]
            names = ["%s>%s" % (PEERS[i][0], PEERS[j][0]), "%s>%s" % (PEERS[j][0], PEERS[i][0])]
            return self.proxy.set_mode(names, "blackhole")
        if kind == "restart":
            # A crash: the process dies, its connections are reset, the port refuses. The proxy
            # refuses for clients and peers alike until the fault's end, so the peer is down for
            # exactly fault-for-s whatever its JVM's start-up takes.
            n = peers[0]
            fronts = ["front-" + n] + ["%s>%s" % (m, n) for m, _ in PEERS if m != n]
            t = self.proxy.set_mode(fronts, "refuse")
            p = rig.PROCS.pop(n)
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
            threading.Thread(target=self.start_server, args=(self.by_name[n],), daemon=True).start()
            return t
        return None

    def fault_off(self):
        cell = self.cell
        kind, peers = cell["fault"], cell["fault-peers"]
        if kind == "pause":
            os.kill(rig.PROCS[peers[0]].pid, signal.SIGCONT)
            return rig.now_ms()
        if kind == "partition":
            i, j = [[n for n, _ in PEERS].index(p) for p in peers]
            names = ["%s>%s" % (PEERS[i][0], PEERS[j][0]), "%s>%s" % (PEERS[j][0], PEERS[i][0])]
            return self.proxy.set_mode(names, "forward")
        if kind == "restart":
            n = peers[0]
            rig.wait_until(lambda: rig.http("GET", "http://%s:%d/eureka/apps" % (self.by_name[n]["host"], SERVER_PORT))[0] == 200,
                           180, "restarted peer %s answering" % n)
            fronts = ["front-" + n] + ["%s>%s" % (m, n) for m, _ in PEERS if m != n]
            return self.proxy.set_mode(fronts, "forward")
        return None

    # -- one trial
    def stop(self, victims):
        """The strategy's action on each victim; returns (stop_epoch_ms, stop_serving_epoch_ms)."""
        cell = self.cell
        procs = [rig.PROCS[v] for v in victims]
        stop = rig.now_ms()
        if cell["strategy"] in ("kill-9", "kill-15"):
            sig = signal.SIGKILL if cell["strategy"] == "kill-9" else signal.SIGTERM
            for p in procs:
                os.kill(p.pid, sig)
            return stop, stop
        # Boot 2 names the endpoint service-registry, Boot 3+ serviceregistry.
        paths = ["serviceregistry", "service-registry"] if cell["strategy"] == "service-registry" else ["pause"]
        body = b'{"status":"OUT_OF_SERVICE"}' if cell["strategy"] == "service-registry" else b""
        for v in victims:
            for path in paths:
                st, answer = rig.http("POST", "http://127.0.0.1:%d/actuator/%s" % (self.ports[v], path), body)
                if st != 404:
                    break
            if st is None or st >= 300:
                # A pause that stops the context (Hoxton.SR9 and older) may not answer before
                # the JVM exits on its own; the trial goes on.
                rig.say("note: %s POST to %s answered %s %r" % (path, v, st, answer[:200]))
        time.sleep(max(0.0, (stop + cell["wait-s"] * 1000 - rig.now_ms()) / 1000.0))
        serving = rig.now_ms() if rig.serves_until_sigterm(cell["strategy"], cell["service"]) else stop
        for p in procs:
            if p.poll() is None:
                try:
                    os.kill(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        return stop, serving

    def trial(self, k):
        cell = self.cell
        t0 = time.time()
        self.wait_steady(240)
        ready_wait = time.time() - t0
        rng = random.Random("%d/%d" % (cell["seed"], k))   # a trial's draws depend on its index only
        delay = rng.uniform(2.0, 6.0)
        n = len(self.ids)
        victims = [self.ids[(k + j) % n] for j in range(cell["victims"])]
        procs = {v: rig.PROCS[v] for v in victims}
        fault_at = cell.get("fault-at-s", 0) if cell["fault"] != "none" else None
        l1_start = load1()
        before = delay + min(0.0, fault_at or 0.0)
        time.sleep(max(0.0, before))
        fault_times = {"on": None, "off": None}
        timers = []
        if fault_at is not None and fault_at <= 0:
            fault_times["on"] = self.fault_on()
            time.sleep(-fault_at)
        pids = [p.pid for p in rig.PROCS.values()] + [os.getpid()]
        runq0, w0 = runq_snapshot(pids), rig.now_ms()
        busy0, jiff0 = busy_jiffies(), rig_jiffies(pids)
        stop, serving = self.stop(victims)
        if fault_at is not None:
            def later(what, at_ms):
                time.sleep(max(0.0, (at_ms - rig.now_ms()) / 1000.0))
                fault_times[what] = self.fault_on() if what == "on" else self.fault_off()
            on_ms = stop + int(fault_at * 1000)
            off_ms = on_ms + int(cell["fault-for-s"] * 1000)
            if fault_at > 0:
                timers.append(threading.Thread(target=later, args=("on", on_ms), daemon=True))
            timers.append(threading.Thread(target=later, args=("off", off_ms), daemon=True))
            for t in timers:
                t.start()
        # Wait until no caller has chosen a victim for 5 s, the victims' JVMs have exited and the
        # fault is over, at most max-wait-s after they stopped serving.
        deadline = serving + cell["max-wait-s"] * 1000
        unresolved = 0
        while True:
            time.sleep(0.1)
            t = rig.now_ms()
            last = serving
            for c in self.callers:
                c["log"].poll()
                rows = [r for r in c["log"].since(stop) if r[1] in procs]
                if rows:
                    last = max(last, rows[-1][0])
            quiet = t - last >= 5000
            exited = all(p.poll() is not None for p in procs.values())
            faults_done = all(not th.is_alive() for th in timers)
            if quiet and exited and faults_done:
                break
            if t >= deadline:
                if not quiet:
                    unresolved = 1
                for v, p in procs.items():
                    if p.poll() is None:
                        rig.say("victim %s still alive: SIGKILL" % v)
                        os.kill(p.pid, signal.SIGKILL)
                        p.wait(10)
                for th in timers:
                    th.join()
                break
        t_end = rig.now_ms()
        runq = runq_wait_ns(runq0, runq_snapshot(pids))
        runq_per_s = runq / 1e6 / max(0.001, (t_end - w0) / 1000.0)
        other = other_cpu(busy0, jiff0, busy_jiffies(), rig_jiffies(pids), (t_end - w0) / 1000.0)
        l1_end = load1()
        time.sleep(0.3)
        rel = lambda v: "" if v is None else int(v - serving)
        per_caller, all_dead, all_chosen, all_ok, all_errors = [], [], [], [], []
        for c in self.callers:
            c["log"].poll()
            chosen, dead, ok, errors = tally(c["log"].since(stop), procs)
            all_dead += dead
            all_chosen += chosen
            all_ok += ok
            all_errors += errors
            per_caller.append(caller_row(k, c, chosen, dead, ok, errors, serving, unresolved))
            write_trial_log(os.path.join(self.logs_dir, "%d-%s.csv" % (k, c["name"])),
                            c["log"].between(stop - 2000, t_end), serving)
        all_dead.sort()
        all_chosen.sort()
        row = {"trial": k, "strategy": cell["strategy"], "wait_ms": int(cell["wait-s"] * 1000),
               "stop_epoch_ms": stop, "stop_serving_epoch_ms": serving, "dead_hits": len(all_dead),
               "chosen": len(all_chosen), "ok_after_stop": len(all_ok),
               "last_dead_hit_ms": rel(all_dead[-1][0] if all_dead else None),
               "last_chosen_ms": rel(all_chosen[-1][0] if all_chosen else None),
               "errors": len(all_errors), "unresolved": unresolved, "victims": "+".join(victims),
               "load1_start": l1_start, "load1_end": l1_end, "runq_ms_per_s": round(runq_per_s, 1),
               "other_cpu": round(other, 3),
               "started": time.strftime("%Y-%m-%dT%H:%M:%S%z")}
        ev = self.events(k, victims, procs, stop, serving, all_dead, fault_times, ready_wait)
        self.restart_victims(victims, ev)
        if cell["fresh-server"] and cell["servers"] == 1:
            self.fresh_server()
        row["trial_wall_s"] = round(time.time() - t0, 1)
        return row, per_caller, ev

    def events(self, k, victims, procs, stop, serving, dead, fault_times, ready_wait):
        rel = lambda v: "" if v is None else int(v - serving)
        ev = {"trial": k, "victims": "+".join(victims), "stop_epoch_ms": stop,
              "first_dead_hit_ms": rel(dead[0][0] if dead else None),
              "jvm_exit_ms": max((rel(p.rig_exit_ms) for p in procs.values() if p.rig_exit_ms), default=""),
              "fault": self.cell["fault"], "fault_on_ms": rel(fault_times["on"]),
              "fault_off_ms": rel(fault_times["off"]), "ready_wait_s": round(ready_wait, 1),
              "srv_sup_timeouts": self.sup_timeouts(stop - 1000)[0]}
        pattern = "|".join(v for v in victims)
        found = {key: [] for key in SERVER_EVENTS + ("srv_readonly_refresh_ms",)}
        for s in self.servers:
            lines, _ = rig.log_lines_since(os.path.join(self.run_dir, s["name"] + ".log"), 0)
            for key, t in server_event_times(lines, pattern, stop - 1000).items():
                if t is not None:
                    found[key].append("%s:%d" % (s["name"], t - serving) if len(self.servers) > 1 else str(t - serving))
        ev.update({key: ";".join(items) for key, items in found.items()})
        return ev

    def restart_victims(self, victims, ev):
        t_restart = rig.now_ms()
        for v in victims:
            rig.PROCS.pop(v, None)
            rig.wait_until(lambda: not rig.port_in_use(self.ports[v]), 30, "port %d free" % self.ports[v])
            self.start_service(v)

        def back():
            for c in self.callers:
                c["log"].poll()
                for v in victims:
                    oks = [r[0] for r in c["log"].since(t_restart) if r[1] == v and r[2] == "ok"]
                    if not oks or oks[-1] - oks[0] < 3000:
                        return False
            return True
        rig.wait_until(back, 300, "restarted victims answering ok for 3 s", step=0.25)
        ev["restart_first_ok_ms"] = rig.now_ms() - t_restart

    def versions(self):
        saved = dict(rig.JARS)
        rig.JARS["caller"] = self.caller_spec["jar"]
        rig.JARS["service"] = self.service_jar
        try:
            return rig.jar_versions(self.caller_spec["versions"], True)
        finally:
            rig.JARS.clear()
            rig.JARS.update(saved)

    def run(self, progress, max_trials=None):
        cell = self.cell
        real_csv = os.path.join(self.out, "real.csv")
        done = read_rows(real_csv)
        next_k = max((int(r["trial"]) for r in done), default=-1) + 1
        quiet = sum(1 for r in done if is_quiet(cell, r))
        meta_path = os.path.join(self.run_dir, "run.json")
        meta = {"cell": cell["name"], "first_trial": next_k, "start": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
                "jvm_opts": self.jvm, "settings": {k: v for k, v in cell.items() if k != "quiet"},
                "quiet_rule": cell["quiet"],
                "java_version": subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.strip(),
                "versions": self.versions(), "trials": []}

        def write_meta():
            meta["end"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            with open(meta_path, "w") as f:
                json.dump(meta, f, indent=1)
            with open(os.path.join(self.out, "versions.json"), "w") as f:
                json.dump({"versions": meta["versions"], "java_version": meta["java_version"]}, f, indent=1)
        write_meta()
        k = next_k
        try:
            self.start_all()
            while quiet < cell["trials"] and (max_trials is None or k - next_k < max_trials):
                row, per_caller, ev = self.trial(k)
                append_row(real_csv, REAL_HEADER, row)
                for r in per_caller:
                    append_row(os.path.join(self.out, "real-callers.csv"), CALLERS_HEADER, r)
                append_row(os.path.join(self.out, "real-events.csv"), EVENTS_HEADER, ev)
                row_quiet = is_quiet(cell, row)
                quiet += row_quiet
                meta["trials"].append({"trial": k, "wall_s": row["trial_wall_s"], "quiet": row_quiet})
                write_meta()
                progress(cell, k, quiet, row, row_quiet)
                k += 1
        except KeyboardInterrupt:
            meta["aborted"] = "interrupted"
            raise
        except Exception as e:
            meta["aborted"] = repr(e)
            rig.say("ABORTED %s: %r" % (cell["name"], e))
            return 1
        finally:
            rig.kill_all()
            if self.proxy:
                self.proxy.close()
            write_meta()
        return 0


def run(cells, names, jvm, max_trials=None):
    chosen = [c for c in cells if not names or c["name"] in names]
    unknown = set(names or []) - {c["name"] for c in cells}
    if unknown:
        raise MatrixError("no cell named %s; `matrix.py list` shows them" % ", ".join(sorted(unknown)))
    todo = [c for c in chosen if cell_progress(c)[1] < c["trials"]]
    t_start = time.time()

    def progress(cell, k, quiet, row, row_quiet):
        left = 0.0
        for c in todo:
            rows, q, walls = cell_progress(c)
            left += max(0, c["trials"] - q) * est_trial_s(c, walls) * 1.1
        rig.say("[%s] trial %d: %s dead_hits=%s last_dead_hit_ms=%s quiet=%d (other CPU %.2f, load %.2f/%.2f, runq %.0f ms/s) "
                "| %d/%d quiet | about %s left in the matrix (%s so far)" % (
                    cell["name"], k, row["victims"], row["dead_hits"], row["last_dead_hit_ms"], row_quiet,
                    row["other_cpu"], row["load1_start"], row["load1_end"], row["runq_ms_per_s"], quiet, cell["trials"],
                    fmt_dur(left), fmt_dur(time.time() - t_start)))
    failures = 0
    for cell in todo:
        if cell["caller"] not in rig.CALLERS:
            raise MatrixError("cell %s: caller %r is not in rig.py's CALLERS (%s)" % (
                cell["name"], cell["caller"], ", ".join(sorted(rig.CALLERS))))
        if not os.path.exists(os.path.join(CELLS_DIR, cell["name"], "cell.properties")):
            raise MatrixError("cell %s has no cell.properties: run `python3 conformance/matrix.py gen`" % cell["name"])
        if cell["service"] not in rig.SERVICES:
            raise MatrixError("cell %s: service %r is not in rig.py's SERVICES (%s)" % (
                cell["name"], cell["service"], ", ".join(sorted(rig.SERVICES))))
        rig.JARS["caller"] = rig.CALLERS[cell["caller"]]["jar"]
        rig.JARS["service"] = rig.SERVICES[cell["service"]]["jar"]
        rig.build_if_needed(False, cell["caller"], cell["service"])
        rig.say("cell %s: %d quiet trial(s) of %d so far" % (cell["name"], cell_progress(cell)[1], cell["trials"]))
        failures += CellRun(cell, jvm).run(progress, max_trials)
    return 1 if failures else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--matrix", default=MATRIX)
    sub = ap.add_subparsers(dest="cmd", required=True)
    g = sub.add_parser("gen")
    g.add_argument("--check", action="store_true", help="exit 1 if a generated file is stale")
    sub.add_parser("status")
    sub.add_parser("list")
    r = sub.add_parser("run")
    r.add_argument("--cell", action="append", help="run only this cell (repeatable)")
    r.add_argument("--jvm-opts", default="", help="replace the default JVM flags")
    r.add_argument("--max-trials", type=int, help="stop each cell after this many trials in this invocation")
    t = sub.add_parser("retally", help="count a cell's trials again from its raw or committed caller logs")
    t.add_argument("--cell", action="append", required=True)
    a = ap.parse_args()
    try:
        cells = load_matrix(a.matrix)
        if a.cmd == "gen":
            return gen(cells, a.check)
        if a.cmd == "status":
            return status(cells)
        if a.cmd == "retally":
            by_name = {c["name"]: c for c in cells}
            unknown = [n for n in a.cell if n not in by_name]
            if unknown:
                raise MatrixError("no cell named %s; `matrix.py list` shows them" % ", ".join(unknown))
            return max(retally(by_name[n]) for n in a.cell)
        if a.cmd == "list":
            for c in cells:
                print("%-30s %-11s %-12s servers=%d %-16s fault=%-9s trials=%d" % (
                    c["name"], c["train"], c["caller"], c["servers"], c["strategy"], c["fault"], c["trials"]))
            return 0
        import atexit
        atexit.register(rig.kill_all)
        signal.signal(signal.SIGTERM, rig._sig)
        signal.signal(signal.SIGHUP, rig._sig)
        rig.build_if_needed(False, "loadbalancer")
        return run(cells, a.cell, a.jvm_opts.split() if a.jvm_opts else list(rig.DEFAULT_JVM), a.max_trials)
    except MatrixError as e:
        print("matrix: %s" % e, file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        rig.say("interrupted; run again to continue")
        return 130


if __name__ == "__main__":
    sys.exit(main())
