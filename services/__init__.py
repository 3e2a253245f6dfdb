"""The shell around the pure game code.

- ``history/``: pure code over a stored stream (framing and hash chain, folding, replay, audit,
  export, the offline verifier); no Redis.
- ``store/``: the only code that knows Redis, Lua and RQ.
- ``commands`` (write side), ``queries`` (read side), ``callers``, ``errors``: the application,
  free of HTTP, raising ``AppError``s with stable codes.
- ``api/``: the only code that knows Starlette and status codes.
- ``cli/``: the ``tablestream`` command, one module per subcommand.
"""
