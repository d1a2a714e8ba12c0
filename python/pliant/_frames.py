"""Results as DataFrames, made from the texts the command writes (so every
column is a column of the command's JSON or CSV, under the same name)."""

from __future__ import annotations

import io
import json as _json
from functools import cached_property

import pandas as pd


def planners_frame(columns: dict) -> pd.DataFrame:
    """One row per planner written in Python: its ``policy``, its plan
    ``calls`` (over every run of the call), the wall-clock ``seconds`` they
    took (the GIL's acquisition, the view, ``plan`` and the takes' checks)
    and ``us_per_call``."""
    frame = pd.DataFrame(columns, columns=["policy", "calls", "seconds"])
    frame["us_per_call"] = frame["seconds"] * 1e6 / frame["calls"].where(frame["calls"] > 0)
    return frame


class Results:
    """A simulation's results: one policy after another on one workload.

    Attributes:
        json: The command's JSON document (``results.json``), byte for byte.
        doc: The same, parsed.
    """

    def __init__(self, json: str, jobs_csv: str, preemptions_csv: str, timeline: dict, planners: dict):
        self.json = json
        self.doc = _json.loads(json)
        self._jobs_csv = jobs_csv
        self._preemptions_csv = preemptions_csv
        self._timeline = timeline
        self._planners = planners

    def __repr__(self) -> str:
        names = ", ".join(r["policy"] for r in self.doc["results"])
        return f"<pliant.Results {self.doc['scenario']} (seed {self.doc['seed']}, scale {self.doc['scale']}): {names}>"

    @cached_property
    def jobs(self) -> pd.DataFrame:
        """One row per job per policy: ``jobs.csv`` (times in seconds; empty where a job never started or ended)."""
        return pd.read_csv(io.StringIO(self._jobs_csv), dtype={"job": str})

    @cached_property
    def classes(self) -> pd.DataFrame:
        """One row per policy and class (``short``, ``long``, and the priority
        levels ``free``, ``middle``, ``production``): the JSON's ``classes``,
        flattened with dots (``jct.p95``, ``queue_delay.mean``)."""
        rows = [
            {"policy": r["policy"], "class": name, **summary}
            for r in self.doc["results"]
            for name, summary in r["classes"].items()
        ]
        return pd.json_normalize(rows)

    @cached_property
    def summary(self) -> pd.DataFrame:
        """One row per policy: every figure of its JSON result, flattened with
        dots (``classes.short.jct.p95``, ``utilization.cpu_mean``,
        ``preemptions.kill``, ``waste_core_seconds``) — the names ``sweep``'s
        metrics take."""
        return pd.json_normalize(self.doc["results"])

    @cached_property
    def preemptions(self) -> pd.DataFrame:
        """One row per victim taken by a policy that chooses per victim
        (``pliant``): ``preemptions.csv`` — the mechanism ``chosen``, its
        estimate, and every mechanism's estimated ``*_cost_core_s`` and
        ``*_free_after_s`` (empty where one was not open to that victim)."""
        return pd.read_csv(io.StringIO(self._preemptions_csv))

    @cached_property
    def timeline(self) -> pd.DataFrame:
        """The utilisation timeline: ``policy``, ``time_s``, ``cpu`` (in use by
        progressing tasks over total) and ``mem`` (allocated over total)."""
        return pd.DataFrame(self._timeline)

    @cached_property
    def planners(self) -> pd.DataFrame:
        """The planners written in Python: ``planners_frame``'s columns."""
        return planners_frame(self._planners)


class SweepResults:
    """A sweep's results: each metric, per policy, at each value, per seed.

    Attributes:
        json: The command's ``sweep.json``, byte for byte.
        doc: The same, parsed.
    """

    def __init__(self, json: str, planners: dict):
        self.json = json
        self.doc = _json.loads(json)
        self._planners = planners

    def __repr__(self) -> str:
        d = self.doc
        return f"<pliant.SweepResults {d['scenario']}: {d['key']} over {d['values']}, seeds {d['seeds']}>"

    @cached_property
    def points(self) -> pd.DataFrame:
        """One row per metric, policy, value and seed: the ``figure`` measured
        (NaN where nothing was, e.g. no job of the class finished)."""
        d = self.doc
        rows = [
            (m["metric"], s["policy"], value, seed, figure)
            for m in d["metrics"]
            for s in m["series"]
            for value, per_seed in zip(d["values"], s["per_seed"])
            for seed, figure in zip(d["seeds"], per_seed)
        ]
        frame = pd.DataFrame(rows, columns=["metric", "policy", d["key"], "seed", "figure"])
        frame["figure"] = frame["figure"].astype(float)
        return frame

    @cached_property
    def means(self) -> pd.DataFrame:
        """One row per metric, policy and value: the ``mean`` over the seeds, as the command reports it."""
        d = self.doc
        rows = [
            (m["metric"], s["policy"], value, mean)
            for m in d["metrics"]
            for s in m["series"]
            for value, mean in zip(d["values"], s["mean"])
        ]
        frame = pd.DataFrame(rows, columns=["metric", "policy", d["key"], "mean"])
        frame["mean"] = frame["mean"].astype(float)
        return frame

    @cached_property
    def planners(self) -> pd.DataFrame:
        """The planners written in Python, over every point: see ``Results.planners``."""
        return planners_frame(self._planners)
