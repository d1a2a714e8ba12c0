"""The calls: each builds the `pliant` command line it stands for and runs it
through the command's own code, so that Python and the command decide and
report the same (as `pliant run` does for an experiment file)."""


import os
from typing import Mapping, Optional, Sequence, Tuple, Union

import pandas as pd

from . import _native
from ._frames import Results, SweepResults
from ._planner import Planner

Path = Union[str, "os.PathLike[str]"]
Value = Union[str, int, float, bool]
Policies = Union[None, str, Planner, Sequence[Union[str, Planner]]]


def _value(v: Value) -> str:
    """A value as `--set` takes it: booleans as 1 and 0, as experiment files do."""
    if isinstance(v, bool):
        return "1" if v else "0"
    return str(v)


def _pair(v: Union[str, Tuple[float, float], Sequence[float]], sep: str) -> str:
    """`(a, b)` as `a<sep>b`; a string as it is."""
    if isinstance(v, str):
        return v
    a, b = v
    return f"{_value(a)}{sep}{_value(b)}"


def _policies(policies: Policies) -> Tuple[Optional[str], list]:
    """The ``--policies`` list, each planner by its name, and the planners."""
    if policies is None:
        return None, []
    if isinstance(policies, (str, Planner)):
        policies = [policies]
    planners = [p for p in policies if isinstance(p, Planner)]
    for p in policies:
        if not isinstance(p, (str, Planner)):
            raise TypeError(f"a policy is a preset's name or a pliant.Planner, not {p!r}")
    return ",".join(p.name if isinstance(p, Planner) else p for p in policies), planners


def _line(
    scenario: Optional[str],
    workload: Optional[Path],
    policies: Optional[str],
    params: Optional[Mapping[str, Value]],
    config: Optional[Path],
    seed: int,
    scale: float,
    nodes: Optional[int],
    window: Union[None, str, Tuple[float, float]],
    sample: Optional[float],
    node: Union[None, str, Tuple[float, float]],
    truncate: bool,
    finished_only: bool,
    strict: bool,
    skip_bad: bool,
    penalty: Optional[str],
    long_jobs: Optional[str],
    out: Optional[Path],
) -> list:
    """The flags `simulate` and `sweep` share, as the command takes them."""
    line = []
    if scenario is not None:
        line += ["--scenario", scenario]
    if workload is not None:
        line += ["--workload", os.fspath(workload)]
    if window is not None:
        line += ["--window", _pair(window, "..")]
    if node is not None:
        line += ["--node", _pair(node, ",")]
    if sample is not None:
        line += ["--sample", _value(sample)]
    if nodes is not None:
        line += ["--nodes", _value(nodes)]
    if penalty is not None:
        line += ["--penalty", penalty]
    if long_jobs is not None:
        line += ["--long-jobs", long_jobs]
    line += ["--seed", _value(seed), "--scale", _value(scale)]
    flags = (("--truncate", truncate), ("--finished-only", finished_only), ("--strict", strict), ("--skip-bad", skip_bad))
    line += [flag for flag, on in flags if on]
    if policies is not None:
        line += ["--policies", policies]
    if config is not None:
        line += ["--config", os.fspath(config)]
    for key, v in (params or {}).items():
        line += ["--set", f"{key}={_value(v)}"]
    if out is not None:
        line += ["--out", os.fspath(out)]
    return line


def _results(outcome: dict) -> Union[Results, SweepResults]:
    if outcome["kind"] == "simulate":
        return Results(
            outcome["json"], outcome["jobs_csv"], outcome["preemptions_csv"], outcome["timeline"], outcome["planners"]
        )
    return SweepResults(outcome["json"], outcome["planners"])


def simulate(
    scenario: Optional[str] = None,
    *,
    workload: Optional[Path] = None,
    policies: Policies = None,
    params: Optional[Mapping[str, Value]] = None,
    config: Optional[Path] = None,
    seed: int = 1,
    scale: float = 1.0,
    nodes: Optional[int] = None,
    window: Union[None, str, Tuple[float, float]] = None,
    sample: Optional[float] = None,
    node: Union[None, str, Tuple[float, float]] = None,
    truncate: bool = False,
    finished_only: bool = False,
    strict: bool = False,
    skip_bad: bool = False,
    penalty: Optional[str] = None,
    long_jobs: Optional[str] = None,
    slowdown: bool = False,
    barrier_idle: bool = False,
    out: Optional[Path] = None,
) -> Results:
    """Replay a scenario or workload under several policies and compare them.

    The same run as ``pliant simulate``: the policies run in parallel on the
    machine's cores, with the GIL released.

    Args:
        scenario: A built-in scenario (``pliant.scenarios()``); default ``mixed``.
        workload: Instead of a scenario: a native JSON Lines workload file, or a
            trace (Google 2011 files or directory, Alibaba, YARN SLS; detected).
        policies: Preset names (``pliant.policies()``), a list or ``"a,b"``;
            a list may also hold ``pliant.Planner`` objects (planners written
            in Python); default: the scenario's, or every preset for a workload.
        params: Settings by key, as ``--set KEY=VALUE`` (``pliant.parameters()``),
            e.g. ``{"delayed_resumption": 2}``; booleans become 1 and 0.
        config: A file of ``KEY = VALUE`` lines (``params`` wins over it).
        seed: Seed of a scenario, and of a trace's sample.
        scale: A scenario's nodes and arrival rates grow together; a trace
            shrinks (0 < scale <= 1) to that share of its machines and jobs.
        nodes: With a workload: replay on this many nodes, keeping every job.
        window: With a workload: only trace time ``(start, end)`` in seconds
            (or ``"START..END"``).
        sample: With a workload: keep this fraction of the jobs (from ``seed``).
        node: With a trace: its largest machine, ``(cores, gb)`` or ``"CORES,GB"``.
        truncate: With a trace: keep unfinished tasks with the part of their run
            shown (the default; kept for older calls).
        finished_only: With a trace: keep only complete, finished runs (drop
            runs cut by the window's ends and runs that failed, were killed or
            lost); the replay then carries less than the trace's load.
        strict: With a workload: stop at the first malformed row.
        skip_bad: With a workload: run without the jobs whose record is malformed.
        penalty: With an SLS/DSS trace: ``"step:1.5"`` or ``"sawtooth:1.5"``.
        long_jobs: Long jobs of the synthetic scenarios: spark, wordcount or terasort.
        slowdown: Also run every job alone and report slowdowns per class.
        barrier_idle: Also report core-hours Spark executors idled at stage barriers.
        out: Also write the command's outputs here (results.json, jobs.csv,
            preemptions.csv, the plots and the resolved experiment.toml).

    Returns:
        ``Results``: ``.json`` (the command's JSON, byte for byte), ``.jobs``,
        ``.classes``, ``.summary``, ``.preemptions`` and ``.timeline`` DataFrames.

    Raises:
        PliantError: what the command would print after ``error:``, e.g.
            ``FILE:LINE: reason`` for a malformed workload file.
    """
    names, planners = _policies(policies)
    line = ["simulate"] + _line(
        scenario, workload, names, params, config, seed, scale, nodes, window, sample, node,
        truncate, finished_only, strict, skip_bad, penalty, long_jobs, out,
    )
    line += [flag for flag, on in (("--slowdown", slowdown), ("--barrier-idle", barrier_idle)) if on]
    return _results(_native.run_line(line, planners))


