"""Fairness: what the service signs and publishes so that nobody has to trust it (docs/fairness.md).

- ``signing``: the Ed25519 keys, their names and rotation;
- ``receipts``: the signed receipt of each accepted command;
- ``transparency/``: the public, append-only log of game heads (leaves, Merkle tree, signed
  checkpoints, witnesses' cosignatures, and its verifier).

It may import the history, the store and telemetry; never the table, people, the API or the CLI.
Checking a receipt and settling a dispute live one floor up, in ``services.disputes``.
"""
