"""The GUI in a real browser: headless Debian Chromium driven by Selenium.

Each variant: a game started from the form, moves made by clicking squares and hands, the engine's answer, the
roll / card / plan / defection where they apply, a game end, a record saved and loaded back; review, branches and
the position editor; the layout of every
variant at a 390x844 phone and a 1366x900 desktop (no sideways overflow, every square and prompt on screen, pieces
drawn as SVG), moves by drag and drop and by the keyboard, resigning with confirmation, the sound switch, the text
contrast. The start position of every variant is saved as ``<variant>.png`` (1366x900) and
``<variant>-phone.png`` (390x844), fantasista's magic (curtain squares, inventory) as ``fantasista-magic.png`` and a
mawarikudoi turn chosen by its end (the chooser of the ends on one square) as ``mawarikudoi-ends.png``, a timed
game whose flag fell as ``clocks.png``, the review of a branched record as ``review.png`` and the position editor
on a phone as ``editor-phone.png``: into a temporary directory, or with ``FANTASISTA_UPDATE_SCREENSHOTS=1`` into
``docs/img/`` (the screenshots of ``docs/gui.md``), so that a test run leaves the work tree as it was.

Needs ``chromium``, ``chromium-driver``, ``fonts-ipafont-gothic`` (Debian; ``.ci/run`` installs them) and
``selenium`` (the test extra). Without them the tests fail with a message saying so: they are never skipped.
"""
from __future__ import annotations

import json
import os
import random
import shutil
import tempfile
import time
from pathlib import Path

import pytest

from gui.server import serve_in_thread

from .gui_helpers import ROOT, engines_with_random

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
DRIVER = shutil.which("chromedriver") or "/usr/bin/chromedriver"
#: Where the screenshots go: docs/img only when asked (they are committed), else a temporary directory.
IMG = (ROOT / "docs" / "img" if os.environ.get("FANTASISTA_UPDATE_SCREENSHOTS") == "1"
       else Path(tempfile.gettempdir()) / "fantasista-gui-screenshots")

from selenium import webdriver
from selenium.common.exceptions import StaleElementReferenceException
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.by import By
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select

if not (Path(CHROMIUM).exists() and Path(DRIVER).exists()):
    raise RuntimeError("the browser tests need Debian's chromium and chromium-driver "
                       "(apt-get install chromium chromium-driver fonts-ipafont-gothic; .ci/run does it)")

CHROME_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                "--disable-background-networking", "--disable-component-update", "--disable-sync",
                "--disable-dev-shm-usage", "--window-size=1366,900"]
#: The screens the page is tried on: (width, height, a phone's touch screen).
DESKTOP, PHONE = (1366, 900, False), (390, 844, True)


@pytest.fixture(scope="module")
def gui(tmp_path_factory):
    srv, _ = serve_in_thread(0, engines=engines_with_random(tmp_path_factory.mktemp("engine")))
    profile = tempfile.mkdtemp(prefix="gui-chromium-")
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in CHROME_FLAGS + [f"--user-data-dir={profile}"]:
        options.add_argument(flag)
    driver = webdriver.Chrome(options=options, service=Service(DRIVER))
    driver.set_page_load_timeout(30)
    gui = Gui(driver, srv)
    gui.viewport(*DESKTOP)
    try:
        yield gui
    finally:
        driver.quit()
        srv.shutdown_all()
        shutil.rmtree(profile, ignore_errors=True)


class Gui:
    def __init__(self, driver, server) -> None:
        self.d, self.server = driver, server
        self.url = f"http://127.0.0.1:{server.server_address[1]}/"

    @property
    def session(self):
        """The game of the tab the driver is on (its id is in the tab's sessionStorage)."""
        sid = self.wait(lambda: self.d.execute_script("return sessionStorage.getItem('fantasista-game')"),
                        what="the tab's game")
        return self.server.sessions[sid]

    def confirm_if_asked(self, timeout: float = 3.0) -> bool:
        """Click *Replace it* when the page asks before replacing an unfinished game."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            if self.d.find_element(By.ID, "confirm").is_displayed():
                self.click("#confirm-yes")
                return True
            time.sleep(0.1)
        return False

    # ------------------------------------------------------------------ helpers
    def open(self) -> None:
        self.d.get(self.url)
        self.wait(lambda: self.d.find_elements(By.CSS_SELECTOR, "#board .sq"))

    def wait(self, pred, timeout: float = 90.0, what: str = ""):
        deadline = time.time() + timeout
        while True:
            try:
                value = pred()
            except Exception:  # noqa: BLE001 - stale elements while the page re-renders
                value = None
            if value:
                return value
            if time.time() > deadline:
                self.d.save_screenshot(str(Path(tempfile.gettempdir()) / "gui-test-failure.png"))
                raise AssertionError(f"timed out waiting for {what or pred}; status: {self.text('#status')!r} "
                                     f"error: {self.text('#error')!r}")
            time.sleep(0.1)

    def text(self, css: str) -> str:
        for _ in range(20):  # the page re-renders when the state changes: retry stale elements
            try:
                els = self.d.find_elements(By.CSS_SELECTOR, css)
                return els[0].text if els else ""
            except StaleElementReferenceException:
                time.sleep(0.05)
        return ""

    def attr(self, css: str, name: str) -> str | None:
        """An attribute of the first element matching ``css``, read in one script call.

        The page re-renders whenever the state changes, so an element found by one WebDriver call can be stale by
        the next; reading inside the page cannot be."""
        return self.d.execute_script(
            "const e = document.querySelector(arguments[0]); return e ? e.getAttribute(arguments[1]) : null;",
            css, name)

    def click(self, css: str) -> None:
        def attempt():
            els = self.d.find_elements(By.CSS_SELECTOR, css)
            if not els:
                return False
            els[0].click()
            return True
        self.wait(attempt, what=css)

    def sq(self, name: str) -> None:
        self.click(f'#board .sq[data-sq="{name}"]')

    def moves(self) -> list[str]:
        for _ in range(20):
            try:
                return [e.text for e in self.d.find_elements(By.CSS_SELECTOR, "#moves tbody td.usi")]
            except StaleElementReferenceException:
                time.sleep(0.05)
        return []

    def state(self) -> dict:
        return self.session.state()

    def new_game(self, variant: str, sente: str = "human", gote: str = "human", options: dict | None = None,
                 seed: int = 1, limit: tuple[str, int] = ("depth", 1),
                 clock: tuple[str, str, str] = ("none", "10", "30")) -> None:
        """Start a game from the form; ``sente`` / ``gote`` are ``human`` or an engine's name (``fantasista`` is
        ours, ``random`` the random mover the test server offers); both engines get ``limit``, both sides the time
        control ``clock`` (kind, main time, byoyomi or increment)."""
        Select(self.d.find_element(By.ID, "variant")).select_by_value(variant)
        for name, value in (options or {}).items():
            Select(self.d.find_element(By.ID, f"opt-{name}")).select_by_value(value)
        Select(self.d.find_element(By.ID, "player-0")).select_by_value(sente)
        if self.d.find_element(By.ID, "player-1").is_displayed():
            Select(self.d.find_element(By.ID, "player-1")).select_by_value(gote)
        for side in (0, 1):
            self.d.execute_script(
                "for (const [id, v] of arguments[0]) { const e = document.getElementById(id); e.value = v;"
                " e.dispatchEvent(new Event('change')); }",
                [[f"limit-kind-{side}", limit[0]], [f"limit-value-{side}", str(limit[1])],
                 [f"clock-kind-{side}", clock[0]], [f"clock-main-{side}", clock[1]], [f"clock-extra-{side}", clock[2]]])
        seed_field = self.d.find_element(By.ID, "seed")
        seed_field.clear()
        seed_field.send_keys(str(seed))
        session = self.session
        before = session.game_number
        self.click("#start")
        self.wait(lambda: session.game_number != before or self.d.find_element(By.ID, "confirm").is_displayed(),
                  what="the new game or the question")
        if session.game_number == before:
            self.click("#confirm-yes")
        self.wait(lambda: session.game_number != before and self.state()["variant"]["id"] == variant
                  and self.d.find_elements(By.CSS_SELECTOR, "#board .sq"), what=f"new {variant} game")
        time.sleep(0.2)

    def viewport(self, width: int, height: int, mobile: bool) -> None:
        """Show the page on a screen of exactly this size (a phone's: its meta viewport and touch)."""
        self.d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                               {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": mobile})
        self.d.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": mobile})

    def screenshot(self, name: str) -> None:
        """What the screen shows (scrolled to the top), as ``<name>.png``."""
        IMG.mkdir(parents=True, exist_ok=True)
        path = IMG / f"{name}.png"
        self.d.execute_script("window.scrollTo(0, 0); document.activeElement && document.activeElement.blur();")
        time.sleep(0.3)  # the layout settles (the board is sized after each render)
        self.d.save_screenshot(str(path))
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n", path

    def kanji(self, sq: str) -> str | None:
        """The piece on a square as the server names it (its full kanji), whatever the piece style drawn."""
        return self.attr(f'#board .sq[data-sq="{sq}"]', "data-kanji")

    def wave(self, *moves: str) -> None:
        """Click silver-wave moves (``"5g5f"``: the silver, then its square), each after the server's answer."""
        if not self.d.find_elements(By.ID, "wave-moves"):
            self.click('#actions button[data-step="btn:wave"]')
            self.wait(lambda: self.d.find_elements(By.ID, "wave-moves"), what="the wave mode")
        for move in moves:
            frm, to = move[:2], move[2:4]
            self.sq(frm)
            self.wait(lambda: "selected" in self.attr(f'#board .sq[data-sq="{frm}"]', "class"), what=f"silver {frm}")
            done = len(self.moves())
            self.sq(to)
            if move[4:] == "+" or len(self.d.find_elements(By.CSS_SELECTOR, "#chooser:not([hidden]) .choice")):
                self.click(f'#chooser button.choice[data-move="{move}"]')
            self.wait(lambda: move in self.text("#wave-moves") or len(self.moves()) > done, what=f"wave move {move}")

    def play_path(self, path: list[str]) -> None:
        """Click the steps of a server click path (squares, hands, buttons)."""
        for step in path:
            kind, _, value = step.partition(":")
            if kind == "sq":
                self.sq(value)
            elif kind == "hand":
                side = self.state()["side"]
                self.click(f'.hand .hp[data-hand="{value}"][data-color="{side}"]')
            else:
                self.click(f'#actions button[data-step="{step}"]')

    def save_and_reload(self, fmt: str = "json") -> None:
        """Save the record into the text box, start another game, load the text back: same moves."""
        expected = self.moves()
        self.click(f"#save-{fmt}")
        text = self.wait(lambda: self.d.find_element(By.ID, "record-text").get_property("value"), what="record")
        path = Path(tempfile.mkdtemp()) / f"record.{fmt}"
        path.write_text(text, encoding="utf-8")
        self.session.new_game("shogi", players=["human", "human"])
        self.wait(lambda: self.moves() == [], what="a fresh game")
        self.d.find_element(By.ID, "load-file").send_keys(str(path))
        self.wait(lambda: self.moves() == expected, what=f"the {fmt} record loaded back")


# ------------------------------------------------------------------------------------------ shogi
def test_shogi_clicks_engine_promotion_records_and_mate(gui):
    gui.open()
    gui.new_game("shogi", "human", "fantasista", limit=("depth", 1))
    gui.screenshot("shogi")
    assert gui.text('#board .sq[data-sq="5i"]') in ("玉", "王")
    gui.sq("7g")
    assert "target" in gui.attr('#board .sq[data-sq="7f"]', "class")
    gui.sq("7f")
    gui.wait(lambda: len(gui.moves()) == 2, timeout=600, what="our engine's answer")
    assert gui.moves()[0] == "7g7f"
    assert gui.text("#info-depth") == "1" and gui.text("#info-score") != "–"
    assert gui.d.find_elements(By.CSS_SELECTOR, "#moves td.ja")[0].text == "７六歩(77)"
    assert gui.attr("#graph", "data-points") == "1"
    gui.click("#undo")
    gui.wait(lambda: gui.moves() == [], what="undo")
    gui.click("#redo")
    gui.wait(lambda: len(gui.moves()) == 2, what="redo")
    # piece styles: western letters, two-kanji names, back to one kanji
    for style, rook in (("western", "R"), ("two", "飛車"), ("one", "飛")):
        Select(gui.d.find_element(By.ID, "piece-style")).select_by_value(style)
        assert gui.text('#board .sq[data-sq="2h"]').replace("\n", "") == rook

    # the promotion prompt, in a game between two people
    gui.new_game("shogi", "human", "human")
    for n, (a, b) in enumerate((("7g", "7f"), ("3c", "3d")), 1):
        gui.sq(a), gui.sq(b)
        gui.wait(lambda: len(gui.moves()) == n, what=f"move {n}")
    gui.sq("8h"), gui.sq("2b")
    labels = [b.get_attribute("aria-label")
              for b in gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, "#chooser button.choice"))]
    assert labels == ["成 promote", "不成 don't promote"]
    # one question, one way out: no Cancel beside the board while it asks, and no "Which one?"
    assert "Promote?" in gui.text("#chooser .prompt") and not gui.d.find_element(By.ID, "cancel-move").is_displayed()
    gui.click('#chooser button.choice[data-token="8h2b+"]')
    gui.wait(lambda: gui.moves()[-1:] == ["8h2b+"])
    gui.sq("3a"), gui.sq("2b")  # 同銀
    gui.wait(lambda: len(gui.moves()) == 4)
    gui.play_path(["hand:B", "sq:5e"])
    gui.wait(lambda: gui.moves()[-1:] == ["B*5e"])
    for fmt in ("kif", "csa", "json"):
        gui.save_and_reload(fmt)

    # a mate by clicking ends the game
    gui.session.new_game("shogi", players=["human", "human"], start_sfen="4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '.hand .hp[data-hand="G"]'))
    gui.play_path(["hand:G", "sq:5b"])
    gui.wait(lambda: "checkmate" in gui.text("#result"), what="the game end")
    assert "sente wins" in gui.text("#result")


# ------------------------------------------------------------------------------------------ dai shogi
def test_daishogi_13x13_engine_and_lion_steps(gui):
    gui.open()
    gui.new_game("daishogi2017", "human", "random", limit=("depth", 1))
    gui.screenshot("daishogi2017")
    files = [e.text for e in gui.d.find_elements(By.CSS_SELECTOR, "#files span")]
    assert files[:2] == ["13", "12"] and len(gui.d.find_elements(By.CSS_SELECTOR, "#board .sq")) == 169
    gui.sq("1j"), gui.sq("1i")
    gui.wait(lambda: len(gui.moves()) == 2, what="the engine's answer")
    # a lion capturing in passing, chosen step by step
    sfen = "6k6/13/13/13/13/7p5/6Z6/13/13/13/13/13/6K6 b - 1"
    gui.session.new_game("daishogi2017", players=["human", "human"], start_sfen=sfen)
    gui.wait(lambda: gui.kanji("7g") == "獅子")
    assert gui.text('#board .sq[data-sq="7g"]') == "獅"  # the one-kanji style
    gui.sq("7g"), gui.sq("6f")
    assert gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '#chooser button[data-token="7g6f"]'))
    classes = gui.attr('#board .sq[data-sq="5e"]', "class")
    assert "target" in classes
    gui.sq("5e")
    gui.wait(lambda: gui.moves() == ["7g6f,6f5e"])
    assert gui.d.find_elements(By.CSS_SELECTOR, "#moves td.ja")[0].text == "５五獅子(77) ６六経由"
    gui.save_and_reload("json")


