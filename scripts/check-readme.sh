#!/usr/bin/env bash
# Runs README.md's commands as a newcomer would, so that the README cannot
# drift from what works: every ```sh block of its sections Install, Two
# commands and the two tours, in order, in one shell (installing into a
# temporary root), then checks what the operator tour says it shows; and
# the Python section's install (into a new virtual environment in the
# temporary directory instead of the one it names) and its ```python example.
#
#   scripts/check-readme.sh [--no-tests]   # --no-tests: all but `cargo test` (CI runs that itself)
#
# The README's `cargo test` runs as a newcomer runs it (PLIANT_LIVE_TESTS
# unset), watched: the check fails if it moves a process into another cgroup
# or namespace, makes a cgroup or turns on swap (named after one of its
# processes, as the tests name theirs), or leaves a process behind.
# The operator tour runs as written, as root with no `sudo` stand-in; without
# root it is SKIPPED loudly, and fails under PLIANT_LIVE_TESTS=1. Its manager
# is stopped by its pid however the tour ends, and the check fails if a
# process or cgroup of the tour is left afterwards.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$(pwd)
no_tests=0
[ "${1:-}" = --no-tests ] && no_tests=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export CARGO_INSTALL_ROOT="$work/root" CARGO_TARGET_DIR="$repo/target" PATH="$work/root/bin:$PATH"

