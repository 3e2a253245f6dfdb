"""The only code that knows Redis, Lua and RQ: the key layout, the event store (one set of
operations run by an async and a sync driver), bearer tokens, the projection queue, live wake-ups
and the embedded server.

It may import the history (to frame and chain what it appends) and telemetry (round trips and jobs
counted); no other room of the service, so every room above may keep its data here.
"""
