#!/usr/bin/env bash
# How one trial's cost grows with the fleet and the simulated time: runs
# bench/fleet-10k-3peers-24h.toml (40 apps, 20 gateways, three peers, the whole time simulated)
# with 25, 75 and 250 instances per app (1 000, 3 000 and 10 000 instances), over one hour and
# one day, one trial each, and prints wall time, user time and peak memory (`/usr/bin/time -v`).
#
#   scripts/scale-table.sh [HOURS...]      (default: 1 24)
#
# Needs a release build (cargo build --release). Timing lives here, never in tests.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
bin=${EUREKA_SIM:-${CARGO_TARGET_DIR:-$root/target}/release/eureka-sim}
[[ -x $bin ]] || { echo "no $bin: run cargo build --release (or set EUREKA_SIM)" >&2; exit 1; }
hours=("$@")
[[ ${#hours[@]} -gt 0 ]] || hours=(1 24)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

printf '| instances | simulated | wall | user | peak memory |\n|---:|---:|---:|---:|---:|\n'
for per_app in 25 75 250; do
    for h in "${hours[@]}"; do
        /usr/bin/time -v "$bin" run "$root/bench/fleet-10k-3peers-24h.toml" \
            --set "app[*].instances=$per_app" --set "simulation.duration-s=$((h * 3600))" \
            --out "$out/run" >/dev/null 2>"$out/time" || { cat "$out/time" >&2; exit 1; }
        wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out/time")
        user=$(sed -n 's/.*User time (seconds): //p' "$out/time")
        peak=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/time")
        printf '| %d | %d h | %s | %s s | %d MB |\n' "$((per_app * 40))" "$h" "$wall" "$user" \
            "$((peak / 1024))"
    done
done
