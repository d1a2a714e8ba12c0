"""Type hints of the native module (python/src/lib.rs)."""

from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

class PliantError(Exception):
    """A run pliant refused: the command's message, `FILE:LINE: reason` for bad input."""

Outcome = Dict[str, Union[str, Dict[str, list]]]

def run_line(line: List[str], planners: Sequence[Any] = ...) -> Outcome:
    """Runs a `simulate` or `sweep` command line with the `pliant.Planner`
    objects `planners` among its policies; `kind`, `json`, `planners` (their
    plan calls, as columns) and, for `simulate`, `jobs_csv`,
    `preemptions_csv` and `timeline` (columns)."""

def run_experiment(path: str, out: Optional[str] = None) -> Outcome:
    """Runs an experiment file as `pliant run` does."""

def scenarios() -> List[Tuple[str, str, List[str]]]:
    """The built-in scenarios: (name, about, presets compared by default)."""

def policies() -> List[Tuple[str, str]]:
    """The policy presets: (name, about)."""

def parameters() -> List[Tuple[str, str, str]]:
    """Every setting: (key, default, about)."""

class Resources:
    """A <CPU, memory> vector: `cpu_milli` (1000 = one core) and `mem_mb`."""
    def __init__(self, cpu_milli: int, mem_mb: int) -> None: ...
    @property
    def cpu_milli(self) -> int: ...
    @property
    def mem_mb(self) -> int: ...
    def is_zero(self) -> bool: ...
    def fits_in(self, other: Resources) -> bool: ...
    def strictly_less(self, other: Resources) -> bool: ...
    def saturating_sub(self, other: Resources) -> Resources: ...
    def min(self, other: Resources) -> Resources: ...
    def __add__(self, other: Resources) -> Resources: ...

class Holding:
    """A task that holds resources."""
    job: int
    task: int
    state: str
    node: int
    allocated: Resources
    started: int
    ran: int

class Take:
    """One victim, taken `by` a mechanism (None: the policy's), shrunk to `shrink_to` (None: all it holds)."""
    def __init__(self, job: int, task: int, by: Optional[str] = None, shrink_to: Optional[Resources] = None) -> None: ...
    job: int
    task: int
    by: Optional[str]
    shrink_to: Optional[Resources]

class View:
    """What a planner reads, at `now` (µs); valid only during its `plan` call."""
    now: int
    def node_count(self) -> int: ...
    def node_free(self, i: int) -> Resources: ...
    def node_capacity(self, i: int) -> Resources: ...
    def node_can(self, i: int, mechanism: str) -> bool: ...
    def total(self) -> Resources: ...
    def allocated(self) -> Resources: ...
    def reclaiming_mb(self) -> int: ...
    def queue_count(self) -> int: ...
    def queue_guaranteed(self, q: int) -> Resources: ...
    def queue_used(self, q: int) -> Resources: ...
    def pending_demand(self, q: int) -> Resources: ...
    def holding(self, q: int) -> List[Holding]: ...
