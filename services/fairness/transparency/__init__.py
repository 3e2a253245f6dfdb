"""The public log of game heads (docs/fairness.md "Transparency log"): an RFC 9162 Merkle
tree of ``(game id, version, head hash)`` leaves in Redis, signed C2SP checkpoints, witnesses."""
