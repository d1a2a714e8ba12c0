#!/usr/bin/env bash
# Records every preset's decisions on every scenario (seeds 1-3) and compares two records
# byte for byte. A refactor or a speed-up of the core or the simulator must leave them equal.
#
#   scripts/same-decisions.sh record DIR [PLIANT_BIN]   # default bin: target/release/pliant
#   scripts/same-decisions.sh compare DIR_BEFORE DIR_AFTER     # runs only in DIR_AFTER (new presets) are listed, not failed
#   scripts/same-decisions.sh check REV                 # records REV (a git revision, built in a
#                                                      # temporary worktree) and the working tree, compares
#
# Each (scenario, preset, seed) is run alone with `simulate --format json` and `--out`; the record
# keeps the JSON (wall-clock fields `sim.wall_seconds` and `sim.events_per_second` removed),
# `jobs.csv`, and the exit code and stderr of a run (a refusal is a decision too; the line
# naming the files `--out` got is left out).
# google-day runs at --scale 0.1 (the full day is a benchmark, not a check).
set -euo pipefail
cd "$(dirname "$0")/.."

scenarios=(mixed high-load low-load multi-load google-like google-day two-job reservation yarn-me yarn-me-exp)
seeds=(1 2 3)

scale_of() { [ "$1" = google-day ] && echo 0.1 || echo 1; }

record() {
    local dir=$1 bin=${2:-target/release/pliant}
    [ -x "$bin" ] || { echo "error: $bin not found: build it with cargo build --release" >&2; exit 2; }
    mkdir -p "$dir"
    local presets
    presets=$("$bin" policies | awk '/^presets:/{f=1;next} /^$/{f=0} f{print $1}')
    local total=0
    # Each run's --out goes in the record's own directory, so that a record
    # cut short leaves nothing behind elsewhere.
    local out="$dir/.out"
    for scenario in "${scenarios[@]}"; do
        for preset in $presets; do
            for seed in "${seeds[@]}"; do
                local run="$dir/$scenario.$preset.$seed"
                rm -rf "$out"
                local code=0
                "$bin" simulate --scenario "$scenario" --policies "$preset" --seed "$seed" \
                    --scale "$(scale_of "$scenario")" --format json --out "$out" \
                    >"$run.json" 2>"$run.stderr" || code=$?
                echo "$code" >"$run.exit"
                # The line naming what --out holds names the record's own directory: not a decision.
                sed -i "\|^wrote $out: |d" "$run.stderr"
                python3 - "$run.json" <<'PY'
import json, sys
path = sys.argv[1]
text = open(path).read()
if text.strip():
    doc = json.loads(text)
    for result in doc.get("results", []):
        result.get("sim", {}).pop("wall_seconds", None)
        result.get("sim", {}).pop("events_per_second", None)
    open(path, "w").write(json.dumps(doc, indent=1, sort_keys=True) + "\n")
PY
                [ -f "$out/jobs.csv" ] && cp "$out/jobs.csv" "$run.jobs.csv"
                rm -rf "$out"
                total=$((total + 1))
            done
        done
        echo "recorded $scenario" >&2
    done
    rm -rf "$out"
    echo "$total runs recorded in $dir" >&2
}

compare() {
    # Runs only in the second record (a preset added since the first) are listed as new, not as
    # a difference; every run of the first must be in the second, byte for byte.
    local all new differ
    all=$(diff -r -q "$1" "$2" || true)
    new=$(echo "$all" | sed -n "s|^Only in ${2%/}: \(.*\)\.exit$|\1|p")
    differ=$(echo "$all" | grep -v "^Only in ${2%/}: " | grep . || true)
    if [ -n "$differ" ]; then
        echo "$differ" >&2
        echo "DIFFERENT decisions (diff -r $1 $2 shows where)" >&2
        exit 1
    fi
    echo "same decisions: $(ls "$1" | grep -c '\.exit$') runs byte-identical ($1 vs $2)"
    [ -z "$new" ] || echo "new runs (only in $2): $(echo "$new" | wc -l): $(echo "$new" | tr '\n' ' ')"
}

check() {
    local rev=$1 tmp
    tmp=$(mktemp -d)
    git worktree add --detach "$tmp/tree" "$rev" >/dev/null
    # Expanded now: the trap runs after this function's locals are gone.
    trap "git worktree remove --force '$tmp/tree'; rm -rf '$tmp'" EXIT
    (cd "$tmp/tree" && CARGO_TARGET_DIR="${BASE_TARGET_DIR:-$tmp/target}" cargo build --release -q -p pliant)
    cargo build --release -q -p pliant
    record "$tmp/before" "${BASE_TARGET_DIR:-$tmp/target}/release/pliant"
    record "$tmp/after" target/release/pliant
    compare "$tmp/before" "$tmp/after"
}

case "${1:-}" in
    record) shift; record "$@" ;;
    compare) shift; compare "$@" ;;
    check) shift; check "$@" ;;
    *) sed -n '2,10p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
esac
