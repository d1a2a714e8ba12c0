#!/usr/bin/env bash
# Runs a command (a test run) and watches everything it starts, four times a
# second: it fails if one of its processes is in another cgroup or namespace
# than the command itself, if a cgroup or a swap area named after one of its
# processes appears (the tests name theirs `…-PID-…`), or if any of it is
# left when the command ends. Exits with the command's status otherwise.
#
#   scripts/watch-tests.sh cargo test --workspace --release
set -uo pipefail
[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARG]..." >&2; exit 2; }

report=$(mktemp)
pids=$(mktemp)
trap 'rm -f "$report" "$pids"' EXIT

# The pids of the run: `$1` and its descendants, and every process that
# carries the run's mark in its environment (an orphan does too).
members() {
    {
        ps -e -o pid=,ppid= | awk -v root="$1" '
            { parent[$1] = $2 }
            END {
                for (p in parent) {
                    q = p
                    while (q in parent && q != root && q > 1) q = parent[q]
                    if (q == root) print p
                }
            }'
        grep -l -a -F "$mark" /proc/[0-9]*/environ 2>/dev/null | cut -d/ -f3
    } | sort -u
}

# What a process is in: its cgroups and its namespaces, one line.
placement() {
    {
        cat "/proc/$1/cgroup" 2>/dev/null
        for ns in cgroup ipc mnt net pid uts user; do readlink "/proc/$1/ns/$ns" 2>/dev/null; done
    } | tr '\n' ' '
}

# Cgroups and swap areas named after one of the processes seen (`-PID-`, a line each in $pids).
named_after() {
    {
        find /sys/fs/cgroup -mindepth 1 -maxdepth 3 -type d -name 'pliant-*' 2>/dev/null
        awk 'NR > 1 { print "swap " $1 }' /proc/swaps
    } | grep -F -f "$pids" || true
}

# When process $1 started (clock ticks since boot): a pid is the same process while it is the same.
started() {
    awk '{ sub(/.*\) /, ""); print $20 }' "/proc/$1/stat" 2>/dev/null
}

mark="PLIANT_WATCHED_RUN=$$-$RANDOM"
env "$mark" "$@" &
runner=$!
reference=$(placement $$)
declare -A seen=()
while kill -0 "$runner" 2>/dev/null; do
    for pid in $(members "$runner"); do
        if [ -z "${seen[$pid]:-}" ]; then
            seen[$pid]=$(started "$pid")
            echo "-$pid-" >>"$pids"
        fi
        here=$(placement "$pid")
        # Read twice, alive after: a process that ended while read is not misread.
        if [ "$here" != "$reference" ] && [ "$(placement "$pid")" = "$here" ] && [ -d "/proc/$pid" ]; then
            echo "process $pid ($(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline")) is in another cgroup or namespace: $here" >>"$report"
        fi
    done
    [ ! -s "$pids" ] || named_after | sed 's/^/made while running: /' >>"$report"
    sleep 0.25
done
wait "$runner"
status=$?
if [ -s "$pids" ]; then
    named_after | sed 's/^/left behind: /' >>"$report"
    for pid in "${!seen[@]}"; do
        if [ -n "${seen[$pid]}" ] && [ "$(started "$pid")" = "${seen[$pid]}" ]; then
            echo "left behind: process $pid ($(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline"))" >>"$report"
        fi
    done
    for pid in $(members "$runner"); do
        echo "left behind: process $pid ($(tr '\0' ' ' 2>/dev/null <"/proc/$pid/cmdline"))" >>"$report"
    done
fi
if [ -s "$report" ]; then
    echo "error: the test run touched the machine:" >&2
    sort -u "$report" >&2
    exit 1
fi
echo "watched $((${#seen[@]})) processes of the test run: no cgroup, swap area or namespace of theirs, none left"
exit "$status"
