"""Server processes as the bench sees them: CPU time (utime + stime) and resident memory from /proc."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass

_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def cpu_seconds(pid: int) -> float:
    """utime + stime of every thread of ``pid`` so far, in seconds (0.0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            text = stat.read()
    except OSError:
        return 0.0
    fields = text[text.rindex(")") + 2 :].split()  # the command name may hold spaces
    return (int(fields[11]) + int(fields[12])) / _TICKS  # fields 14 and 15 of proc(5)


def rss_bytes(pid: int) -> int:
    """Resident set size of ``pid`` (0 once it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


@dataclass(frozen=True)
class CpuSample:
    seconds: dict[str, float]

    def __sub__(self, earlier: CpuSample) -> CpuSample:
        return CpuSample({name: self.seconds[name] - earlier.seconds.get(name, 0.0) for name in self.seconds})

    @property
    def total(self) -> float:
        return sum(self.seconds.values())


class Servers:
    """The named server processes of one run (``api``, ``worker``, ``redis``)."""

    def __init__(self, pids: Mapping[str, int]) -> None:
        self.pids = dict(pids)

    def cpu(self) -> CpuSample:
        return CpuSample({name: cpu_seconds(pid) for name, pid in self.pids.items()})

    def rss(self) -> dict[str, int]:
        return {name: rss_bytes(pid) for name, pid in self.pids.items()}
