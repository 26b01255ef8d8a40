"""Shared pytest configuration."""
# Scripts run as subprocesses by the match tests, not test modules (importing them would read stdin).
collect_ignore = ["fake_engines"]
