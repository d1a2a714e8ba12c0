"""Planners written in Python: the core calls them at its decision points,
carries out what they return, decides as the same planner written in Rust
does, byte for byte, and ends a run whose planner raised with the traceback.

The Rust planner is examples/custom-policy's binary, `$CUSTOM_POLICY_BIN` or
the repository's `target/release/custom-policy` (`cargo build --release -p
custom-policy` makes it; the workspace's tests build it too)."""

import os
import pathlib
import subprocess
import sys

import pytest

import pliant

REPO = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "python/examples"))

from youngest_first import KILL_UNDER_US, YoungestFirst  # noqa: E402

# Every take a RecordingYoungestFirst returned, in every run: (by, the
# victim's age then). A module's list, as each run plans with a deep copy.
TAKEN = []


class RecordingYoungestFirst(YoungestFirst):
    def plan(self, view):
        takes = super().plan(view)
        ages = {(h.job, h.task): view.now - h.started for q in range(view.queue_count()) for h in view.holding(q)}
        TAKEN.extend((t.by, ages[(t.job, t.task)]) for t in takes)
        return takes


def test_python_youngest_first_decides_as_the_rust_one_byte_for_byte(tmp_path):
    binary = os.environ.get("CUSTOM_POLICY_BIN", str(REPO / "target/release/custom-policy"))
    assert os.path.exists(binary), f"no {binary}: cargo build --release -p custom-policy, or set CUSTOM_POLICY_BIN"
    rust = tmp_path / "rust"
    line = ["simulate", "--scenario", "mixed", "--seed", "1", "--policies", "youngest-first,gp,pliant"]
    subprocess.run([binary, *line, "--out", str(rust)], check=True, capture_output=True)
    r = pliant.simulate("mixed", seed=1, policies=[YoungestFirst(), "gp", "pliant"])
    assert r._jobs_csv == (rust / "jobs.csv").read_text()
    assert list(r.summary.policy) == ["youngest-first", "gp", "pliant"]
    # It was called at every monitor run, and what it took was taken.
    calls = r.planners.set_index("policy").loc["youngest-first"]
    assert calls.calls > 100 and calls.seconds > 0
    counts = r.doc["results"][0]["preemptions"]
    assert counts["kill"] > 0 and counts["immediate"] > 0


def test_youngest_first_does_not_beat_gp_and_neither_do_the_whole_takes():
    from youngest_first import against_gp

    for scenario in ["high-load", "multi-load"]:
        means = against_gp(scenario, seeds=3)
        gp = means["gp"]
        # gp's short jobs finish sooner than under any policy taking whole tasks...
        for policy in ["youngest-first", "ip", "kill"]:
            assert means[policy]["classes.short.jct.p95"] > gp["classes.short.jct.p95"], (scenario, policy)
        # ...and lose no work, where youngest first kills young attempts.
        assert gp["lost_work_core_seconds"] == 0 < means["youngest-first"]["lost_work_core_seconds"]


def test_every_take_obeys_the_python_rule_and_every_take_is_carried_out():
    TAKEN.clear()
    r = pliant.simulate("high-load", seed=2, policies=[RecordingYoungestFirst()])
    kills = [age for by, age in TAKEN if by == "kill"]
    suspensions = [age for by, age in TAKEN if by == "immediate"]
    assert len(kills) + len(suspensions) == len(TAKEN) > 0
    assert kills and all(age < KILL_UNDER_US for age in kills)
    assert suspensions and all(age >= KILL_UNDER_US for age in suspensions)
    assert r.doc["results"][0]["preemptions"] == {"immediate": len(suspensions), "kill": len(kills)}


def test_parallel_runs_of_planners_decide_as_runs_alone():
    """Several Python planners and Rust policies at once, and a sweep's points
    in parallel: each run decides as it does alone."""
    class Second(YoungestFirst):
        name = "second"

    together = pliant.simulate("high-load", policies=[YoungestFirst(), "gp", Second(), "pliant"],
                               params={"delayed_resumption": 0})
    alone = pliant.simulate("high-load", policies=[YoungestFirst()], params={"delayed_resumption": 0})
    jobs = together.jobs.set_index("policy")
    mine = alone.jobs.drop(columns="policy").reset_index(drop=True)
    assert jobs.loc["youngest-first"].reset_index(drop=True).equals(mine)
    assert jobs.loc["second"].reset_index(drop=True).equals(mine)
    s = pliant.sweep("delayed_resumption", [0, 2], scenario="high-load", seeds=2,
                     policies=[YoungestFirst(), "gp"], metrics=["classes.short.jct.mean"])
    point = s.points.set_index(["policy", "delayed_resumption", "seed"]).figure
    assert point[("youngest-first", 0, 1)] == alone.doc["results"][0]["classes"]["short"]["jct"]["mean"]
    assert s.planners.calls[0] > 2 * alone.planners.calls[0]  # four runs of it


class Raises(pliant.Planner):
    def plan(self, view):
        if view.now > 600_000_000:
            return [pliant.Take(0, 0)] if view.queue_count() > 5 else 1 / 0
        return []


class TakesAnIdleTask(pliant.Planner):
    def plan(self, view):
        return [pliant.Take(10**6, 0, by="kill")] if view.now > 600_000_000 else []


def test_an_exception_in_plan_ends_the_call_with_its_traceback():
    with pytest.raises(pliant.PliantError) as e:
        pliant.simulate("high-load", policies=["gp", Raises()])
    message = str(e.value)
    assert message.startswith("policy Raises: its plan raised at ")
    assert "ZeroDivisionError: division by zero" in message
    assert "test_planner.py" in message and "1 / 0" in message
    assert isinstance(e.value.__cause__, ZeroDivisionError)
    # The planner is free for the next call.
    with pytest.raises(pliant.PliantError, match="it holds no resources"):
        pliant.simulate("high-load", policies=[TakesAnIdleTask()])


def test_bad_planners_and_takes_are_refused():
    with pytest.raises(pliant.PliantError, match="a planner named `YoungestFirst2` is running already"):
        class YoungestFirst2(YoungestFirst):
            name = "YoungestFirst2"
        pliant.simulate("mixed", policies=[YoungestFirst2(), YoungestFirst2()])

    class NoPreemption(YoungestFirst):
        name = "no-preemption"
        steps = {"planner": "none"}
    with pytest.raises(pliant.PliantError, match="policy no-preemption: base `pliant` .* never preempts"):
        pliant.simulate("mixed", policies=[NoPreemption()])

    class BadStep(YoungestFirst):
        name = "bad-step"
        steps = {"mechanism": "teleport"}
    with pytest.raises(pliant.PliantError, match="mechanism takes kill, "):
        pliant.simulate("mixed", policies=[BadStep()])
    with pytest.raises(ValueError, match="no mechanism `teleport`"):
        pliant.Take(0, 0, by="teleport")
    with pytest.raises(TypeError, match="a policy is a preset's name or a pliant.Planner"):
        pliant.simulate("mixed", policies=["gp", 3])


def test_a_view_is_valid_only_during_its_call():
    kept = []

    class Keeps(pliant.Planner):
        def plan(self, view):
            if not kept:
                kept.append(view)
                assert view.queue_count() == 2 and view.node_count() > 0
                assert view.total().fits_in(view.total()) and not view.total().is_zero()
                with pytest.raises(IndexError, match="no queue 2: there are 2"):
                    view.holding(2)
            return []

    pliant.simulate("mixed", policies=[Keeps()])
    with pytest.raises(RuntimeError, match="valid only during the plan call"):
        kept[0].total()
