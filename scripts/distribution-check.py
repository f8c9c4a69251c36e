#!/usr/bin/env python3
# Checks that two builds of eureka-sim give the same *distributions* of trial outcomes when their
# individual trials differ. A change that re-assigns random-number streams changes every golden
# output on purpose, so byte-for-byte comparison says nothing; what must not change is the
# distribution of each outcome. This runs both builds on the same scenarios, trial count and seed
# and compares trials.csv column by column.
#
#   python3 scripts/distribution-check.py OLD_BIN NEW_BIN [--trials N] [--alpha A] [--seed S]
#       [--new-set KEY=VALUE]... SCENARIO...
#
# Defaults: --trials 2000, --alpha 0.001, --seed 7. Both builds get the same seed: their streams
# differ anyway, and a shared seed keeps a rerun reproducible. --new-set is passed (as --set) to
# the new build only; it exists to show that the check catches a real change, e.g.
# --new-set network.latency-ms=50 must fail.
#
# Per numeric column of trials.csv (except trial, seed and t_stop_ms, which are labels or inputs):
# both means, the difference of means in units of its Welch standard error, and the two-sample
# Kolmogorov-Smirnov D with its asymptotic p-value. Empty cells (never listed, still listed, no
# dead hit) are skipped per column, so n can differ between the builds; a column empty in one build
# only is a failure. Most columns are discrete with many ties, where KS is conservative: it fails
# less often than alpha says, which is the safe side here. With some 13 columns per scenario, the
# small default alpha keeps the chance of a false alarm per run around 1 %. unresolved_reason is
# text: its values are counted side by side, and a value one build has at least 5 times and the
# other never has is a failure.
#
# Exit status: 0 when everything matches, 1 when some p < alpha, a constant column differs or a
# column or reason exists on one side only, 2 when a build fails to run (its stderr is printed).
import argparse
import csv
import math
import shutil
import subprocess
import sys
import tempfile

NOT_COMPARED = {"trial", "seed", "t_stop_ms"}
REASON_COLUMN = "unresolved_reason"
# A reason seen this often in one build and never in the other is a difference, not chance.
REASON_MIN_COUNT = 5
# A column empty in one build and with this many values in the other is a difference.
EMPTY_MIN_COUNT = 5


def run_trials(binary, scenario, trials, seed, sets):
    """Runs one build on one scenario and returns trials.csv as (header, rows)."""
    out = tempfile.mkdtemp(prefix="distribution-check-")
    try:
        command = [binary, "run", scenario, "--trials", str(trials), "--seed", str(seed),
                   "--out", out]
        for s in sets:
            command += ["--set", s]
        try:
            done = subprocess.run(command, capture_output=True, text=True)
        except OSError as e:
            fail_run(command, f"could not start: {e}")
        if done.returncode != 0:
            fail_run(command, f"exit status {done.returncode}\n{done.stderr}{done.stdout}")
        try:
            with open(f"{out}/trials.csv", newline="") as f:
                reader = csv.reader(f)
                header = next(reader)
                rows = [row for row in reader if row]
        except (OSError, StopIteration) as e:
            fail_run(command, f"no readable trials.csv: {e}\n{done.stderr}")
        return header, rows
    finally:
        shutil.rmtree(out, ignore_errors=True)


def fail_run(command, message):
    print(f"error: {' '.join(command)}\n{message}", file=sys.stderr)
    sys.exit(2)


def column(header, rows, name):
    """The non-empty cells of one column."""
    i = header.index(name)
    return [row[i] for row in rows if i < len(row) and row[i] != ""]


def as_numbers(cells):
    """The cells as numbers, or None when some cell is not a number (a text column)."""
    numbers = []
    for cell in cells:
        try:
            numbers.append(int(cell))
        except ValueError:
            try:
                numbers.append(float(cell))
            except ValueError:
                return None
    return numbers


