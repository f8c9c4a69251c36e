#!/usr/bin/env python3
"""Real-stack conformance rig for eureka-sim (Python 3 stdlib only).

Starts a real Spring Cloud Netflix Eureka server, 4 `svc` instances and one
Spring Cloud LoadBalancer caller (all Spring Boot jars built from this folder),
then repeatedly stops one instance and measures, from the caller's per-request
log, how long callers keep choosing it.

  python3 conformance/rig.py run --strategy kill-9 --trials 30 --out conformance/results/<train>/
  python3 conformance/rig.py run --strategy service-registry --wait-s 5 --trials 10 --out ...
  python3 conformance/rig.py run --caller ribbon --strategy kill-9 --fresh-server --out ...   (Hoxton.SR12 Ribbon caller)
  python3 conformance/rig.py summary conformance/results/<train>/real-*.csv

Only 127.0.0.1 is used. Every process the rig starts is killed on exit.
"""
import argparse
import atexit
import bisect
import csv
import datetime as dt
import json
import os
import random
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import zipfile

CONF = os.path.dirname(os.path.abspath(__file__))
JARS = {m: os.path.join(CONF, m, "target", m + ".jar") for m in ("server", "service", "caller")}
# The time-compressed settings every process reads (`--properties` names another file).
COMPRESSED = os.path.join(CONF, "compressed.properties")
# The callers the rig can run, by `--caller` name. Each is a Spring Boot jar that runs the same
# fixed-rate loop and writes the same log line (send_epoch_ms,chosen_instance_id,outcome,latency_ms)
# to `caller.log-file`. "jar": the built jar; "pom": the Maven project that builds it (None: a module
# of ./pom.xml); "config": extra properties files it reads after compressed.properties; "train": the
# Spring Cloud release train it is built on; "versions": extra libraries to report from its jar
# ({artifact prefix: name}); "props": extra command-line properties (name -> value; "{port}" is
# replaced by the caller's own port, base-port + 50, for callers that serve HTTP).
CALLERS = {
    "loadbalancer": {"jar": os.path.join(CONF, "caller", "target", "caller.jar"), "pom": None,
                     "config": [], "train": "2025.1.4", "versions": {}, "props": {}},
    "ribbon": {"jar": os.path.join(CONF, "caller-ribbon", "target", "caller-ribbon.jar"),
               "pom": os.path.join(CONF, "caller-ribbon", "pom.xml"),
               "config": [os.path.join(CONF, "compressed-ribbon.properties")], "train": "Hoxton.SR12",
               "versions": {"spring-cloud-netflix-ribbon": "spring-cloud-netflix-ribbon",
                            "ribbon-loadbalancer": "ribbon", "ribbon-eureka": "ribbon-eureka",
                            "archaius-core": "archaius", "spring-retry": "spring-retry"},
               "props": {}},
    # Spring Cloud Gateway (2025.1.4): route Path=/svc/** -> lb://svc on the caller's own port, driven
    # in-process through that port; the outcome is the gateway's answer (ok / http_5xx).
    "gateway": {"jar": os.path.join(CONF, "caller-gateway", "target", "caller-gateway.jar"), "pom": None,
                "config": [], "train": "2025.1.4",
                "versions": {"spring-cloud-gateway-server-webflux": "spring-cloud-gateway",
                             "reactor-netty-http": "reactor-netty", "spring-retry": "spring-retry"},
                "props": {"server.port": "{port}"}},
    # OpenFeign @FeignClient("svc") on Spring Cloud LoadBalancer, no spring-retry (2025.1.4).
    "feign": {"jar": os.path.join(CONF, "caller-feign", "target", "caller-feign.jar"), "pom": None,
              "config": [], "train": "2025.1.4",
              "versions": {"spring-cloud-openfeign-core": "spring-cloud-openfeign", "feign-core": "feign",
                           "spring-retry": "spring-retry"},
              "props": {}},
    # @LoadBalanced WebClient.Builder (ReactorLoadBalancerExchangeFilterFunction), block(1000 ms) (2025.1.4).
    "webclient": {"jar": os.path.join(CONF, "caller-webclient", "target", "caller-webclient.jar"), "pom": None,
                  "config": [], "train": "2025.1.4",
                  "versions": {"reactor-netty-http": "reactor-netty", "spring-webflux": "spring-webflux",
                               "spring-retry": "spring-retry"},
                  "props": {}},
    # Zuul 1 proxy (Hoxton.SR12): route svc (path /svc/**, service-id svc), zuul.retryable false, no spring-retry,
    # Hystrix timeout at its default; driven in-process through its own port; reads the Ribbon settings too.
    "zuul": {"jar": os.path.join(CONF, "caller-zuul", "target", "caller-zuul.jar"),
             "pom": os.path.join(CONF, "caller-zuul", "pom.xml"),
             "config": [os.path.join(CONF, "compressed-ribbon.properties")], "train": "Hoxton.SR12",
             "versions": {"spring-cloud-netflix-zuul": "spring-cloud-netflix-zuul", "zuul-core": "zuul",
                          "hystrix-core": "hystrix", "spring-cloud-netflix-ribbon": "spring-cloud-netflix-ribbon",
                          "ribbon-loadbalancer": "ribbon", "ribbon-httpclient": "ribbon-httpclient",
                          "httpclient": "httpclient", "spring-retry": "spring-retry"},
             "props": {"server.port": "{port}"}},
    # @LoadBalanced RestTemplate on Ribbon WITH spring-retry (RetryLoadBalancerInterceptor, Hoxton.SR12);
    # spring.cloud.loadbalancer.retry.enabled put back to its default (compressed.properties turns it off);
    # also writes caller-retries.csv beside the caller log.
    "retry": {"jar": os.path.join(CONF, "caller-retry", "target", "caller-retry.jar"),
              "pom": os.path.join(CONF, "caller-retry", "pom.xml"),
              "config": [os.path.join(CONF, "compressed-ribbon.properties")], "train": "Hoxton.SR12",
              "versions": {"spring-cloud-netflix-ribbon": "spring-cloud-netflix-ribbon",
                           "ribbon-loadbalancer": "ribbon", "ribbon-eureka": "ribbon-eureka",
                           "archaius-core": "archaius", "spring-retry": "spring-retry"},
              "props": {"spring.cloud.loadbalancer.retry.enabled": "true"},
              "log": "attempts"},
}
# The `svc` service the rig can run, by `--service` name, in the style of CALLERS ("jar", "pom": None
# for a module of ./pom.xml, "train"; "mvn": extra Maven arguments for its build).
SERVICES = {
    "default": {"jar": os.path.join(CONF, "service", "target", "service.jar"), "pom": None, "train": "2025.1.4"},
    # Spring Cloud Hoxton.SR12 / Boot 2.3.12: immediate shutdown by default; /actuator/pause only calls
    # PauseHandler beans (none here), as from spring-cloud-context 2.2.7 (Hoxton.SR10).
    "hoxton": {"jar": os.path.join(CONF, "service-hoxton", "target", "service-hoxton.jar"),
               "pom": os.path.join(CONF, "service-hoxton", "pom.xml"), "train": "Hoxton.SR12", "mvn": []},
    # The same service on Hoxton.SR9 (spring-cloud-context 2.2.6, Boot 2.3.12): /actuator/pause = context.stop(),
    # which on Boot 2.3 stops the web server at once (spring-cloud-commons#788): the victim stops
    # serving at the pause, not at the SIGTERM after the wait ("pause_stops_serving").
    "hoxton-sr9": {"jar": os.path.join(CONF, "service-hoxton", "target", "service-hoxton-sr9.jar"),
                   "pom": os.path.join(CONF, "service-hoxton", "pom.xml"), "train": "Hoxton.SR9", "mvn": ["-Psr9"],
                   "pause_stops_serving": True},
}


