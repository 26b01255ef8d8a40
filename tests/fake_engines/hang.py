"""A USI engine that never answers ``go`` (nor ``stop``): the referee must time it out and kill it."""
import sys

for line in sys.stdin:
    cmd = line.split()[0] if line.split() else ""
    if cmd == "usi":
        print("id name Hanger\nusiok", flush=True)
    elif cmd == "isready":
        print("readyok", flush=True)
    elif cmd == "quit":
        break