def sweep(
    vary: str,
    values: Sequence[Value],
    *,
    scenario: Optional[str] = None,
    workload: Optional[Path] = None,
    policies: Policies = None,
    seeds: int = 1,
    metrics: Optional[Sequence[str]] = None,
    params: Optional[Mapping[str, Value]] = None,
    config: Optional[Path] = None,
    seed: int = 1,
    scale: float = 1.0,
    nodes: Optional[int] = None,
    window: Union[None, str, Tuple[float, float]] = None,
    sample: Optional[float] = None,
    node: Union[None, str, Tuple[float, float]] = None,
    truncate: bool = False,
    finished_only: bool = False,
    strict: bool = False,
    skip_bad: bool = False,
    penalty: Optional[str] = None,
    long_jobs: Optional[str] = None,
    out: Optional[Path] = None,
) -> SweepResults:
    """Vary one setting over values and compare policies on chosen metrics.

    The same run as ``pliant sweep --vary VARY=V1,V2,...``: every (seed,
    value, policy) point in parallel with the GIL released, each metric
    averaged over the seeds.

    Args:
        vary: The setting to vary (a key of ``pliant.parameters()``).
        values: Its values.
        seeds: Average each point over this many seeds, from ``seed`` upwards.
        metrics: Dotted paths into a policy's JSON result, e.g.
            ``"classes.short.jct.p95"`` or ``"waste_core_seconds"``; default:
            short queueing delay and p95 JCT, long p90 JCT and CoV.
        scenario, workload, policies, params, config, seed, scale, nodes,
        window, sample, node, truncate, finished_only, strict, skip_bad, penalty,
        long_jobs: As for ``simulate``.
        out: Also write sweep.json, a plot per metric and experiment.toml here.

    Returns:
        ``SweepResults``: ``.json`` (the command's ``sweep.json``), ``.means``
        and ``.points`` DataFrames.

    Raises:
        PliantError: the command's message.
    """
    if isinstance(values, (str, bytes)):
        raise TypeError("values is a list of values, e.g. [0, 2, 4]")
    line = ["sweep", "--vary", f"{vary}={','.join(_value(v) for v in values)}", "--seeds", _value(seeds)]
    if metrics is not None:
        line += ["--metric", metrics if isinstance(metrics, str) else ",".join(metrics)]
    names, planners = _policies(policies)
    line += _line(
        scenario, workload, names, params, config, seed, scale, nodes, window, sample, node,
        truncate, finished_only, strict, skip_bad, penalty, long_jobs, out,
    )
    return _results(_native.run_line(line, planners))


def run(experiment: Path, *, out: Optional[Path] = None) -> Union[Results, SweepResults]:
    """Run an experiment file (TOML), as ``pliant run FILE`` does.

    Args:
        experiment: The file: workload, cluster, policies, parameters, an
            optional sweep and outputs; an ``experiment.toml`` of a results
            directory reruns that run.
        out: Write the outputs here instead of the file's ``[outputs] dir``.

    Returns:
        ``Results`` for a simulation, ``SweepResults`` for a file with a ``[sweep]``.

    Raises:
        PliantError: ``FILE:LINE: reason`` for a bad experiment file.
    """
    return _results(_native.run_experiment(os.fspath(experiment), None if out is None else os.fspath(out)))


def scenarios() -> pd.DataFrame:
    """The built-in scenarios: ``name``, ``about``, ``policies`` (compared by default)."""
    return pd.DataFrame(_native.scenarios(), columns=["name", "about", "policies"])


def policies() -> pd.DataFrame:
    """The policy presets: ``name`` and ``about``."""
    return pd.DataFrame(_native.policies(), columns=["name", "about"])


def parameters() -> pd.DataFrame:
    """Every setting (``params`` keys): ``key``, ``default`` and ``about``."""
    return pd.DataFrame(_native.parameters(), columns=["key", "default", "about"])