def serves_until_sigterm(strategy, service):
    """Whether a victim of `strategy` keeps serving until the rig's SIGTERM after the wait: not
    after a pause on a service whose /pause stops the web server (SERVICES' pause_stops_serving);
    the exposure then counts from the pause."""
    return not (strategy == "pause" and SERVICES[service].get("pause_stops_serving", False))


RIBBON_JAR = CALLERS["ribbon"]["jar"]
RIBBON_POM = CALLERS["ribbon"]["pom"]
COMPRESSED_RIBBON = CALLERS["ribbon"]["config"][0]
RIBBON_VERSIONS = CALLERS["ribbon"]["versions"]
# Config files: "all" every process reads (--properties), "caller" the caller's (set from CALLERS).
CALLER_CONFIG = {"all": COMPRESSED, "caller": [COMPRESSED]}
DEFAULT_JVM = ["-Xmx128m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Xss512k",
               "-Djava.net.preferIPv4Stack=true"]
STRATEGIES = ("kill-9", "kill-15", "service-registry", "pause")
HEADER = ["trial", "strategy", "wait_ms", "stop_epoch_ms", "stop_serving_epoch_ms", "dead_hits",
          "chosen", "ok_after_stop", "last_dead_hit_ms", "last_chosen_ms", "errors", "unresolved"]
EVENTS_HEADER = ["trial", "victim", "stop_epoch_ms", "stop_serving_epoch_ms",
                 "first_dead_hit_ms", "last_ok_ms", "jvm_exit_ms",
                 "svc_graceful_start_ms", "svc_graceful_done_ms", "svc_unregister_ms",
                 "srv_status_register_ms", "srv_status_register_status", "srv_override_ms",
                 "srv_cancel_ms", "srv_expired_ms", "srv_evict_ms",
                 "restart_epoch_ms", "restart_first_ok_ms", "trial_wall_s",
                 # appended for --fresh-server (filled in every run): the server process this trial ran against
                 "srv_start_epoch_ms", "srv_up_epoch_ms", "srv_first_evict_epoch_ms", "srv_sup_timeouts",
                 "ready_wait_s"]

PROCS = {}          # name -> Popen (every process this rig started and has not reaped)
LOGLOCK = threading.Lock()


def now_ms():
    return int(time.time() * 1000)


def say(msg):
    print(time.strftime("%H:%M:%S") + " " + msg, flush=True)


# ----------------------------------------------------------------------------- processes

