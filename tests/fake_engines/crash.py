"""A USI engine that completes the handshake and dies (exit code 3) on its first ``go``."""
import sys

for line in sys.stdin:
    cmd = line.split()[0] if line.split() else ""
    if cmd == "usi":
        print("id name Crasher\nusiok", flush=True)
    elif cmd == "isready":
        print("readyok", flush=True)
    elif cmd == "go":
        sys.exit(3)
    elif cmd == "quit":
        break
