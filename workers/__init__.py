"""RQ jobs: projection catch-up, the lag sweeper, and bots."""
