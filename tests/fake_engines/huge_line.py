"""A USI engine that writes ``BYTES`` bytes without a newline, then waits for its input to end: answering ``go``
(default) or, with ``--at usi``, ``usi``. A client that buffers the line whole grows without bound.

Usage: ``huge_line.py BYTES [--at usi|go]``."""
import sys

size = int(sys.argv[1])
at = sys.argv[sys.argv.index("--at") + 1] if "--at" in sys.argv else "go"
out = sys.stdout.buffer
for line in sys.stdin:
    cmd = line.split()[0] if line.split() else ""
    if cmd == at:
        chunk = b"info string " + b"x" * 65536
        try:
            for _ in range(size // len(chunk) + 1):
                out.write(chunk)
            out.flush()
        except BrokenPipeError:  # the client stopped reading (and killed it)
            break
    elif cmd == "usi":
        print("id name HugeLine\nusiok", flush=True)
    elif cmd == "isready":
        print("readyok", flush=True)
    elif cmd == "quit":
        break
