"""The only code that knows Redis, Lua and RQ: the key layout, the event store (one set of
operations run by an async and a sync driver), bearer tokens, the projection queue, live wake-ups
and the embedded server."""
