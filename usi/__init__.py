"""USI: the engine loop (usi.engine), a USI client, the match referee and records.

Keep this module light: `python -m usi` must answer `usiok` before numba is imported.
"""
