"""Youngest first, written in Python: the planner and the mechanism rule of
examples/custom-policy (Rust), line for line on the same View, so that both
decide the same. The rule, a mechanism plugin in Rust, is here the take's
`by`, which the mechanism `cheapest` carries out.

A queue under its guarantee with tasks waiting takes back what they ask (up
to its guarantee, less what is free) from the queues over theirs, the
youngest running attempts first; a victim whose attempt started less than a
minute ago is killed (it loses little work), an older one is suspended to
its footprint and resumes on its node later.

Against gp (`python youngest_first.py`: means of seeds 1-3 of three
scenarios), it does not win: gp's short jobs finish sooner and lose no work.
Taking whole tasks is no faster for the short jobs here than gp's shrinking
step by step, as the built-in `ip` (suspend whole) and `kill` show too."""

import pandas as pd

import pliant

KILL_UNDER_US = 60_000_000


class YoungestFirst(pliant.Planner):
    name = "youngest-first"

    def plan(self, view):
        free = view.total().saturating_sub(view.allocated())
        takes = []
        for starved in range(view.queue_count()):
            room = view.queue_guaranteed(starved).saturating_sub(view.queue_used(starved))
            need = view.pending_demand(starved).min(room).saturating_sub(free)
            if need.is_zero():
                continue
            # Every running task of a queue over its guarantee, youngest first.
            over = [
                q for q in range(view.queue_count())
                if q != starved and not view.queue_used(q).fits_in(view.queue_guaranteed(q))
            ]
            victims = [h for q in over for h in view.holding(q) if h.state == "running"]
            victims.sort(key=lambda h: (h.started, h.job, h.task), reverse=True)
            for victim in victims:
                if need.is_zero():
                    break
                young = view.now - victim.started < KILL_UNDER_US
                by = "kill" if young or not view.node_can(victim.node, "immediate") else "immediate"
                takes.append(pliant.Take(victim.job, victim.task, by=by))
                need = need.saturating_sub(victim.allocated)
        return takes


METRICS = ["classes.short.jct.mean", "classes.short.jct.p95", "classes.long.jct.mean", "lost_work_core_seconds"]


def against_gp(scenario, seeds=3, others=("gp", "ip", "kill")):
    """Youngest first and `others` on `scenario`, each metric's mean over
    seeds 1 to `seeds`: a table of metric by policy."""
    policies = [YoungestFirst(), *others]
    runs = [pliant.simulate(scenario, seed=seed, policies=policies) for seed in range(1, seeds + 1)]
    return pd.concat(r.summary for r in runs).groupby("policy", sort=False)[METRICS].mean().T


if __name__ == "__main__":
    for scenario in ["mixed", "high-load", "multi-load"]:
        print(f"{scenario}, means of seeds 1-3:")
        print(against_gp(scenario).round(1), end="\n\n")
