"""Processes and the grid they run on.

Every execution names its process explicitly: `ProcessId(replica_id, partition_id)`. A plain Grid
runs one process, whose collectives see only itself; engine/run/grid.py's ScheduledGrid runs R x P
processes and meets them at collectives.
"""
from __future__ import annotations

from collections import defaultdict, deque
from dataclasses import dataclass, field
from typing import Any, Callable


@dataclass(frozen=True)
class ProcessId:
    replica_id: int = 0
    partition_id: int = 0

    def __str__(self) -> str:
        return f"(replica {self.replica_id}, partition {self.partition_id})"


@dataclass
class Grid:
    """The processes of a run and what they share: channels and the host's in/outfeed queues."""

    num_replicas: int = 1
    num_partitions: int = 1
    infeed: deque = field(default_factory=deque)
    outfeed: list = field(default_factory=list)
    channels: dict = field(default_factory=lambda: defaultdict(deque))
    _shared: dict = field(default_factory=dict, repr=False)
    _groups: dict = field(default_factory=dict, repr=False)

    def groups_of(self, key: Any, compute: Callable[[], Any]) -> Any:
        """Process groups of a collective: the same for every process, so worked out once."""
        try:
            return self._groups[key]
        except KeyError:
            value = self._groups[key] = compute()
            return value

    @property
    def size(self) -> int:
        return self.num_replicas * self.num_partitions

    def processes(self) -> list[ProcessId]:
        return [ProcessId(r, p) for r in range(self.num_replicas) for p in range(self.num_partitions)]

    def device_id(self, process: ProcessId) -> int:
        return process.replica_id * self.num_partitions + process.partition_id

    def process_of(self, device_id: int) -> ProcessId:
        return ProcessId(device_id // self.num_partitions, device_id % self.num_partitions)

    def shared(self, contributions: list, compute: Callable[[], Any]) -> Any:
        """`compute()` done once per group: every member of a group receives the very same
        contributions list from the exchange, so the first member's result serves them all."""
        if len(contributions) < 2:
            return compute()
        hit = self._shared.get(id(contributions))
        if hit is not None and hit[0] is contributions:
            return hit[1]
        value = compute()
        self._shared[id(contributions)] = (contributions, value)
        while len(self._shared) > 2 * self.size + 8:  # groups whose members have all read theirs
            del self._shared[next(iter(self._shared))]
        return value

    def wait_for_channel(self, process: ProcessId, channel: int, op: Any = None) -> bool:
        """Whether a value is (or, on a scheduled grid, will be) there to receive."""
        return bool(self.channels.get(channel))

    def exchange(self, process: ProcessId, groups: list[list[ProcessId]], value: Any, op: Any = None) -> list[Any]:
        """Each member's contribution, in group order, for the group holding `process`.

        A 1x1 grid has one member whose contribution is its own; ScheduledGrid (grid.py) meets the
        processes of bigger groups.
        """
        for group in groups:
            if process in group:
                if len(group) != 1 or group[0] != process:
                    members = ", ".join(str(p) for p in group)
                    raise ValueError(f"process group [{members}] needs a grid of {self.size} > 1 processes")
                return [value]
        raise ValueError(f"process {process} is in no process group")
