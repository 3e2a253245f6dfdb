"""Pure folds from events to read models: seat views, the spectator view, scoreboards, the lobby."""
