"""pliant from Python against the `pliant` command: the same runs give the same
bytes, the DataFrames hold the JSON's figures, errors carry the command's
messages, and a run does not hold the GIL.

The command is `$PLIANT_BIN`, or the repository's `target/release/pliant`
(`cargo build --release` makes it)."""

import json
import os
import pathlib
import re
import subprocess
import threading
import time

import pandas as pd
import pytest

import pliant

REPO = pathlib.Path(__file__).resolve().parents[2]
SAMPLE = REPO / "crates/trace/tests/fixtures/google2011-sample"


def cli(*args, cwd=None):
    """Runs the `pliant` command; its standard output."""
    binary = os.environ.get("PLIANT_BIN", str(REPO / "target/release/pliant"))
    assert os.path.exists(binary), f"no pliant command at {binary}: cargo build --release, or set PLIANT_BIN"
    done = subprocess.run([binary, "--quiet", *args], capture_output=True, text=True, cwd=cwd)
    assert done.returncode == 0, done.stderr
    return done.stdout


WALL_CLOCK = re.compile(r'("(?:wall_seconds|events_per_second)": )[-0-9.e+]+')


def without_wall_clock(text):
    """The JSON with its two wall-clock figures blanked, the rest byte for byte."""
    blanked, n = WALL_CLOCK.subn(r"\1-", text)
    return blanked, n


def assert_same_outputs(cli_dir, py_dir, results):
    """The command's files and Python's equal: results.json but for its
    wall-clock fields, every other file byte for byte but the plots, whose
    titles hold nothing that differs either."""
    ours, n = without_wall_clock(results.json)
    theirs, m = without_wall_clock((cli_dir / "results.json").read_text())
    assert n == m == 2 * len(results.doc["results"])
    assert ours == theirs
    assert (py_dir / "results.json").read_text() == results.json
    for name in ["jobs.csv", "preemptions.csv", "jct_cdf.svg", "cpu_timeline.svg", "experiment.toml"]:
        assert (py_dir / name).read_bytes() == (cli_dir / name).read_bytes(), name
    assert (cli_dir / "jobs.csv").read_text() == results._jobs_csv
    assert (cli_dir / "preemptions.csv").read_text() == results._preemptions_csv


def test_a_scenario_run_gives_the_commands_bytes(tmp_path):
    cli("simulate", "--scenario", "high-load", "--policies", "kill,gp,pliant", "--set", "delayed_resumption=2",
        "--out", str(tmp_path / "cli"))
    r = pliant.simulate("high-load", policies=["kill", "gp", "pliant"], params={"delayed_resumption": 2},
                        out=tmp_path / "py")
    assert_same_outputs(tmp_path / "cli", tmp_path / "py", r)
    # pliant chose per victim: its choices are rows, with the alternatives' estimates.
    assert len(r.preemptions) > 0
    assert set(r.preemptions.policy) == {"pliant"}
    offered = {c[: -len("_cost_core_s")] for c in r.preemptions.columns if c.endswith("_cost_core_s")}
    assert "kill" in offered and set(r.preemptions.chosen) <= offered
    # The chosen mechanism's estimate is the least of those offered to the victim.
    costs = r.preemptions[[f"{m}_cost_core_s" for m in sorted(offered)]]
    chosen = r.preemptions.apply(lambda row: row[f"{row.chosen}_cost_core_s"], axis=1)
    assert (chosen <= costs.min(axis=1) + 1e-9).all()


def test_a_trace_run_gives_the_commands_bytes(tmp_path):
    flags = ["--workload", str(SAMPLE), "--nodes", "4", "--window", "600..1200", "--sample", "0.5", "--seed", "3"]
    cli("simulate", *flags, "--policies", "fifo,kill", "--out", str(tmp_path / "cli"))
    r = pliant.simulate(workload=SAMPLE, nodes=4, window=(600, 1200), sample=0.5, seed=3, policies="fifo,kill",
                        out=tmp_path / "py")
    assert_same_outputs(tmp_path / "cli", tmp_path / "py", r)
    assert r.doc["seed"] == 3 and len(r.jobs) > 0