def ks_statistic(a, b):
    """Largest distance between the two empirical CDFs; tied values are stepped over together."""
    a, b = sorted(a), sorted(b)
    i = j = 0
    d = 0.0
    while i < len(a) and j < len(b):
        x = min(a[i], b[j])
        while i < len(a) and a[i] == x:
            i += 1
        while j < len(b) and b[j] == x:
            j += 1
        d = max(d, abs(i / len(a) - j / len(b)))
    return d


def ks_p_value(d, n1, n2):
    """Asymptotic p-value of D: the Kolmogorov distribution's tail at lambda."""
    ne = n1 * n2 / (n1 + n2)
    lam = (math.sqrt(ne) + 0.12 + 0.11 / math.sqrt(ne)) * d
    if lam <= 0:
        return 1.0
    if lam < 1.0:
        # The alternating series 2*sum (-1)^(k-1) exp(-2 k^2 lambda^2) needs very many terms
        # here; its Jacobi-theta twin, 1 - sqrt(2 pi)/lambda * sum exp(-(2k-1)^2 pi^2 / (8
        # lambda^2)), is the same function and converges in a few.
        s = sum(math.exp(-((2 * k - 1) ** 2) * math.pi ** 2 / (8 * lam * lam)) for k in range(1, 20))
        p = 1.0 - math.sqrt(2 * math.pi) / lam * s
    else:
        p = 2 * sum((-1) ** (k - 1) * math.exp(-2 * k * k * lam * lam) for k in range(1, 101))
    return min(1.0, max(0.0, p))


def mean_and_variance(xs):
    m = math.fsum(xs) / len(xs)
    v = math.fsum((x - m) ** 2 for x in xs) / (len(xs) - 1) if len(xs) > 1 else 0.0
    return m, v


def welch_z(a, b):
    """Difference of means (new - old) in units of its standard error."""
    ma, va = mean_and_variance(a)
    mb, vb = mean_and_variance(b)
    se = math.sqrt(va / len(a) + vb / len(b))
    if se == 0:
        return 0.0 if ma == mb else math.copysign(math.inf, mb - ma)
    return (mb - ma) / se


def number(x):
    if isinstance(x, float) and not math.isfinite(x):
        return str(x)
    if x == int(x) and abs(x) < 1e15:
        return str(int(x))
    return f"{x:.6g}" if abs(x) >= 1e6 or abs(x) < 1e-3 else f"{x:.3f}"


def p_text(p):
    return f"{p:.3g}" if p >= 1e-3 else f"{p:.2e}"


