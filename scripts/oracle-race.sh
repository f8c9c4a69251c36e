#!/usr/bin/env bash
# Races eureka-sim against the SimPy oracle on the same world and trial count, one core
# each, one after the other on the same core: prints both wall times and the ratio.
#
#   scripts/oracle-race.sh [TRIALS] [ORACLE_DIR]      (defaults: 200, ../shared/oracle)
#
# eureka-sim runs bench/oracle-kill9.toml (the oracle's cases/kill9_default.json, key by key) as
# a user would (`run`, outputs written); the oracle runs its README's command. Both whole
# processes are timed, pinned to core 0 with taskset where it exists (and eureka-sim to one rayon
# thread either way). Needs a release build (cargo build --release) and python3 with simpy==4.1.2.
set -euo pipefail

trials=${1:-200}
oracle_dir=${2:-../shared/oracle}
root=$(cd "$(dirname "$0")/.." && pwd)
bin=${EUREKA_SIM:-${CARGO_TARGET_DIR:-$root/target}/release/eureka-sim}

[[ -x $bin ]] || { echo "no $bin: run cargo build --release (or set EUREKA_SIM)" >&2; exit 1; }
[[ -f $oracle_dir/oracle.py ]] || { echo "oracle: skipped (no oracle.py in $oracle_dir)"; exit 0; }
command -v python3 >/dev/null || { echo "oracle: skipped (python3 not found)"; exit 0; }
python3 -c 'import simpy' 2>/dev/null || { echo "oracle: skipped (simpy not installed)"; exit 0; }

pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# Wall seconds of a command (its output kept in $out/log). The clock is bash's EPOCHREALTIME
# (bash 5), read without a process: `$(date +%s.%N)` on either side added a fork and an exec of
# date, some 2 to 4 ms here, to every measurement (a tenth of eureka-sim's run, nothing of the
# oracle's).
wall() {
    local start end
    start=${EPOCHREALTIME:-}
    [[ -n $start ]] || start=$(date +%s.%N)
    "$@" >"$out/log" 2>&1 || { cat "$out/log" >&2; return 1; }
    end=${EPOCHREALTIME:-}
    [[ -n $end ]] || end=$(date +%s.%N)
    echo "${end/,/.} - ${start/,/.}" | bc -l
}

# eureka-sim's run lasts tens of milliseconds, where one run's wall time is mostly the noise of a
# shared machine (the same command varies 2x within minutes here): the oracle runs
# ORACLE_REPEAT times (default 3) and eureka-sim REPEAT times (default 5) between and around each
# oracle run, so both medians are taken over the same stretch of time.
repeat=${REPEAT:-5}
oracle_repeat=${ORACLE_REPEAT:-3}
ours_runs=()
theirs_runs=()
race_ours() {
    ours_runs+=("$(RAYON_NUM_THREADS=1 wall "${pin[@]}" "$bin" run "$root/bench/oracle-kill9.toml" \
        --trials "$trials" --seed 1 --out "$out/eureka-sim")")
}
oracle_abs=$(cd "$oracle_dir" && pwd)
race_theirs() {
    theirs_runs+=("$(cd "$oracle_abs" && wall "${pin[@]}" python3 oracle.py \
        --case cases/kill9_default.json --seeds "0..$((trials - 1))" --jobs 1 \
        --out "$out/oracle.json")")
    oracle_events=$(grep -o '[0-9]* events;' "$out/log" | head -1 || true)
}
# The median of the numbers on stdin.
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
for ((k = 0; k < oracle_repeat; k++)); do
    for ((j = 0; j < repeat; j++)); do race_ours; done
    race_theirs
done
for ((j = 0; j < repeat; j++)); do race_ours; done
ours=$(printf '%s\n' "${ours_runs[@]}" | median)
theirs=$(printf '%s\n' "${theirs_runs[@]}" | median)

printf 'world: %s (eureka-sim: bench/oracle-kill9.toml), %s trials, %s\n' \
    "$oracle_dir/cases/kill9_default.json" "$trials" "${pin[*]:-no taskset}"
printf '  eureka-sim run (1 thread, ends at rest, outputs written):  %8.3f s  (median of %d)\n' \
    "$ours" "${#ours_runs[@]}"
printf '  SimPy oracle (--jobs 1, window mode):                      %8.3f s  (median of %d; %s)\n' \
    "$theirs" "${#theirs_runs[@]}" "${oracle_events%;}"
printf '  ratio: eureka-sim is %.1fx faster\n' "$(echo "$theirs / $ours" | bc -l)"
