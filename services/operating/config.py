"""Configuration from the environment (and CLI flags, which override it).

Every setting has a safe default and an environment variable ``TABLESTREAM_<NAME>`` (upper case);
README's "Settings" table lists them. A value that does not parse stops the process at start.
"""

from __future__ import annotations

import ipaddress
import math
import os
import sys
from collections.abc import Mapping
from dataclasses import dataclass, fields
from functools import cache
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import platformdirs
from limits import parse_many

from domain.table import MAX_BOT_PACE_MS
from services.fairness.signing import check_key_name
from services.fairness.transparency.checkpoint import CheckpointError, WitnessKey, parse_witness_vkey
from services.store.archive import ArchivePolicy
from services.store.connection import Acks, redacted
from services.store.retention import DAY_MS, HOUR_MS, RetentionPolicy

ENV_PREFIX = "TABLESTREAM_"

IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@cache
def trusted_networks(listed: str) -> tuple[IPNetwork, ...]:
    """The networks of a comma-separated list of addresses and CIDRs (``"10.0.0.0/8, 127.0.0.1"``)."""
    networks = []
    for item in listed.split(","):
        if item.strip():
            try:
                networks.append(ipaddress.ip_network(item.strip(), strict=False))
            except ValueError:
                raise ValueError(
                    f"trusted_proxies: {item.strip()!r} is not an IP address or network"
                ) from None
    return tuple(networks)


