"""The HTTP API: the only code that knows Starlette and status codes. Routes turn requests into
typed calls of the application (``services.table.commands``, ``services.table.queries``) and its answers into
JSON; ``error_responses`` is the one place where application errors become HTTP answers."""