# ------------------------------------------------------------------------------------------ fantasista
def test_fantasista_roll_shown_and_engine_answers(gui):
    gui.open()
    gui.new_game("fantasista", "human", "random", options={"fairy_sente": "hiko", "fairy_gote": "ayumi"})
    gui.screenshot("fantasista")
    assert "hiko" in gui.text("#variant-panel") and "no magic yet" in gui.text("#roll")
    # 14 plies from a record, then sente's 15th move by clicking: the roll follows
    from engine import new_game
    g, rng, tokens = new_game("fantasista", fairies=("hiko", "ayumi")), random.Random(3), []
    while len(tokens) < 14:
        tok = rng.choice([t for t in g.legal_actions() if "," not in t])
        g.apply(tok)
        tokens.append(tok)
    record = {"variant": "fantasista", "options": {"fairy_sente": "hiko", "fairy_gote": "ayumi"}, "moves": tokens}
    gui.d.find_element(By.ID, "record-text").clear()
    gui.d.execute_script("document.getElementById('record-text').value = arguments[0];", json.dumps(record))
    gui.click("#load-text")
    gui.wait(lambda: len(gui.moves()) == 14, what="the 14-ply record")
    st = gui.state()
    assert st["human_turn"] and st["side"] == 0
    move = next(a for a in st["legal"] if len(a["path"]) == 2 and a["path"][0].startswith("sq:"))
    gui.play_path(move["path"])
    if gui.d.find_elements(By.CSS_SELECTOR, "#chooser:not([hidden]) button.choice"):
        gui.click(f'#chooser button.choice[data-token="{move["token"]}"]')
    gui.wait(lambda: "rolled" in gui.text("#roll"), what="the roll")
    assert gui.d.find_element(By.ID, "die").text.isdigit()
    gui.wait(lambda: len([m for m in gui.moves() if not m.startswith("roll=")]) >= 16, what="the engine's move")
    gui.wait(lambda: gui.moves().count("roll=" + gui.state()["events"]["roll"]["token"].split("=")[1]) >= 1)
    gui.click("#resign")
    gui.click("#resign-yes")
    gui.wait(lambda: "resign" in gui.text("#result"))


# ------------------------------------------------------------------------------------------ turncoat
def test_turncoat_plan_by_clicking_secret_kept_and_defection(gui):
    gui.open()
    gui.new_game("turncoat", "human", "random")
    gui.screenshot("turncoat")
    gui.sq("8b")  # the enemy rook: plan package 1
    gui.wait(lambda: gui.d.find_element(By.ID, "plan-confirm").is_enabled())
    gui.click("#plan-confirm")
    gui.wait(lambda: gui.state()["human_turn"] and len(gui.moves()) == 2, what="the engine's plan")
    secret = gui.session.plies[1].token
    assert secret.startswith("plan:") and secret not in gui.d.page_source
    assert gui.text("#plan-0") == "8b" and gui.text("#plan-1") == "?"
    gui.sq("7g"), gui.sq("7f")
    gui.wait(lambda: len(gui.moves()) == 4, what="the engine's move")
    assert secret not in gui.d.page_source
    # defection from move 31, between two people (a record of 30 moves after the plans)
    from engine import new_game
    g, rng, tokens = new_game("turncoat"), random.Random(5), []
    while len(tokens) < 32:
        tok = rng.choice([t for t in g.legal_actions() if t != "defect"])
        g.apply(tok)
        tokens.append(tok)
    gui.new_game("turncoat", "human", "human")
    gui.d.execute_script("document.getElementById('record-text').value = arguments[0];",
                         json.dumps({"variant": "turncoat", "moves": tokens}))
    gui.click("#load-text")
    gui.wait(lambda: len(gui.moves()) == 32, what="the turncoat record")
    gui.click('#actions button[data-step="btn:defect"]')
    gui.wait(lambda: gui.moves()[-1:] == ["defect"] or gui.state()["result"], what="the defection")


def test_turncoat_other_sides_plan_is_not_highlighted(gui):
    """A plan is no move: the board never marks the other side's plan squares as the last move (against an engine,
    and between two people, where the side to move looks at the board)."""
    gui.open()
    gui.new_game("turncoat", "human", "random")
    gui.sq("8b")
    gui.wait(lambda: gui.d.find_element(By.ID, "plan-confirm").is_enabled())
    gui.click("#plan-confirm")
    gui.wait(lambda: gui.state()["human_turn"] and len(gui.moves()) == 2, what="the engine's plan")
    marked = lambda: gui.d.execute_script(  # noqa: E731 - read in the page in one call (it re-renders)
        "return [...document.querySelectorAll('#board .sq.last')].map((e) => e.dataset.sq);")
    assert gui.session.plies[1].token.startswith("plan:") and marked() == []
    gui.new_game("turncoat", "human", "human")
    gui.session.play("plan:8b")
    gui.session.play("plan:2h")  # gote's plan: sente's rook, while sente looks at the board
    gui.wait(lambda: len(gui.moves()) == 2, what="both plans")
    assert gui.text("#plan-1") == "?" and marked() == []

# ------------------------------------------------------------------------------------------ enokian
def test_enokian_card_deck_and_engine(gui):
    gui.open()
    gui.new_game("enokian", "human", options={"michizane": "1a"}, seed=4)
    gui.wait(lambda: gui.d.find_elements(By.ID, "card"))
    # the solitaire has no gote: neither its player nor its engine limit nor its clock is offered
    assert not any(gui.d.find_element(By.ID, i).is_displayed() for i in ("player-1", "limit-kind-1", "clock-kind-1"))
    gui.screenshot("enokian")
    deck = int(gui.text("#deck"))
    assert 0 <= int(gui.text("#kings")) <= 4
    st = gui.state()
    gui.play_path(st["legal"][0]["path"])
    gui.wait(lambda: int(gui.text("#deck")) < deck or gui.state()["result"], what="the next card")
    gui.new_game("enokian", "random", seed=4)
    gui.wait(lambda: len([m for m in gui.moves() if not m.startswith("card=")]) >= 3 or gui.state()["result"],
             what="the engine playing the solitaire")
    gui.wait(lambda: "%" in gui.text("#info-score") or gui.state()["result"], what="the win probability")


