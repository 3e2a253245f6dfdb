"""Accounts: who a player is across games.

- ``registry``: register a display name, tokens, passwords, bans;
- ``names``: the one rule for display names (no lookalikes), ``seat_names``: the name a seat is
  taken under;
- ``players``: public profiles, game histories and leaderboards from the workers' read models.

It may import the store and telemetry; never the table, people, disputes, operating or the API.
"""
