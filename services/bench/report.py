"""The bench's output: each row's figure beside its baseline from the same run, the ratio and the
target of issue 11, then a summary of the ratios."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from services.bench.procs import CpuSample


@dataclass(frozen=True)
class Row:
    name: str
    ours: str
    baseline: str = ""
    ratio: float | None = None  # how the target reads it (see ``target``)
    target: str = ""
    met: bool | None = None
    notes: list[str] = field(default_factory=list)

    def render(self) -> str:
        lines = [f"== {self.name}", f"   tablestream : {self.ours}"]
        if self.baseline:
            lines.append(f"   baseline    : {self.baseline}")
        if self.ratio is not None and self.target:
            lines.append(f"   ratio       : {self.ratio:.2f}x   target {self.target}   {verdict(self.met)}")
        elif self.ratio is not None:
            lines.append(f"   ratio       : {self.ratio:.2f}x")
        elif self.target:
            lines.append(f"   target      : {self.target}   {verdict(self.met)}")
        lines += [f"   {note}" for note in self.notes]
        return "\n".join(lines)

    def summary(self) -> str:
        ratio = "" if self.ratio is None else f"{self.ratio:.2f}x"
        return f"  {self.name:<46} {ratio:>9}  {self.target:<34} {verdict(self.met)}"


def verdict(met: bool | None) -> str:
    return {True: "[met]", False: "[not met]", None: ""}[met]


def skipped(name: str, why: str) -> Row:
    return Row(name, f"skipped: {why}")


def micros(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds * 1e6:,.0f} us"


def millis(seconds: float) -> str:
    return "n/a" if math.isnan(seconds) else f"{seconds * 1e3:,.1f} ms"


def cpu_split(delta: CpuSample, count: int) -> str:
    """Server CPU per request per process, e.g. ``api 90 us + worker 0 us + redis 5 us = 95 us``."""
    if count <= 0:
        return "no requests"
    parts = " + ".join(f"{name} {micros(spent / count)}" for name, spent in delta.seconds.items())
    return f"CPU/req {parts} = {micros(delta.total / count)}"


def mib(count: float) -> str:
    return f"{count / 2**20:,.1f} MiB"


def kib(count: float) -> str:
    return f"{count / 2**10:,.2f} KiB"
