"""The table: playing and watching one game, free of HTTP.

- ``commands``: the write side - create, join, each move, bots, timeouts, leave, close - decided by
  the pure rules (``domain``) and appended in one round trip (``services.store.operations``); the
  move path is there, creating and joining a table in ``seating``, the commands the system plays
  and the lifecycle requests in ``system_commands``, what they share in ``outcomes``;
- ``queries``: the read side - each seat's view, the spectators', events, scores, audit, export;
- ``callers`` (who is asking: a seat token, a host, a spectator), ``invitations`` (who may sit at a
  private table), ``lifecycle`` (the clock, timers and bot pacing), ``hints``, ``tracing`` (one
  trace per command, carried over the hand-over to the workers), ``lru``.

It may import the history, the store, fairness (a receipt per command, the log's head) and
telemetry; never accounts, people, disputes, operating, the API or the CLI.
"""
