#!/usr/bin/env bash
# Runs README.md's commands as a newcomer would, so that the README cannot
# drift from what works: every ```sh block of its sections Install, Two
# commands and the two tours, in order, in one shell (installing into a
# temporary root), then checks what the operator tour says it shows.
#
#   scripts/check-readme.sh [--no-tests]   # --no-tests: all but `cargo test` (CI runs that itself)
#
# The operator tour needs root (live mode makes cgroups); without it that
# tour is SKIPPED loudly, and fails under PLIANT_REQUIRE_LIVE=1.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
no_tests=0
[ "${1:-}" = --no-tests ] && no_tests=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_INSTALL_ROOT="$work/root" CARGO_TARGET_DIR="$repo/target" PATH="$work/root/bin:$PATH"

# The sh blocks of one README section (from its `## ` heading to the next).
blocks() {
    awk -v want="$1" '
        /^## / { in_section = ($0 == "## " want) }
        in_section && /^```sh$/ { in_block = 1; next }
        in_block && /^```$/ { in_block = 0; next }
        in_section && in_block { print }
    ' README.md
}

script="$work/readme.sh"
{
    echo 'set -euo pipefail'
    # As root without sudo (a container), `sudo X` is X.
    echo 'if ! command -v sudo >/dev/null && [ "$(id -u)" = 0 ]; then sudo() { exec "$@"; }; fi'  # exec: `kill %1` then stops the manager itself
    echo "cd '$repo'"
    blocks "Install"
    if [ $no_tests = 1 ]; then
        blocks "Two commands" | grep -v '^cargo test'
    else
        blocks "Two commands"
    fi
    blocks "A 5-minute tour for researchers"
} >"$script"
for section in "Install" "Two commands" "A 5-minute tour for researchers" "A 5-minute tour for operators"; do
    [ -n "$(blocks "$section")" ] || { echo "error: README.md: no sh block under '## $section'" >&2; exit 2; }
done
echo "== README: install, two commands, researchers' tour"
bash "$script"

if [ "$(id -u)" != 0 ]; then
    reason="the operators' tour needs root (live mode makes cgroups)"
    [ "${PLIANT_REQUIRE_LIVE:-}" = 1 ] && { echo "error: $reason and PLIANT_REQUIRE_LIVE=1" >&2; exit 1; }
    echo "SKIPPED: $reason"
    exit 0
fi
echo "== README: operators' tour (in $work/op)"
mkdir -p "$work/op"
{
    echo 'set -euo pipefail'
    echo 'if ! command -v sudo >/dev/null && [ "$(id -u)" = 0 ]; then sudo() { exec "$@"; }; fi'  # exec: `kill %1` then stops the manager itself
    echo "cd '$work/op'"
    # The manager must be up before `cat pliant-state/token`.
    blocks "A 5-minute tour for operators" | awk '{ print } /pliant.* local .*&$/ { print "for _ in $(seq 50); do [ -s pliant-state/token ] && break; sleep 0.2; done" }'
    # What the tour says happens within a monitor period: the long job's task
    # is killed once and runs again, the short job prints its line.
    cat <<'EOF'
seen=0
for _ in $(seq 100); do
    if pliant status 0 | awk '$1 == 0 && $2 == "running" && $4 == 2 && $8 == "{\"kill\":1}" { ok = 1 } END { exit !ok }'; then
        seen=1; break
    fi
    sleep 0.2
done
pliant status 0
[ $seen = 1 ] || { echo "error: the long job was not preempted and restarted as the README says" >&2; kill %1; wait; exit 1; }
for _ in $(seq 50); do [ "$(pliant logs 1)" = "hello from a short job" ] && break; sleep 0.2; done
[ "$(pliant logs 1)" = "hello from a short job" ] || { echo "error: pliant logs 1 does not say what the README shows" >&2; kill %1; wait; exit 1; }
kill %1
wait
EOF
} >"$work/operators.sh"
bash "$work/operators.sh"
echo "== README: every command ran as written"
