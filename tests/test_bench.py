"""``python -m bench`` runs at a tiny depth and prints its table (no timing assertions)."""
import json
import subprocess
import sys
from pathlib import Path

import matplotlib.image


def test_bench_perft_runs_and_prints_table(tmp_path):
    out = subprocess.run([sys.executable, "-m", "bench", "perft", "--depth", "1", "--out", str(tmp_path)],
                         capture_output=True, text=True, timeout=300, cwd=Path(__file__).parents[1])
    assert out.returncode == 0, out.stderr
    assert "startpos" in out.stdout and "cshogi" in out.stdout and "nodes/s" in out.stdout
    data = json.loads(next(tmp_path.glob("*.json")).read_text())
    assert data["perft"][0]["ours"]["nodes"] == 30 and data["perft"][0]["cshogi"]["agrees"]
    png = next(tmp_path.glob("*.png"))
    assert f"the chart {png}" in out.stdout
    # a chart with text: near-black pixels (title, labels, values) besides the coloured bars
    assert (matplotlib.image.imread(str(png))[..., :3].max(axis=2) < 0.25).mean() > 0.004


def test_search_nodes_to_depth_searches_each_position_to_its_depth():
    """``bench.search_nodes --to-depth D``: every position completes depth D, the sharp shogi ones D - 3."""
    from bench.search_nodes import SHARP_DEPTH_OFFSET, SHARP_SHOGI_POSITIONS, run
    rows = run(to_depth=4)
    assert [r["depth"] for r in rows] == [4 - SHARP_DEPTH_OFFSET if int(r["position"]) in SHARP_SHOGI_POSITIONS else 4
                                          for r in rows]
    assert all(r["nodes"] > 0 for r in rows)


def test_make_positions_takes_the_asked_plies_of_every_nth_game_once(tmp_path):
    """``bench.make_positions``: every ``every``-th game, the position after each asked ply the game passed (not
    beyond its end), each position once; ``bench.search_nodes --positions`` reads the file it writes."""
    from bench.make_positions import main, positions_from_games
    from bench.search_nodes import read_positions
    from engine import Position
    moves = ["7g7f", "3c3d", "2g2f", "8c8d"]
    games = [json.dumps({"game": g + 1, "moves": moves[:n], "start_sfen": Position.startpos().sfen()})
             for g, n in enumerate([4, 4, 2, 4])]
    rows = positions_from_games(games, every=2, plies=[1, 3, 5])
    # games 1 and 3 (every 2nd from the first): game 1 gives plies 1 and 3, game 3 (2 plies) only ply 1, a repeat
    assert [origin for _, origin in rows] == ["game 1 ply 1", "game 1 ply 3"]
    after = Position.startpos()
    for mv in moves[:3]:
        after.push(mv)
    assert rows[1][0] == after.sfen()
    src, out = tmp_path / "games.jsonl", tmp_path / "positions.txt"
    src.write_text("\n".join(games) + "\n")
    assert main(["--games", str(src), "--every", "1", "--plies", "2", "--out", str(out)]) == 0
    read = read_positions(str(out))
    two = Position.startpos()
    for mv in moves[:2]:
        two.push(mv)
    # one line: ply 2 of games 1, 2 and 4 is the same position, and game 3 ends at ply 2
    assert [sfen for _, sfen in read] == [two.sfen()]