def test_finished_only_runs_as_the_command(tmp_path):
    flags = ["--workload", str(SAMPLE), "--nodes", "4", "--finished-only"]
    cli("simulate", *flags, "--policies", "fifo,kill", "--out", str(tmp_path / "cli"))
    r = pliant.simulate(workload=SAMPLE, nodes=4, finished_only=True, policies="fifo,kill", out=tmp_path / "py")
    assert_same_outputs(tmp_path / "cli", tmp_path / "py", r)
    whole = pliant.simulate(workload=SAMPLE, nodes=4, policies="fifo")
    assert 0 < r.jobs.job.nunique() < whole.jobs.job.nunique()


def test_a_sweep_gives_the_commands_json(tmp_path):
    line = ["--scenario", "two-job", "--vary", "ssd_mb_s=60,240", "--policies", "priority-kill,checkpoint-ssd",
            "--seeds", "2", "--metric", "classes.free.jct.mean,waste_core_seconds"]
    theirs = cli("sweep", *line, "--format", "json")
    s = pliant.sweep("ssd_mb_s", [60, 240], scenario="two-job", policies=["priority-kill", "checkpoint-ssd"],
                     seeds=2, metrics=["classes.free.jct.mean", "waste_core_seconds"])
    assert s.json + "\n" == theirs
    assert len(s.points) == 2 * 2 * 2 * 2
    means = s.means.set_index(["metric", "policy", "ssd_mb_s"])["mean"]
    # A faster SSD dumps the preempted job sooner: checkpointing's JCT falls, killing's does not move.
    means = means.sort_index()
    ckpt = means.loc[("classes.free.jct.mean", "checkpoint-ssd")]
    kill = means.loc[("classes.free.jct.mean", "priority-kill")]
    assert ckpt[240] < ckpt[60]
    assert kill[240] == kill[60]


def test_an_experiment_file_runs_as_pliant_run(tmp_path):
    exp = tmp_path / "two-job.toml"
    exp.write_text('policies = ["priority", "checkpoint-nvm"]\n[workload]\nscenario = "two-job"\n')
    cli("run", str(exp), "--out", str(tmp_path / "cli"))
    r = pliant.run(exp, out=tmp_path / "py")
    assert isinstance(r, pliant.Results)
    assert_same_outputs(tmp_path / "cli", tmp_path / "py", r)


def test_the_frames_hold_the_jsons_figures():
    r = pliant.simulate("two-job", policies=["priority-kill", "checkpoint-ssd"])
    doc = r.doc["results"]
    summary = r.summary.set_index("policy")
    for result in doc:
        row = summary.loc[result["policy"]]
        assert row["classes.free.jct.mean"] == result["classes"]["free"]["jct"]["mean"]
        assert row["waste_core_seconds"] == result["waste_core_seconds"]
    classes = r.classes.set_index(["policy", "class"])
    assert classes.loc[("checkpoint-ssd", "free"), "jct.p95"] == doc[1]["classes"]["free"]["jct"]["p95"]
    # Per job: two jobs per policy; the free job's JCT is the class's mean (it is alone in its class).
    jobs = r.jobs.set_index(["policy", "class"])
    assert len(r.jobs) == 4
    free = r.jobs[(r.jobs.policy == "checkpoint-ssd") & (r.jobs.priority < 2)]
    assert free.jct_s.iloc[0] == pytest.approx(doc[1]["classes"]["free"]["jct"]["mean"], rel=1e-12)
    assert jobs.index.nlevels == 2
    # The timeline: per policy, time ascending, shares in [0, 1].
    t = r.timeline
    assert list(t.columns) == ["policy", "time_s", "cpu", "mem"]
    assert set(t.policy) == {"priority-kill", "checkpoint-ssd"}
    for _, one in t.groupby("policy"):
        assert one.time_s.is_monotonic_increasing
    assert t.cpu.between(0, 1).all() and t.cpu.max() > 0


