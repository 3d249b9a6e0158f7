"""tokbot's edge: command line, chat adapters, runner and settings. Only `core` does the work."""
