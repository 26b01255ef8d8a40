"""Records: KIF and CSA written from a game record are read back by cshogi's parsers to the same moves."""
import random

import cshogi
import cshogi.CSA
import cshogi.KIF
import pytest

from engine import Position
from usi import records as R

MATSURI = "l6nl/5+P1gk/2np1S3/p1p4Pp/3P2Sp1/1PPb2P1P/P5GS1/R8/LN4bKL w RGgsn5p 1"


def random_record(start="startpos", plies=160, seed=1, result="sente", reason="resign", detail=""):
    """A random game that is rich in captures, drops, promotions and recaptures (the KIF 同)."""
    rng = random.Random(seed)
    pos = Position.from_sfen(start)
    moves = []
    for _ in range(plies):
        codes = pos.legal_codes().tolist()
        if not codes:
            break
        prev_to = moves[-1][-3:-1] if moves and moves[-1].endswith("+") else moves[-1][-2:] if moves else None
        usis = [pos.move_usi(c) for c in codes]
        recaptures = [u for u in usis if prev_to and u[2:4] == prev_to]
        move = rng.choice(recaptures) if recaptures and rng.random() < 0.5 else rng.choice(usis)
        pos.push(move)
        moves.append(move)
    n = len(moves)
    return {"game": 7, "pair": 3, "variant": "shogi", "sente": "alpha", "gote": "beta", "start_sfen": Position.from_sfen(start).sfen(),
            "moves": moves, "events": [], "times": [round(rng.random() * 3, 3) for _ in moves],
            "scores": [rng.randint(-500, 500) for _ in moves], "depths": [1] * n, "result": result, "winner": "alpha",
            "reason": reason, "detail": detail, "started": "2024-05-01T10:00:00", "opening": {"index": 0, "plies": 0}}


def usi_moves(parsed_moves):
    return [cshogi.move_to_usi(m) for m in parsed_moves]


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_kif_round_trip_through_cshogi(tmp_path, seed):
    record = random_record(seed=seed)
    path = R.write_kif(record, tmp_path / "g.kif")
    text = path.read_bytes().decode("cp932")
    assert "手合割：平手" in text and "先手：alpha" in text
    assert "同　" in text and "打" in text and "成(" in text  # the game exercises recaptures, drops, promotions
    parsed = cshogi.KIF.Parser.parse_file(str(path))
    assert usi_moves(parsed.moves) == record["moves"]
    assert parsed.names == ["alpha", "beta"]
    assert parsed.win == cshogi.BLACK_WIN and parsed.endgame == "%TORYO"
    assert parsed.times[:len(record["moves"])] == [int(t) for t in record["times"]]


@pytest.mark.parametrize("start", ["startpos", MATSURI])
def test_csa_round_trip_through_cshogi(tmp_path, start):
    record = random_record(start=start, seed=4, result="gote", reason="time forfeit")
    path = R.write_csa(record, tmp_path / "g.csa")
    parsed = cshogi.CSA.Parser.parse_file(str(path))[0]
    assert cshogi.Board(parsed.sfen).sfen() == cshogi.Board(record["start_sfen"]).sfen()
    assert usi_moves(parsed.moves) == record["moves"]
    assert parsed.names == ["alpha", "beta"] and parsed.endgame == "%TIME_UP"


@pytest.mark.parametrize("result,reason,kif_word,csa_end", [
    ("draw", "sennichite", "千日手", "%SENNICHITE"), ("sente", "checkmate", "詰み", "%TSUMI"),
    ("gote", "illegal move", "反則", "%+ILLEGAL_ACTION"), ("sente", "entering king", "入玉勝ち", "%KACHI"),
    ("draw", "max plies", "持将棋", "%JISHOGI"), ("gote", "crash", "反則", "%+ILLEGAL_ACTION")])
def test_terminal_words(tmp_path, result, reason, kif_word, csa_end):
    record = random_record(plies=12, result=result, reason=reason, detail="why")
    kif = R.to_kif(record)
    assert kif_word in kif and "*" + reason + ": why" in kif
    assert csa_end in R.to_csa(record)
    R.write_kif(record, tmp_path / "t.kif")
    assert usi_moves(cshogi.KIF.Parser.parse_file(str(tmp_path / "t.kif")).moves) == record["moves"]


def test_kif_board_diagram_for_other_start(tmp_path):
    record = random_record(start=MATSURI, plies=10)
    kif = R.to_kif(record)
    assert "後手の持駒：金　銀　桂　歩五" in kif and "先手の持駒：飛　金" in kif and "後手番" in kif
    assert "|v香 ・ ・ ・ ・ ・ ・v桂v香|一" in kif