def compare_scenario(scenario, args):
    """Prints the tables of one scenario; returns the list of its failures."""
    old_header, old_rows = run_trials(args.old_bin, scenario, args.trials, args.seed, [])
    new_header, new_rows = run_trials(args.new_bin, scenario, args.trials, args.seed, args.new_set)
    failures = []
    print(f"## {scenario}\n")
    print(f"{len(old_rows)} rows old, {len(new_rows)} rows new "
          f"({args.trials} trials, seed {args.seed}"
          + (f", new build with --set {' --set '.join(args.new_set)}" if args.new_set else "")
          + ")\n")
    for name in old_header:
        if name not in new_header:
            failures.append(f"{scenario}: column {name} only in old")
    for name in new_header:
        if name not in old_header:
            failures.append(f"{scenario}: column {name} only in new")

    print("| column | n old | n new | mean old | mean new | z (means) | KS D | p |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    text_columns = []
    for name in old_header:
        if name not in new_header or name in NOT_COMPARED or name == REASON_COLUMN:
            continue
        old_cells = column(old_header, old_rows, name)
        new_cells = column(new_header, new_rows, name)
        a, b = as_numbers(old_cells), as_numbers(new_cells)
        if a is None or b is None:
            text_columns.append(name)
            continue
        if not a or not b:
            # Nothing to compare on one side: fine when both are empty, a difference when only
            # one is and the other has more than a stray value.
            flag = ""
            if max(len(a), len(b)) >= EMPTY_MIN_COUNT:
                flag = " FAIL"
                failures.append(f"{scenario}: {name} empty in one build only")
            m_old = number(math.fsum(a) / len(a)) if a else "-"
            m_new = number(math.fsum(b) / len(b)) if b else "-"
            print(f"| {name} | {len(a)} | {len(b)} | {m_old} | {m_new} | - | "
                  f"{'all empty' if not a and not b else 'empty on one side' + flag} | - |")
            continue
        m_old, m_new = math.fsum(a) / len(a), math.fsum(b) / len(b)
        if min(a) == max(a) and min(b) == max(b):
            if a[0] == b[0]:
                verdict = "constant, equal"
            else:
                verdict = "constant, DIFFERS FAIL"
                failures.append(f"{scenario}: {name} constant {number(a[0])} old, "
                                f"{number(b[0])} new")
            print(f"| {name} | {len(a)} | {len(b)} | {number(m_old)} | {number(m_new)} | - | "
                  f"{verdict} | - |")
            continue
        d = ks_statistic(a, b)
        p = ks_p_value(d, len(a), len(b))
        z = welch_z(a, b)
        flag = ""
        if p < args.alpha:
            flag = " FAIL"
            failures.append(f"{scenario}: {name} D={d:.3f} p={p_text(p)}")
        print(f"| {name} | {len(a)} | {len(b)} | {number(m_old)} | {number(m_new)} | {z:.2f} | "
              f"{d:.4f} | {p_text(p)}{flag} |")
    print()
    if text_columns:
        print(f"text columns not compared: {', '.join(text_columns)}\n")

    if REASON_COLUMN in old_header and REASON_COLUMN in new_header:
        failures += compare_reasons(scenario, old_header, old_rows, new_header, new_rows)
    return failures


def compare_reasons(scenario, old_header, old_rows, new_header, new_rows):
    """Counts of each unresolved_reason side by side; an empty cell means the trial resolved."""
    def counts(header, rows):
        i = header.index(REASON_COLUMN)
        c = {}
        for row in rows:
            reason = row[i] if i < len(row) and row[i] != "" else "(resolved)"
            c[reason] = c.get(reason, 0) + 1
        return c

    old, new = counts(old_header, old_rows), counts(new_header, new_rows)
    failures = []
    print(f"| {REASON_COLUMN} | old | new |")
    print("|---|---:|---:|")
    for reason in sorted(set(old) | set(new)):
        o, n = old.get(reason, 0), new.get(reason, 0)
        flag = ""
        one_side_only = (o == 0 and n >= REASON_MIN_COUNT) or (n == 0 and o >= REASON_MIN_COUNT)
        # "(resolved)" is no reason; when it is on one side only, the reason on the other fails.
        if one_side_only and reason != "(resolved)":
            flag = " FAIL"
            failures.append(f"{scenario}: {REASON_COLUMN} '{reason}' {o} old, {n} new")
        print(f"| {reason} | {o} | {n}{flag} |")
    print()
    return failures


def main():
    parser = argparse.ArgumentParser(
        description="Check that two eureka-sim builds give the same distributions of trial "
                    "outcomes (KS test per trials.csv column).")
    parser.add_argument("old_bin", metavar="OLD_BIN")
    parser.add_argument("new_bin", metavar="NEW_BIN")
    parser.add_argument("scenarios", metavar="SCENARIO", nargs="+")
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--alpha", type=float, default=0.001)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--new-set", metavar="KEY=VALUE", action="append", default=[],
                        help="passed as --set to the new build only (repeatable)")
    args = parser.parse_intermixed_args()
    if args.trials < 1:
        parser.error("--trials must be at least 1")

    failures = []
    for scenario in args.scenarios:
        failures += compare_scenario(scenario, args)
    if failures:
        print(f"verdict: FAIL ({len(failures)}): " + "; ".join(failures))
        sys.exit(1)
    print(f"verdict: PASS: {len(args.scenarios)} scenario(s), {args.trials} trials, "
          f"no p < {args.alpha}, no differing constant or reason")


if __name__ == "__main__":
    main()
