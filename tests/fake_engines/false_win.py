"""A USI engine that claims an entering-king win (``bestmove win``) on its first move, which is never allowed."""
import sys

for line in sys.stdin:
    cmd = line.split()[0] if line.split() else ""
    if cmd == "usi":
        print("id name Claimer\nusiok", flush=True)
    elif cmd == "isready":
        print("readyok", flush=True)
    elif cmd == "go":
        print("bestmove win", flush=True)
    elif cmd == "quit":
        break
