"""A preemption planner written in Python, run by the core among the policies."""

from typing import Dict, Sequence

from ._native import Take, View


class Planner:
    """A preemption planner: what to take back, from whom, by which mechanism.

    Subclass it, define ``plan`` and give an instance among a run's
    ``policies`` (with preset names or alone)::

        class YoungestFirst(pliant.Planner):
            def plan(self, view):
                ...
                return [pliant.Take(h.job, h.task, by="kill")]

        pliant.simulate("mixed", policies=["gp", YoungestFirst()])

    At every run of the resource monitor (every ``monitor_interval_s``, 3 s by
    default) the core calls ``plan`` with a ``View`` of the cluster, then has
    the mechanism carry out the takes in order. Each run plans with its own
    deep copy of the object, so state kept in ``self`` is per run, and runs in
    parallel share none. Python runs one ``plan`` at a time (the GIL); the
    policies written in Rust run alongside without it.

    An exception in ``plan`` stops that planner in every run of the call and
    the call raises ``PliantError`` with the traceback (the exception is its
    ``__cause__``); so does a take the core would refuse (a task that holds
    nothing, taken twice, taken whole when not running).

    Attributes:
        name: The policy's name in the results (default: the class's name).
        base: The preset whose other steps the policy keeps: queues, job
            order, placement, the monitor's interval, the mechanism (default
            ``"pliant"``: a short and a long queue with guarantees).
        steps: Steps of the base it replaces, as ``--compose`` takes them
            (``pliant.policies()``); default ``{"mechanism": "cheapest"}``,
            which carries out each take by its own ``by``.
    """

    base: str = "pliant"
    steps: Dict[str, str] = {"mechanism": "cheapest"}

    @property
    def name(self) -> str:
        """The policy's name: the class's, unless the class sets ``name``."""
        return type(self).__name__

    def plan(self, view: View) -> Sequence[Take]:
        """What to take back now, in the order it is to be taken.

        Args:
            view: The cluster as the core sees it now (``view.now``, µs): its
                nodes, its queues' guarantees, usage and pending demand, and
                the tasks holding resources (``view.holding(queue)``). Valid
                only during this call.

        Returns:
            ``pliant.Take`` objects, each naming a task that holds resources.
        """
        raise NotImplementedError(f"{type(self).__name__}.plan")
