"""What a planner written in Python costs, on the built-in `mixed` scenario
(seed 1): per plan call, for a planner that takes nothing (the binding
alone: the GIL, the view, the call) and for youngest first; and a whole run
of youngest first in Python against the same planner in Rust
(examples/custom-policy's binary, given as the first argument).

    python python/examples/planner_cost.py target/release/custom-policy [REPEATS]
"""

import json
import statistics
import subprocess
import sys

import pliant
from youngest_first import YoungestFirst


class TakesNothing(pliant.Planner):
    name = "takes-nothing"

    def plan(self, view):
        return []


def python_run(planner):
    """(µs per plan call, the run's wall-clock ms) of one run alone."""
    r = pliant.simulate("mixed", seed=1, policies=[planner])
    return r.planners.us_per_call[0], r.doc["results"][0]["sim"]["wall_seconds"] * 1e3


def rust_run(binary):
    """The Rust youngest first's run's wall-clock ms (the example's own `pliant simulate`)."""
    line = ["simulate", "--scenario", "mixed", "--seed", "1", "--policies", "youngest-first", "--format", "json"]
    doc = json.loads(subprocess.run([binary, *line], check=True, capture_output=True, text=True).stdout)
    return doc["results"][0]["sim"]["wall_seconds"] * 1e3


if __name__ == "__main__":
    binary, repeats = sys.argv[1], int(sys.argv[2]) if len(sys.argv) > 2 else 20
    nothing = [python_run(TakesNothing()) for _ in range(repeats)]
    youngest = [python_run(YoungestFirst()) for _ in range(repeats)]
    rust = [rust_run(binary) for _ in range(repeats)]
    median = statistics.median
    print(f"medians of {repeats} runs of mixed, seed 1:")
    print(f"  takes-nothing (Python): {median(c for c, _ in nothing):.1f} us per plan call")
    print(f"  youngest-first (Python): {median(c for c, _ in youngest):.1f} us per plan call")
    py, rs = median(w for _, w in youngest), median(rust)
    print(f"  youngest-first run: {py:.1f} ms in Python, {rs:.1f} ms in Rust: {py / rs:.2f}x")