# The sh blocks (or the blocks of language $2) of one README section (from its `## ` heading to the next).
blocks() {
    awk -v want="$1" -v lang="${2:-sh}" '
        /^## / { in_section = ($0 == "## " want) }
        in_section && $0 == "```" lang { in_block = 1; next }
        in_block && /^```$/ { in_block = 0; next }
        in_section && in_block { print }
    ' README.md
}

script="$work/readme.sh"
{
    echo 'set -euo pipefail'
    echo "cd '$repo'"
    blocks "Install"
    blocks "Two commands" | grep -v '^cargo test'
    blocks "A 5-minute tour for researchers"
} >"$script"
for section in "Install" "Two commands" "A 5-minute tour for researchers" "From Python" "A 5-minute tour for operators"; do
    [ -n "$(blocks "$section")" ] || { echo "error: README.md: no sh block under '## $section'" >&2; exit 2; }
done
# Directories the tour writes outside the repository (`--out /tmp/...`) are
# removed afterwards, unless they were there before it.
created=()
for out in $(grep -o -- '--out /tmp/[^ ]*' "$script" | cut -d' ' -f2 | sort -u); do
    [ -e "$out" ] || created+=("$out")
done
trap 'rm -rf "$work" "${created[@]}"' EXIT
echo "== README: install, two commands, researchers' tour"
bash "$script"

if [ $no_tests = 0 ]; then
    tests=$(blocks "Two commands" | grep '^cargo test')
    [ -n "$tests" ] || { echo "error: README.md: no cargo test under '## Two commands'" >&2; exit 2; }
    echo "== README: $tests (watched: it must touch no cgroup, swap or namespace)"
    scripts/watch-tests.sh env -u PLIANT_LIVE_TESTS $tests
fi

venv=$(blocks "From Python" | grep -o 'python3 -m venv [^ ]*' | cut -d' ' -f4)
[ -n "$venv" ] || { echo "error: README.md: no 'python3 -m venv DIR' under '## From Python'" >&2; exit 2; }
[ -n "$(blocks "From Python" python)" ] || { echo "error: README.md: no python block under '## From Python'" >&2; exit 2; }
{
    echo 'set -euo pipefail'
    echo "cd '$repo'"
    blocks "From Python" | sed "s|$venv|$work/venv|g"
    echo "python - <<'README_EXAMPLE'"
    blocks "From Python" python
    echo 'README_EXAMPLE'
} >"$work/python.sh"
echo "== README: the Python package, installed in a new virtual environment, and its example"
bash "$work/python.sh"

if [ "$(id -u)" != 0 ]; then
    reason="the operators' tour needs root (live mode makes cgroups)"
    [ "${PLIANT_LIVE_TESTS:-}" = 1 ] && { echo "error: $reason and PLIANT_LIVE_TESTS=1" >&2; exit 1; }
    echo "SKIPPED: $reason"
    exit 0
fi
echo "== README: operators' tour (in $work/op)"
mkdir -p "$work/op"
# The tour's manager runs as root without --state-dir: its state goes to
# /var/lib/pliant, which must hold no cluster yet (the tour expects its
# first jobs to be 0 and 1), and which is removed afterwards.
state=/var/lib/pliant
if [ -e "$state/journal.sqlite" ]; then
    echo "error: $state holds a cluster already: the operators' tour needs a machine without one" >&2
    exit 1
fi
[ -e "$state" ] || trap 'rm -rf "$work" "${created[@]}" "$state"' EXIT
{
    echo 'set -euo pipefail'
    echo "cd '$work/op'"
    # The manager (the tour's background job) is stopped by its pid, and
    # waited for, however this script ends.
    echo 'manager='
    echo 'stop_manager() { [ -z "$manager" ] || { kill -TERM "$manager" 2>/dev/null; wait "$manager"; }; }'
    echo 'trap stop_manager EXIT'
    # The tour's blocks run as pasted: they must wait for the manager themselves.
    blocks "A 5-minute tour for operators" | awk '{ print } /pliant.* local .*&$/ { print "manager=$!" }'
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
[ $seen = 1 ] || { echo "error: the long job was not preempted and restarted as the README says" >&2; exit 1; }
for _ in $(seq 50); do [ "$(pliant logs 1)" = "hello from a short job" ] && break; sleep 0.2; done
[ "$(pliant logs 1)" = "hello from a short job" ] || { echo "error: pliant logs 1 does not say what the README shows" >&2; exit 1; }
EOF
    # The top cgroup of the running long task: checked gone afterwards.
    echo "tour_cgroups >'$work/op-cgroups'"
    echo "[ -s '$work/op-cgroups' ] || { echo 'error: no task of the tour found running' >&2; exit 1; }"
    # As the README says: SIGTERM, and the manager stops its tasks and removes its cgroups.
    echo 'kill -TERM "$manager"; wait "$manager"; manager='
} >"$work/operators.sh"
# The top cgroups of the tour's running tasks (they run in its state directory).
tour_cgroups() {
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/cwd" 2>/dev/null)" in "$state/"*) cut -d: -f3 "$p/cgroup" 2>/dev/null ;; esac
    done | grep -o '^/pliant-local-[0-9a-f]*' | sort -u
}
# Processes started in the tour's directory, with their command lines.
tour_processes() {
    for p in /proc/[0-9]*; do
        case "$(readlink "$p/cwd" 2>/dev/null)" in "$work/op" | "$work/op/"* | "$state/"*) echo "${p#/proc/} $(tr '\0' ' ' <"$p/cmdline" 2>/dev/null)" ;; esac
    done
}
export work state
export -f tour_cgroups
bash "$work/operators.sh"
left=$(tour_processes)
if [ -n "$left" ]; then
    echo "error: the operators' tour left processes running (stopped now):" >&2
    echo "$left" >&2
    pids=$(echo "$left" | cut -d' ' -f1)
    # SIGTERM first: a manager then removes its cgroups.
    for pid in $pids; do kill -TERM "$pid" 2>/dev/null || true; done
    for _ in $(seq 50); do [ -z "$(tour_processes)" ] && break; sleep 0.2; done
    for pid in $pids; do kill -KILL "$pid" 2>/dev/null || true; done
    exit 1
fi
while read -r cgroup; do
    for dir in /sys/fs/cgroup"$cgroup" /sys/fs/cgroup/*"$cgroup"; do
        [ ! -d "$dir" ] || { echo "error: the operators' tour left its cgroup $dir" >&2; exit 1; }
    done
done <"$work/op-cgroups"
echo "== README: every command ran as written"
