"""``tablestream``: serve, worker, demo, verify, bench, arena, export-all, import-all, rebuild-all,
operator, keys, witness (one module per command, imported only when its command runs: ``serve``
does not pay for the benchmark's or the demo's imports, seconds of CPU on a small machine)."""

from __future__ import annotations

import argparse
import importlib
import sys
from types import ModuleType

PARSED = {
    "serve": "run the HTTP API (and, without --redis-url, Redis and a worker)",
    "worker": "run a pool of RQ projection workers and the lag sweeper",
    "demo": "bots play complete games through the real HTTP API",
    "bench": "measure the service beside bare baselines on the same Redis",
    "arena": "bots play bots in bulk, in process, and rate each level's strength",
    "operator": "grant, revoke or list the accounts that are operators",
    "keys": "list or rotate the keys that sign receipts (kept in Redis)",
}
"""The commands whose flags this parser reads (each module's ``add_arguments``), and their help."""
OWN_FLAGS = {
    "verify": ("verify", "check an exported game offline (no Redis, no server)"),
    "witness": ("witness", "watch a service's public log: check each checkpoint's consistency, cosign it"),
    "export-all": ("backup", "write every stream to a backup file (0600: it holds secrets)"),
    "import-all": ("backup", "restore a backup (verified) and rebuild every projection"),
    "rebuild-all": ("backup", "rebuild every projection and rating from the streams"),
}
"""The commands that read their own flags: name -> (module, help)."""


def command_module(name: str) -> ModuleType:
    return importlib.import_module(f"services.cli.{name}")


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    chosen = argv[0] if argv else None
    if chosen in OWN_FLAGS:
        module = command_module(OWN_FLAGS[chosen][0])
        if module.__name__.endswith(".backup"):
            return int(module.run(argv))  # its own flags: DIR|FILE [--redis-url URL ...]
        return int(module.main(argv[1:]))  # verify: FILE [--receipt ...]; witness: URL [--state DIR] [--once]
    parser = argparse.ArgumentParser(prog="tablestream", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    for name, text in PARSED.items():
        sub = commands.add_parser(name, help=text)
        if name == chosen:
            command_module(name).add_arguments(sub)
    for name, (_, text) in OWN_FLAGS.items():
        commands.add_parser(name, help=text, add_help=False)
    args = parser.parse_args(argv)
    return int(command_module(args.command).run(args))
