"""A USI engine that always answers ``go`` with ``5e5d``, a move that is never legal from the start position."""
import sys

for line in sys.stdin:
    cmd = line.split()[0] if line.split() else ""
    if cmd == "usi":
        print("id name Illegal\nusiok", flush=True)
    elif cmd == "isready":
        print("readyok", flush=True)
    elif cmd == "go":
        print("info depth 1 score cp 0\nbestmove 5e5d", flush=True)
    elif cmd == "quit":
        break