# ------------------------------------------------------------------------------------------ mawarikudoi
def test_mawarikudoi_throw_turn_steps_progress_and_engine(gui):
    gui.open()
    gui.new_game("mawarikudoi", "human", "fantasista", seed=2)  # our engine, depth 1; seed 2 throws N = 1 first
    gui.wait(lambda: gui.d.find_elements(By.ID, "turn-left"), what="the turn to build")
    gui.screenshot("mawarikudoi")
    assert gui.d.find_elements(By.CSS_SELECTOR, "#throw .general"), "the thrown generals are drawn"
    assert "歩" in gui.text("#runner-0 .relay .current") and "1i" in gui.text("#runner-0")
    assert gui.attr('#board .sq[data-sq="9a"] .piece', "data-facing") == "s"
    n = gui.state()["turn_build"]["steps"]
    assert gui.text("#turn-left").startswith(f"{n} of {n}")
    assert "click where the turn ends" in gui.text("#turn-left")
    gui.click("#turn-mode")  # this turn action by action
    gui.wait(lambda: "click where" not in gui.text("#turn-left"), what="action-by-action mode")
    # the first action: up one square; the preview shows the pawn there before anything is played
    gui.sq("1h") if n > 1 else None
    if n > 1:
        gui.wait(lambda: gui.text('#board .sq[data-sq="1h"]') == "歩", what="the previewed step")
        gui.click("#turn-back")
        gui.wait(lambda: gui.text('#board .sq[data-sq="1i"]').startswith("歩"), what="back one action")
    played = len(gui.moves())
    for k in range(n):  # spend the actions: first a step, then turns on the spot
        if k == 0:
            gui.sq("1h")
        else:
            gui.click('#actions button[data-step^="btn:turn:"]')
        if k < n - 1:
            gui.wait(lambda: gui.text("#turn-left").startswith(f"{n - k - 1} of"), what=f"action {k + 1}")
    gui.wait(lambda: len(gui.moves()) > played and gui.moves()[played].startswith("1i1h"), what="the turn played")
    gui.wait(lambda: len([m for m in gui.moves() if not m.startswith("throw")]) >= 2 or gui.state()["result"],
             what="our engine's turn")
    assert gui.d.find_elements(By.CSS_SELECTOR, "#moves td.ja")[0].text.startswith("振り 金")
    # the throw choice (own runner lower than the enemy's): the mixed throw shows golds and silvers
    gui.session.new_game("mawarikudoi", players=["human", "human"], seed=5,
                                start_sfen="l8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/l9a:s:-:m/c")
    gui.click('#actions button[data-step="btn:throw:mixed"]')
    gui.wait(lambda: len(gui.d.find_elements(By.CSS_SELECTOR, "#throw .group")) == 2, what="the mixed throw")
    assert "銀" in gui.text("#throw") and gui.text("#throw-n").isdigit()
    gui.save_and_reload("json")
    # the king home with two corners touched: "Finish the race" ends the game
    gui.session.new_game("mawarikudoi", players=["human", "human"], seed=2,
                                start_sfen="l8/9/9/9/9/9/9/9/7K1 b - 1 K2i:e:*:m/l9a:s:-:m/g")
    gui.click("#turn-win")
    gui.wait(lambda: "completed" in gui.text("#result"), what="the race won")
    assert "sente wins" in gui.text("#result")


def test_mawarikudoi_whole_turn_chosen_by_its_end(gui):
    gui.open()
    gui.session.new_game("mawarikudoi", players=["human", "human"], seed=3,
                                start_sfen="p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/t3")
    gui.wait(lambda: "click where the turn ends" in gui.text("#turn-left"), what="the turn's ends")
    ends = gui.session.turn_step([], ends=True)["ends"]
    kinds = dict(gui.d.execute_script(  # one script call: the board cannot re-render half-way through the read
        "return [...document.querySelectorAll('#board .sq')].map(e => [e.dataset.sq, e.dataset.kind]);"))
    assert {sq for sq, k in kinds.items() if k == "end"} == {e["square"] for e in ends}
    # 1h: the pawn can end there facing several ways: a chooser; pick facing west
    gui.sq("1h")
    buttons = gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, "#chooser button.end-choice"), what="the chooser")
    assert len(buttons) == len([e for e in ends if e["square"] == "1h"]) >= 2
    assert "selected" in gui.attr('#board .sq[data-sq="1h"]', "class")
    gui.screenshot("mawarikudoi-ends")
    west = next(e for e in ends if e["square"] == "1h" and e["facing"] == "w")
    gui.click(f'#chooser button.end-choice[data-end="{west["end"]}"]')
    gui.wait(lambda: len(gui.moves()) >= 1 and len(gui.moves()[0].split(",")) == 3, what="the whole turn played")
    assert gui.attr('#board .sq[data-sq="1h"] .piece', "data-facing") == "w"
    # gote's turn: one end alone on its square is played by one click
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '#board .sq[data-kind="end"]'), what="gote's ends")
    gote_ends = gui.session.turn_step([], ends=True)["ends"]
    alone = next((e for e in gote_ends if [x["square"] for x in gote_ends].count(e["square"]) == 1), None)
    assert alone is not None, "seed 3: gote's throw has an end alone on its square"
    played = len(gui.moves())
    gui.sq(alone["square"])
    gui.wait(lambda: len(gui.moves()) > played, what="gote's one-click turn")
    gote = gui.state()["panel"]["sides"][1]
    assert (gote["square"], gote["facing"]) == (alone["square"], alone["facing"])
    # one action by hand, then the rest at once from there
    gui.session.new_game("mawarikudoi", players=["human", "human"],
                                start_sfen="p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/t3")
    # the old game's page also says "click where the turn ends" (sente to move): wait for the new game's empty
    # move list first, or the clicks below land on the old board and the new game then resets the turn
    gui.wait(lambda: gui.moves() == [] and "click where the turn ends" in gui.text("#turn-left"), what="the new turn")
    gui.click("#turn-mode")
    gui.wait(lambda: "click where" not in gui.text("#turn-left"), what="action-by-action mode")
    gui.sq("1h")
    gui.wait(lambda: gui.text("#turn-left").startswith("2 of 3"), what="the first action")
    gui.click("#turn-mode")
    gui.wait(lambda: "click where the turn ends" in gui.text("#turn-left"), what="the ends of the rest")
    gui.wait(lambda: gui.attr('#board .sq[data-sq="1f"]', "data-kind")
             == "end", what="1f as an end")
    assert gui.attr('#board .sq[data-sq="3i"]', "data-kind") != "end"
    gui.sq("1f")
    gui.wait(lambda: gui.moves()[:1] == ["1i1h,1h1g,1g1f"], what="the turn finished at once")


# ------------------------------------------------------------------------------------------ fantasista magic
def test_fantasista_magic_highlights_inventory_and_wave_in_any_order(gui):
    gui.open()
    sfen = "4k4/4p4/9/9/9/9/3SSS3/4K4/7B1 b - 1 f=ga;r=WCe;m=2i@S;h=D2Sp"
    gui.session.new_game("fantasista", options={"fairy_sente": "ginsara"}, players=["human", "human"],
                                start_sfen=sfen)
    gui.wait(lambda: gui.d.find_elements(By.ID, "inventory-0"))
    inv = gui.text("#inventory-0")
    assert "ginsara" in inv and "curtain" in inv and "wave" in inv and "銀'×2" in inv and "火炎竜'" in inv
    assert "emblem" in gui.text("#inventory-1")

    def kind(sq):
        return gui.attr(f'#board .sq[data-sq="{sq}"]', "data-kind")
    # breath: the fire dragon dropped, then its breath target in its own colour
    gui.play_path(["hand:D", "sq:5e"])
    gui.wait(lambda: kind("5b") == "breath", what="the breath target")
    gui.click("#actions button:last-child")  # cancel
    # the silver curtain: the squares around the king
    gui.click('#actions button[data-step="btn:curtain"]')
    gui.wait(lambda: kind("4h") == "curtain", what="the curtain squares")
    gui.screenshot("fantasista-magic")
    gui.click("#actions button:last-child")
    # the rider on the carrier
    gui.sq("2i"), gui.sq("1h")
    gui.wait(lambda: kind("1g") == "rider", what="the rider's follow-up")
    gui.click("#actions button:last-child")
    # the wave, its silvers clicked against the canonical order: 5g first, then 4g (canonical is 4g first)
    # (5g to 4f and 4g to 5f: the silvers trade the destinations of the canonical wave:4g4f,5g5f)
    gui.wave("5g4f")
    gui.wait(lambda: kind("4g") == "wave" and kind("5g") == "", what="the other silvers to pick")
    gui.sq("4g")
    gui.wait(lambda: kind("5f") == "wave", what="4g's moves, 5f among them")
    gui.sq("4g")  # dropped again: gui.wave picks it
    gui.wave("4g5f")
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '#wave-play[data-token="wave:4g4f,5g5f"]'))
    assert "5g4f, 4g5f" in gui.text("#wave-moves")
    gui.click("#wave-play")
    gui.wait(lambda: gui.moves()[-1:] == ["wave:4g4f,5g5f"], what="the wave played in another order")


def test_fantasista_wave_of_five_silvers_clicked_in_any_order(gui):
    gui.open()
    sfen = "4k4/4p4/9/9/9/9/2SSSS3/4S4/K8 b - 1 f=ga;r=W"  # five silvers: 5h5g needs 5g gone first
    gui.session.new_game("fantasista", options={"fairy_sente": "ginsara"}, players=["human", "human"],
                                start_sfen=sfen)
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '#actions button[data-step="btn:wave"]'))
    canonical = gui.session.game.state.canonical("wave:5g5f,5h5g,4g4f,7g7f,6g6f")
    # 5h to 5g first (the rules need 5g to move before it), a wrong click in between, the rest backwards
    gui.wave("5h5g")
    assert gui.text("#wave-moves").endswith("5h5g")
    gui.sq("4g"), gui.sq("3e")  # 3e is no silver move: nothing happens, 4g stays picked
    time.sleep(0.3)
    assert "selected" in gui.attr('#board .sq[data-sq="4g"]', "class")
    gui.sq("4f")
    gui.wait(lambda: "4g4f" in gui.text("#wave-moves"), what="4g4f after the stray click")
    gui.wave("7g7f", "6g6f", "5g5f")
    gui.wait(lambda: gui.moves()[-1:] == [canonical], what="the five-silver wave")
    squares = gui.state()["board"]["squares"]
    assert all(squares[q]["letter"] == "S" for q in ("7f", "6f", "5f", "4f", "5g"))
    assert gui.text("#error") == ""
    # a silver entering the zone: the wave asks 成 / 不成 for that silver
    gui.session.new_game("fantasista", options={"fairy_sente": "ginsara"}, players=["human", "human"],
                                start_sfen="4k4/9/9/3SS4/9/9/9/9/4K4 b - 1 f=ga;r=W")
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '#actions button[data-step="btn:wave"]'))
    gui.wave("6d6c+", "5d5c")
    gui.wait(lambda: gui.moves()[-1:] == ["wave:5d5c,6d6c+"], what="the wave with one promotion")