@dataclass(frozen=True)
class Settings:
    redis_url: str | None = None  # the event store: a standalone server or a node of a Redis Cluster
    queue_url: str | None = None  # RQ's standalone Redis; default: the store's when that is standalone
    redis_cluster: str = "auto"  # is the store a cluster: auto (ask it), yes, no
    admin_token: str | None = None  # the operator's audit token; never a player's or host's
    data_dir: Path = Path(platformdirs.user_data_dir("tablestream"))
    live_poll_seconds: float = 1.0  # how long a live stream waits for a wake-up before re-reading

    # -- Redis client ------------------------------------------------------------------------------
    redis_max_connections: int = 50  # per API process; a full pool waits, it does not fail
    redis_pool_timeout: float = 5.0  # seconds a request waits for a pooled connection, then 503
    redis_socket_timeout: float = 5.0  # a Redis that stops answering fails a request after this

    # -- durability: what an append waits for before its receipt (services.store.connection.Acks) --
    append_replicas: int = 0  # 0: the primary's reply; N: N replicas too (see append_ack)
    append_ack: str = "waitaof"  # waitaof: fsynced in the primary's and N replicas' AOFs; wait: N got it
    append_ack_timeout_ms: int = 1000  # fewer acks within this: 503 not_replicated (retry: same id)

    # -- live streams --------------------------------------------------------------------------------
    live_max_streams: int = 2000  # per API process; past it 503 too_many_streams
    live_max_streams_per_client: int = 20  # per client address; past it 429 too_many_streams
    live_heartbeat_seconds: float = 15.0  # a comment line on a quiet stream, so proxies keep it
    live_queue_size: int = 16  # wake-ups buffered per stream; a slow stream drops extras, not memory
    view_cache_games: int = 2048  # games whose views a process serves from memory (0: none)

    # -- HTTP ----------------------------------------------------------------------------------------
    header_timeout_seconds: float = 10.0  # request headers must be complete within this, else closed
    body_timeout_seconds: float = 10.0  # a request body must arrive within this, else 408
    keep_alive_seconds: int = 5  # uvicorn's timeout_keep_alive: idle connections are closed
    max_header_bytes: int = 16 * 1024  # uvicorn's h11_max_incomplete_event_size (h11 only)
    shutdown_seconds: float = 10.0  # Ctrl-C / SIGTERM: requests and streams drain within this

    # -- abuse limits --------------------------------------------------------------------------------
    rate_limit_storage: str = "async+memory://"  # per process; async+redis://... shares counts (limits)
    create_rate: str = "30/minute"  # tables created per client address
    join_rate: str = "60/minute"  # seats taken per client address
    command_rate: str = "1200/minute"  # commands per client address
    quickplay_rate: str = "30/minute"  # quick play tickets opened per client address
    hint_rate: str = (
        "10/minute"  # hints per seat at a practice table (services.table.hints: ~150 ms CPU each)
    )
    dispute_rate: str = "30/hour"  # disputes opened and evidence added per client address
    operator_rate: str = "60/minute"  # operator actions (close, ban, unban, handle, resolve) per operator
    max_waiting_tables: int = 10_000  # real-time tables of guests waiting for players, all processes
    max_waiting_turn_based_tables: int = 2_000  # turn-based tables of guests waiting, all processes
    trusted_proxies: str = ""  # proxies (IPs or CIDRs, comma-separated) whose X-Forwarded-For is believed

    # -- accounts: logins and registrations (services.api.rate_limits.LoginGuard) ----------------------
    login_rate: str = "20/minute"  # login attempts (and current-password checks) per client address
    login_guess_rate: str = "5/15 minutes"  # attempts at one account name per address, until one succeeds
    login_name_rate: str = "50/15 minutes"  # at one name from all addresses; past it only fresh addresses
    register_rate: str = "20/day"  # accounts created per client address
    account_token_days: float = 180.0  # an account token works this long after its login; then 401
    chat_rate: str = "30/minute"  # chat messages per client address (services.people.chat)
    chat_speaker_rate: str = "12/minute"  # chat messages per speaker at one table (a seat, a spectator)
    chat_max_messages: int = 500  # messages one table's chat holds; past it 409 chat_full
    chat_max_reports: int = 100  # reports of one table's chat kept for operators; past it 409
    chat_after_end_seconds: float = 600.0  # a live stream with chat=1 stays open this long after the end
    password_hash_slots: int = 2  # Argon2id hashes at once per API process (64 MiB each); others wait
    password_hash_queue: int = 32  # hashes waiting for a slot; past it 503 password_check_busy at once
    password_hash_wait_seconds: float = 5.0  # the longest wait for a slot, then 503 password_check_busy
    password_hash_memory_kib: int = 65_536  # Argon2id's memory per new hash (a stored hash keeps its own)
    password_hash_time_cost: int = 3  # Argon2id's passes over that memory per new hash
    max_waiting_tables_per_address: int = 20  # of those, created by one client address; past it 429
    max_waiting_tables_per_network: int = 60  # by one IPv4 /24 or IPv6 /48 of guests; past it 429
    max_waiting_tables_per_account: int = 20  # by one account established in some game; past it 429
    max_waiting_tables_new_account: int = 2  # by a new account; one more per rated game it finished

    # -- retention (services.store.retention; the worker's sweeper) ---------------------------------
    retention_expired_hours: float = 24.0  # an expired table is removed this long after it expired
    retention_abandoned_days: float = 14.0  # a waiting or playing game unchanged this long is removed
    retention_idle_account_days: float = 30.0  # an account without password or finished game, idle
    retention_interval_seconds: float = 300.0  # how often the sweeper runs a retention pass

    # -- archive of finished games (services.store.archive; docs/operations.md) ----------------------
    archive_enabled: bool = True  # off: no game is archived any more (archived ones are still read)
    archive_after_hours: float = 24.0  # a finished game leaves Redis for the archive this long after
    archive_dir: str = ""  # where its files are; empty: <data_dir>/archive (a shared volume on k8s)
    archive_interval_seconds: float = 300.0  # how often the sweeper runs an archive pass

    @property
    def archive_directory(self) -> Path:
        """The archive's directory (``archive_dir``, else ``archive`` under ``data_dir``)."""
        return Path(self.archive_dir) if self.archive_dir else self.data_dir / "archive"

    @property
    def archive(self) -> ArchivePolicy:
        return ArchivePolicy(after_ms=int(self.archive_after_hours * HOUR_MS), enabled=self.archive_enabled)

    # -- the table ---------------------------------------------------------------------------------------
    bot_pace_ms: int = 1000  # a new table's bot pace (its option bot_pace_ms overrides); 0: bots at once
    bot_niceness: int = 10  # how much lower a pool's bot worker beside a faster lane runs (os.nice, 0-19)

    # -- the web surface (docs/security.md) -------------------------------------------------------
    public_origin: str = ""  # e.g. https://tables.example: the only Origin accepted; empty: the request's
    hsts_seconds: int = 15_552_000  # Strict-Transport-Security max-age when served over https (0: none)

    # -- signed receipts (services.fairness.signing; keys in Redis: services.store.signing_keys) -------------
    signing_key_name: str = ""  # the keys' signed-note name, the log's origin; empty: derived (key_name)

    # -- the public log of game heads (services.fairness.transparency; docs/fairness.md "Transparency log")
    log_append_seconds: float = 1.0  # how often the worker pool appends the queued heads
    log_checkpoint_seconds: float = 10.0  # how often it signs a checkpoint (when the tree grew)
    cosignature_rate: str = "60/minute"  # witnesses' cosignatures per client address (POST /log/cosignatures)
    log_witnesses: str = (
        ""  # witnesses' cosigner vkeys (type 0x04), comma-separated: their cosignatures count
    )
    log_published_dir: str = ""  # keeps the newest checkpoint published, outside Redis; empty: the archive's

    # -- readiness -------------------------------------------------------------------------------------
    ready_check_seconds: float = 0.5  # /healthz checks Redis at most this often (0: always)

    def __post_init__(self) -> None:
        problems = [
            problem for spec in fields(self) if (problem := _problem(spec.name, getattr(self, spec.name)))
        ]
        if problems:
            raise ConfigError(problems)

    @property
    def trusted_networks(self) -> tuple[IPNetwork, ...]:
        return trusted_networks(self.trusted_proxies)

    @property
    def key_name(self) -> str:
        """The name a new key ring's keys carry, the public log's origin: ``signing_key_name``, else
        the public origin's host (``tables.example``: a schema-less URL, as C2SP asks), else empty
        (a ring made then takes a unique name: ``services.fairness.receipts.unique_name``)."""
        if self.signing_key_name:
            return self.signing_key_name
        return urlsplit(self.public_origin).netloc.lower() if self.public_origin else ""

    @property
    def log_published_directory(self) -> Path:
        """Where the log keeps the newest checkpoint it published, outside Redis
        (``services.fairness.transparency.published``): ``log_published_dir``, else the archive's
        directory (the volume the worker pools share)."""
        return Path(self.log_published_dir) if self.log_published_dir else self.archive_directory

    @property
    def witness_keys(self) -> tuple[WitnessKey, ...]:
        """The configured witnesses' keys (``log_witnesses``)."""
        try:
            return tuple(parse_witness_vkey(v) for v in self.log_witnesses.split(",") if v.strip())
        except CheckpointError as error:
            raise ValueError(f"log_witnesses: {error.message}") from None

    @property
    def retention(self) -> RetentionPolicy:
        return RetentionPolicy(
            expired_after_ms=int(self.retention_expired_hours * HOUR_MS),
            abandoned_after_ms=int(self.retention_abandoned_days * DAY_MS),
            idle_account_after_ms=int(self.retention_idle_account_days * DAY_MS),
        )

    @property
    def acks(self) -> Acks:
        return Acks(self.append_replicas, self.append_ack, self.append_ack_timeout_ms)  # type: ignore[arg-type]

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Settings:
        """Settings from ``TABLESTREAM_*`` variables; unset or empty ones keep their defaults. Every
        variable is checked, and all the bad ones are named together (``ConfigError``): a value that
        does not parse, and one out of its range, not a choice, or not a URL of Redis."""
        env = os.environ if environ is None else environ
        values: dict[str, Any] = {}
        problems: list[str] = []
        for spec in fields(cls):
            raw = env.get(ENV_PREFIX + spec.name.upper())
            if not raw:
                continue
            default = getattr(cls, spec.name)
            try:
                if isinstance(default, bool):
                    values[spec.name] = _switch(raw)
                elif isinstance(default, int):
                    values[spec.name] = int(raw)
                elif isinstance(default, float):
                    values[spec.name] = float(raw)
                elif isinstance(default, Path):
                    values[spec.name] = Path(raw)
                else:
                    values[spec.name] = raw
            except ValueError:
                problems.append(
                    f"{_variable(spec.name)}={_shown(spec.name, raw)} is not {_kind_of(default)}."
                )
        try:
            settings = cls(**values)
        except ConfigError as error:
            problems += error.problems
        if problems:
            raise ConfigError(problems)
        return settings


