"""pliant from Python: run its simulator, get pandas DataFrames.

pliant compares cluster-scheduling policies that preempt without losing
work (shrink, freeze, swap out, checkpoint) with those that kill. Each call
here is the `pliant` command's own run: the same options, the same
decisions, the same JSON, with the policies run in parallel on the
machine's cores while Python waits (the GIL is released)::

    import pliant
    r = pliant.simulate("high-load", policies=["fifo", "kill", "gp"])
    r.summary[["policy", "classes.short.jct.p95", "waste_core_seconds"]]
    r.jobs.groupby(["policy", "class"]).jct_s.median()
    pliant.sweep("delayed_resumption", [0, 2, 4], scenario="high-load", policies=["ip", "gp"]).means

`simulate`, `sweep` and `run` (an experiment file) raise `PliantError` with
the command's message, `FILE:LINE: reason` for bad input.

A preemption planner may be written in Python: a `Planner` subclass whose
`plan(view)` returns `Take`s, given among the policies.
"""

from ._frames import Results, SweepResults
from ._native import Holding, PliantError, Resources, Take, View
from ._planner import Planner
from ._run import parameters, policies, run, scenarios, simulate, sweep

__all__ = [
    "Holding",
    "PliantError",
    "Planner",
    "Resources",
    "Take",
    "View",
    "Results",
    "SweepResults",
    "parameters",
    "policies",
    "run",
    "scenarios",
    "simulate",
    "sweep",
]