def _bump_until_drawn(gui, times: int = 3) -> None:
    """State updates that leave the position as it is (as each analysis info line makes): the version goes up and
    the page draws each new state."""
    session = gui.session
    for _ in range(times):
        with session.lock:
            session._touch()
            version = session.version
        gui.wait(lambda: gui.d.execute_script("return S && S.version") == version, what=f"version {version} drawn")


def test_a_half_built_turn_or_wave_survives_state_updates_and_goes_with_the_position(gui):
    """A mawarikudoi turn built action by action and a fantasista wave being clicked are kept while states arrive
    that do not change the position (analysis lines, clocks), and dropped when the position changes."""
    gui.open()
    sfen = "p8/9/9/9/9/9/9/9/8P b - 1 P1i:n:-:m/p9a:s:-:m/t3"
    gui.session.new_game("mawarikudoi", players=["human", "human"], start_sfen=sfen)
    gui.wait(lambda: gui.moves() == [] and "click where the turn ends" in gui.text("#turn-left"), what="the turn")
    gui.click("#turn-mode")
    gui.wait(lambda: "click where" not in gui.text("#turn-left"), what="action-by-action mode")
    gui.sq("1h")
    gui.wait(lambda: gui.text("#turn-left").startswith("2 of 3"), what="the first action")
    _bump_until_drawn(gui)
    time.sleep(0.3)  # a reset would fetch the turn's start again: give it time to show
    assert gui.text("#turn-left").startswith("2 of 3") and gui.text('#board .sq[data-sq="1h"]') == "歩"
    gui.click('#actions button[data-step^="btn:turn:"]')  # the turn goes on from where it was
    gui.wait(lambda: gui.text("#turn-left").startswith("1 of 3"), what="the second action")
    # the position changes (another start: the runner on 2i): the half-built turn goes
    gui.session.new_game("mawarikudoi", players=["human", "human"],
                         start_sfen="p8/9/9/9/9/9/9/9/7P1 b - 1 P2i:n:-:m/p9a:s:-:m/t3")
    gui.wait(lambda: gui.text("#turn-left").startswith("3 of 3") and gui.text('#board .sq[data-sq="2i"]') == "歩",
             what="the new position's whole turn")
    assert gui.text('#board .sq[data-sq="1h"]') == ""

    sfen = "4k4/4p4/9/9/9/9/3SSS3/4K4/9 b - 1 f=ga;r=W"
    gui.session.new_game("fantasista", options={"fairy_sente": "ginsara"}, players=["human", "human"],
                         start_sfen=sfen)
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '#actions button[data-step="btn:wave"]'))
    gui.wave("5g5f")
    _bump_until_drawn(gui)
    time.sleep(0.3)
    assert "5g5f" in gui.text("#wave-moves")
    gui.wave("4g4f")
    assert "5g5f, 4g4f" in gui.text("#wave-moves")
    # a new game of the same position (the game's number changes): the wave goes
    gui.session.new_game("fantasista", options={"fairy_sente": "ginsara"}, players=["human", "human"],
                         start_sfen=sfen)
    gui.wait(lambda: not gui.d.find_elements(By.ID, "wave-moves"), what="the wave dropped")


def test_fantasista_boarding_a_carrier_and_capturing_it_with_the_rider(gui):
    gui.open()
    gui.session.new_game("fantasista", options={"fairy_sente": "yokaku"}, players=["human", "human"],
                                start_sfen="4k4/9/9/9/9/9/9/4K2G1/7B1 b - 1 f=ya;m=2i@")
    gui.wait(lambda: gui.text('#board .sq[data-sq="2h"]') == "金")
    gui.sq("2h")
    gui.wait(lambda: gui.attr('#board .sq[data-sq="2i"]', "data-kind") == "board", what="the carrier to board")
    assert "t-board" in gui.attr('#board .sq[data-sq="2i"]', "class")
    gui.sq("2i")
    gui.wait(lambda: gui.moves() == ["2h2i"], what="the boarding")
    assert gui.text('#board .sq[data-sq="2i"] .rider') == "金" and gui.text('#board .sq[data-sq="2h"]') == ""
    # gote's rook captures the carrier with its rider: both go to gote's hand
    gui.session.new_game("fantasista", players=["human", "human"],
                                start_sfen="4k2r1/9/9/9/9/9/9/4K4/7B1 w - 2 f=ya;m=2i@G")
    # the first game's board also shows a gold riding on 2i: wait for the new game's rook too before clicking
    gui.wait(lambda: gui.text('#board .sq[data-sq="2a"]') == "飛"
             and gui.text('#board .sq[data-sq="2i"] .rider') == "金", what="the new game, its rider on the carrier")
    gui.sq("2a"), gui.sq("2i")
    gui.click('#chooser button.choice[data-token="2a2i+"]')
    gui.wait(lambda: gui.moves() == ["2a2i+"], what="the capture")
    hand = gui.text("#hand-top")
    assert "角" in hand and "金" in hand
    assert not gui.d.find_elements(By.CSS_SELECTOR, '#board .sq[data-sq="2i"] .rider')


def test_new_game_form_follows_loaded_records(gui):
    gui.open()
    gui.new_game("shogi", "human", "human")
    value = lambda css: gui.d.find_element(By.CSS_SELECTOR, css).get_property("value")  # noqa: E731
    record = {"variant": "fantasista", "moves": ["7g7f"],
              "options": {"fairy_sente": "yokaku", "fairy_gote": "ginsara", "reserved": "2"}}
    gui.d.execute_script("document.getElementById('record-text').value = arguments[0];", json.dumps(record))
    gui.click("#load-text")
    gui.wait(lambda: gui.moves() == ["7g7f"], what="the fantasista record")
    gui.wait(lambda: value("#variant") == "fantasista", what="the form's variant")
    assert (value("#opt-fairy_sente"), value("#opt-fairy_gote"), value("#opt-reserved")) == ("yokaku", "ginsara", "2")
    # a record's players: our engine comes back with its limit; an engine named by a command is not started
    record.update(moves=["7g7f", "3c3d"], players=[{"kind": "engine", "command": "/bin/false", "depth": 1},
                                                   {"kind": "engine", "builtin": True, "movetime": 250}])
    gui.d.execute_script("document.getElementById('record-text').value = arguments[0];", json.dumps(record))
    gui.click("#load-text")
    assert gui.confirm_if_asked()  # the loaded game is unfinished: the page asks before replacing it
    gui.wait(lambda: gui.moves() == ["7g7f", "3c3d"] and value("#player-1") == "fantasista",
             what="the record's players")
    assert value("#player-0") == "human" and (value("#limit-kind-1"), value("#limit-value-1")) == ("movetime", "250")
    assert "not started" in gui.text("#error")
    # a game started elsewhere with engines: the form shows its players and limits
    gui.session.new_game("enokian", options={"michizane": "9i"},
                         players=[{"kind": "engine", "engine": "random", "nodes": 77}, "human"])
    gui.wait(lambda: value("#variant") == "enokian", what="the enokian game")
    assert value("#opt-michizane") == "9i" and value("#player-0") == "random"
    assert (value("#limit-kind-0"), value("#limit-value-0")) == ("nodes", "77")
    # a KIF file: standard shogi, no variant options; the players stay those of the form
    Select(gui.d.find_element(By.ID, "variant")).select_by_value("daishogi2017")
    Select(gui.d.find_element(By.ID, "player-0")).select_by_value("human")
    Select(gui.d.find_element(By.ID, "player-1")).select_by_value("fantasista")
    kif = "手合割：平手\n   1 ７六歩(77)\n   2 ３四歩(33)\n"
    gui.d.execute_script("document.getElementById('record-text').value = arguments[0];", kif)
    gui.click("#load-text")
    gui.confirm_if_asked()
    gui.wait(lambda: value("#variant") == "shogi", what="the KIF game")
    assert not gui.d.find_elements(By.CSS_SELECTOR, "#variant-options select")
    assert (value("#player-0"), value("#player-1")) == ("human", "fantasista")
    assert [p["kind"] for p in gui.state()["players"]] == ["human", "engine"]


def test_each_tab_plays_its_own_game_and_a_new_game_asks_first(gui):
    """Two tabs, two games: *New game* in one never replaces the other's; replacing an unfinished game asks in
    the page (*Keep playing* keeps it); a reload takes the tab's game back."""
    gui.open()
    gui.new_game("shogi", "human", "human")
    gui.sq("7g")
    gui.sq("7f")
    gui.wait(lambda: gui.moves() == ["7g7f"], what="the first tab's move")
    first_tab, first = gui.d.current_window_handle, gui.session
    gui.d.switch_to.new_window("tab")
    try:
        gui.open()
        second = gui.session
        assert second is not first and gui.moves() == []
        gui.new_game("daishogi2017", "human", "human")  # a fresh game: nothing to ask
        assert second.info.id == "daishogi2017"
        assert first.info.id == "shogi" and [p.token for p in first.plies] == ["7g7f"]
    finally:
        gui.d.close()
        gui.d.switch_to.window(first_tab)
    # this tab's unfinished game: New game asks; Keep playing keeps it
    game = first.game_number
    gui.click("#start")
    gui.wait(lambda: gui.d.find_element(By.ID, "confirm").is_displayed(), what="the question")
    assert "not finished" in gui.text("#confirm-text")
    gui.click("#confirm-no")
    time.sleep(0.5)
    assert first.game_number == game and gui.moves() == ["7g7f"]
    assert not gui.d.find_element(By.ID, "confirm").is_displayed()
    # a reload keeps the tab's game
    gui.d.refresh()
    gui.wait(lambda: gui.moves() == ["7g7f"], what="the game after a reload")
    assert gui.session is first
    gui.click("#start")
    gui.wait(lambda: gui.d.find_element(By.ID, "confirm").is_displayed(), what="the question")
    gui.click("#confirm-yes")
    gui.wait(lambda: first.game_number == game + 1 and gui.moves() == [], what="the replaced game")