class ConfigError(ValueError):
    """Settings that cannot run: ``problems`` holds one sentence per bad setting, each naming its
    variable, the value (a secret's is not shown) and what it must be."""

    def __init__(self, problems: list[str]) -> None:
        super().__init__(" ".join(problems))
        self.problems = problems


def settings_or_exit(program: str, environ: Mapping[str, str] | None = None) -> Settings:
    """``Settings.from_env``, or the process ends: each problem on a line of its own on stderr, exit
    status 2, no traceback (``serve``, ``worker`` and the API's processes check this at start)."""
    try:
        return Settings.from_env(environ)
    except ConfigError as error:
        lines = [f"{program}: the configuration is not valid, so nothing was started:"]
        lines += [f"  {problem}" for problem in error.problems]
        print("\n".join(lines), file=sys.stderr, flush=True)
        raise SystemExit(2) from None


# -- the checks of each setting ----------------------------------------------------------------------

SECRETS = frozenset({"admin_token"})
URLS = frozenset({"redis_url", "queue_url"})
REDIS_SCHEMES = ("redis", "rediss", "unix")
CHOICES: dict[str, tuple[str, ...]] = {
    "redis_cluster": ("auto", "yes", "no"),
    "append_ack": ("waitaof", "wait"),
}
AT_LEAST_ONE = frozenset(
    {
        "redis_max_connections",
        "append_ack_timeout_ms",
        "live_max_streams",
        "live_max_streams_per_client",
        "live_queue_size",
        "keep_alive_seconds",
        "max_header_bytes",
        "chat_max_messages",
        "chat_max_reports",
        "password_hash_slots",
        "max_waiting_tables",
        "max_waiting_turn_based_tables",
        "max_waiting_tables_per_address",
        "max_waiting_tables_per_network",
        "max_waiting_tables_per_account",
        "max_waiting_tables_new_account",
    }
)
RANGES: dict[str, tuple[int, int]] = {
    "bot_pace_ms": (0, MAX_BOT_PACE_MS),
    "bot_niceness": (0, 19),
    "password_hash_memory_kib": (32, 4 * 1024 * 1024),  # Argon2 needs 8 KiB per lane, and it runs 4
    "password_hash_time_cost": (1, 20),
}
MAY_BE_ZERO = frozenset(
    {
        "append_replicas",
        "view_cache_games",
        "hsts_seconds",
        "password_hash_queue",
        "ready_check_seconds",
        "archive_after_hours",
        "chat_after_end_seconds",
        "live_heartbeat_seconds",
    }
)


