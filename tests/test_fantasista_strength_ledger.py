"""The fantasista strength ledger (``bench/fantasista_strength.py``): games kept across runs, read pair by pair."""
import pytest

from bench import fantasista_strength as L
from usi import stats

LOG = """game 0 ('yokaku', 'ayumi') score 1.0 running 1.000 over 1
game 1 ('ayumi', 'yokaku') score 0.0 running 0.500 over 2
game 2 ('hiko', 'hiko') score 1.0 running 0.667 over 3
game 3 ('hiko', 'hiko') score 1.0 running 0.750 over 4
game 4 ('ginsara', 'ayumi') score 0.5 running 0.700 over 5
"""


def test_a_progress_log_imported_into_the_ledger_reads_back_the_same_games(tmp_path):
    games = L.from_log(LOG, "blind", 40000, 1012, "abc1234")
    assert [(g.game, g.sente, g.gote, g.score) for g in games] == [
        (0, "yokaku", "ayumi", 1.0), (1, "ayumi", "yokaku", 0.0), (2, "hiko", "hiko", 1.0),
        (3, "hiko", "hiko", 1.0), (4, "ginsara", "ayumi", 0.5)]
    path = tmp_path / "ledger.tsv"
    for g in games:
        L.append(path, g)
    assert path.read_text().splitlines()[0] == "\t".join(L.COLUMNS)
    assert L.read(path) == games


def test_pairs_are_matched_within_a_seed_and_a_lone_game_is_left_out():
    games = L.from_log(LOG, "blind", 40000, 1012, "r") + L.from_log(LOG, "blind", 40000, 1112, "r")[:3]
    # seed 1012: pairs (1, 0) and (1, 1), game 4 alone; seed 1112: pair (1, 0), game 2 alone
    assert L.pair_scores(games) == [1.0, 0.0, 1.0, 1.0, 1.0, 0.0]
    with pytest.raises(ValueError, match="twice"):
        L.pair_scores(games + games[:1])


def test_report_pools_one_mode_and_budget_and_runs_the_sprt():
    games = L.from_log(LOG, "blind", 40000, 12, "r") + L.from_log(LOG, "blind", 6000, 12, "r") \
        + L.from_log(LOG, "own", 40000, 12, "r")
    lines = L.report(games, "blind", 40000)
    assert lines[0] == "blind at 40000 nodes: 5 games in the ledger"
    assert lines[1].startswith("  seed 12: 4 games, W3 D0 L1, pairs [0, 0, 1, 0, 1]: 0.750")
    llr = stats.sprt([0, 0, 1, 0, 1], *L.SPRT_ELO).llr
    assert f"LLR {llr:.2f}" in lines[-1] and "no decision yet" in lines[-1]
    # a run of 2-0 pairs drives the SPRT to H1
    many = [L.Game("blind", 40000, 1, k, "hiko", "hiko", 1.0, "r") for k in range(2000)]
    assert "H1 accepted" in L.report(many, "blind", 40000)[-1]


def test_the_sprt_stops_at_its_first_decision_in_the_ledgers_order():
    """Won pairs of two seeds, ended in turns, drive the SPRT to H1; the lost pairs after that do not undo it (the
    final LLR falls back inside the bounds), and the report gives the games up to the first decision."""
    won = [L.Game("positional-seat", 40000, seed, k, "hiko", "yokaku", 1.0, "r") for k in range(400)
           for seed in (1, 2)]
    lost = [L.Game("positional-seat", 40000, seed, k, "hiko", "yokaku", 0.0, "r") for k in range(400, 440)
            for seed in (1, 2)]
    n = next(n for n in range(1, 400) if stats.sprt([0, 0, 0, 0, n], *L.SPRT_ELO).decision == "H1")
    read_, pairs, s = L.first_decision(won + lost)
    assert (pairs, s.decision) == (n, "H1")
    assert read_ == 2 * n  # the two seeds' games alternate, so every second game completes a pair
    assert stats.sprt([0, 0, 0, 0, n - 1], *L.SPRT_ELO).decision is None  # not a look earlier
    lines = L.report(won[:2 * n] + won[2 * n:2 * n + 4] + lost, "positional-seat", 40000)
    assert "no decision yet" in lines[-4]  # over every game: back inside the bounds
    assert lines[-3].startswith(f"  the SPRT stopped at its first decision, after {n} pairs ({2 * n} games")
    assert f"pairs [0, 0, 0, 0, {n}]" in lines[-2] and "H1 accepted" in lines[-1]
    assert L.first_decision(won[:2 * n - 1]) is None
    assert not any("stopped" in line for line in L.report(won[:2 * n - 1], "positional-seat", 40000))


def test_a_malformed_ledger_line_is_named(tmp_path):
    path = tmp_path / "ledger.tsv"
    path.write_text("\t".join(L.COLUMNS) + "\nblind\t40000\t12\t0\thiko\thiko\tone\tr\n")
    with pytest.raises(ValueError, match="ledger.tsv:2"):
        L.read(path)
    path.write_text("blind\t40000\t12\n")
    with pytest.raises(ValueError, match="3 columns"):
        L.read(path)


def test_the_command_imports_a_log_once(tmp_path, capsys):
    log, ledger = tmp_path / "run.log", tmp_path / "ledger.tsv"
    log.write_text(LOG)
    L.main([str(ledger), "--import", str(log), "--seed", "1012", "--revision", "r"])
    assert "5 games of" in capsys.readouterr().out and len(L.read(ledger)) == 5
    with pytest.raises(ValueError, match="twice"):
        L.main([str(ledger), "--import", str(log), "--seed", "1012", "--revision", "r"])
    assert len(L.read(ledger)) == 5  # nothing written by the refused import


def test_the_revision_is_marked_changed_by_code_but_not_by_a_ledger_being_written(tmp_path):
    import subprocess

    def git(*args: str) -> None:
        subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], cwd=tmp_path, check=True,
                       capture_output=True)
    (tmp_path / "bench" / "strength").mkdir(parents=True)
    (tmp_path / "search.py").write_text("x = 1\n")
    (tmp_path / "bench" / "strength" / "f.tsv").write_text("mode\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "start")
    clean = L.revision(tmp_path / "bench")
    assert clean and not clean.endswith("+") and clean != "unknown"
    (tmp_path / "bench" / "strength" / "f.tsv").write_text("mode\nblind\n")  # a match appending to its ledger
    assert L.revision(tmp_path / "bench") == clean
    (tmp_path / "search.py").write_text("x = 2\n")
    assert L.revision(tmp_path / "bench") == clean + "+"
    assert L.revision(tmp_path.parent / "no-such-dir") == "unknown"
