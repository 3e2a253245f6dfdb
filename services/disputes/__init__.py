"""Disputes: settling a contested round from evidence anybody can check (docs/fairness.md
"Disputes").

- ``cases``: open a dispute on a round, add evidence, resolve it;
- ``bundle``: the self-contained bundle that settles it (history, receipts, the log's proofs) and
  its verification; ``receipt_check``: checking one signed receipt offline; ``grounds``: what a
  verdict rests on beyond the history (receipts, the log, the keys and where they came from,
  witnesses), passed or not checked, said beside it.

It may import the table (to read the disputed game), fairness, the history and the store; never
people, operating or the API.
"""