ON = frozenset({"1", "true", "yes", "on"})
OFF = frozenset({"0", "false", "no", "off"})


def _switch(raw: str) -> bool:
    """A setting that is on or off; ``ValueError`` for any other word (a typo never means off)."""
    word = raw.strip().lower()
    if word in ON or word in OFF:
        return word in ON
    raise ValueError(raw)


def _kind_of(default: object) -> str:
    """What a setting's value must be, in words, from its default's type."""
    if isinstance(default, bool):
        return "on or off (1, true, yes or on; 0, false, no or off)"
    return "a whole number" if isinstance(default, int) else "a number"


def _variable(name: str) -> str:
    return ENV_PREFIX + name.upper()


def _shown(name: str, value: object) -> str:
    """How a bad value is named in a message: a secret never, a URL without its password."""
    if name in SECRETS:
        return "(hidden)"
    if name in URLS and isinstance(value, str):
        return repr(redacted(value))
    return repr(value)


def _problem(name: str, value: Any) -> str | None:
    """Why ``value`` cannot be the setting ``name``, in a sentence naming its variable; ``None``
    when it can."""
    reason = _reason(name, value)
    return None if reason is None else f"{_variable(name)}={_shown(name, value)}: {reason}"


def _reason(name: str, value: Any) -> str | None:
    if value is None or isinstance(value, bool):
        return None
    if name in CHOICES and value not in CHOICES[name]:
        return f"must be one of {', '.join(CHOICES[name])}."
    if name in URLS:
        return _url_reason(value)
    if name in RANGES:
        low, high = RANGES[name]
        return None if low <= value <= high else f"must be from {low} to {high}."
    if isinstance(value, int | float) and not isinstance(value, bool):
        if name in AT_LEAST_ONE:
            return None if value >= 1 else "must be at least 1."
        if name in MAY_BE_ZERO:
            return None if value >= 0 else "must be 0 or more."
        return None if value > 0 and math.isfinite(value) else "must be a number above 0."
    if name.endswith("_rate") and isinstance(value, str):
        try:
            parse_many(value)
        except ValueError:
            return "must be a rate such as 30/minute or 5/15 minutes."
        return None
    return _text_reason(name, value)


def _url_reason(url: str) -> str | None:
    parts = urlsplit(url)
    if parts.scheme not in REDIS_SCHEMES:
        return f"must be a Redis URL (scheme {', '.join(s + '://' for s in REDIS_SCHEMES)})."
    if parts.scheme == "unix" and not parts.path:
        return "must name a socket's path (unix:///path/to/redis.sock)."
    try:
        parts.port  # noqa: B018 (a port that is not a number, or out of range, raises here)
    except ValueError:
        return "has a port that is not a number from 0 to 65535."
    if parts.scheme != "unix" and not parts.hostname:
        return "must name a host (redis://host:6379/0)."
    return None


def _text_reason(name: str, value: Any) -> str | None:
    """The settings checked by the parts that use them."""
    try:
        if name == "public_origin" and value and not value.lower().startswith(("http://", "https://")):
            return "must be an http(s) origin such as https://tables.example."
        if name == "signing_key_name" and value:
            check_key_name(value)
        elif name == "trusted_proxies":
            trusted_networks(value)
        elif name == "log_witnesses":
            tuple(parse_witness_vkey(v) for v in value.split(",") if v.strip())
    except CheckpointError as error:
        return f"{error.message.rstrip('.')}."
    except ValueError as error:
        return f"{str(error).rstrip('.')}."
    return None
