"""A USI engine that does not leave when told: it resigns every game (or, with ``--hang``, never answers ``go``),
and on ``quit`` either lingers ``SECONDS`` before exiting (``--on-quit linger``) or ignores it (``--on-quit ignore``,
which also ignores SIGTERM and the end of its input, exiting only after ``SECONDS``: a bound, so that a failed test
leaves nothing running for long). Each process appends its pid to ``PIDFILE`` when it starts.

Usage: ``stubborn.py PIDFILE [--on-quit linger|ignore] [--seconds SECONDS] [--hang]``."""
import os
import signal
import sys
import time


def main() -> None:
    pidfile = sys.argv[1]
    mode = sys.argv[sys.argv.index("--on-quit") + 1] if "--on-quit" in sys.argv else "linger"
    seconds = float(sys.argv[sys.argv.index("--seconds") + 1]) if "--seconds" in sys.argv else 30.0
    if mode == "ignore":
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with open(pidfile, "a", encoding="utf-8") as f:
        f.write(f"{os.getpid()}\n")
    for line in sys.stdin:
        cmd = line.split()[0] if line.split() else ""
        if cmd == "usi":
            print("id name Stubborn\nusiok", flush=True)
        elif cmd == "isready":
            print("readyok", flush=True)
        elif cmd == "go" and "--hang" not in sys.argv:
            print("bestmove resign", flush=True)
        elif cmd == "quit":
            if mode == "linger":
                time.sleep(seconds)
                return
    time.sleep(seconds if mode == "ignore" else 0)  # ignoring quit, it ignores the end of its input too


if __name__ == "__main__":
    main()