def test_a_bad_workload_file_is_an_error_with_its_line(tmp_path):
    bad = tmp_path / "bad.jsonl"
    bad.write_text('{"cluster":{"nodes":[{"count":1,"cpu":4,"mem_mb":1000}]}}\n{"id": "a", "submit": "soon"}\n')
    with pytest.raises(pliant.PliantError) as e:
        pliant.simulate(workload=bad, policies="fifo")
    assert str(e.value).startswith(f"{bad}:2: ")
    # The same words as the command's.
    done = subprocess.run(
        [os.environ.get("PLIANT_BIN", str(REPO / "target/release/pliant")), "simulate", "--workload", str(bad),
         "--policies", "fifo"], capture_output=True, text=True)
    assert done.returncode == 2
    assert done.stderr.strip() == f"error: {e.value}"


def test_bad_names_and_files_are_errors():
    with pytest.raises(pliant.PliantError, match="unknown policy `nope`"):
        pliant.simulate("two-job", policies="nope")
    with pytest.raises(pliant.PliantError, match="unknown scenario `nope`"):
        pliant.simulate("nope")
    with pytest.raises(pliant.PliantError, match="unknown parameter `nope`"):
        pliant.sweep("nope", [1, 2], scenario="two-job")


def test_a_bad_experiment_file_names_its_line(tmp_path):
    exp = tmp_path / "bad.toml"
    exp.write_text('[workload]\nscenario = "two-job"\n\n[outputs]\nformat = "yaml"\n')
    with pytest.raises(pliant.PliantError) as e:
        pliant.run(exp)
    assert str(e.value) == f"{exp}:5: format must be `table` or `json`, got `yaml`"


def test_help_answers():
    assert "Replay a scenario or workload under several policies" in pliant.simulate.__doc__
    for call in [pliant.simulate, pliant.sweep, pliant.run]:
        assert "Raises:" in call.__doc__ and "PliantError" in call.__doc__
    assert {"gp", "pliant", "kill"} <= set(pliant.policies().name)
    assert "high-load" in set(pliant.scenarios().name)
    assert "delayed_resumption" in set(pliant.parameters().key)
    assert "At every run of the resource monitor" in pliant.Planner.__doc__
    for method in ["total", "holding", "pending_demand", "node_can"]:
        assert getattr(pliant.View, method).__doc__, method
    assert "taken ``by`` a mechanism" in pliant.Take.__doc__


def test_a_run_releases_the_gil():
    """While a simulation runs in another thread, this one keeps running Python."""
    done = threading.Event()
    ticks = 0

    def simulate():
        # Runs of about half a second each on an idle machine, until 0.3 s
        # have passed, so that the loop below has time to tell.
        while time.perf_counter() - start < 0.3:
            pliant.simulate("high-load", policies=["gp"], scale=40)
        done.set()

    start = time.perf_counter()
    worker = threading.Thread(target=simulate)
    worker.start()
    while not done.is_set():
        ticks += 1
    worker.join()
    took = time.perf_counter() - start
    # Held, the GIL would let this loop run only in the interpreter's switch
    # intervals around each call (5 ms each): a few thousand ticks.
    assert took >= 0.3
    assert ticks > 200_000 * took


def test_the_notebook_is_kept_without_outputs():
    """docs/papers.ipynb is kept as its code alone; CI runs it (jupyter execute)."""
    nb = json.loads((REPO / "docs/papers.ipynb").read_text())
    code = [c for c in nb["cells"] if c["cell_type"] == "code"]
    assert len(code) >= 5
    assert all(c["outputs"] == [] and c["execution_count"] is None for c in code)
