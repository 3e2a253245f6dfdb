"""Operating the service: its settings and its operators.

- ``config``: every setting, read once from the environment into one typed ``Settings``;
- ``operator``: the operator's console - close a table, ban an account, handle chat reports - each
  action in the audit log.

It may import the table, accounts, fairness, the store and telemetry; never people, disputes, the
API or the CLI. Backups and restores run in the workers (``workers/backup``).
"""