def test_jsonl_and_game_files(tmp_path):
    record = random_record(plies=20)
    R.write_jsonl(record, tmp_path / "games.jsonl")
    R.write_jsonl(dict(record, game=8), tmp_path / "games.jsonl")
    back = list(R.read_jsonl(tmp_path / "games.jsonl"))
    assert [r["game"] for r in back] == [7, 8] and back[0]["moves"] == record["moves"]
    paths = R.write_game_files(record, tmp_path / "rec")
    assert sorted(p.name for p in paths) == ["game-00007.csa", "game-00007.kif"]
    assert R.write_game_files(dict(record, variant="fantasista"), tmp_path / "rec") == []


# ------------------------------------------------------------------ read back by the GUI (issue 22)
def _normal(sfen):
    """A start SFEN as the rules layer writes it (hand order, move number), ``None`` meaning the standard start."""
    return Position.from_sfen(sfen or R.STARTPOS_SFEN).sfen().rsplit(" ", 1)[0]


def _gui_loads(text):
    """(start SFEN, moves) of a record loaded into a GUI game, exactly as ``POST /api/load`` does."""
    from gui.session import Session

    session = Session()
    session.load(text)
    return _normal(session.start_sfen), [p.token for p in session.plies if not p.event]


@pytest.mark.parametrize("start", ["startpos", MATSURI])
@pytest.mark.parametrize("fmt", ["jsonl", "kif", "kifu", "csa"])
def test_match_runner_records_load_back_into_the_gui(tmp_path, start, fmt):
    """Every file the match runner writes (``games.jsonl``, ``.kif`` in cp932, ``.kifu`` in UTF-8, ``.csa``), from
    the start and from a set-up position (a KIF board diagram, CSA ``P1``..``P9`` and hands), loads back."""
    record = random_record(start=start, plies=60, seed=11)
    if fmt == "jsonl":
        R.write_jsonl(record, tmp_path / "games.jsonl")
        text = (tmp_path / "games.jsonl").read_text(encoding="utf-8").strip()
    elif fmt == "kif":
        text = R.write_kif(record, tmp_path / "g.kif").read_bytes().decode("cp932")
    elif fmt == "kifu":
        text = R.write_kif(record, tmp_path / "g.kifu").read_text(encoding="utf-8")
    else:
        text = R.write_csa(record, tmp_path / "g.csa").read_text(encoding="utf-8")
    if start != "startpos" and fmt in ("kif", "kifu"):
        assert "  ９ ８ ７ ６ ５ ４ ３ ２ １" in text  # the diagram's full-width digits are not a move number
    assert _gui_loads(text) == (_normal(record["start_sfen"]), record["moves"])


@pytest.mark.parametrize("sfen", [None, MATSURI])
@pytest.mark.parametrize("finished", [False, True])
@pytest.mark.parametrize("fmt", ["json", "kif", "csa"])
def test_gui_records_load_back_into_the_gui(sfen, finished, fmt):
    """What *Save JSON / KIF / CSA* writes (``GET /api/record``), of a game from the start or from a set-up position,
    finished (a terminal line) or not, loads back to the same start and moves."""
    from gui.session import Session

    session = Session("shogi", players=["human", "human"], start_sfen=sfen, seed=1)
    rng = random.Random(5)
    for _ in range(40 if finished else 8):
        st = session.state()
        if st["node"] == "terminal":
            break
        session.play(rng.choice([e["token"] for e in st["legal"]]))
    assert session.result() is None or finished
    if session.result() is None and finished:
        session.resign()
    text, _, name = session.export(fmt)
    assert name.endswith("." + fmt)
    if finished and fmt != "json":
        assert any(word in text for word in ("投了", "詰み", "%TORYO", "%TSUMI"))
    moves = [p.token for p in session.plies]
    assert _gui_loads(text) == (_normal(session.start_sfen), moves)


def test_setup_kif_board_diagram_is_the_standard_one():
    """The board diagram is the one cshogi writes (``KIF.board_to_bod``; cshogi's KIF reader skips diagrams, so the
    moves of a set-up KIF are checked by the GUI's reader above)."""
    record = random_record(start=MATSURI, plies=30, seed=2)
    kif = R.to_kif(record)
    assert cshogi.KIF.board_to_bod(cshogi.Board(MATSURI)) in kif
