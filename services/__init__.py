"""The imperative shell: configuration, the Redis event store, command handling, the HTTP app, the CLI."""
