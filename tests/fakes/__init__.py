"""Fakes of chat platforms' HTTP APIs, served on 127.0.0.1 for end-to-end tests and benchmarks."""
