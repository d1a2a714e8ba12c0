"""Type hints of the native module (python/src/lib.rs)."""

from typing import Dict, List, Optional, Tuple, Union

class PliantError(Exception):
    """A run pliant refused: the command's message, `FILE:LINE: reason` for bad input."""

Outcome = Dict[str, Union[str, Dict[str, list]]]

def run_line(line: List[str]) -> Outcome:
    """Runs a `simulate` or `sweep` command line; `kind`, `json` and, for
    `simulate`, `jobs_csv`, `preemptions_csv` and `timeline` (columns)."""

def run_experiment(path: str, out: Optional[str] = None) -> Outcome:
    """Runs an experiment file as `pliant run` does."""

def scenarios() -> List[Tuple[str, str, List[str]]]:
    """The built-in scenarios: (name, about, presets compared by default)."""

def policies() -> List[Tuple[str, str]]:
    """The policy presets: (name, about)."""

def parameters() -> List[Tuple[str, str, str]]:
    """Every setting: (key, default, about)."""
