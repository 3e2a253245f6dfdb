#!/usr/bin/env python3
"""One command for a fresh machine with only Python: make the virtualenv, install, run.

    python3 deploy/local.py serve [tablestream serve flags]   # the service on its embedded Redis
    python3 deploy/local.py test                              # the whole test suite, in parallel
    python3 deploy/local.py test --quick                      # the fast pure and fakeredis tests
    python3 deploy/local.py test PATH... [pytest flags]       # some tests, in one process
    python3 deploy/local.py demo  [tablestream demo flags]    # bots play through the real API

The virtualenv lives in .venv next to pyproject.toml and is reinstalled only when pyproject.toml
changes (its hash is kept in .venv/.installed). ``serve`` and ``demo`` install the project's runtime
dependencies only; ``test`` adds the test tools (the ``dev`` extra): ``EXTRAS``.

``test`` without paths runs the suite on parallel pytest-xdist workers (``WORKERS``; each starts its
own servers and browser on free ports); the quick tier leaves out every test marked ``redis``,
``browser``, ``slow`` or ``thorough`` (docs/development.md). Given paths, it runs them in this one process, as
pytest would; ``-n N`` still asks for workers.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import venv
from collections.abc import Mapping
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
VENV = ROOT / ".venv"
BIN = VENV / "bin"
STAMP = VENV / ".installed"


EXTRAS = {"serve": "", "demo": "", "test": "dev"}
"""What each command installs besides the project's runtime dependencies (``[project]
dependencies`` in pyproject.toml): ``serve`` and ``demo`` nothing, ``test`` the test tools
(``[project.optional-dependencies] dev``)."""


def install_target(command: str) -> str:
    """pip's requirement for ``command``: the project in editable mode, with its extras if any."""
    extras = EXTRAS[command]
    return f"{ROOT}[{extras}]" if extras else str(ROOT)


def ensure_installed(command: str) -> None:
    """Install what ``command`` needs, unless ``.venv`` has it for this pyproject.toml: the stamp
    keeps the file's hash and the extras installed, and the runtime is part of every install, so
    ``serve`` after ``test`` installs nothing, and ``test`` after ``serve`` adds the test tools."""
    wanted = hashlib.sha256((ROOT / "pyproject.toml").read_bytes()).hexdigest()
    extras = EXTRAS[command]
    stamp = STAMP.read_text().split() if STAMP.exists() else []
    if stamp[:1] == [wanted] and (BIN / "tablestream").exists() and (not extras or extras in stamp[1:]):
        return
    if not (BIN / "python").exists():
        print("creating .venv ...", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    what = "tablestream and its test tools" if extras else "tablestream (its runtime dependencies only)"
    print(f"installing {what} into .venv ...", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "install", "--disable-pip-version-check", "-q"]
    subprocess.run([*pip, "--upgrade", "pip"], check=True)
    subprocess.run([*pip, "-e", install_target(command)], check=True)
    kept = stamp[1:] if stamp[:1] == [wanted] else []
    STAMP.write_text(" ".join([wanted, *sorted({*kept, *([extras] if extras else [])})]))


WORKERS = 4
"""Parallel workers for the whole suite: on 2 cores a test waits on a server, a browser or a
subprocess much of its time, so twice as many workers as cores keep both cores busy."""
QUICK = "not redis and not browser and not slow and not thorough"
QUICK_WORKERS = os.cpu_count() or 1
"""The quick tier's workers: its tests wait on nothing but the CPU, so one per core (more would
only add each worker's start-up: 4 on 2 cores took 109 s where 2 took 83 s)."""


def test_arguments(rest: list[str]) -> list[str]:
    """pytest's arguments for ``test [--quick] [pytest flags]``."""
    quick = "--quick" in rest
    rest = [arg for arg in rest if arg != "--quick"]
    chosen = [arg for arg in rest if not arg.startswith("-") and Path(arg.split("::")[0]).exists()]
    parallel = "-n" not in rest and not any(arg.startswith("-n") and arg[2:].isdigit() for arg in rest)
    args = ["-m", QUICK] if quick else []
    if parallel and not chosen:
        args += ["-n", str(QUICK_WORKERS if quick else WORKERS), "--dist", "loadgroup"]
    return [*args, *rest]


def test_environment(environ: Mapping[str, str]) -> dict[str, str]:
    """The suite's environment: the caller's, with bytecode caches on. With PYTHONDONTWRITEBYTECODE
    set (as on these machines) every xdist worker compiled and assert-rewrote every test module again
    (15 s of each worker's collection, 5 s cached), and every server a test starts compiled the
    service again."""
    return {name: value for name, value in environ.items() if name != "PYTHONDONTWRITEBYTECODE"}


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"serve", "test", "demo"}:
        print(__doc__)
        return 2
    ensure_installed(argv[0])
    command, rest = argv[0], argv[1:]
    os.chdir(ROOT)
    if command == "test":
        args = [str(BIN / "python"), "-m", "pytest", *test_arguments(rest)]
        os.execve(args[0], args, test_environment(os.environ))
    else:
        args = [str(BIN / "tablestream"), command, *rest]
    os.execv(args[0], args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
