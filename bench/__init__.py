"""Benchmarks: perft against cshogi and python-shogi, and search speed (``python -m bench``)."""
