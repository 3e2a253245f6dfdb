"""People around the tables: how players meet, talk and come back.

- ``quickplay``: the queue that seats strangers together; ``waiting_budget``: who may open one more
  table that waits for players;
- ``rematch``: the same players at a new table; ``your_tables``: a player's list of tables;
- ``chat``: the table's chat, with reports and mutes.

It may import the table (to create and fill tables), accounts, operating's settings, the store and
telemetry; never disputes or the API.
"""