# ------------------------------------------------------------------------------------------ layout, input, access
#: Each variant's game for the layout test (persons play: nothing moves while the page is measured).
LAYOUT_VARIANTS = ["shogi", "daishogi2017", "fantasista", "turncoat", "mawarikudoi", "enokian"]
#: Where every board square, the pieces and the prompt are on the screen, read in one script call.
LAYOUT_JS = """
const vw = window.innerWidth, vh = window.innerHeight;
const rects = [...document.querySelectorAll('#board .sq')].map((e) => e.getBoundingClientRect());
const pieces = [...document.querySelectorAll('#board .sq[data-piece]')];
const drawn = (e) => !!e.querySelector(':scope > svg.piece polygon') && !!e.querySelector(':scope > svg.piece text');
const hands = [...document.querySelectorAll('.hand .hp')];
const box = document.getElementById('chooser');
const c = box.hidden ? null : box.getBoundingClientRect();
return {vw, vh, docWidth: document.documentElement.scrollWidth, squares: rects.length,
  left: Math.min(...rects.map((r) => r.left)), right: Math.max(...rects.map((r) => r.right)),
  top: Math.min(...rects.map((r) => r.top)), bottom: Math.max(...rects.map((r) => r.bottom)),
  pieces: pieces.length, drawn: pieces.filter(drawn).length, hands: hands.length,
  handsDrawn: hands.filter((e) => e.querySelector('svg.piece polygon')).length,
  chooser: c && {left: c.left, right: c.right, top: c.top, bottom: c.bottom}};
"""


def _layout(gui) -> dict:
    gui.d.execute_script("window.scrollTo(0, 0)")
    time.sleep(0.2)
    return gui.d.execute_script(LAYOUT_JS)


def _prompt_in_view(gui, clicks: list[str], what: str) -> None:
    for name in clicks:
        gui.sq(name)
    gui.wait(lambda: gui.d.find_element(By.ID, "chooser").is_displayed(), what=what)
    box = gui.d.execute_script(LAYOUT_JS)["chooser"]
    vw, vh = gui.d.execute_script("return [window.innerWidth, window.innerHeight]")
    assert 0 <= box["left"] and box["right"] <= vw and 0 <= box["top"] and box["bottom"] <= vh, (what, box, vw, vh)


@pytest.mark.parametrize("screen", [PHONE, DESKTOP], ids=["phone-390x844", "desktop-1366x900"])
def test_every_variant_fits_the_screen_with_drawn_pieces_and_prompts_in_view(gui, screen):
    """No sideways overflow; every square inside the screen's width (at 1366x900 the whole board in view at the
    top of the page); every piece on the board and in hand drawn as SVG; the promotion and the lion's prompt in
    view where they are asked. The phone's screenshots are ``<variant>-phone.png``."""
    width, height, mobile = screen
    gui.open()
    gui.viewport(*screen)
    try:
        for variant in LAYOUT_VARIANTS:
            gui.session.new_game(variant, players=["human", "human"])
            info = gui.state()["variant"]
            gui.wait(lambda: gui.d.execute_script("return S && S.variant.id") == variant
                     and len(gui.d.find_elements(By.CSS_SELECTOR, "#board .sq")) == info["files"] * info["ranks"],
                     what=f"the {variant} board")
            time.sleep(0.3)
            m = _layout(gui)
            assert (m["vw"], m["vh"]) == (width, height)
            assert m["docWidth"] <= width, (variant, m)
            assert m["left"] >= 0 and m["right"] <= width, (variant, m)
            if not mobile:
                assert m["top"] >= 0 and m["bottom"] <= height, (variant, m)
            assert m["pieces"] > 0 and m["drawn"] == m["pieces"], (variant, m)
            assert m["handsDrawn"] == m["hands"], (variant, m)
            # the frame holds every square, and the board stays clear of the side panel beside it (the solitaire's
            # hidden second hand gave its grid column to the board, which then ran under the panel)
            frame, board, side = gui.d.execute_script(
                "return ['board-frame', 'board', 'side'].map((id) => document.getElementById(id)"
                ".getBoundingClientRect()).map((r) => [r.left, r.right, r.top, r.bottom])")
            assert frame[0] <= board[0] and board[1] <= frame[1] + 0.5, (variant, frame, board)
            if side[2] < board[3] and side[3] > board[2]:  # the panel beside the board, not below it
                assert board[1] <= side[0], (variant, board, side)
            if mobile:
                gui.screenshot(f"{variant}-phone")
        # the form at its widest (both sides an engine with its limit and a byoyomi clock, fantasista's options),
        # the rules panel open and the analysis panel: still no sideways overflow
        Select(gui.d.find_element(By.ID, "variant")).select_by_value("fantasista")
        gui.d.execute_script(
            "for (const [id, v] of arguments[0]) { const e = document.getElementById(id); e.value = v;"
            " e.dispatchEvent(new Event('change')); }",
            [[f"{f}-{side}", v] for side in (0, 1) for f, v in
             (("player", "fantasista"), ("limit-kind", "movetime"), ("limit-value", "100000"),
              ("clock-kind", "byoyomi"), ("clock-main", "10:00"), ("clock-extra", "30"))])
        gui.click("#rules-open")
        gui.wait(lambda: gui.d.find_element(By.ID, "rules").is_displayed(), what="the rules panel")
        shown = gui.d.execute_script(
            "return [...document.querySelectorAll('header *, #rules, #analysis, #analysis *')]"
            ".filter((e) => e.getClientRects().length).map((e) => [e.id || e.className, e.getBoundingClientRect().right])")
        assert gui.d.execute_script("return document.documentElement.scrollWidth") <= width
        assert [name for name, right in shown if right > width + 0.5] == [], shown
        assert gui.d.find_element(By.ID, "clock-extra-1").is_displayed()
        gui.click("#rules-close")
        # the prompts, where they are asked
        gui.session.new_game("shogi", players=["human", "human"], start_sfen="4k4/9/9/9/9/9/9/1B7/4K4 b - 1")
        gui.wait(lambda: gui.kanji("8h") == "角" and gui.kanji("5i") is not None, what="the bishop")
        _prompt_in_view(gui, ["8h", "2b"], "the promotion prompt")
        gui.session.new_game("daishogi2017", players=["human", "human"],
                             start_sfen="6k6/13/13/13/13/7p5/6Z6/13/13/13/13/13/6K6 b - 1")
        gui.wait(lambda: gui.kanji("7g") == "獅子", what="the lion")
        _prompt_in_view(gui, ["7g", "6f"], "the lion's stop here")
        assert gui.d.find_elements(By.CSS_SELECTOR, '#chooser button[data-token="7g6f"]')
    finally:
        gui.viewport(*DESKTOP)


def _drag(gui, frm: str, to: str, touch: bool = False) -> None:
    src = gui.d.find_element(By.CSS_SELECTOR, f'#board .sq[data-sq="{frm}"]')
    dst = gui.d.find_element(By.CSS_SELECTOR, f'#board .sq[data-sq="{to}"]')
    if not touch:
        ActionChains(gui.d).click_and_hold(src).move_by_offset(8, -8).move_to_element(dst).release().perform()
        return
    from selenium.webdriver.common.actions import interaction
    from selenium.webdriver.common.actions.action_builder import ActionBuilder
    from selenium.webdriver.common.actions.pointer_input import PointerInput
    actions = ActionBuilder(gui.d, mouse=PointerInput(interaction.POINTER_TOUCH, "finger"))
    actions.pointer_action.move_to(src).pointer_down().move_to(src, 8, 8).move_to(dst).pointer_up()
    actions.perform()


def test_moves_by_mouse_drag_touch_drag_keyboard_and_clicks(gui):
    """The four ways to move go through the same move code; squares are labelled for screen readers."""
    gui.open()
    gui.session.new_game("shogi", players=["human", "human"])
    # the page has drawn this game (not the tab's first one, which looks the same: a drag could hit the old board)
    gui.wait(lambda: gui.d.execute_script("return LIVE && LIVE.game") == gui.session.game_number, what="the game")
    gui.wait(lambda: gui.kanji("7g") == "歩" and gui.moves() == [], what="the game")
    assert gui.attr('#board .sq[data-sq="7g"]', "aria-label") == "7g 歩 sente"
    assert gui.attr('#board .sq[data-sq="5a"]', "aria-label") == "5a 玉 gote"
    assert gui.attr('#board .sq[data-sq="7f"]', "aria-label") == "7f empty"
    _drag(gui, "7g", "7f")
    gui.wait(lambda: gui.moves() == ["7g7f"], what="the mouse drag")
    assert "last" in gui.attr('#board .sq[data-sq="7f"]', "class")
    _drag(gui, "3c", "3d", touch=True)
    gui.wait(lambda: gui.moves() == ["7g7f", "3c3d"], what="the touch drag")
    # a drag let go outside the board moves nothing
    src = gui.d.find_element(By.CSS_SELECTOR, '#board .sq[data-sq="2g"]')
    ActionChains(gui.d).click_and_hold(src).move_by_offset(8, 8).move_to_element(
        gui.d.find_element(By.ID, "moves")).release().perform()
    time.sleep(0.3)
    assert gui.moves() == ["7g7f", "3c3d"] and not gui.d.find_elements(By.CSS_SELECTOR, "#board .sq.selected")
    # the keyboard: focus 3g, right to 2g, Enter picks the pawn, up to 2f, Enter moves it
    gui.d.execute_script("document.querySelector('#board .sq[data-sq=\"3g\"]').focus()")
    ActionChains(gui.d).send_keys(Keys.ARROW_RIGHT, Keys.ENTER, Keys.ARROW_UP).perform()
    focused = gui.d.execute_script("return document.activeElement.getAttribute('aria-label')")
    assert focused == "2f empty, can go here", focused
    ActionChains(gui.d).send_keys(Keys.ENTER).perform()
    gui.wait(lambda: gui.moves() == ["7g7f", "3c3d", "2g2f"], what="the keyboard move")
    assert gui.d.execute_script("return document.activeElement.dataset.sq") == "2f"  # the focus stays on the board
    gui.sq("8c"), gui.sq("8d")
    gui.wait(lambda: gui.moves() == ["7g7f", "3c3d", "2g2f", "8c8d"], what="the clicked move")
    # check: the king in check is marked (state from the server)
    gui.session.new_game("shogi", players=["human", "human"], start_sfen="4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '.hand .hp[data-hand="G"]'), what="the gold in hand")
    assert not gui.d.find_elements(By.CSS_SELECTOR, "#board .sq.check")
    gui.play_path(["hand:G", "sq:4b"])
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '#board .sq.check[data-sq="5a"]'), what="the check mark")
    assert "in check" in gui.attr('#board .sq[data-sq="5a"]', "aria-label")
    assert "王手 check" in gui.text("#status")  # and the status line says so


