"""``tablestream bench``: the service's figures, each beside a baseline measured in the same run.

Nothing on the hot path imports this package: the bench starts the real API and worker as child
processes (``services.bench.server`` wraps the production app with bare baseline endpoints) and
measures them from outside, with the server processes' own CPU time from ``/proc``.
"""
