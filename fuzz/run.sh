#!/usr/bin/env bash
# Runs one cargo-fuzz target for N minutes with its seeds and the dictionary:
#   fuzz/run.sh TARGET [MINUTES] [extra libFuzzer flags...]
# TARGET: scenario_toml, set_override, spring_import or short_run (README.md here). Needs the
# nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz`). The corpus grows in
# fuzz/corpus/TARGET (not committed); a crash, timeout or out-of-memory input lands in
# fuzz/artifacts/TARGET/ and stops the run with a non-zero exit.
set -euo pipefail
cd "$(dirname "$0")"

target=${1:?usage: fuzz/run.sh TARGET [MINUTES] [libFuzzer flags...]}
minutes=${2:-10}
shift $(( $# < 2 ? $# : 2 ))

# Seeds: the bundled scenarios (read recursively: their Spring files too), and the hand-written
# inputs of seeds/TARGET (edge values, duplicate keys, non-UTF-8, long strings).
case "$target" in
    scenario_toml | short_run) seeds=(seeds/scenario_toml ../scenarios) ;;
    set_override) seeds=(seeds/set_override) ;;
    spring_import) seeds=(seeds/spring_import ../scenarios/spring) ;;
    *) echo "unknown target $target (scenario_toml, set_override, spring_import, short_run)" >&2; exit 2 ;;
esac
mkdir -p "corpus/$target"

# No sanitizer: the crate has no unsafe code, and without ASan a run makes about twice the
# executions. Debug assertions and overflow checks stay on (cargo-fuzz's default), so an
# arithmetic overflow is a crash. stdin is closed: a fuzzed `spring-config = "/dev/stdin"`
# must not wait for a terminal.
exec nice cargo +nightly fuzz run --sanitizer none "$target" "corpus/$target" "${seeds[@]}" -- \
    -dict=scenario.dict \
    -max_total_time=$((minutes * 60)) \
    -rss_limit_mb=4096 \
    -timeout=10 \
    -print_final_stats=1 \
    "$@" </dev/null
