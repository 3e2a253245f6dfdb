"""Installing boardgame.io for its peer rows (``services.bench.bgio_peer``): Node's dependencies
installed once per lock file (``npm ci``) into a cache outside the repo
(``$XDG_CACHE_HOME/tablestream/bgio/<hash>``, else ``~/.cache/...``); the scripts run from the repo
with ``NODE_PATH`` pointing there. Without node or npm, or when the install fails, the sentence
saying why, which the rows print as they are skipped.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

PROJECT = Path(__file__).with_name("bgio")
LOCK_FILES = ("package.json", "package-lock.json")
INSTALLED_MARK = ".tablestream-installed"
INSTALL_TIMEOUT = 900.0  # seconds for ``npm ci`` (a cold cache on a slow network)


@dataclass(frozen=True)
class Node:
    """A node binary and the ``node_modules`` the scripts resolve their packages from."""

    node: str
    modules: Path

    def env(self) -> dict[str, str]:
        return {**os.environ, "NODE_PATH": str(self.modules), "NODE_ENV": "production"}


def missing_node() -> str | None:
    """The sentence the rows print when node or npm is not on PATH; ``None`` when both are."""
    absent = [tool for tool in ("node", "npm") if shutil.which(tool) is None]
    if not absent:
        return None
    return (
        f"Node.js is not installed ({' and '.join(absent)} not on PATH; Debian: apt-get install -y nodejs "
        "npm); the boardgame.io peer rows are skipped"
    )


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "tablestream" / "bgio"


def lock_key(project: Path = PROJECT) -> str:
    """What the installed ``node_modules`` depend on: the package and lock files, hashed."""
    digest = hashlib.sha256()
    for name in LOCK_FILES:
        digest.update((project / name).read_bytes())
    return digest.hexdigest()[:16]


def install(project: Path = PROJECT, cache: Path | None = None) -> Node | str:
    """``npm ci`` of ``project``'s lock file into ``cache/<lock hash>`` (once: a later call finds it
    there); the node to run the scripts with, or the sentence saying why the rows are skipped."""
    why = missing_node()
    if why is not None:
        return why
    node, npm = shutil.which("node"), shutil.which("npm")
    assert node is not None and npm is not None
    cache = cache or cache_root()
    target = cache / lock_key(project)
    if (target / INSTALLED_MARK).is_file():
        return Node(node, target / "node_modules")
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f"{target.name}.", dir=cache))
    try:
        for name in LOCK_FILES:
            shutil.copyfile(project / name, staging / name)
        try:
            done = subprocess.run(
                [npm, "ci", "--no-audit", "--no-fund", "--ignore-scripts", "--loglevel=error"],
                cwd=staging,
                capture_output=True,
                text=True,
                timeout=INSTALL_TIMEOUT,
            )
        except subprocess.TimeoutExpired:
            return (
                f"npm ci of services/bench/bgio took over {INSTALL_TIMEOUT:.0f} s; "
                "the boardgame.io peer rows are skipped"
            )
        if done.returncode != 0:
            said = (done.stderr.strip() or done.stdout.strip() or f"status {done.returncode}").splitlines()
            return (
                f"npm ci of services/bench/bgio failed ({said[-1]}); the boardgame.io peer rows are skipped"
            )
        (staging / INSTALLED_MARK).write_text(f"npm ci of {project} (lock {target.name})\n")
        if target.exists() and not (target / INSTALLED_MARK).is_file():
            shutil.rmtree(target)  # a copy without its mark: not ours to trust
        with contextlib.suppress(OSError):  # another run may have put its copy there first: the same
            staging.rename(target)
        return Node(node, target / "node_modules")
    finally:
        shutil.rmtree(staging, ignore_errors=True)