def test_resign_asks_first_and_the_sound_switch_is_remembered(gui):
    gui.open()
    gui.session.new_game("shogi", players=["human", "human"])
    gui.wait(lambda: gui.moves() == [] and gui.kanji("7g") == "歩", what="the game")
    assert gui.attr("#sound", "aria-pressed") == "false"  # off until switched on
    gui.click("#sound")
    assert gui.attr("#sound", "aria-pressed") == "true"
    assert gui.d.execute_script("return localStorage.getItem('fantasista-sound')") == "on"
    gui.sq("7g"), gui.sq("7f")
    gui.wait(lambda: gui.moves() == ["7g7f"], what="the move")
    gui.wait(lambda: gui.attr("#sound", "data-played") == "1", what="the move's sound")
    # Resign asks; Keep playing keeps the game
    gui.click("#resign")
    assert gui.d.find_element(By.ID, "resign-confirm").is_displayed()
    time.sleep(0.3)
    assert gui.state()["result"] is None
    gui.click("#resign-no")
    assert not gui.d.find_element(By.ID, "resign-confirm").is_displayed() and gui.state()["result"] is None
    # another page of this browser starts with the sound on
    gui.d.switch_to.new_window("tab")
    try:
        gui.open()
        assert gui.attr("#sound", "aria-pressed") == "true"
        gui.click("#sound")  # off again for the tests that follow
    finally:
        gui.d.close()
        gui.d.switch_to.window(gui.d.window_handles[0])
    gui.click("#resign")
    gui.click("#resign-yes")
    gui.wait(lambda: "resign" in gui.text("#result"), what="the resignation")
    assert gui.d.find_element(By.ID, "resign").get_property("disabled")


#: The contrast (WCAG 2) of every visible text on the page against what is behind it (the first opaque background
#: up the tree, each stop of a gradient, semi-transparent layers blended in), and of each piece's kanji on its wood.
CONTRAST_JS = """
const rgb = (s) => { const m = /rgba?\\(([^)]+)\\)/.exec(s); if (!m) return null;
  const p = m[1].split(/[\\s,\\/]+/).filter(Boolean).map(Number); return [p[0], p[1], p[2], p.length > 3 ? p[3] : 1]; };
const lum = (c) => { const [r, g, b] = c.slice(0, 3).map((v) => { v /= 255;
  return v <= 0.03928 ? v / 12.92 : Math.pow((v + 0.055) / 1.055, 2.4); }); return 0.2126 * r + 0.7152 * g + 0.0722 * b; };
const ratio = (a, b) => { const [x, y] = [lum(a), lum(b)].sort((p, q) => q - p); return (x + 0.05) / (y + 0.05); };
const blend = (top, under) => top.slice(0, 3).map((v, i) => top[3] * v + (1 - top[3]) * under[i]);
function behind(el) {
  const layers = [];
  let base = [[255, 255, 255]];
  for (let e = el; e && e.nodeType === 1; e = e.parentElement) {
    const cs = getComputedStyle(e);
    const stops = [...cs.backgroundImage.matchAll(/rgba?\\([^)]+\\)/g)].map((m) => rgb(m[0]));
    if (stops.length) { base = stops; break; }
    const c = rgb(cs.backgroundColor);
    if (c && c[3] >= 1) { base = [c]; break; }
    if (c && c[3] > 0) layers.push(c);
  }
  return base.map((b) => layers.reduceRight((acc, l) => blend(l, acc), b.slice(0, 3)));
}
const bad = [];
for (const el of document.querySelectorAll('body *')) {
  if (el.closest('svg') || el.closest('[hidden]') || el.matches('option, script, style')) continue;
  if (el.closest('button:disabled, select:disabled, input:disabled')) continue;  // disabled controls are exempt
  const own = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim());
  if (!own || !el.getClientRects().length) continue;
  const cs = getComputedStyle(el);
  if (cs.visibility !== 'visible') continue;
  const fg = rgb(cs.color);
  for (const bg of behind(el)) {
    const r = ratio(blend(fg, bg), bg);
    if (r < 4.5) bad.push([el.tagName + (el.id ? '#' + el.id : '') + '.' + el.className, el.textContent.trim().slice(0, 20), r.toFixed(2)]);
  }
}
const wood = (id) => [...document.querySelectorAll('#' + id + ' stop')].map((s) => rgb(getComputedStyle(s).stopColor));
for (const g of document.querySelectorAll('svg.piece g[fill]')) {
  const owner = g.closest('svg').classList.contains('gote') ? 'wood-gote' : 'wood-sente';
  for (const bg of wood(owner)) {
    const r = ratio(rgb(getComputedStyle(g).fill), bg);
    if (r < 4.5) bad.push(['piece ' + owner, g.textContent, r.toFixed(2)]);
  }
}
return bad;
"""


def test_text_contrast_is_at_least_4_5(gui):
    """Every text on a played game's page (form, status, hands, coordinates, panels, move list, promoted and
    unpromoted kanji of both sides) reads at 4.5:1 or more."""
    gui.open()
    gui.session.new_game("fantasista", players=["human", "human"],
                         start_sfen="4k4/4p4/9/9/9/4P4/3SSS3/4K4/7B1 b - 1 f=ga;r=WCe;m=2i@S;h=D2Sp")
    gui.wait(lambda: gui.d.find_elements(By.ID, "inventory-0"), what="the fantasista game")
    bad = gui.d.execute_script(CONTRAST_JS)
    assert bad == [], bad
    gui.session.new_game("shogi", players=["human", "human"],
                         start_sfen="4k4/9/9/9/9/9/9/1+B5+p1/4K4 b RL2Pgs 1")
    gui.wait(lambda: gui.kanji("8h") == "馬", what="promoted pieces")
    gui.sq("5i"), gui.sq("4i")
    gui.wait(lambda: gui.moves() == ["5i4i"], what="a move in the list")
    bad = gui.d.execute_script(CONTRAST_JS)
    assert bad == [], bad


# ------------------------------------------------------------------------------------------ review, branches, editor
def test_move_list_navigates_by_click_and_keys_and_a_move_there_makes_a_branch(gui):
    gui.open()
    gui.new_game("shogi")
    for frm, to in (("7g", "7f"), ("3c", "3d"), ("2g", "2f")):
        gui.sq(frm)
        gui.sq(to)
    gui.wait(lambda: gui.moves() == ["7g7f", "3c3d", "2g2f"], what="three moves")
    piece = lambda sq: gui.attr(f'#board .sq[data-sq="{sq}"]', "data-piece")  # noqa: E731
    current = lambda: gui.attr("#moves .current", "data-ply")  # noqa: E731
    gui.click('#moves tr[data-line="0"][data-ply="1"]')
    gui.wait(lambda: current() == "1" and piece("3c") == "P" and piece("3d") is None, what="the position after 1")
    body = gui.d.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.ARROW_RIGHT)
    gui.wait(lambda: current() == "2" and piece("3d") == "P", what="→")
    body.send_keys(Keys.HOME)
    gui.wait(lambda: current() is None and piece("7g") == "P" and piece("7f") is None, what="Home")
    body.send_keys(Keys.END)
    gui.wait(lambda: current() == "3" and not gui.d.find_element(By.ID, "review-live").is_displayed(), what="End")
    body.send_keys(Keys.ARROW_LEFT)
    gui.wait(lambda: current() == "2" and piece("2g") == "P" and "branch" in gui.text("#review-where"), what="←")
    gui.sq("5g")  # sente to move in that position: a move here is a branch
    gui.sq("5f")
    gui.wait(lambda: len(gui.session.lines) == 2, what="the branch")
    gui.wait(lambda: "５六歩" in gui.text("#moves tr.branch"), what="the branch in the move list")
    assert gui.moves() == ["7g7f", "3c3d", "2g2f"]  # the main line kept
    assert [p.token for p in gui.session.plies] == ["7g7f", "3c3d", "5g5f"]
    gui.click("#moves tr.branch .bmove")
    gui.wait(lambda: piece("5f") == "P" and "current" in (gui.attr("#moves tr.branch .bmove", "class") or ""),
             what="the branch's move shown")
    gui.click("#save-kif")
    gui.wait(lambda: "変化：3手" in gui.d.find_element(By.ID, "record-text").get_property("value"), what="KIF")


def test_position_editor_sfen_round_trips_and_starts_a_game(gui):
    gui.open()
    gui.new_game("shogi")
    gui.click("#edit-position")
    gui.wait(lambda: gui.d.find_element(By.ID, "editor").is_displayed(), what="the editor")
    sfen_box = gui.d.find_element(By.ID, "editor-sfen")
    assert sfen_box.get_property("value") == gui.state()["sfen"]  # the shown position, out as SFEN
    sfen = "4k4/9/9/9/9/9/9/9/4K4 b 2Gp 1"

    def read(text: str) -> str:
        gui.d.execute_script("arguments[0].value = arguments[1];", sfen_box, text)
        gui.click("#editor-read")
        return sfen_box.get_property("value")

    assert read(sfen) == sfen
    gui.wait(lambda: gui.attr('#board .sq[data-sq="5a"]', "data-piece") == "K", what="the king read in")
    gui.click('#editor-palette button[data-piece="G"]')
    gui.sq("5b")
    gui.wait(lambda: sfen_box.get_property("value") == "4k4/4G4/9/9/9/9/9/9/4K4 b 2Gp 1", what="a gold placed")
    hand = gui.d.find_element(By.CSS_SELECTOR, '#editor-hands input[data-hand="G"]')
    hand.clear()
    hand.send_keys("1\t")
    Select(gui.d.find_element(By.ID, "editor-side")).select_by_value("w")
    want = "4k4/4G4/9/9/9/9/9/9/4K4 w Gp 1"
    gui.wait(lambda: sfen_box.get_property("value") == want, what="hands and the side to move")
    assert read(want) == want
    session = gui.session
    before = session.game_number
    gui.click("#editor-start")
    gui.confirm_if_asked()
    gui.wait(lambda: session.game_number != before, what="the game from the editor")
    assert session.start_sfen == want and not gui.d.find_element(By.ID, "editor").is_displayed()
    # dai shogi: 13 files, no hands
    Select(gui.d.find_element(By.ID, "variant")).select_by_value("daishogi2017")
    gui.click("#edit-position")
    dai = "6k6/13/13/13/13/13/6Z6/13/13/13/13/13/6K6 b - 1"
    assert read(dai) == dai and not gui.d.find_elements(By.CSS_SELECTOR, "#editor-hands input")
    gui.wait(lambda: gui.attr('#board .sq[data-sq="7g"]', "data-piece") == "Z", what="the lion read in")
    before = session.game_number
    gui.click("#editor-start")
    gui.confirm_if_asked()
    gui.wait(lambda: session.game_number != before, what="the dai shogi game from the editor")
    assert session.info.id == "daishogi2017" and session.start_sfen == dai


