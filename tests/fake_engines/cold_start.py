"""A USI engine whose first start is slow, like ours on a cold numba cache: the first ``isready`` ever (no marker
file yet) waits ``SECONDS`` before ``readyok`` and then writes the marker; later processes answer at once. It
resigns every game. Usage: ``cold_start.py MARKER SECONDS``."""
import sys
import time
from pathlib import Path


def main() -> None:
    marker, seconds = Path(sys.argv[1]), float(sys.argv[2])
    for line in sys.stdin:
        cmd = line.strip().split(" ", 1)[0]
        if cmd == "usi":
            print("id name ColdStart\nusiok", flush=True)
        elif cmd == "isready":
            if not marker.exists():
                time.sleep(seconds)
                marker.write_text("compiled")
            print("readyok", flush=True)
        elif cmd == "go":
            print("bestmove resign", flush=True)
        elif cmd == "quit":
            break


if __name__ == "__main__":
    main()
