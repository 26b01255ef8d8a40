"""A USI engine that answers ``usi`` with its id but never with ``usiok`` (it keeps reading stdin)."""
import sys

for line in sys.stdin:
    if line.strip() == "usi":
        print("id name Mute", flush=True)
    elif line.strip() == "quit":
        break