def kill_all():
    for name, p in list(PROCS.items()):
        if p.poll() is None:
            try:
                os.kill(p.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        try:
            p.wait(timeout=10)
        except Exception:
            pass
        PROCS.pop(name, None)


def _sig(signum, frame):
    raise KeyboardInterrupt("signal %d" % signum)


def port_in_use(port, host="127.0.0.1"):
    s = socket.socket()
    s.settimeout(0.3)
    try:
        return s.connect_ex((host, port)) == 0
    finally:
        s.close()


def start_java(name, module, props, logdir, jvm_opts, jar=None, files=None):
    """Start a jar directly (no shell), so Popen.pid is the JVM pid. `jar` and `files` (the
    properties files it reads) default to the module's jar and the rig's compressed settings."""
    if files is None:
        files = CALLER_CONFIG["caller"] if module == "caller" else [CALLER_CONFIG["all"]]
    args = ["java"] + jvm_opts + ["-jar", jar or JARS[module],
                                  "--spring.config.additional-location=" + ",".join("file:" + f for f in files)] + \
           ["--%s=%s" % kv for kv in props]
    logf = open(os.path.join(logdir, name + ".log"), "ab")
    logf.write(("\n==== rig start %s epoch_ms=%d args=%s\n" % (name, now_ms(), args)).encode())
    logf.flush()
    p = subprocess.Popen(args, stdout=logf, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                         cwd=logdir, start_new_session=True)
    logf.close()
    p.rig_exit_ms = None

    def waiter():
        p.wait()
        p.rig_exit_ms = now_ms()
    threading.Thread(target=waiter, daemon=True).start()
    PROCS[name] = p
    return p


def http(method, url, body=None, timeout=2.0, ctype="application/json"):
    req = urllib.request.Request(url, data=body, method=method)
    if body is not None:
        req.add_header("Content-Type", ctype)
    req.add_header("Accept", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()
    except Exception as e:
        return None, str(e).encode()


def wait_until(cond, timeout_s, what, step=0.2):
    t_end = time.time() + timeout_s
    while time.time() < t_end:
        v = cond()
        if v:
            return v
        time.sleep(step)
    raise RuntimeError("timed out after %ss waiting for %s" % (timeout_s, what))


# ----------------------------------------------------------------------------- caller log

class CallerLog:
    """Incrementally parsed caller log: rows (send_ms, instance, outcome, latency_ms)."""

    def __init__(self, path):
        self.path = path
        self.pos = 0
        self.buf = b""
        self.rows = []          # in completion order
        self.by_send = None

    def poll(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.pos)
                data = f.read()
        except FileNotFoundError:
            return
        self.pos += len(data)
        data = self.buf + data
        lines = data.split(b"\n")
        self.buf = lines.pop()
        for ln in lines:
            parts = ln.decode(errors="replace").strip().split(",")
            if len(parts) != 4:
                continue
            try:
                self.rows.append((int(parts[0]), parts[1], parts[2], int(parts[3])))
            except ValueError:
                continue

    def since(self, t_ms):
        """Rows with send >= t_ms (rows complete at most a few s after send)."""
        out = []
        for r in reversed(self.rows):
            if r[0] < t_ms - 10000:
                break
            if r[0] >= t_ms:
                out.append(r)
        out.sort()
        return out

    def between(self, a, b):
        return [r for r in self.since(a) if r[0] <= b]


class RetryAttemptLog(CallerLog):
    """A spring-retry caller's log read as ATTEMPTS, the unit the simulator counts (a dead hit is an
    attempt the stopped instance refused). The caller logs one row per request, naming its first
    attempt's instance and its final outcome, and writes every request that took more than one
    attempt to caller-retries.csv beside the log (send_epoch_ms,first_instance,final_instance,
    attempts). At Ribbon's defaults a request has at most two attempts (MaxAutoRetries 0,
    MaxAutoRetriesNextServer 1), so such a request becomes two rows: its first attempt with the
    outcome `retried` (it failed: spring-retry retries only after a failure) and its last attempt
    with the request's outcome."""

    def __init__(self, path):
        super().__init__(path)
        self.retries = CallerLog(os.path.join(os.path.dirname(path), "caller-retries.csv"))

    def poll(self):
        super().poll()
        self.retries.poll()

    def since(self, t_ms):
        # caller-retries.csv rows parse as (send, first, final, attempts).
        finals = {}
        for send, first, final, _ in self.retries.since(t_ms):
            finals.setdefault((send, first), []).append(final)
        out = []
        for r in super().since(t_ms):
            more = finals.get((r[0], r[1]))
            if more:
                out.append((r[0], r[1], "retried", r[3]))
                out.append((r[0], more.pop(0), r[2], r[3]))
            else:
                out.append(r)
        out.sort()
        return out


def caller_log(caller, path):
    """The log reader of a CALLERS entry: per attempt for a caller that declares `"log": "attempts"`."""
    return RetryAttemptLog(path) if CALLERS[caller].get("log") == "attempts" else CallerLog(path)


# ----------------------------------------------------------------------------- service log parsing

TS_RE = re.compile(r"^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}(?:[+-]\d\d:\d\d|Z))")


def parse_ts(line):
    m = TS_RE.match(line)
    if not m:
        return None
    s = m.group(1).replace("Z", "+00:00")
    return int(dt.datetime.fromisoformat(s).timestamp() * 1000)


def log_lines_since(path, offset):
    try:
        with open(path, "rb") as f:
            f.seek(offset)
            data = f.read()
    except FileNotFoundError:
        return [], offset
    return data.decode(errors="replace").splitlines(), offset + len(data)


def file_size(path):
    try:
        return os.path.getsize(path)
    except FileNotFoundError:
        return 0


def first_match(lines, pattern, since_ms):
    rx = re.compile(pattern)
    for ln in lines:
        t = parse_ts(ln)
        if t is None or t < since_ms:
            continue
        m = rx.search(ln)
        if m:
            return t, m
    return None, None


# ----------------------------------------------------------------------------- versions

def jar_versions(extra=None, mixed_as_text=False):
    """Versions of the libraries in `want` found in the jars: one string when every jar has the same,
    else {module: version}, or with mixed_as_text (--caller ribbon, whose caller is on another train)
    one string "4.0.7 (server, service); 2.3.12.RELEASE (caller)", which eureka-sim conform prints."""
    want = dict(extra or {})
    want.update({
        "spring-boot": "spring-boot", "spring-core": "spring-framework",
        "spring-cloud-netflix-eureka-client": "spring-cloud-netflix",
        "spring-cloud-netflix-eureka-server": "spring-cloud-netflix-eureka-server",
        "eureka-client": "eureka-client", "eureka-core": "eureka-core",
        "spring-cloud-commons": "spring-cloud-commons", "spring-cloud-context": "spring-cloud-context",
        "spring-cloud-loadbalancer": "spring-cloud-loadbalancer", "caffeine": "caffeine",
        "tomcat-embed-core": "tomcat",
    })
    out = {}
    for mod, jar in JARS.items():
        if not os.path.exists(jar):
            continue
        with zipfile.ZipFile(jar) as z:
            for n in z.namelist():
                if not n.startswith("BOOT-INF/lib/") or not n.endswith(".jar"):
                    continue
                base = n[len("BOOT-INF/lib/"):-4]
                m = re.match(r"^(.*?)-(\d[\w.\-]*)$", base)
                if m and m.group(1) in want:
                    out.setdefault(want[m.group(1)], {})[mod] = m.group(2)
    flat = {}
    for k, v in out.items():
        vals = sorted(set(v.values()))
        if len(vals) == 1:
            flat[k] = vals[0]
        elif mixed_as_text:
            flat[k] = "; ".join("%s (%s)" % (val, ", ".join(m for m in v if v[m] == val)) for val in vals)
        else:
            flat[k] = v
    return flat


def read_props(path):
    d = {}
    with open(path) as f:
        for ln in f:
            ln = ln.strip()
            if ln and not ln.startswith("#") and "=" in ln:
                k, v = ln.split("=", 1)
                d[k.strip()] = v.strip()
    return d


# ----------------------------------------------------------------------------- rig

class Rig:
    def __init__(self, a):
        self.a = a
        self.out = os.path.abspath(a.out)
        self.run_dir = os.path.join(self.out, "run-%s-%s" % (a.strategy, time.strftime("%Y%m%d-%H%M%S")))
        self.logs_dir = os.path.join(self.out, "logs")
        os.makedirs(self.run_dir, exist_ok=True)
        os.makedirs(self.logs_dir, exist_ok=True)
        self.caller_csv = os.path.join(self.run_dir, "caller.csv")
        self.clog = caller_log(a.caller, self.caller_csv)
        self.ids = ["svc-%d" % i for i in range(a.instances)]
        self.ports = {sid: a.base_port + i for i, sid in enumerate(self.ids)}
        self.jvm = DEFAULT_JVM if not a.jvm_opts else a.jvm_opts.split()
        self.rng = random.Random(a.seed)
        self.srv_restarts = []
        self.srv = {}           # current server process: start/up epoch ms, log offset
        self.log_offs = {}      # client log offsets for the supervisor time-out scan

    # -- lifecycle
    def start_server(self):
        """Start the Eureka server (same args every time) and wait for GET /eureka/apps = 200.
        Records the process's start/up epoch ms and its log offset in self.srv."""
        srv_log = os.path.join(self.run_dir, "server.log")
        off = file_size(srv_log)
        t0 = now_ms()
        start_java("server", "server", [("rig.server-port", self.a.server_port)], self.run_dir, self.jvm)
        base = "http://127.0.0.1:%d" % self.a.server_port
        wait_until(lambda: http("GET", base + "/eureka/apps")[0] == 200, 120, "eureka server /eureka/apps")
        self.srv = {"start_epoch_ms": t0, "up_epoch_ms": now_ms(), "log_off": off, "n": self.srv.get("n", 0) + 1}
        return self.srv

    def stop_server(self, grace_s=10):
        """SIGTERM the server, wait for its exit (SIGKILL after grace_s), wait until its port is free."""
        p = PROCS.pop("server")
        killed = False
        os.kill(p.pid, signal.SIGTERM)
        try:
            p.wait(grace_s)
        except subprocess.TimeoutExpired:
            say("server pid %d still alive %ds after SIGTERM: SIGKILL" % (p.pid, grace_s))
            killed = True
            os.kill(p.pid, signal.SIGKILL)
            p.wait(10)
        wait_until(lambda: not port_in_use(self.a.server_port), 30, "server port %d free" % self.a.server_port)
        return killed

    def server_first_evict(self):
        """Epoch ms of the current server's first 'Running the evict task' line, or ''."""
        lines, _ = log_lines_since(os.path.join(self.run_dir, "server.log"), self.srv["log_off"])
        t, _ = first_match(lines, r"Running the evict task", self.srv["start_epoch_ms"])
        return "" if t is None else t

    def sup_timeouts_since(self, t_ms):
        """TimedSupervisorTask 'task supervisor timed out' lines (heartbeat / fetch back-off) in the
        services' and the caller's logs with timestamp >= t_ms: (count, last epoch ms or None)."""
        n, last = 0, None
        for name in self.ids + ["caller"]:
            path = os.path.join(self.run_dir, name + ".log")
            off = self.log_offs.get(name, 0)
            lines, _ = log_lines_since(path, off)
            for ln in lines:
                if "task supervisor timed out" in ln:
                    t = parse_ts(ln)
                    if t is not None and t >= t_ms:
                        n += 1
                        last = t if last is None else max(last, t)
        return n, last

    def wait_ready_fresh(self, timeout_s=240):
        """--fresh-server: wait until the current server lists all instances UP, the caller has seen ok
        from all of them in the last 2 s at the normal request rate (all ok), and >= settle_s have passed
        since the server first answered and since the last TimedSupervisorTask time-out in any client
        log (so every lease has been renewed and any heartbeat/fetch back-off, <= 10x the 1-s interval,
        has ended)."""
        a = self.a
        settle = int(a.fresh_settle_s * 1000)
        expect = 2000.0 / a.period_ms
        t0 = time.time()

        def ok():
            t = now_ms()
            if t - self.srv["up_epoch_ms"] < settle:
                return False
            _, last_to = self.sup_timeouts_since(self.srv["start_epoch_ms"] - 15000)
            if last_to is not None and t - last_to < settle:
                return False
            if self.registered_up() < len(self.ids):
                return False
            self.clog.poll()
            rows = self.clog.since(t - 2000)
            seen = {r[1] for r in rows if r[2] == "ok"}
            if not all(s in seen for s in self.ids):
                return False
            win = [r for r in self.clog.since(t - 2500) if r[0] < t - 500]   # complete 2-s window
            return len(win) >= 0.9 * expect and all(r[2] == "ok" for r in win)
        wait_until(ok, timeout_s, "fresh server ready (4 UP, steady ok traffic, %.0fs settle)" % a.fresh_settle_s,
                   step=0.25)
        return time.time() - t0

    def start_service(self, sid):
        return start_java(sid, "service", [
            ("server.port", self.ports[sid]), ("eureka.instance.instance-id", sid),
            ("rig.server-port", self.a.server_port)], self.run_dir, self.jvm)

    def start_all(self):
        busy = [p for p in [self.a.server_port] + list(self.ports.values()) if port_in_use(p)]
        if busy:
            raise RuntimeError("ports already in use on 127.0.0.1: %s (a previous rig still running?)" % busy)
        t0 = time.time()
        self.start_server()
        say("server up after %.1fs" % (time.time() - t0))
        if self.a.probe_ms > 0:
            threading.Thread(target=self.server_probe, daemon=True).start()
        for sid in self.ids:
            self.start_service(sid)
        wait_until(lambda: self.registered_up() >= len(self.ids), 180, "all services registered UP")
        say("services registered after %.1fs" % (time.time() - t0))
        start_java("caller", "caller", [("rig.server-port", self.a.server_port),
                                        ("caller.log-file", self.caller_csv),
                                        ("caller.period-ms", self.a.period_ms),
                                        ("caller.probe-ms", self.a.probe_ms),
                                        ("caller.probe-file", os.path.join(self.run_dir, "caller-probe.csv"))] +
                   [(k, str(v).replace("{port}", str(self.a.base_port + 50)))
                    for k, v in sorted(CALLERS[self.a.caller]["props"].items())],
                   self.run_dir, self.jvm)
        self.wait_steady(180)
        say("steady traffic to all %d instances after %.1fs" % (len(self.ids), time.time() - t0))

    def server_probe(self):
        """Instrumentation: poll the server's cached payloads (/eureka/apps/delta and /eureka/apps, JSON,
        served from the readOnly response cache) every probe-ms; log each change of the body,
        with the ids and status/actionType of the svc instances in it."""
        import hashlib
        base = "http://127.0.0.1:%d/eureka/apps" % self.a.server_port
        last = {}
        path = os.path.join(self.run_dir, "server-probe.csv")
        with open(path, "a") as f:
            while True:
                for key, url in (("delta", base + "/delta"), ("apps", base)):
                    t = now_ms()
                    st, body = http("GET", url, timeout=1.0)
                    if st != 200:
                        continue
                    h = hashlib.sha1(body).hexdigest()[:10]
                    if last.get(key) != h:
                        last[key] = h
                        try:
                            apps = json.loads(body)["applications"]
                            desc = " ".join(sorted("%s:%s:%s" % (i["instanceId"], i["status"], i.get("actionType", ""))
                                                   for a in apps.get("application", []) for i in a["instance"]))
                            desc += " hash=" + str(apps.get("apps__hashcode", ""))
                        except Exception as e:
                            desc = "unparsed:" + repr(e)[:60]
                        f.write("%d,%s,%s,%s\n" % (t, key, h, desc))
                        f.flush()
                time.sleep(self.a.probe_ms / 1000.0)

    def registered_up(self):
        st, body = http("GET", "http://127.0.0.1:%d/eureka/apps/SVC" % self.a.server_port)
        if st != 200:
            return 0
        try:
            inst = json.loads(body)["application"]["instance"]
        except Exception:
            return 0
        return sum(1 for i in inst if i.get("status") == "UP")

    def wait_steady(self, timeout_s, window_ms=2000):
        def ok():
            self.clog.poll()
            rows = self.clog.since(now_ms() - window_ms)
            seen = {r[1] for r in rows if r[2] == "ok"}
            return all(s in seen for s in self.ids)
        wait_until(ok, timeout_s, "steady ok traffic to all instances", step=0.25)

    # -- one trial
    def trial(self, k):
        a = self.a
        t_trial0 = time.time()
        if a.fresh_server:
            ready_wait = self.wait_ready_fresh()
        else:
            self.wait_steady(120)
            ready_wait = time.time() - t_trial0
        srv_info = dict(self.srv)
        delay = self.rng.uniform(2.0, 6.0)
        time.sleep(delay)
        victim = self.ids[k % len(self.ids)] if a.victim == "rotate" else a.victim
        port = self.ports[victim]
        proc = PROCS[victim]
        srv_log = os.path.join(self.run_dir, "server.log")
        svc_log = os.path.join(self.run_dir, victim + ".log")
        srv_off, svc_off = file_size(srv_log), file_size(svc_log)
        wait_ms = 0
        stop = now_ms()
        if a.strategy == "kill-9":
            os.kill(proc.pid, signal.SIGKILL)
            stop_serving = stop
        elif a.strategy == "kill-15":
            os.kill(proc.pid, signal.SIGTERM)
            stop_serving = stop
        else:
            wait_ms = int(a.wait_s * 1000)
            if a.strategy == "service-registry":
                st, body = http("POST", "http://127.0.0.1:%d/actuator/serviceregistry" % port,
                                b'{"status":"OUT_OF_SERVICE"}')
            else:
                st, body = http("POST", "http://127.0.0.1:%d/actuator/pause" % port, b"")
            if st is None or st >= 300:
                say("WARNING %s POST answered %s %r" % (a.strategy, st, body[:200]))
            time.sleep(max(0.0, (stop + wait_ms - now_ms()) / 1000.0))
            stop_serving = now_ms() if serves_until_sigterm(a.strategy, a.service) else stop
            os.kill(proc.pid, signal.SIGTERM)

        # wait: victim not chosen for 5 s AND process exited (bounded by 60 s)
        deadline = stop_serving + a.max_wait_s * 1000
        unresolved = 0
        while True:
            time.sleep(0.1)
            self.clog.poll()
            t = now_ms()
            rows_v = [r for r in self.clog.since(stop) if r[1] == victim]
            last_chosen = rows_v[-1][0] if rows_v else stop_serving
            quiet = t - max(last_chosen, stop_serving) >= a.quiet_s * 1000
            exited = proc.poll() is not None
            if quiet and exited:
                break
            if t >= deadline:
                if not quiet:
                    unresolved = 1
                if not exited:
                    say("victim %s still alive %ds after SIGTERM/SIGKILL: SIGKILL" % (victim, a.max_wait_s))
                    os.kill(proc.pid, signal.SIGKILL)
                    proc.wait(10)
                break
        t_end = now_ms()
        time.sleep(0.3)
        self.clog.poll()

        after = self.clog.since(stop)
        rows_v = [r for r in after if r[1] == victim]
        dead = [r for r in rows_v if r[2] != "ok"]
        okv = [r for r in rows_v if r[2] == "ok"]
        errors = [r for r in after if r[2] != "ok"]
        rel = lambda v: "" if v is None else int(v - stop_serving)
        row = {
            "trial": k, "strategy": a.strategy, "wait_ms": wait_ms, "stop_epoch_ms": stop,
            "stop_serving_epoch_ms": stop_serving, "dead_hits": len(dead), "chosen": len(rows_v),
            "ok_after_stop": len(okv),
            "last_dead_hit_ms": rel(dead[-1][0] if dead else None),
            "last_chosen_ms": rel(rows_v[-1][0] if rows_v else None),
            "errors": len(errors), "unresolved": unresolved,
        }
        # window log for humans
        with open(os.path.join(self.logs_dir, "%s-%d.csv" % (a.strategy, k)), "w") as f:
            f.write("send_epoch_ms,chosen_instance_id,outcome,latency_ms,rel_stop_serving_ms\n")
            for r in self.clog.between(stop - 2000, t_end):
                f.write("%d,%s,%s,%d,%d\n" % (r + (r[0] - stop_serving,)))

        # side events from the server / victim logs
        srv_lines, _ = log_lines_since(srv_log, srv_off)
        svc_lines, _ = log_lines_since(svc_log, svc_off)
        ev = {"trial": k, "victim": victim, "stop_epoch_ms": stop, "stop_serving_epoch_ms": stop_serving,
              "first_dead_hit_ms": rel(dead[0][0] if dead else None),
              "last_ok_ms": rel(okv[-1][0] if okv else None),
              "jvm_exit_ms": rel(proc.rig_exit_ms) if proc.rig_exit_ms else ""}
        vid = re.escape(victim)
        t, _ = first_match(svc_lines, r"Commencing graceful shutdown", stop - 1000)
        ev["svc_graceful_start_ms"] = rel(t)
        t, _ = first_match(svc_lines, r"Graceful shutdown (complete|aborted)", stop - 1000)
        ev["svc_graceful_done_ms"] = rel(t)
        t, _ = first_match(svc_lines, r"deregister\s+status", stop - 1000)
        ev["svc_unregister_ms"] = rel(t)
        t, m = first_match(srv_lines, r"Registered instance SVC/%s with status (\w+)" % vid, stop - 1000)
        ev["srv_status_register_ms"] = rel(t)
        ev["srv_status_register_status"] = m.group(1) if m else ""
        t, _ = first_match(srv_lines, r"[Ss]tatus.*%s.*OUT_OF_SERVICE|OUT_OF_SERVICE.*%s" % (vid, vid), stop - 1000)
        ev["srv_override_ms"] = rel(t)
        t, _ = first_match(srv_lines, r"Cancelled instance SVC/%s" % vid, stop - 1000)
        ev["srv_cancel_ms"] = rel(t)
        t, _ = first_match(srv_lines, r"expired lease for SVC/%s" % vid, stop - 1000)
        ev["srv_expired_ms"] = rel(t)
        t, _ = first_match(srv_lines, r"Evicting \d+ items", stop - 1000)
        ev["srv_evict_ms"] = rel(t)

        ev["srv_start_epoch_ms"] = srv_info["start_epoch_ms"]
        ev["srv_up_epoch_ms"] = srv_info["up_epoch_ms"]
        ev["srv_first_evict_epoch_ms"] = self.server_first_evict()
        ev["srv_sup_timeouts"] = self.sup_timeouts_since(srv_info["start_epoch_ms"] - 15000)[0]
        ev["ready_wait_s"] = round(ready_wait, 1)

        # restart the victim, same id and port; wait for >= 3 s of ok answers.
        # --fresh-server (not after the last trial): the measurement window is complete here; SIGTERM the
        # server now, start the victim while the server exits, then start the new server.
        fresh = a.fresh_server and k < a.trials - 1
        if fresh:
            srv_proc = PROCS["server"]
            os.kill(srv_proc.pid, signal.SIGTERM)
            t_srv_term = now_ms()
        PROCS.pop(victim, None)
        wait_until(lambda: not port_in_use(port), 30, "port %d free" % port)
        t_restart = now_ms()
        self.start_service(victim)
        ev["restart_epoch_ms"] = t_restart
        if fresh:
            PROCS["server"] = srv_proc
            killed = self.stop_server()     # SIGTERM already sent; waits, SIGKILL after 10 s
            t_srv_exit = now_ms()
            for name in self.ids + ["caller"]:
                self.log_offs[name] = file_size(os.path.join(self.run_dir, name + ".log"))
            self.start_server()
            self.srv_restarts.append({"after_trial": k, "term_to_exit_ms": t_srv_exit - t_srv_term,
                                      "sigkill": killed, "start_to_up_ms": self.srv["up_epoch_ms"] - self.srv["start_epoch_ms"]})
            say("server restarted: exit %.1fs after SIGTERM%s, answering %.1fs after start" % (
                (t_srv_exit - t_srv_term) / 1000.0, " (SIGKILLed)" if killed else "",
                (self.srv["up_epoch_ms"] - self.srv["start_epoch_ms"]) / 1000.0))

        def back():
            self.clog.poll()
            oks = [r[0] for r in self.clog.since(t_restart) if r[1] == victim and r[2] == "ok"]
            return oks and oks[-1] - oks[0] >= 3000 and oks
        oks = wait_until(back, a.restart_timeout_s, "%s answering ok again for 3 s" % victim, step=0.25)
        ev["restart_first_ok_ms"] = oks[0] - t_restart
        ev["trial_wall_s"] = round(time.time() - t_trial0, 1)
        return row, ev, delay

    def run(self):
        a = self.a
        meta = {"strategy": a.strategy, "trials_requested": a.trials, "seed": a.seed,
                "wait_s": a.wait_s, "victim": a.victim, "instances": self.ids, "ports": self.ports,
                "server_port": a.server_port, "period_ms": a.period_ms, "quiet_s": a.quiet_s,
                "max_wait_s": a.max_wait_s, "probe_ms": a.probe_ms, "jvm_opts": self.jvm,
                "fresh_server": bool(a.fresh_server), "fresh_settle_s": a.fresh_settle_s if a.fresh_server else None,
                "java_version": subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.strip(),
                "versions": jar_versions(CALLERS[a.caller]["versions"], CALLERS[a.caller]["pom"] is not None
                                         or SERVICES[a.service]["pom"] is not None),
                "properties_file": CALLER_CONFIG["all"],
                "compressed_properties": read_props(CALLER_CONFIG["all"]),
                "run_dir": os.path.relpath(self.run_dir, self.out),
                "start": time.strftime("%Y-%m-%dT%H:%M:%S%z"), "trials": []}
        meta["caller"] = a.caller
        meta["caller_jar"] = os.path.relpath(CALLERS[a.caller]["jar"], CONF)
        meta["caller_train"] = CALLERS[a.caller]["train"]
        meta["caller_has_spring_retry"] = "spring-retry" in meta["versions"]
        meta["service"] = a.service
        meta["service_train"] = SERVICES[a.service]["train"]
        if a.caller == "ribbon":
            meta["compressed_ribbon_properties"] = read_props(COMPRESSED_RIBBON)
        t_run0 = time.time()
        rows, evs = [], []
        csv_path = os.path.join(self.out, "real-%s.csv" % a.strategy)
        ev_path = os.path.join(self.out, "real-%s-events.csv" % a.strategy)
        json_path = os.path.join(self.out, "run-%s.json" % a.strategy)

        def flush():
            for path, hdr, data in ((csv_path, HEADER, rows), (ev_path, EVENTS_HEADER, evs)):
                with open(path, "w", newline="") as f:
                    w = csv.DictWriter(f, fieldnames=hdr)
                    w.writeheader()
                    w.writerows(data)
            meta["end"] = time.strftime("%Y-%m-%dT%H:%M:%S%z")
            meta["wall_s"] = round(time.time() - t_run0, 1)
            with open(json_path, "w") as f:
                json.dump(meta, f, indent=1)
        try:
            self.start_all()
            meta["startup_wall_s"] = round(time.time() - t_run0, 1)
            for k in range(a.trials):
                row, ev, delay = self.trial(k)
                rows.append(row)
                evs.append(ev)
                meta["trials"].append({"trial": k, "victim": ev["victim"], "delay_s": round(delay, 3),
                                       "wall_s": ev["trial_wall_s"], "ready_wait_s": ev["ready_wait_s"],
                                       "srv_start_epoch_ms": ev["srv_start_epoch_ms"],
                                       "srv_first_evict_epoch_ms": ev["srv_first_evict_epoch_ms"]})
                meta["server_restarts"] = self.srv_restarts
                say("trial %d/%d %s victim=%s dead_hits=%s chosen=%s last_dead_hit_ms=%s last_chosen_ms=%s "
                    "errors=%s unresolved=%s exit=%s wall=%.1fs" % (
                        k + 1, a.trials, a.strategy, ev["victim"], row["dead_hits"], row["chosen"],
                        row["last_dead_hit_ms"], row["last_chosen_ms"], row["errors"], row["unresolved"],
                        ev["jvm_exit_ms"], ev["trial_wall_s"]))
                flush()
        except KeyboardInterrupt:
            meta["aborted"] = "interrupted"
            say("interrupted")
        except Exception as e:
            meta["aborted"] = repr(e)
            say("ABORTED: %r" % (e,))
        finally:
            kill_all()
            flush()
            say("wrote %s (%d trials), wall %.1fs" % (csv_path, len(rows), time.time() - t_run0))
        return 0 if "aborted" not in meta else 1


def build_if_needed(force=False, caller="loadbalancer", service="default"):
    """Builds the Boot 4 modules (./pom.xml) when a jar is missing, and the caller's (and the
    service's) own Maven project when it has one and its jar is missing."""
    own = CALLERS[caller]["pom"]
    own_svc = SERVICES[service]["pom"]
    boot4 = [j for m, j in JARS.items() if not (own and m == "caller") and not (own_svc and m == "service")]
    if force or not all(os.path.exists(j) for j in boot4):
        say("building jars (mvn package)")
        r = subprocess.run(["mvn", "-q", "-B", "-f", os.path.join(CONF, "pom.xml"), "package", "-DskipTests"])
        if r.returncode != 0:
            sys.exit("maven build failed")
    if own and (force or not os.path.exists(CALLERS[caller]["jar"])):
        say("building the %s caller (mvn package, %s)" % (caller, CALLERS[caller]["train"]))
        r = subprocess.run(["mvn", "-q", "-B", "-f", own, "package", "-DskipTests"])
        if r.returncode != 0:
            sys.exit("maven build of the %s caller failed" % caller)
    if own_svc and (force or not os.path.exists(SERVICES[service]["jar"])):
        say("building the %s service (mvn package, %s)" % (service, SERVICES[service]["train"]))
        r = subprocess.run(["mvn", "-q", "-B", "-f", own_svc, "package", "-DskipTests"] + SERVICES[service]["mvn"])
        if r.returncode != 0:
            sys.exit("maven build of the %s service failed" % service)


def derived_settle_s(props):
    """How long a client's TimedSupervisorTask back-off can last after a fresh server's slow first
    answers: the back-off bound times the task's interval, for the heartbeat and the fetch
    (DiscoveryClient#initScheduledTasks: heartbeat-executor-exponential-back-off-bound and
    cache-refresh-executor-exponential-back-off-bound, both 10; FACTS.md §5.2)."""
    def num(key, default):
        try:
            return float(props.get(key, default))
        except ValueError:
            return float(default)
    heartbeat = num("eureka.instance.lease-renewal-interval-in-seconds", 30)
    fetch = num("eureka.client.registry-fetch-interval-seconds", 30)
    return max(heartbeat * num("eureka.client.heartbeat-executor-exponential-back-off-bound", 10),
               fetch * num("eureka.client.cache-refresh-executor-exponential-back-off-bound", 10))


# ----------------------------------------------------------------------------- summary

def pct(vals, p):
    """Nearest-rank percentile."""
    if not vals:
        return None
    s = sorted(vals)
    import math
    return s[max(0, math.ceil(p / 100.0 * len(s)) - 1)]


def summary(paths):
    """Min/median/p90/max of every numeric column (epoch columns and 'trial' skipped)."""
    for path in paths:
        with open(path) as f:
            rows = list(csv.DictReader(f))
        if not rows:
            print("== %s: empty" % path)
            continue
        unres = sum(int(r["unresolved"]) for r in rows) if "unresolved" in rows[0] else 0
        print("== %s: %d trials%s" % (path, len(rows), ", unresolved %d" % unres if "unresolved" in rows[0] else ""))
        for col in rows[0].keys():
            if col in ("trial", "wait_ms", "unresolved") or col.endswith("epoch_ms"):
                continue
            vals = []
            for r in rows:
                try:
                    vals.append(float(r[col]))
                except (TypeError, ValueError):
                    pass
            if not vals:
                continue
            print("  %-26s n=%-3d min=%-8g median=%-8g p90=%-8g max=%-8g mean=%.1f" % (
                col, len(vals), min(vals), pct(vals, 50), pct(vals, 90), max(vals), sum(vals) / len(vals)))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("run")
    r.add_argument("--strategy", choices=STRATEGIES, required=True)
    r.add_argument("--trials", type=int, default=30)
    r.add_argument("--out", required=True)
    r.add_argument("--wait-s", type=float, default=5.0, help="service-registry/pause: seconds before SIGTERM")
    r.add_argument("--seed", type=int, default=1)
    r.add_argument("--victim", default="rotate", help="'rotate' (svc-(k mod n)) or an instance id")
    r.add_argument("--instances", type=int, default=4)
    r.add_argument("--server-port", type=int, default=8761)
    r.add_argument("--base-port", type=int, default=9100)
    r.add_argument("--period-ms", type=int, default=50)
    r.add_argument("--quiet-s", type=float, default=5.0)
    r.add_argument("--max-wait-s", type=int, default=60)
    r.add_argument("--restart-timeout-s", type=int, default=120)
    r.add_argument("--jvm-opts", default="", help="replace the default JVM flags")
    r.add_argument("--probe-ms", type=int, default=0,
                   help="caller instrumentation: log Eureka fetches and LB-cache reloads (poll period ms; 0 = off)")
    r.add_argument("--fresh-server", action="store_true",
                   help="restart the Eureka server before every trial (independent server timer phases per trial)")
    r.add_argument("--fresh-settle-s", type=float, default=None,
                   help="--fresh-server: min seconds after the new server answers (and after any client "
                        "TimedSupervisorTask time-out) before the trial's delay starts [default: the longest "
                        "back-off the properties allow, back-off bound x heartbeat or fetch interval]")
    r.add_argument("--properties", metavar="FILE",
                   help="the properties file every process reads instead of conformance/compressed.properties")
    r.add_argument("--caller", choices=sorted(CALLERS), default="loadbalancer",
                   help="loadbalancer: the Spring Cloud 2025.1.4 LoadBalancer caller (caller/); ribbon: the "
                        "Hoxton.SR12 Ribbon caller (caller-ribbon/, @LoadBalanced RestTemplate, no retry), which also "
                        "reads compressed-ribbon.properties")
    r.add_argument("--service", choices=sorted(SERVICES), default="default",
                   help="default: the 2025.1.4 / Boot 4 svc (service/); hoxton: the Hoxton.SR12 / Boot 2.3.12 svc "
                        "(service-hoxton/: immediate shutdown; /actuator/pause does nothing); hoxton-sr9: the same on "
                        "Hoxton.SR9 (/actuator/pause = context.stop())")
    r.add_argument("--rebuild", action="store_true")
    s = sub.add_parser("summary")
    s.add_argument("csv", nargs="+")
    a = ap.parse_args()
    if a.cmd == "summary":
        summary(a.csv)
        return 0
    JARS["caller"] = CALLERS[a.caller]["jar"]
    JARS["service"] = SERVICES[a.service]["jar"]
    props_file = os.path.abspath(a.properties) if a.properties else COMPRESSED
    if not os.path.isfile(props_file):
        sys.exit("--properties %s: no such file" % a.properties)
    CALLER_CONFIG["all"] = props_file
    CALLER_CONFIG["caller"] = [props_file] + CALLERS[a.caller]["config"]
    if a.fresh_settle_s is None:
        a.fresh_settle_s = derived_settle_s(read_props(props_file))
    build_if_needed(a.rebuild, a.caller, a.service)
    atexit.register(kill_all)
    signal.signal(signal.SIGTERM, _sig)
    signal.signal(signal.SIGHUP, _sig)
    return Rig(a).run()


if __name__ == "__main__":
    sys.exit(main())
