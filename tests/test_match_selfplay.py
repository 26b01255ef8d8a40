"""Our engine (``python -m usi``) against itself at a tiny fixed depth: valid records and statistics, and the same
games again with the same seed."""
import sys

import cshogi
import cshogi.CSA
from usi import match as M

OURS = [f"cmd={sys.executable} -m usi", "option.USI_Hash=16", "depth=1"]
SETTINGS = M.MatchSettings(max_plies=60, ready_timeout=180, move_timeout=120)


def test_our_engine_self_play_is_reproducible(tmp_path):
    engines = lambda: [M.EngineSpec.parse(OURS + ["name=f1"]), M.EngineSpec.parse(OURS + ["name=f2"])]  # noqa: E731
    res = M.run_match(engines(), games=2, settings=SETTINGS, seed=7, out=tmp_path)
    assert len(res.records) == 2
    st = res.stats["f1 vs f2"]
    assert st.games == 2 and st.wins + st.draws + st.losses == 2 and sum(st.penta) == 1
    for r in res.records:
        assert r["reason"] in ("checkmate", "resign", "max plies", "sennichite", "perpetual check", "entering king"), r
        assert all(d is None or d >= 1 for d in r["depths"]) and len(r["times"]) == len(r["moves"])
        csa = cshogi.CSA.Parser.parse_file(str(tmp_path / "csa" / f"game-{r['game']:05d}.csa"))[0]
        assert [cshogi.move_to_usi(m) for m in csa.moves] == r["moves"]
    again = M.run_match(engines(), games=2, settings=SETTINGS, seed=7)
    assert [r["moves"] for r in again.records] == [r["moves"] for r in res.records]
    assert [r["result"] for r in again.records] == [r["result"] for r in res.records]