def test_position_editor_sets_up_the_race_and_the_solitaire(gui):
    """Mawarikudoi: the runners placed by clicks (a piece of the relay for the chosen side), their facing, corners
    and throw right and the phase from the race fields; enokian: the board and a heading, the deck kept as read.
    Each SFEN round-trips and starts a game; an impossible race is refused with the server's reason."""
    gui.open()
    gui.new_game("mawarikudoi")
    session = gui.session
    sfen_box = gui.d.find_element(By.ID, "editor-sfen")

    def read(text: str) -> str:
        gui.d.execute_script("arguments[0].value = arguments[1];", sfen_box, text)
        gui.click("#editor-read")
        return sfen_box.get_property("value")

    def field(name: str, value: str) -> None:
        Select(gui.d.find_element(By.CSS_SELECTOR, f'#editor-race [data-field="{name}"]')).select_by_value(value)

    def start(want: str) -> None:
        before = session.game_number
        gui.click("#editor-start")
        gui.confirm_if_asked(1.0)
        gui.wait(lambda: session.game_number != before, what="the game from the editor")
        assert session.start_sfen == want and gui.state()["sfen"] == want

    gui.click("#edit-position")
    gui.wait(lambda: gui.d.find_element(By.ID, "editor").is_displayed(), what="the editor")
    assert sfen_box.get_property("value") == gui.state()["sfen"]
    race = "9/9/6b2/9/9/9/9/3S5/9 w - 1 S6h:e:9i:m/b3c:w:*:-/t4"
    assert read(race) == race and not gui.d.find_elements(By.CSS_SELECTOR, "#editor-hands input")
    gui.wait(lambda: gui.attr('#board .sq[data-sq="6h"] .piece', "data-facing") == "e", what="the runner facing east")
    gui.click('#editor-palette button[data-piece="R"]')  # sente's runner becomes the rook, on 5e
    gui.sq("5e")
    field("facing-0", "w")
    field("right-1", "m")
    want = "9/9/6b2/9/4R4/9/9/9/9 w - 1 R5e:w:9i:m/b3c:w:*:m/t4"
    gui.wait(lambda: sfen_box.get_property("value") == want, what="the runner moved, turned, gote's right back")
    assert gui.attr('#board .sq[data-sq="6h"]', "data-piece") is None
    assert read(want) == want
    field("phase", "c")  # gote (bishop) is lower than the rook: the throw choice is possible
    assert sfen_box.get_property("value").endswith("/c")
    field("runner-1", "K")  # ... but not once gote runs the king
    gui.click("#editor-start")
    gui.confirm_if_asked(1.0)
    gui.wait(lambda: "mixed throw" in gui.text("#error"), what="the refusal")
    assert "bad start position" in gui.text("#error") and gui.d.find_element(By.ID, "editor").is_displayed()
    start(read(want))
    assert gui.state()["turn_build"] == {"steps": 4}  # gote's turn of four actions

    Select(gui.d.find_element(By.ID, "variant")).select_by_value("enokian")
    gui.click("#edit-position")
    solo = "8k/9/9/3P5/+r3+b4/4K4/9/9/4+b4 b - 1 SxCeHnDS/A23456789TJQK/A2345TJQK/-/JQK/-"
    assert read(solo) == solo
    gui.click("#editor-color")  # the red pieces: a flame on 3c
    gui.click('#editor-palette button[data-piece="+S"]')
    gui.sq("3c")
    field("heading-C", "w")
    want = "8k/9/6+s2/3P5/+r3+b4/4K4/9/9/4+b4 b - 1 SxCwHnDS/A23456789TJQK/A2345TJQK/-/JQK/-"
    gui.wait(lambda: sfen_box.get_property("value") == want, what="the flame and the heading")
    start(want)
    assert session.info.id == "enokian"


def test_a_load_error_stays_on_screen_while_the_engines_play_on(gui):
    gui.open()
    gui.new_game("shogi", sente="random", gote="random")
    box = gui.d.find_element(By.ID, "record-text")
    gui.d.execute_script("arguments[0].value = arguments[1];", box, "▲７六歩　△３四歩　▲５五龍\n")
    gui.click("#load-text")
    gui.wait(lambda: "▲５五龍" in gui.text("#error"), what="the load error")
    plies = len(gui.session.plies)
    gui.wait(lambda: len(gui.session.plies) >= plies + 3, what="the engines' next moves")
    time.sleep(0.3)
    assert "▲５五龍" in gui.text("#error") and gui.d.find_element(By.ID, "error").is_displayed()
    if gui.session.result() is None:
        gui.session.resign()


# ------------------------------------------------------------------------------------------ review and editor with the new look
#: A short branched record with comments (the review's branch rows and comment box on screen).
BRANCHED_KIF = """手合割：平手
*the start
   1 ７六歩(77)
   2 ３四歩(33)
*a comment on move 2
   3 ２六歩(27)
   4 投了

変化：3手
   3 ６六歩(67)
*in the branch
"""


def test_review_and_editor_fit_the_phone_with_drawn_pieces_and_their_own_check_mark(gui):
    """On a 390 px phone the reviewed position is drawn with the SVG pieces and its own check mark (not the live
    one's), the review bar and the editor (shogi and 13x13 dai shogi, the palette's pieces drawn) overflow nothing."""
    width, height, _ = PHONE
    gui.open()
    gui.viewport(*PHONE)
    try:
        session = gui.session
        session.new_game("shogi", players=["human", "human"], start_sfen="4k4/9/4P4/9/9/9/9/9/4K4 b G2r 1")
        session.play("G*4b")
        session.play("5a4b")
        gui.wait(lambda: gui.moves() == ["G*4b", "5a4b"] and gui.kanji("4b") == "玉", what="the king took the gold")
        assert not gui.d.find_elements(By.CSS_SELECTOR, "#board .sq.check")
        gui.click('#moves tr[data-line="0"][data-ply="1"]')
        gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, '#board .sq.check[data-sq="5a"]')
                 and gui.kanji("4b") == "金", what="the reviewed position with its check")
        m = _layout(gui)
        assert m["docWidth"] <= width and m["left"] >= 0 and m["right"] <= width, m
        assert m["pieces"] == 4 and m["drawn"] == 4, m  # 5a, 4b, 5c, 5i
        bar = gui.d.execute_script("return document.getElementById('review').getBoundingClientRect().right")
        assert bar <= width and gui.d.find_element(By.ID, "review-live").is_displayed()
        # the step buttons are drawn: ⏮ and ⏭ are missing from common fonts (a box on the screen)
        icons = gui.d.execute_script("""return ['start', 'back', 'forward', 'end'].map((k) => {
            const b = document.getElementById('review-' + k), svg = b.querySelector('svg.icon');
            return [b.textContent.trim(), !!svg && svg.getBoundingClientRect().width > 0, b.getAttribute('aria-label')];
        });""")
        assert all(text == "" and drawn and label for text, drawn, label in icons), icons
        gui.click("#review-live")
        gui.wait(lambda: not gui.d.find_elements(By.CSS_SELECTOR, "#board .sq.check"), what="the live position")
        for variant, squares in (("shogi", 81), ("daishogi2017", 169)):
            Select(gui.d.find_element(By.ID, "variant")).select_by_value(variant)
            gui.click("#edit-position")
            gui.wait(lambda: gui.d.find_element(By.ID, "editor").is_displayed()
                     and len(gui.d.find_elements(By.CSS_SELECTOR, "#board .sq")) == squares, what=f"the {variant} editor")
            if variant == "daishogi2017":  # the game is shogi: the dai shogi editor starts empty
                gui.d.execute_script("document.getElementById('editor-sfen').value = arguments[0]",
                                     "6k6/13/13/13/13/13/6Z6/13/13/13/13/13/6K6 b - 1")
                gui.click("#editor-read")
                gui.wait(lambda: gui.kanji("7g") == "獅子", what="the lion read in")
            time.sleep(0.3)
            m = _layout(gui)
            assert m["docWidth"] <= width and m["left"] >= 0 and m["right"] <= width, (variant, m)
            assert m["drawn"] == m["pieces"] > 0, (variant, m)
            palette = gui.d.execute_script("""
                const b = [...document.querySelectorAll('#editor-palette button.epiece')];
                const r = document.getElementById('editor').getBoundingClientRect();
                return {n: b.length, drawn: b.filter((e) => e.querySelector('svg.piece polygon')).length,
                        right: Math.max(r.right, ...b.map((e) => e.getBoundingClientRect().right))};""")
            assert palette["drawn"] == palette["n"] - 1 > 0 and palette["right"] <= width, (variant, palette)
            if variant == "shogi":
                gui.screenshot("editor-phone")
            gui.click("#editor-close")
            gui.wait(lambda: not gui.d.find_element(By.ID, "editor").is_displayed(), what="the editor closed")
        Select(gui.d.find_element(By.ID, "variant")).select_by_value("shogi")
    finally:
        gui.viewport(*DESKTOP)


def test_board_arrow_keys_move_its_focus_and_elsewhere_step_the_review(gui):
    """While the board has the focus its arrow keys move the focus square and leave the review alone (Home/End still
    step the review); anywhere else ←/→ step through the line; a keyboard move in a reviewed position is a branch."""
    gui.open()
    session = gui.session
    session.new_game("shogi", players=["human", "human"])
    for token in ("7g7f", "3c3d", "2g2f"):
        session.play(token)
    gui.wait(lambda: gui.moves() == ["7g7f", "3c3d", "2g2f"], what="three moves")
    current = lambda: gui.attr("#moves .current", "data-ply")  # noqa: E731
    focused = lambda: gui.d.execute_script("return document.activeElement.dataset.sq || null")  # noqa: E731
    reviewing = lambda: gui.d.find_element(By.ID, "review-live").is_displayed()  # noqa: E731
    gui.d.execute_script("document.querySelector('#board .sq[data-sq=\"5e\"]').focus()")
    ActionChains(gui.d).send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT, Keys.ARROW_UP).perform()
    time.sleep(0.3)
    assert focused() == "7d" and current() == "3" and not reviewing()
    ActionChains(gui.d).send_keys(Keys.HOME).perform()
    gui.wait(lambda: current() is None and reviewing() and gui.kanji("7g") == "歩", what="Home on the board")
    ActionChains(gui.d).send_keys(Keys.END).perform()
    gui.wait(lambda: current() == "3" and not reviewing(), what="End on the board")
    # off the board: the arrows step the review
    gui.click('#moves tr[data-line="0"][data-ply="2"]')
    gui.wait(lambda: current() == "2", what="the position after 2")
    assert focused() is None
    ActionChains(gui.d).send_keys(Keys.ARROW_LEFT).perform()
    gui.wait(lambda: current() == "1" and gui.attr('#board .sq[data-sq="3d"]', "data-piece") is None, what="←")
    # back on the board, in the reviewed position (gote to move): 8c, Enter, down to 8d, Enter makes a branch
    gui.d.execute_script("document.querySelector('#board .sq[data-sq=\"8c\"]').focus()")
    ActionChains(gui.d).send_keys(Keys.ENTER, Keys.ARROW_DOWN).perform()
    assert focused() == "8d" and current() == "1"
    ActionChains(gui.d).send_keys(Keys.ENTER).perform()
    gui.wait(lambda: len(session.lines) == 2 and [p.token for p in session.plies] == ["7g7f", "8c8d"],
             what="the branch made by the keyboard")
    gui.wait(lambda: "８四歩" in gui.text("#moves tr.branch"), what="the branch row")
    assert gui.moves() == ["7g7f", "3c3d", "2g2f"]


