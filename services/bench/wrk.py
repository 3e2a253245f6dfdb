"""The C load generator: ``wrk`` (Debian: ``apt-get install -y wrk``) for requests that need no state."""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

_UNITS = {"us": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0}
_DURATION = re.compile(r"([\d.]+)(us|ms|s|m)")


def available() -> bool:
    return shutil.which("wrk") is not None


@dataclass(frozen=True)
class WrkResult:
    requests: int
    seconds: float
    p50: float
    p99: float
    errors: int  # non-2xx/3xx answers and socket errors

    @property
    def rate(self) -> float:
        return self.requests / self.seconds if self.seconds else 0.0


def _duration(text: str) -> float:
    match = _DURATION.fullmatch(text)
    if match is None:
        raise ValueError(f"wrk printed an unexpected duration {text!r}")
    return float(match.group(1)) * _UNITS[match.group(2)]


def parse(output: str) -> WrkResult:
    """The figures of ``wrk --latency`` output."""
    percentiles = dict(re.findall(r"^\s+(50|99)%\s+(\S+)\s*$", output, re.MULTILINE))
    done = re.search(r"(\d+) requests in ([\d.]+\w+),", output)
    if done is None or "50" not in percentiles or "99" not in percentiles:
        raise ValueError(f"unexpected wrk output:\n{output}")
    errors = sum(int(n) for n in re.findall(r"Non-2xx or 3xx responses: (\d+)", output))
    if socket := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", output):
        errors += sum(int(n) for n in socket.groups())
    return WrkResult(
        int(done.group(1)),
        _duration(done.group(2)),
        _duration(percentiles["50"]),
        _duration(percentiles["99"]),
        errors,
    )


def rotation_script(requests: Sequence[tuple[str, str | None]]) -> str:
    """A wrk Lua script sending GETs to ``(path, bearer token)`` pairs in turn."""
    lines = ["local reqs = {}"]
    for index, (path, token) in enumerate(requests, start=1):
        headers = f'{{["Authorization"] = "Bearer {token}"}}' if token else "{}"
        lines.append(f'reqs[{index}] = wrk.format("GET", "{path}", {headers})')
    lines += [
        "local i = 0",
        "request = function()",
        "  i = i % #reqs + 1",
        "  return reqs[i]",
        "end",
    ]
    return "\n".join(lines) + "\n"


def run(
    base: str,
    path: str,
    seconds: float,
    connections: int = 64,
    threads: int = 2,
    rotation: Sequence[tuple[str, str | None]] | None = None,
) -> WrkResult:
    """``wrk -t{threads} -c{connections} -d{seconds}s --latency base+path`` (or the rotation)."""
    with tempfile.TemporaryDirectory(prefix="tablestream-wrk-") as tmp:
        command = ["wrk", f"-t{threads}", f"-c{connections}", f"-d{max(1, round(seconds))}s", "--latency"]
        if rotation:
            script = Path(tmp) / "rotation.lua"
            script.write_text(rotation_script(rotation), encoding="utf-8")
            command += ["-s", str(script)]
        done = subprocess.run([*command, base + path], capture_output=True, text=True, check=True)
    return parse(done.stdout)
