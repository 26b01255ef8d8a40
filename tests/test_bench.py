"""``python -m bench`` runs at a tiny depth and prints its table (no timing assertions)."""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from bench.chart import write_png


def test_bench_perft_runs_and_prints_table(tmp_path):
    out = subprocess.run([sys.executable, "-m", "bench", "perft", "--depth", "1", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[1])
    assert out.returncode == 0, out.stderr
    assert "startpos" in out.stdout and "cshogi" in out.stdout and "nodes/s" in out.stdout
    data = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert data["perft"][0]["ours"]["nodes"] == 30 and data["perft"][0]["cshogi"]["agrees"]
    assert next(tmp_path.glob("*.png")).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_png_writer(tmp_path):
    img = np.zeros((3, 4, 3), np.uint8)
    img[1, 2] = (255, 0, 0)
    write_png(img, tmp_path / "x.png")
    data = (tmp_path / "x.png").read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n" and data[12:16] == b"IHDR" and data.endswith(b"IEND\xaeB`\x82")


def test_search_nodes_to_depth_searches_each_position_to_its_depth():
    """``bench.search_nodes --to-depth D``: every position completes depth D, the sharp shogi ones D - 3."""
    from bench.search_nodes import SHARP_DEPTH_OFFSET, SHARP_SHOGI_POSITIONS, run
    rows = run(to_depth=4)
    assert [r["depth"] for r in rows] == [4 - SHARP_DEPTH_OFFSET if int(r["position"]) in SHARP_SHOGI_POSITIONS else 4
                                          for r in rows]
    assert all(r["nodes"] > 0 for r in rows)