def test_text_contrast_of_the_review_branches_comments_and_editor(gui):
    """The records branch's elements read at 4.5:1 too: the review bar while reviewing, branch rows with the shown
    move, the comment box, the editor."""
    gui.open()
    gui.new_game("shogi")
    box = gui.d.find_element(By.ID, "record-text")
    gui.d.execute_script("arguments[0].value = arguments[1];", box, BRANCHED_KIF)
    gui.click("#load-text")
    gui.confirm_if_asked()
    gui.wait(lambda: gui.moves() == ["7g7f", "3c3d", "2g2f"] and gui.d.find_elements(By.CSS_SELECTOR, "#moves tr.branch"),
             what="the branched record")
    gui.click('#moves tr[data-line="0"][data-ply="2"]')
    gui.wait(lambda: "a comment on move 2" in gui.text("#move-comment"), what="the comment")
    assert gui.d.execute_script(CONTRAST_JS) == []
    gui.click("#moves tr.branch .bmove")
    gui.wait(lambda: "in the branch" in gui.text("#move-comment"), what="the branch's move")
    assert gui.d.execute_script(CONTRAST_JS) == []
    gui.screenshot("review")
    gui.click("#edit-position")
    gui.wait(lambda: gui.d.find_element(By.ID, "editor").is_displayed(), what="the editor")
    gui.click('#editor-palette button[data-piece="G"]')
    assert gui.d.execute_script(CONTRAST_JS) == []
    gui.click("#editor-close")


# ------------------------------------------------------------------------------------------ analysis and help (issue 51, 5 and 8)
def _paste(gui, text: str) -> None:
    gui.d.execute_script("document.getElementById('record-text').value = arguments[0];", text)
    gui.click("#load-text")
    gui.confirm_if_asked(1.0)


def test_analysis_streams_shows_a_mate_and_stops(gui):
    """Our engine analyses a mate in one: the line reads 詰み ☗ 1手詰 (sente mates in 1), not a score of 31999;
    the status streams while it runs and Stop ends the search; then three lines of an opening, with the rules
    panel open (the screenshot analysis.png)."""
    gui.open()
    gui.new_game("shogi", "human", "human")
    _paste(gui, "sfen 4k4/9/4P4/9/9/9/9/9/4K4 b G 1")
    gui.wait(lambda: gui.state()["sfen"].startswith("4k4/9/4P4"), what="the pasted position")
    gui.click("#analysis-toggle")
    gui.wait(lambda: "詰" in gui.text("#analysis-lines .ascore.mate"), what="the mate line")
    text = gui.text("#analysis-lines .ascore.mate")
    assert "1手詰" in text and "mates in 1" in text and "31999" not in gui.text("#analysis")
    assert "５二金打" in gui.text("#analysis-lines .apv")
    gui.wait(lambda: "analysing" in gui.text("#analysis-status") and "depth" in gui.text("#analysis-status"),
             what="the running analysis")
    assert gui.attr("#analysis-toggle", "aria-pressed") == "true"
    gui.click("#analysis-toggle")
    gui.wait(lambda: gui.attr("#analysis-toggle", "aria-pressed") == "false", what="the stop")
    session = gui.session
    gui.wait(lambda: session.analyser.running is None, what="the engine's bestmove after stop")
    assert "analysing" not in gui.text("#analysis-status")

    _paste(gui, "position startpos moves 7g7f 3c3d")
    gui.wait(lambda: len(gui.state()["history"]) == 2, what="the opening")
    Select(gui.d.find_element(By.ID, "analysis-multipv")).select_by_value("3")
    gui.click("#analysis-toggle")
    gui.wait(lambda: len(gui.d.find_elements(By.CSS_SELECTOR, "#analysis-lines .aline")) == 3, what="three lines")
    seen = set()
    gui.wait(lambda: seen.add(gui.text("#analysis-status")) or len(seen) >= 3, what="the analysis streaming")
    gui.click("#rules-open")
    gui.wait(lambda: gui.text("#rules h3"), what="the rules")
    gui.screenshot("analysis")
    gui.click("#rules-close")
    gui.click("#analysis-toggle")
    gui.wait(lambda: gui.attr("#analysis-toggle", "aria-pressed") == "false", what="the stop")


def test_the_evaluation_graph_click_reviews_that_move(gui):
    gui.open()
    gui.new_game("shogi", "human", "random")
    session = gui.session
    for token in ("7g7f", "2g2f"):
        gui.wait(lambda: session.state()["human_turn"], what="sente's turn")
        session.play(token)
    gui.wait(lambda: len(gui.d.find_elements(By.CSS_SELECTOR, "#graph .gpt")) >= 2, what="two graph points")
    # the engine's first move (the last one is the live position itself)
    ply = gui.d.execute_script("return document.querySelectorAll('#graph .gpt')[0].dataset.ply")
    assert ply == "2"
    ActionChains(gui.d).move_to_element(gui.d.find_elements(By.CSS_SELECTOR, "#graph .gpt")[0]).click().perform()
    gui.wait(lambda: f"after {ply} of" in gui.text("#review-where"), what=f"the review after ply {ply}")
    assert gui.d.execute_script("return document.querySelectorAll('#graph .gpt.current').length") == 1
    gui.click("#review-live")


def test_variants_explained_rules_labels_events_and_card_reasons(gui):
    """The rules panel opens for each variant (Japanese and English); fantasista's options and pre-game buttons
    read as names with what they give, not fairy:hiko; two rolls stay on screen together; an enokian card's
    moves are marked on the board with a line saying why."""
    gui.open()
    for v in gui.d.execute_script("return variants.filter((v) => v.available).map((v) => [v.id, v.ja])"):
        Select(gui.d.find_element(By.ID, "variant")).select_by_value(v[0])
        if gui.attr("#rules-open", "aria-expanded") != "true":
            gui.click("#rules-open")
        gui.wait(lambda: v[1] in gui.text("#rules h3"), what=f"the rules of {v[0]}")
        assert gui.d.find_elements(By.CSS_SELECTOR, "#rules .rules-ja li")
        assert gui.d.find_elements(By.CSS_SELECTOR, "#rules .rules-en li")
    gui.click("#rules-close")
    Select(gui.d.find_element(By.ID, "variant")).select_by_value("fantasista")
    assert "9–18 give as 4–8" in gui.text("#opt-reserved option[value='4-8']") or \
        "9–18 give as 4–8" in gui.attr("#opt-reserved option[value='4-8']", "label") or \
        gui.d.execute_script("return document.querySelector(\"#opt-reserved option[value='4-8']\").textContent"
                             ).endswith("9–18 give as 4–8 (nothing added)")
    assert "rolls 9–18 give" in gui.text("#variant-options")

    gui.new_game("fantasista", "human", "human", options={"fairy_sente": "choose", "fairy_gote": "ayumi",
                                                         "reserved_sente": "choose"})
    button = '#actions button[data-step="btn:fairy:hiko"]'
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, button), what="the fairy buttons")
    texts = [b.text for b in gui.d.find_elements(By.CSS_SELECTOR, "#actions button.action")]
    assert not any(t.startswith(("fairy:", "reserved:")) for t in texts), texts
    assert "飛子 hiko" in gui.text(button) and "fire dragon" in gui.text(button)
    gui.click(button)
    reserved = '#actions button[data-step="btn:reserved:ginsara:1"]'
    gui.wait(lambda: "銀幕展開" in gui.text(reserved), what="the reserved buttons")
    gui.click(reserved)
    gui.wait(lambda: "飛子 hiko" in gui.text("#inventory-0"), what="the fairy in the inventory")

    from engine import new_game
    g, rng, history = new_game("fantasista", fairies=("hiko", "ayumi")), random.Random(5), []
    while len(history) < 18:
        tok = ("roll=13" if not any(t.startswith("roll") for t in history) else "roll=7") \
            if g.node_kind().value == "chance" else rng.choice([t for t in g.legal_actions() if "," not in t])
        if g.node_kind().value == "decision" and g.phase == "target":
            tok = g.legal_actions()[0]
        g.apply(tok)
        history.append(tok)
    _paste(gui, json.dumps({"variant": "fantasista", "history": history,
                            "options": {"fairy_sente": "hiko", "fairy_gote": "ayumi"}}))
    gui.wait(lambda: gui.text("#event-strip .ev.newest"), what="the event strip")
    strip = [e.text for e in gui.d.find_elements(By.CSS_SELECTOR, "#event-strip .ev")]
    assert strip[0].startswith("☖ gote 出目 7") and strip[1].startswith("☗ sente 出目 13"), strip
    assert "飛車トークン rook token" in strip[1]  # 13 is reserved: nothing added, as 4-8

    _paste(gui, json.dumps({"variant": "enokian", "history": ["card=KS"]}))
    gui.wait(lambda: gui.d.find_elements(By.CSS_SELECTOR, "#board .sq.enemy-move"), what="the card's squares")
    marked = {e.get_attribute("data-sq") for e in gui.d.find_elements(By.CSS_SELECTOR, "#board .sq.enemy-move")}
    assert marked == {"1e", "4e", "1a", "2b"}
    assert "Michizane" in gui.text("#card-why") and "1e→4e" in gui.text("#card-why")
    assert "札 ♠K" in gui.text("#event-strip")
    gui.screenshot("enokian-card")


def test_the_clocks_run_and_a_flag_falls(gui):
    """Two persons, 2 s sudden death set in the form: both clocks shown, the side to move's counting down and
    highlighted; nobody moves, the server's flag falls and the page says time forfeit."""
    gui.open()
    gui.new_game("shogi", "human", "human", clock=("sudden", "0:02", "0"))
    gui.wait(lambda: gui.d.find_element(By.ID, "clocks").is_displayed(), what="the clocks")
    assert gui.state()["players"][0]["clock"] == {"main": 2000}
    assert "to-move" in gui.attr("#clock-0", "class") and "to-move" not in gui.attr("#clock-1", "class")
    assert gui.text("#clock-1 .time") == "0:02"
    # no analysis while the timed game runs (the button says why), and it may start once the game is over
    assert gui.d.find_element(By.ID, "analysis-toggle").get_property("disabled")
    assert "timed game" in gui.text("#analysis-status")
    gui.wait(lambda: gui.text("#clock-0 .time") == "0:01", timeout=5, what="sente's clock counting down")
    gui.wait(lambda: "time forfeit" in gui.text("#result"), timeout=10, what="the flag")
    gui.wait(lambda: not gui.d.find_element(By.ID, "analysis-toggle").get_property("disabled"), what="analysis")
    assert "flag" in gui.attr("#clock-0", "class") and "切れ負け" in gui.text("#clock-0")
    assert gui.text("#clock-0 .time") == "0:00" and gui.text("#clock-1 .time") == "0:02"
    assert gui.d.find_element(By.ID, "draw-offer").get_property("disabled")
    gui.screenshot("clocks")
