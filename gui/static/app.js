// Fantasista web GUI. No rules here: the server sends every legal action with its click path; the page matches
// clicks against those paths (prefix matching) and asks when several complete candidates remain.
"use strict";

const RANKS = "abcdefghijklm";
const KANJI_RANKS = ["", "一", "二", "三", "四", "五", "六", "七", "八", "九", "十", "十一", "十二", "十三"];
const SUITS = { S: "♠", C: "♣", H: "♥", D: "♦" };
const EFFECTS = {
  hiko: { "1": "fire dragon token", "2": "king-god dragon token", "3": "rook awakening", "4-8": "rook token" },
  ayumi: { "1": "emblem", "2": "two spear pawns", "3": "invincible pawn", "4-8": "2 pawn + 1 gold tokens" },
  yokaku: { "1": "thunder horse", "2": "gale horse", "3": "carrier", "4-8": "bishop token" },
  ginsara: { "1": "silver curtain", "2": "sword silver", "3": "silver wave", "4-8": "two silver tokens" },
};

let S = null;            // the last state from the server
let variants = [];
let prefix = [];         // click steps chosen so far
let planPick = new Set();
let flipped = false;
// how pieces are written: "one" (one kanji, the usual set), "two" (two-kanji names), "western" (SFEN letters)
let pieceStyle = localStorage.getItem("fantasista-pieces") || "one";
let western = pieceStyle === "western";
let lastRollKey = "", lastCardKey = "";
let pollVersion = -1;
let turnActs = [];       // mawarikudoi: the actions of the turn being built
let turnInfo = null;     // mawarikudoi: the server's answer for turnActs (preview board, next actions, ends)
let wholeTurn = true;    // mawarikudoi: choose the turn by where it ends (else action by action)
let endSquare = null;    // mawarikudoi: the square whose ends the chooser lists
let waveMoves = null;    // fantasista: the silver moves of the wave being built (null: no wave being built)
let waveInfo = null;     // fantasista: the server's answer for waveMoves (next moves, canonical token)
let waveFrom = null;     // fantasista: the silver picked, whose destinations are shown
let formGame = -1;       // the game the new-game form shows
let liveKey = "";        // positionKey of the live state drawn last: a half-built turn or wave lives while it holds
let LIVE = null;         // the server's state as it came (S is what is shown: LIVE, a reviewed position or the editor)
let view = null;         // review: {line, ply, ...} the position shown instead of the live one (null: live)
let editor = null;       // the position editor: {variant, squares, hands, side, extra, tool, color} (null: closed)
let stickyError = "";    // a refused request's error: stays on screen until the next accepted request
let replayTimer = null;  // review: the replay stepping through the shown line
const FACING_DEG = { n: 0, e: 90, s: 180, w: 270 };
const FACING_ARROW = { n: "↑", e: "→", s: "↓", w: "←" };
const FACE_TITLE = { x: "upside down 100", v: "upright 10", s: "on its side 5", u: "face up 1", d: "face down 0" };

const $ = (id) => document.getElementById(id);

// The server's token, written into this page when it was served: every request carries it (a page of another
// site cannot read it). gameId is this tab's game on the server (kept in sessionStorage across reloads).
const TOKEN = document.querySelector('meta[name="fantasista-token"]').content;
const GAME_KEY = "fantasista-game";
let gameId = null;

async function api(path, body) {
  const headers = { "X-Fantasista-Token": TOKEN };
  if (gameId) headers["X-Fantasista-Game"] = gameId;
  const opts = { headers };
  if (body !== undefined) {
    opts.method = "POST";
    headers["Content-Type"] = "application/json";
    opts.body = JSON.stringify(body);
  }
  const res = await fetch(path, opts);
  const data = await res.json();
  if (!res.ok) {
    const err = new Error(data.error || res.statusText);
    err.status = res.status;
    err.data = data;
    throw err;
  }
  return data;
}

// One game per tab. A duplicated tab copies sessionStorage, so before taking the stored game back the page asks
// the other tabs whether one of them is showing it; if so this tab starts its own game.
const tabs = "BroadcastChannel" in window ? new BroadcastChannel("fantasista-tabs") : null;
if (tabs) tabs.addEventListener("message", (ev) => {
  if (gameId && ev.data && ev.data.ask === gameId) tabs.postMessage({ have: gameId });
});

function shownElsewhere(id) {
  if (!tabs) return Promise.resolve(false);
  return new Promise((resolve) => {
    const listen = (ev) => { if (ev.data && ev.data.have === id) done(true); };
    const done = (value) => { tabs.removeEventListener("message", listen); resolve(value); };
    tabs.addEventListener("message", listen);
    tabs.postMessage({ ask: id });
    setTimeout(() => done(false), 250);
  });
}

async function openGame() {
  let wanted = sessionStorage.getItem(GAME_KEY);
  if (wanted && await shownElsewhere(wanted)) wanted = null;
  const r = await api("/api/session", wanted ? { id: wanted } : {});
  gameId = r.id;
  sessionStorage.setItem(GAME_KEY, gameId);
}

// Replacing an unfinished game asks first: the server answers 409 {confirm: true} unless "replace" is sent.
function askConfirm(text, yes) {
  $("confirm-text").textContent = text + " ";
  $("confirm").hidden = false;
  $("confirm-yes").onclick = () => { $("confirm").hidden = true; yes(); };
  $("confirm-no").onclick = () => { $("confirm").hidden = true; };
}

function showError(msg) {
  const el = $("error");
  el.textContent = msg || "";
  el.hidden = !msg;
}

// ``what`` names a request that replaces the game (new game, load): asked first when the game is unfinished;
// ``done`` runs once it is accepted, before the new state is drawn.
async function post(path, body, what, done) {
  $("confirm").hidden = true;
  try {
    const st = await api(path, body || {});
    if (done) done(st);
    stickyError = "";
    showError("");
    prefix = [];
    planPick.clear();
    turnActs = [];
    turnInfo = null;
    resetWave();
    if (!S || st.version !== S.version) render(st);
    else renderMarks();
    return st;
  } catch (e) {
    if (what && e.status === 409 && e.data && e.data.confirm) {
      askConfirm(`This tab's game is not finished: ${what} replaces it.`,
        () => post(path, { ...body, replace: true }, what, done));
      return null;
    }
    stickyError = e.message;  // kept when the next state arrives (an engine's move), until a request succeeds
    showError(e.message);
    return null;
  }
}

// ---------------------------------------------------------------------------------------------- new game form
function fillVariants() {
  const sel = $("variant");
  sel.innerHTML = "";
  for (const v of variants) {
    const o = document.createElement("option");
    o.value = v.id;
    o.textContent = `${v.name} ${v.ja}` + (v.available ? "" : " (not yet)");
    o.disabled = !v.available;
    sel.appendChild(o);
  }
  sel.onchange = fillOptions;
  fillOptions();
}

function fillOptions() {
  const v = variants.find((x) => x.id === $("variant").value);
  const box = $("variant-options");
  box.innerHTML = "";
  for (const opt of (v ? v.options : [])) {
    const label = document.createElement("label");
    label.textContent = optionName(opt) + " ";
    const sel = document.createElement("select");
    sel.id = "opt-" + opt.name;
    sel.dataset.option = opt.name;
    for (const c of opt.choices) {
      const o = document.createElement("option");
      o.value = c;
      o.textContent = optionText(opt.name, c);
      if (c === opt.default) o.selected = true;
      sel.appendChild(o);
    }
    label.appendChild(sel);
    box.appendChild(label);
  }
  $("setup-1").hidden = v && v.sides === 1;  // a solitaire has no gote: no player, limit or clock for it
  if (v && v.sides === 1) $("player-0").value = $("player-0").value || "human";
}

// The form follows the game on the server (a loaded record, a game started elsewhere): its variant, its options
// and its players, so that "New game" starts the same kind of game again.
function syncForm(st) {
  formGame = st.game;
  if ($("variant").value !== st.variant.id) {
    $("variant").value = st.variant.id;
    fillOptions();
  }
  for (const [name, value] of Object.entries(st.options || {})) {
    const sel = $("opt-" + name);
    if (sel) sel.value = value;
  }
  st.players.forEach((p, side) => {
    const sel = $("player-" + side);
    if (!sel) return;
    sel.value = p.kind === "human" ? "human" : p.engine;
    syncSideSetup(side, p);
  });
  showSideSetup();
}

// The players offered: a person, and each engine the server offers (by name: the page never sends a command).
function fillPlayers(engines) {
  for (const side of [0, 1]) {
    const sel = $("player-" + side);
    for (const e of engines) {
      const o = document.createElement("option");
      o.value = e.name;
      o.textContent = e.builtin ? "Fantasista engine" : e.name;
      sel.appendChild(o);
    }
  }
  if (engines.some((e) => e.builtin)) $("player-1").value = engines.find((e) => e.builtin).name;
}

const LIMIT_DEFAULTS = { depth: 3, movetime: 1000, nodes: 100000 };

function playerSpec(side) {
  const name = $("player-" + side).value;
  const clock = clockSpec(side);
  if (name === "human") return clock ? { kind: "human", clock } : "human";
  const spec = { kind: "engine", engine: name };
  if (clock) spec.clock = clock;
  // an empty or bad box sends no limit: the server's default (a second a move), never 3 ms or 3 nodes; "by the
  // clock" sends none either (with a clock the engine plays by it)
  const kind = $("limit-kind-" + side).value;
  const value = parseInt($("limit-value-" + side).value, 10);
  if (kind !== "clock" && value > 0) spec[kind] = value;
  return spec;
}

function startGame() {
  const options = {};
  for (const sel of document.querySelectorAll("#variant-options select")) options[sel.dataset.option] = sel.value;
  const seed = $("seed").value.trim();
  const body = { variant: $("variant").value, options, players: [playerSpec(0), playerSpec(1)] };
  if (seed) body.seed = parseInt(seed, 10);
  return post("/api/new", body, "a new game", () => {
    flipped = body.players[0] !== "human" && body.players[1] === "human";
    lastRollKey = lastCardKey = "";
  });
}

// ---------------------------------------------------------------------------------------------- click matching
function startsWith(path, pre) {
  if (path.length < pre.length) return false;
  for (let i = 0; i < pre.length; i++) if (path[i] !== pre[i]) return false;
  return true;
}

function candidates(pre) {
  return (S && S.legal ? S.legal : []).filter((a) => startsWith(a.path, pre));
}

function isPlanNode() {
  return S && S.legal.length > 0 && S.legal.every((a) => a.path[0].startsWith("plan:"));
}

function step(s) {
  if (!S || !S.human_turn) return;
  if (S.turn_build) return turnStep(s);
  if (waveMoves) return waveStep(s);
  if (s === "btn:wave" && S.wave_build) return fetchWave([]);
  if (candidates([...prefix, s]).length) {
    prefix.push(s);
  } else if (candidates([s]).length) {
    prefix = [s];
  } else {
    prefix = [];
    renderMarks();
    return;
  }
  resolve();
}

function resolve() {
  const cands = candidates(prefix);
  const seen = new Set();
  const complete = cands.filter((a) => a.path.length === prefix.length && !seen.has(a.token) && seen.add(a.token));
  const longer = cands.filter((a) => a.path.length > prefix.length);
  if (!cands.length) prefix = [];
  if (complete.length === 1 && !longer.length) {
    sendMove(complete[0].token);
    return;
  }
  renderMarks();
  const box = $("chooser");
  box.innerHTML = "";
  box.hidden = true;
  if (!complete.length) return;
  const tokens = complete.map((a) => a.token);
  const at = lastSquare(prefix);
  if (isPromotion(tokens) && !longer.length) return promotionChoice(tokens, (t) => sendMove(t), at);
  // a move that may stop here or go on (a lion's second step, a breath after a drop ...): the highlighted squares
  // go on, the button stops; the prompt stands at the board's edge away from the square, off the squares to go on
  prompt(box, longer.length ? `Stop on ${at || "here"}, or click a highlighted square to go on`
    : "Which move?");
  for (const a of complete) {
    addButton(box, choiceLabel(a.token, tokens, longer.length > 0), () => sendMove(a.token),
      { cls: "choice", data: { token: a.token } });
  }
  if (!longer.length) closeButton(box);
  showChooser(at, longer.length > 0);
}

function lastSquare(path) {
  for (let i = path.length - 1; i >= 0; i--) if (path[i].startsWith("sq:")) return path[i].slice(3);
  return null;
}

function isPromotion(tokens) {
  const base = tokens[0].replace(/\+$/, "");
  return tokens.length === 2 && tokens.every((t) => t.replace(/\+$/, "") === base) && tokens.some((t) => t.endsWith("+"));
}

function choiceLabel(token, tokens, stop) {
  if (/:x/.test(token)) return token + " (capture in place)";
  if (stop && tokens.length === 1) return `Stop here (${token})`;
  return token;
}

function prompt(box, text) {
  const p = document.createElement("div");
  p.className = "prompt";
  p.textContent = text;
  box.appendChild(p);
}

function closeButton(box) {
  const c = addButton(box, "×", cancelMove, { cls: "close" });
  c.setAttribute("aria-label", "Cancel the move");
  c.title = "Cancel (Esc)";
}

// 成 / 不成: one question with the two pieces drawn, at the square where the piece goes.
function promotionChoice(tokens, play, at) {
  const box = $("chooser");
  box.innerHTML = "";
  prompt(box, "Promote? 成りますか");
  const from = S.board.squares[(tokens[0].match(/^\d+[a-m]/) || [""])[0]];
  const hand = /^([A-Z+']+)\*/.exec(tokens[0]);
  const letter = from ? from.letter : hand ? hand[1] : "";
  const owner = S.side;
  const kanji = (l) => (S.variant.kanji || {})[l] || l;
  for (const t of [...tokens].sort((a, b) => (b.endsWith("+") ? 1 : 0) - (a.endsWith("+") ? 1 : 0))) {
    const promote = t.endsWith("+");
    const l = promote ? "+" + letter.replace(/^\+/, "") : letter;
    const b = addButton(box, "", () => play(t), { cls: "choice promo", data: { token: t, move: t } });
    b.innerHTML = pieceSVG({ kanji: kanji(l), letter: l, owner: 0, promoted: promote }) +
      `<span>${promote ? "成 promote" : "不成 don't promote"}</span>`;
    b.setAttribute("aria-label", promote ? "成 promote" : "不成 don't promote");
  }
  closeButton(box);
  showChooser(at, false);
}

// Show the chooser over the board: next to the square ``at`` (below it, else above), or with ``away`` at the
// board's edge farther from it; always inside the board's frame and the screen.
let chooserAt = null, chooserAway = false;

function showChooser(at, away) {
  chooserAt = at;
  chooserAway = away;
  $("chooser").hidden = false;
  // one way to cancel: the chooser's own × when it has one, else the Cancel beside the board
  const own = !!$("chooser").querySelector("button.close"), cancel = $("cancel-move");
  if (cancel) cancel.hidden = own;
  placeChooser();
  const first = $("chooser").querySelector("button.choice");
  if (first && !away) first.focus({ preventScroll: true });
}

function placeChooser() {
  const box = $("chooser"), frame = $("board-frame");
  box.style.left = "0px";
  box.style.top = "0px";
  box.style.maxWidth = Math.min(frame.clientWidth, document.documentElement.clientWidth - 8) + "px";
  const fr = frame.getBoundingClientRect(), bw = box.offsetWidth, bh = box.offsetHeight;
  const el = chooserAt && document.querySelector(`#board .sq[data-sq="${chooserAt}"]`);
  let x = (fr.width - bw) / 2, y = (fr.height - bh) / 2;
  if (el) {
    const r = el.getBoundingClientRect();
    x = r.left - fr.left + r.width / 2 - bw / 2;
    const top = r.top - fr.top;
    if (chooserAway) y = top + r.height / 2 > fr.height / 2 ? 4 : fr.height - bh - 4;
    else y = top + r.height + bh + 4 <= fr.height ? top + r.height + 4 : top - bh - 4;
  }
  x = Math.max(0, Math.min(x, fr.width - bw));
  y = Math.max(0, Math.min(y, fr.height - bh));
  // inside the screen too: the frame may reach past it (a phone, a short window)
  const vw = document.documentElement.clientWidth;
  if (fr.left + x + bw > vw - 4) x = vw - 4 - bw - fr.left;
  if (fr.left + x < 4) x = 4 - fr.left;
  if (fr.top + y + bh > window.innerHeight - 4) y = window.innerHeight - 4 - bh - fr.top;
  if (fr.top + y < 4) y = 4 - fr.top;
  box.style.left = Math.round(x) + "px";
  box.style.top = Math.round(y) + "px";
}

// Mawarikudoi: a turn of N actions chosen by where it ends, or built one action at a time; the server checks each
// action and sends the runner's position after it (a preview), the actions possible next and, in the whole-turn
// mode, where the rest of the turn can end. Nothing is played until the turn is complete.
let turnBusy = false;    // an answer is on its way: clicks wait (as for the wave)

async function fetchTurn(acts) {
  turnBusy = true;
  try {
    const key = liveKey;
    const info = await api("/api/turnstep", { actions: acts, ends: wholeTurn });
    if (!S || liveKey !== key) return;  // the game moved on meanwhile
    info.key = key;
    turnActs = acts;
    turnInfo = info;
    endSquare = null;
    showError("");
    if (info.token !== undefined) return sendMove(info.token);
    drawBoard(info.board);
    renderMarks();
    renderPanel();
  } catch (e) {
    showError(e.message);
  } finally {
    turnBusy = false;
  }
}

function choosingEnd() {
  return !!(turnInfo && wholeTurn && turnInfo.left > 0 && turnInfo.ends);
}

function turnStep(s) {
  if (!turnInfo || turnBusy) return;
  if (choosingEnd()) return chooseEnd(s);
  const n = turnInfo.next.find((x) => x.step === s);
  if (n) fetchTurn([...turnActs, n.action]);
}

// The whole turn at once: the server lists where the turn can end; a click on such a square plays that end, or
// asks which one when several ends share the square (another facing, runner or corner record).
function chooseEnd(s) {
  const ends = turnInfo.ends.filter((e) => e.step === s);
  if (!ends.length) return;
  if (ends.length === 1) return playEnd(ends[0].end);
  endSquare = s.slice(3);
  renderMarks();
  const box = $("chooser");
  box.innerHTML = "";
  prompt(box, `The turn can end on ${s.slice(3)} in ${ends.length} ways:`);
  for (const e of ends) addButton(box, e.label, () => playEnd(e.end), { cls: "choice end-choice", data: { end: e.end } });
  closeButton(box);
  showChooser(endSquare, false);
}

async function playEnd(end) {
  $("chooser").hidden = true;
  endSquare = null;
  await post("/api/turnend", { end, actions: turnActs });
}

// Fantasista's silver wave, silver by silver in any order: the server answers which silver moves can still be
// added to the chosen set and the canonical wave token once the set is a whole wave.
function resetWave() { waveMoves = null; waveInfo = null; waveFrom = null; }

// While the server answers, clicks on the board wait (are ignored): a click is always read against the answer for
// the moves shown.
let waveBusy = false;

async function fetchWave(moves) {
  const key = liveKey;
  if (waveMoves === null) waveMoves = [];  // in wave mode from the button's click on
  waveBusy = true;
  try {
    const info = await api("/api/wavestep", { moves });
    if (!S || liveKey !== key) return;  // the game moved on meanwhile
    waveMoves = moves;
    waveInfo = info;
    waveFrom = null;
    showError("");
    $("chooser").hidden = true;
    if (info.token !== undefined && !info.next.length && moves.length) return sendMove(info.token);
    renderMarks();
  } catch (e) {
    if (!waveInfo) resetWave();
    showError(e.message);
  } finally {
    waveBusy = false;
  }
}

function waveStep(s) {
  if (!waveInfo || waveBusy || !s.startsWith("sq:")) return;
  const sq = s.slice(3);
  if (waveFrom) {
    const moves = waveInfo.next.filter((n) => n.from === waveFrom && n.to === sq);
    if (moves.length === 1) return fetchWave([...waveMoves, moves[0].move]);
    if (moves.length > 1) {
      return promotionChoice(moves.map((n) => n.move), (m) => fetchWave([...waveMoves, m]), sq);
    }
  }
  // another silver is picked instead; the picked one again drops it; any other square changes nothing
  if (waveFrom === sq) waveFrom = null;
  else if (waveInfo.next.some((n) => n.from === sq)) waveFrom = sq;
  renderMarks();
}

// A button in ``box``: ``attrs`` may give its id, class and data-* values (``data: {step: ...}``).
function addButton(box, text, onclick, attrs = {}) {
  const b = document.createElement("button");
  b.type = "button";
  b.className = attrs.cls || "action";
  if (attrs.id) b.id = attrs.id;
  for (const [k, v] of Object.entries(attrs.data || {})) b.dataset[k] = v;
  b.textContent = text;
  b.onclick = onclick;
  box.appendChild(b);
  return b;
}

function waveButtons(box) {
  const add = (text, id, fn) => addButton(box, text, fn, { id });
  const info = document.createElement("span");
  info.id = "wave-moves";
  info.className = "turn-left";
  info.textContent = "銀の波 silver wave: " + (waveMoves.join(", ") || "pick a silver, then where it goes");
  box.appendChild(info);
  if (waveInfo.token !== undefined) {
    const n = waveMoves.length;
    add(n ? `Play the wave (${n} silver${n > 1 ? "s" : ""} move)` : "Play the wave (all silvers stay)", "wave-play",
      () => sendMove(waveInfo.token));
    box.lastChild.dataset.token = waveInfo.token;
  }
  if (waveMoves.length) add("Back one silver", "wave-back", () => fetchWave(waveMoves.slice(0, -1)));
  add("Cancel wave", "wave-cancel", () => { resetWave(); renderMarks(); });
}

function turnButtons(box) {
  const add = (text, id, fn, step) => addButton(box, text, fn, { id, data: step ? { step } : {} });
  const info = document.createElement("span");
  info.id = "turn-left";
  info.className = "turn-left";
  info.textContent = `${turnInfo.left} of ${turnInfo.steps} action${turnInfo.steps > 1 ? "s" : ""} left`;
  if (choosingEnd()) {
    const squares = new Set(turnInfo.ends.map((e) => e.square)).size;
    info.textContent += `: click where the turn ends (${turnInfo.ends.length} ends on ${squares} squares)`;
  }
  box.appendChild(info);
  for (const n of (choosingEnd() ? [] : turnInfo.next)) {
    if (!n.step.startsWith("btn:")) continue;
    const f = n.action.slice(5);
    add(`turn ${FACING_ARROW[f]} ${f}`, "", () => turnStep(n.step), n.step);
  }
  add(wholeTurn ? "Action by action" : "The rest at once (click where it ends)", "turn-mode", () => {
    wholeTurn = !wholeTurn;
    endSquare = null;
    $("chooser").hidden = true;
    if (wholeTurn && !turnInfo.ends) fetchTurn(turnActs);  // the ends from here
    else renderMarks();
  });
  if (turnActs.length) add("Back one action", "turn-back", () => fetchTurn(turnActs.slice(0, -1)));
  if (turnActs.length) add("Restart turn", "turn-restart", () => fetchTurn([]));
  if (turnInfo.win_token) add("Finish the race (win)", "turn-win", () => sendMove(turnInfo.win_token));
}

async function sendMove(token) {
  $("chooser").hidden = true;
  prefix = [];
  resetWave();
  if (view) return reviewMove(token);
  await post("/api/move", { move: token });
}

// ---------------------------------------------------------------------------------------------- rendering
// Pieces are drawn here as inline SVG: a pentagon of wood, the kanji (promoted in red), gote's pointing down and of
// darker wood (the owner shows without the rotation too). One-kanji style: the usual one-character set; the server
// names some pieces with two or three kanji, whose one-character forms are these (else their first kanji).
const ONE_CHAR = { 酔象: "象", 猛虎: "虎", 龍馬: "馬", 猛牛: "牛", 飛龍: "竜", 火炎竜: "炎", 王神竜: "神", 槍歩兵: "槍",
  雷王馬: "雷", 疾風馬: "疾", 剣の銀: "剣" };
const TWO_CHAR = { 歩: "歩兵", 香: "香車", 桂: "桂馬", 銀: "銀将", 金: "金将", 角: "角行", 飛: "飛車", 玉: "玉将", 王: "王将",
  と: "と金", 杏: "成香", 圭: "成桂", 全: "成銀", 馬: "龍馬", 龍: "龍王" };
const PENTAGON = "50,4 80,15 91,96 9,96 20,15";
const TOKEN_INSET = "50,13 73,22 82,89 18,89 27,22";
const SIDE_WORD = ["sente", "gote"];

function esc(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ "&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;" })[c]);
}

// The text on a piece in the chosen style.
function faceText(kanji, letter) {
  if (pieceStyle === "western") return letter;
  if (pieceStyle === "two") return TWO_CHAR[kanji] || kanji;
  return kanji.length > 1 ? (ONE_CHAR[kanji] || kanji[0]) : kanji;
}

// One piece as SVG: ``owner`` 0 / 1, ``promoted`` (red kanji), ``token`` (fantasista: a dashed blue inner line).
function pieceSVG({ kanji, letter, owner, promoted = false, token = false, cls = "" }) {
  const text = faceText(kanji, letter);
  const chars = [...text];
  const down = (owner === 1) !== flipped;
  const ink = promoted ? "#86000a" : "#1a1208";
  let words = "";
  if (western) {
    const size = chars.length > 2 ? 26 : chars.length > 1 ? 34 : 46;
    words = `<text x="50" y="62" font-size="${size}" class="western">${esc(text)}</text>`;
  } else if (chars.length === 1) {
    words = `<text x="50" y="61" font-size="52">${esc(text)}</text>`;
  } else {
    const size = chars.length === 2 ? 35 : 25, y0 = chars.length === 2 ? 42 : 35;
    words = chars.map((c, i) => `<text x="50" y="${y0 + i * size * 0.98}" font-size="${size}">${esc(c)}</text>`).join("");
  }
  return `<svg class="piece ${SIDE_WORD[owner]}${cls ? " " + cls : ""}" viewBox="0 0 100 100" aria-hidden="true" focusable="false">` +
    `<g${down ? ' transform="rotate(180 50 50)"' : ""}>` +
    `<polygon points="${PENTAGON}" fill="url(#wood-${SIDE_WORD[owner]})" stroke="${owner ? "#24160a" : "#5a3c12"}" stroke-width="${owner ? 6 : 2.5}" stroke-linejoin="round"/>` +
    // gote's mark: a dark band across the foot of the piece (besides its darker wood, its frame and its direction)
    (owner ? `<path d="M11.5 87 L88.5 87 L91 96 L9 96 Z" fill="#24160a"/>` : "") +
    (token ? `<polygon points="${TOKEN_INSET}" fill="none" stroke="#0b4f99" stroke-width="3" stroke-dasharray="7 4"/>` : "") +
    `<g fill="${ink}" text-anchor="middle" dominant-baseline="central" font-weight="700" ` +
    `font-family="'Noto Serif CJK JP','IPAMincho','IPAexMincho','Hiragino Mincho ProN','Yu Mincho','Noto Sans CJK JP','IPAGothic',serif">` +
    `${words}</g></g></svg>`;
}

function isPromoted(cell) { return cell.letter.startsWith("+"); }

// Mawarikudoi: the way a runner faces, as an arrow at its square's edge (turned with the board when flipped).
function facingArrow(facing, small = false) {
  const deg = FACING_DEG[facing] + (flipped ? 180 : 0);
  return `<svg class="facing" viewBox="0 0 100 100" aria-hidden="true" data-facing="${facing}">` +
    `<g transform="rotate(${deg} 50 50)"><polygon points="${small ? "50,0 74,28 26,28" : "50,0 70,14 30,14"}" ` +
    `fill="#006b60" stroke="#fff" stroke-width="2.5" stroke-linejoin="round"/></g></svg>`;
}

function squareName(file, rank) { return `${file}${RANKS[rank]}`; }

// What a screen reader says for a square: "7g 歩 sente", "7f empty".
function squareLabel(name, cell) {
  if (!cell) return `${name} empty`;
  let label = `${name} ${cell.kanji} ${SIDE_WORD[cell.color]}`;
  if (cell.facing) label += ` facing ${FACING_WORD[cell.facing]}`;
  if (cell.marks && cell.marks.includes("'")) label += " token";
  if (cell.rider) label += `, carrying ${cell.rider.kanji}`;
  return label;
}
const FACING_WORD = { n: "north", e: "east", s: "south", w: "west" };

let lastMoves = -1, lastGame = -1;   // for the move sound: the moves of the state drawn last

// The live position and whose click it waits for. The state's version changes with anything (each analysis info
// line, a clock, a comment), so a half-built turn or wave, and an answer to it on its way, are kept while this
// stays the same and dropped when it changes (a move, undo, another game or line, the person's turn over).
function positionKey(st) {
  return JSON.stringify([st.game, st.line, st.history.length, st.sfen, st.human_turn, st.node]);
}

function render(st) {
  if (st.game !== formGame) syncForm(st);
  const key = positionKey(st);
  const moved = key !== liveKey;
  liveKey = key;
  if (moved) resetWave();
  const moves = st.history.filter((h) => !h.event).length;
  if (st.game === lastGame && moves > lastMoves) moveSound();
  lastMoves = moves;
  lastGame = st.game;
  if (LIVE && (LIVE.game !== st.game)) { view = null; stopReplay(); }
  LIVE = st;
  if (view && (fullLines()[view.line] || []).length < view.ply) view = null;  // taken back meanwhile
  S = shownState(st);
  // keep a half-made move only while it still leads somewhere (the same person's turn)
  if (!st.human_turn || !candidates(prefix).length) prefix = [];
  if (!st.human_turn) planPick.clear();
  pollVersion = st.version;
  if (!S.turn_build || (turnInfo && turnInfo.key !== key)) { turnActs = []; turnInfo = null; endSquare = null; }
  drawBoard(turnInfo ? turnInfo.board : S.board);
  renderHands();
  renderMarks();
  renderStatus();
  renderPanel();
  renderInfo();
  renderMoves();
  renderGraph();
  $("undo").disabled = !st.can_undo;
  $("redo").disabled = !st.can_redo;
  $("resign").disabled = !!st.result;
  if (st.result) $("resign-confirm").hidden = true;
  renderClocks(st);
  renderGameEnd(st);
  $("chooser").hidden = true;
  showError(st.error || stickyError);
  renderReview();
  renderHelp();
  fitBoard();
  if (S.turn_build && !turnInfo) fetchTurn([]);
}

// ---------------------------------------------------------------------------------------------- layout
// The board as large as the screen allows: the side panel beside the board from 1000 px, the hands beside it from
// 640 px (else above and below); the square size follows the width left and, on wide screens, the height below the
// board's top (so that the whole board is in view without scrolling).
const ASIDE_W = 360, HAND_SQ = 2.0;

function fitBoard() {
  if (!S) return;
  const b = S.board, nf = b.files, nr = b.ranks;
  const W = document.documentElement.clientWidth, H = window.innerHeight;
  const asideBeside = W >= 1000, handsBeside = W >= 640;
  document.body.classList.toggle("aside-beside", asideBeside);
  document.body.classList.toggle("hands-beside", handsBeside);
  const pad = asideBeside ? 32 : 16, frame = 16, gaps = handsBeside ? 20 : 0;
  let width = W - pad - frame - (asideBeside ? ASIDE_W + 12 : 0) - gaps;
  const perFile = nf + 0.36 + (handsBeside ? 2 * HAND_SQ : 0);
  let sq = width / perFile;
  if (handsBeside) {  // the whole board below its top, inside the screen
    const top = $("table").getBoundingClientRect().top + window.scrollY;
    sq = Math.min(sq, (H - top - frame - 10) / (nr + 0.4));
  } else {  // hands above and below: the board and both hands in one screen where the height allows
    sq = Math.min(sq, (H - 90) / (nr + 0.4 + 2 * 0.95));
  }
  sq = Math.max(18, Math.min(84, Math.floor(sq)));
  const root = document.documentElement.style;
  root.setProperty("--sq", sq + "px");
  root.setProperty("--handw", Math.round(sq * HAND_SQ) + "px");
}
window.addEventListener("resize", () => { fitBoard(); if (!$("chooser").hidden) placeChooser(); });

function drawBoard(b) {
  const nf = b.files, nr = b.ranks;
  const board = $("board");
  const hadFocus = board.contains(document.activeElement);
  board.style.gridTemplateColumns = `repeat(${nf}, var(--sq))`;
  board.innerHTML = "";
  const files = [], ranks = [];
  for (let i = 0; i < nf; i++) files.push(flipped ? i + 1 : nf - i);
  for (let j = 0; j < nr; j++) ranks.push(flipped ? nr - 1 - j : j);
  $("files").style.gridTemplateColumns = `repeat(${nf}, var(--sq))`;
  $("files").innerHTML = files.map((f) => `<span>${f}</span>`).join("");
  $("ranks").style.gridTemplateRows = `repeat(${nr}, var(--sq))`;
  $("ranks").innerHTML = ranks.map((r) => `<span>${western ? RANKS[r] : KANJI_RANKS[r + 1]}</span>`).join("");
  if (kbIndex < 0 || kbIndex >= nf * nr) kbIndex = Math.floor(nr / 2) * nf + Math.floor(nf / 2);
  let index = 0;
  for (const r of ranks) {
    for (const f of files) {
      const name = squareName(f, r);
      const el = document.createElement("div");
      el.className = "sq";
      el.dataset.sq = name;
      el.dataset.index = index;
      el.setAttribute("role", "button");
      el.tabIndex = index === kbIndex ? 0 : -1;
      const cell = b.squares[name];
      if (cell) {
        let html = pieceSVG({ kanji: cell.kanji, letter: cell.western, owner: cell.color, promoted: isPromoted(cell),
          token: !!(cell.marks && cell.marks.includes("'")), cls: cell.facing ? "runner" : "" });
        if (cell.facing) html = html.replace("<svg ", `<svg data-facing="${cell.facing}" `) + facingArrow(cell.facing);
        if (cell.marks && cell.marks.includes("'")) html += `<span class="mark token" title="token">●</span>`;
        if (cell.marks && cell.marks.includes("!")) html += `<span class="mark invincible" title="invincible">★</span>`;
        if (cell.rider) {
          const rd = cell.rider, owner = rd.color !== undefined ? rd.color : cell.color;
          html += `<span class="rider${rd.facing ? " other-runner" : ""}" data-kanji="${esc(rd.kanji)}" ` +
            `title="${rd.facing ? "the other runner" : "rider"}">` +
            pieceSVG({ kanji: rd.kanji, letter: rd.western, owner, promoted: rd.letter.startsWith("+"),
              token: !!(rd.marks && rd.marks.includes("'")) }) + (rd.facing ? facingArrow(rd.facing, true) : "") + `</span>`;
        }
        el.innerHTML = html;
        el.dataset.piece = cell.letter;
        el.dataset.color = cell.color;
        el.dataset.kanji = cell.kanji;
      }
      el.dataset.label = squareLabel(name, cell);
      el.setAttribute("aria-label", el.dataset.label);
      el.onclick = () => { if (!suppressClick) activate("sq:" + name); };
      el.onpointerdown = (ev) => pointerDown(ev, "sq:" + name, el);
      el.onfocus = () => { kbIndex = +el.dataset.index; };
      board.appendChild(el);
      index++;
    }
  }
  if (nf === 9 && nr === 9) {  // the four star points of a 9x9 board, a third of the way in (the same when flipped)
    for (const [x, y] of [[1, 1], [2, 1], [1, 2], [2, 2]]) {
      board.insertAdjacentHTML("beforeend", `<span class="hoshi" style="left:${x * 100 / 3}%;top:${y * 100 / 3}%"></span>`);
    }
  }
  board.classList.toggle("flipped", flipped);
  if (S.variant.id === "mawarikudoi" && !editor) markCorners(S.turn_build && turnInfo ? turnInfo.panel : S.panel);
  if (hadFocus) focusSquare(kbIndex);
}

// Mawarikudoi: each side's corners (its home with ⌂, the others with a flag once touched this leg).
function markCorners(p) {
  if (!p || !p.sides) return;
  p.sides.forEach((sd, side) => {
    if (sd.finished) return;
    const mark = (sq, text, cls) => {
      const el = document.querySelector(`#board .sq[data-sq="${sq}"]`);
      if (!el) return;
      const m = document.createElement("span");
      m.className = `corner ${cls} ${side ? "gote" : "sente"}`;
      m.textContent = text;
      el.appendChild(m);
    };
    mark(sd.home, side ? "☖⌂" : "☗⌂", "home");
    for (const c of sd.corners) if (sd.touched.includes(c)) mark(c, side ? "☖✓" : "☗✓", "touched");
  });
}

function renderHands() {
  const sides = flipped ? [0, 1] : [1, 0];  // [top, bottom]
  [["hand-top", sides[0]], ["hand-bottom", sides[1]]].forEach(([id, color]) => {
    const el = $(id);
    el.innerHTML = "";
    el.hidden = S.variant.sides === 1 && color === 1 && !editor;  // the editor's board has two sides
    if (el.hidden) return;
    el.setAttribute("aria-label", `${SIDE_WORD[color]}'s hand`);
    const label = document.createElement("span");
    label.className = "label";
    label.textContent = (color ? "☖ gote" : "☗ sente") + (editor ? "" : " " + S.players[color].name);
    el.appendChild(label);
    for (const h of S.board.hands[color]) {
      const b = document.createElement("button");
      b.type = "button";
      b.className = "hp" + (h.token ? " token" : "");
      b.dataset.hand = h.key;
      b.dataset.color = color;
      b.dataset.kanji = h.kanji;
      b.setAttribute("aria-label", `${h.kanji}${h.token ? " token" : ""} ×${h.count} in ${SIDE_WORD[color]}'s hand`);
      b.innerHTML = pieceSVG({ kanji: h.kanji, letter: h.western, owner: color, promoted: h.key.startsWith("+"),
        token: !!h.token }) + (h.count > 1 ? `<span class="count">${h.count}</span>` : "");
      b.onclick = () => { if (!suppressClick && color === S.side) activate("hand:" + h.key); };
      b.onpointerdown = (ev) => { if (color === S.side) pointerDown(ev, "hand:" + h.key, b); };
      el.appendChild(b);
    }
  });
}

// ---------------------------------------------------------------------------------------------- input
// A click, a drop, Enter on the focused square: all go through activate (then step, the one move code).
function activate(s) {
  if (!S) return;
  if (editor) return s.startsWith("sq:") ? editorClick(s.slice(3)) : undefined;
  if (s.startsWith("sq:") && isPlanNode()) return togglePlan(s.slice(3));
  step(s);
}

function isPicked(s) {
  return prefix[prefix.length - 1] === s || (!!waveFrom && s === "sq:" + waveFrom);
}

// Drag and drop (mouse, touch, pen): pressing a piece and moving picks it as a click would; letting go over a square
// clicks that square. A piece that cannot move is not dragged.
let drag = null;
let suppressClick = false;

function pointerDown(ev, s, el) {
  if (ev.button !== 0 || !S || !S.human_turn) return;
  drag = { s, el, x0: ev.clientX, y0: ev.clientY, id: ev.pointerId, started: false, ghost: null };
}

function startDrag() {
  if (!isPicked(drag.s)) activate(drag.s);
  if (!isPicked(drag.s)) return false;
  drag.started = true;
  const svg = drag.el.querySelector("svg.piece");
  if (!svg) return false;
  drag.ghost = document.createElement("div");
  drag.ghost.className = "drag-ghost";
  drag.ghost.innerHTML = svg.outerHTML;
  document.body.appendChild(drag.ghost);
  drag.el.classList.add("dragging");
  return true;
}

function endDrag(cancelled, ev) {
  const d = drag;
  drag = null;
  if (!d || !d.started) return;
  d.ghost.remove();
  d.el.classList.remove("dragging");
  for (const e of document.querySelectorAll(".dragging")) e.classList.remove("dragging");
  suppressClick = true;  // the click that ends a drag is no second click
  setTimeout(() => { suppressClick = false; }, 0);
  if (cancelled) return;
  const under = document.elementFromPoint(ev.clientX, ev.clientY);
  const sq = under && under.closest("#board .sq");
  if (!sq) { prefix = []; $("chooser").hidden = true; renderMarks(); return; }
  if ("sq:" + sq.dataset.sq !== d.s) activate("sq:" + sq.dataset.sq);
}

document.addEventListener("pointermove", (ev) => {
  if (!drag || ev.pointerId !== drag.id) return;
  if (!drag.started) {
    if (Math.hypot(ev.clientX - drag.x0, ev.clientY - drag.y0) < 6) return;
    if (!startDrag()) { drag = null; return; }
  }
  drag.ghost.style.left = ev.clientX + "px";
  drag.ghost.style.top = ev.clientY + "px";
  ev.preventDefault();
});
document.addEventListener("pointerup", (ev) => { if (drag && ev.pointerId === drag.id) endDrag(false, ev); });
document.addEventListener("pointercancel", (ev) => { if (drag && ev.pointerId === drag.id) endDrag(true, ev); });

// The keyboard: the arrow keys move the focus square (as seen on the screen), Enter or Space clicks it, Escape
// drops a half-made move.
let kbIndex = -1;

function focusSquare(i) {
  const squares = document.querySelectorAll("#board .sq");
  if (!squares.length) return;
  kbIndex = Math.max(0, Math.min(squares.length - 1, i));
  squares.forEach((el, k) => { el.tabIndex = k === kbIndex ? 0 : -1; });
  squares[kbIndex].classList.add("kbfocus");
  squares[kbIndex].focus();
}

function cancelMove() {
  prefix = [];
  endSquare = null;
  $("chooser").hidden = true;
  renderMarks();
}

$("board").addEventListener("keydown", (ev) => {
  if (!S) return;
  const nf = S.board.files, n = S.board.files * S.board.ranks;
  const moves = { ArrowLeft: -1, ArrowRight: 1, ArrowUp: -nf, ArrowDown: nf };
  if (ev.key in moves) {
    const i = kbIndex + moves[ev.key];
    const sameRow = Math.floor(i / nf) === Math.floor(kbIndex / nf);
    if (i >= 0 && i < n && (Math.abs(moves[ev.key]) === nf || sameRow)) focusSquare(i);
    ev.preventDefault();
  } else if (ev.key === "Enter" || ev.key === " ") {
    const el = document.querySelectorAll("#board .sq")[kbIndex];
    if (el) activate("sq:" + el.dataset.sq);
    ev.preventDefault();
  } else if (ev.key === "Escape") {
    cancelMove();
  }
});
document.addEventListener("keydown", (ev) => {
  if (ev.key === "Escape" && !$("chooser").hidden) cancelMove();
});

// A short beep on each move, when switched on (remembered in this browser).
const SOUND_KEY = "fantasista-sound";
let soundOn = localStorage.getItem(SOUND_KEY) === "on";
let audio = null;

function showSound() {
  $("sound").textContent = soundOn ? "Sound: on" : "Sound: off";
  $("sound").setAttribute("aria-pressed", String(soundOn));
}

function moveSound() {
  if (!soundOn) return;
  const el = $("sound");
  el.dataset.played = String(+(el.dataset.played || 0) + 1);
  try {
    audio = audio || new (window.AudioContext || window.webkitAudioContext)();
    const t = audio.currentTime, osc = audio.createOscillator(), gain = audio.createGain();
    osc.type = "triangle";
    osc.frequency.setValueAtTime(880, t);
    osc.frequency.exponentialRampToValueAtTime(440, t + 0.08);
    gain.gain.setValueAtTime(0.0001, t);
    gain.gain.exponentialRampToValueAtTime(0.3, t + 0.005);
    gain.gain.exponentialRampToValueAtTime(0.0001, t + 0.12);
    osc.connect(gain).connect(audio.destination);
    osc.start(t);
    osc.stop(t + 0.13);
  } catch (e) {
    // no audio here: the move is silent
  }
}

const BUTTON_LABELS = { "throw:gold": "金 gold throw (4 golds)", "throw:mixed": "金銀 mixed throw (golds × silvers)",
  curtain: "銀の帳 silver curtain", wave: "銀の波 silver wave", defect: "寝返り defect" };
const KIND_ORDER = ["breath", "strike", "curtain", "wave", "rider", "board", "end", "move"];

function renderMarks() {
  if (!S) return;
  const planning = isPlanNode();
  const building = !!(S.turn_build && turnInfo);
  const waving = !!waveMoves && !!waveInfo;
  const cands = planning || building || waving ? [] : candidates(prefix);
  const next = new Set(cands.filter((a) => a.path.length > prefix.length).map((a) => a.path[prefix.length]));
  // what kind of step each highlighted square is (a breath target, a curtain square, a carrier to board ...)
  const kinds = {};
  for (const a of cands) {
    if (a.path.length <= prefix.length || !a.kinds) continue;
    const s = a.path[prefix.length];
    (kinds[s] = kinds[s] || new Set()).add(a.kinds[prefix.length]);
  }
  if (building && choosingEnd()) for (const e of turnInfo.ends) { next.add(e.step); kinds[e.step] = new Set(["end"]); }
  else if (building) for (const n of turnInfo.next) { next.add(n.step); kinds[n.step] = new Set(["move"]); }
  const waveDone = new Set();  // the squares of the wave's chosen moves
  if (waving) {
    for (const m of waveMoves) waveDone.add(m.match(/\d[a-i]/g)[0]).add(m.match(/\d[a-i]/g)[1]);
    for (const n of waveInfo.next) {
      const s = "sq:" + (waveFrom ? n.to : n.from);
      if (waveFrom && n.from !== waveFrom) continue;
      next.add(s);
      kinds[s] = new Set(["wave"]);
    }
  }
  const active = prefix.length > 0 || building || waving;
  for (const el of document.querySelectorAll("#board .sq")) {
    const name = el.dataset.sq;
    el.classList.toggle("last", S.last_move.includes(name));
    el.classList.toggle("check", S.check === name && !building);
    const selected = prefix.includes("sq:" + name) || waveFrom === name || endSquare === name;
    el.classList.toggle("selected", selected);
    el.classList.toggle("wave-done", waveDone.has(name));
    const target = active && next.has("sq:" + name);
    el.classList.toggle("target", target);
    const own = !!el.dataset.piece && +el.dataset.color === S.side;
    let kind = "";
    if (target) {
      const ks = kinds["sq:" + name] || new Set(["move"]);
      kind = KIND_ORDER.find((k) => ks.has(k)) || "move";
    }
    for (const k of KIND_ORDER) el.classList.toggle("t-" + k, target && kind === k && k !== "move");
    el.dataset.kind = target ? (kind || "move") : "";
    el.classList.toggle("capture", target && !building && !!el.dataset.piece && !own);
    el.classList.toggle("plan-pick", planning && planPick.has(name));
    el.setAttribute("aria-label", el.dataset.label + (S.check === name ? ", in check" : "") +
      (selected ? ", selected" : "") + (target ? ", can go here" : ""));
  }
  for (const el of document.querySelectorAll(".hand .hp")) {
    const key = "hand:" + el.dataset.hand;
    el.classList.toggle("selected", prefix.includes(key) && +el.dataset.color === S.side);
    el.classList.toggle("target", prefix.length > 0 && next.has(key) && +el.dataset.color === S.side);
  }
  if (building) {
    const box = $("actions");
    box.innerHTML = "";
    return turnButtons(box);
  }
  if (waving) {
    const box = $("actions");
    box.innerHTML = "";
    return waveButtons(box);
  }
  const actions = $("actions");
  actions.innerHTML = "";
  if (planning) return renderPlanBox();
  if (S.wave_build && !prefix.length) next.add("btn:wave");
  for (const s of next) {
    if (!s.startsWith("btn:")) continue;
    const b = document.createElement("button");
    b.type = "button";
    b.className = "action";
    b.dataset.step = s;
    b.textContent = stepText(s);
    b.onclick = () => step(s);
    actions.appendChild(b);
  }
  if (prefix.length) addButton(actions, "Cancel", cancelMove, { cls: "cancel", id: "cancel-move" });
}

// Turncoat plans: toggle enemy pieces; the plan whose squares equal the picked set can be confirmed.
function planSquares() {
  const all = new Set();
  for (const a of S.legal) a.token.slice(5).split(",").forEach((q) => all.add(q));
  return all;
}

function matchingPlan() {
  const picked = [...planPick].sort().join(",");
  return S.legal.find((a) => a.token.slice(5).split(",").sort().join(",") === picked);
}

function togglePlan(name) {
  if (!S.human_turn || !planSquares().has(name)) return;
  if (planPick.has(name)) planPick.delete(name); else planPick.add(name);
  renderMarks();
}

function renderPlanBox() {
  const allowed = planSquares();
  for (const el of document.querySelectorAll("#board .sq")) el.classList.toggle("plan-option", allowed.has(el.dataset.sq));
  const box = $("actions");
  const m = matchingPlan();
  box.innerHTML = `<div class="plan-box"><span>Secret plan: pick the enemy pieces that will defect
    (a rook or bishop; gold+pawn; silver+knight/lance/pawn; or three knights/lances/pawns).</span>
    <span id="plan-picked">${[...planPick].sort().join(",") || "none"}</span></div>`;
  const ok = document.createElement("button");
  ok.type = "button";
  ok.id = "plan-confirm";
  ok.textContent = "Confirm plan";
  ok.disabled = !m;
  ok.onclick = () => m && sendMove(m.token);
  box.appendChild(ok);
  const rnd = document.createElement("button");
  rnd.type = "button";
  rnd.id = "plan-random";
  rnd.textContent = "Random plan";
  rnd.onclick = () => {
    const a = S.legal[Math.floor(Math.random() * S.legal.length)];
    planPick = new Set(a.token.slice(5).split(","));
    renderMarks();
  };
  box.appendChild(rnd);
}

function sideName(side) { return side ? "☖ gote" : "☗ sente"; }

function renderStatus() {
  const st = S;
  const res = $("result");
  res.hidden = !st.result;
  res.textContent = st.result ? "Game over: " + st.result.text : "";
  let text = "";
  if (!st.result) {
    const who = st.players[st.side] || {};
    if (st.node === "chance") text = "nature to draw";
    else if (st.thinking) text = `${sideName(st.side)} (${who.name}) is thinking…`;
    else if (st.human_turn) text = `${sideName(st.side)} to move` + (isPlanNode() ? ": choose your secret plan" : "");
    else text = `${sideName(st.side)} to move`;
  }
  $("status").textContent = text + gameEndStatus(st);
}

function renderPanel() {
  const st = S, p = st.panel, el = $("variant-panel");
  let html = `<h3>${st.variant.name} ${st.variant.ja}</h3>`;
  if (st.variant.id === "fantasista") {
    // the magic inventory of each side: fairy, rights, emblem, tokens in hand
    html += `<table class="inventory" id="inventory"><tr><th></th><th>fairy</th><th>rights</th><th>tokens in hand</th></tr>`;
    for (const side of [0, 1]) {
      const inv = (p.inventory || [])[side] || { fairy: p.fairies[side], rights: p.rights[side], tokens: [] };
      const rights = inv.rights.filter((r) => !r.startsWith("emblem")).map(rightText);
      const tokens = inv.tokens.map((t) => `<span class="tok">${western ? t.western : t.kanji}'${t.count > 1 ? "×" + t.count : ""}</span>`);
      html += `<tr id="inventory-${side}"><td>${side ? "☖" : "☗"}</td><td>${fairyText(inv.fairy)}</td>
        <td>${rights.join(", ") || "–"}${inv.emblem ? ' <span class="emblem" title="emblem">紋 emblem</span>' : ""}</td>
        <td>${tokens.join(" ") || "–"}</td></tr>`;
    }
    html += `</table>`;
    const roll = st.events.roll;
    if (roll && p.last_roll) {
      const fairy = p.fairies[roll.side];
      const effect = effectText(p.last_roll.effect, fairy);
      html += `<div id="roll"><span class="die" id="die">${p.last_roll.n}</span>${sideName(roll.side)} rolled
        ${p.last_roll.n}: ${effect || p.last_roll.effect}</div>`;
    } else {
      html += `<div id="roll" class="k">no magic yet (after plies 15, 16, 30, 31, …)</div>`;
    }
    if (p.pending) html += `<div>pending: ${p.pending}</div>`;
  } else if (st.variant.id === "enokian") {
    const card = st.events.card;
    if (card) {
      const v = card.token.split("=")[1], suit = v.slice(-1), rank = v.slice(0, -1);
      const red = suit === "H" || suit === "D";
      html += `<div id="card-box"><span class="card${red ? " red" : ""}" id="card">${rank}<br>${SUITS[suit] || suit}</span>
        drawn: ${rank}${SUITS[suit] || suit}</div>`;
    }
    html += `<div>deck: <b id="deck">${p.deck}</b> cards, kings left: <b id="kings">${p.kings_left}</b>,
      your pieces: ${p.player_pieces}</div>`;
    html += cardWhyHTML(p);
  } else if (st.variant.id === "mawarikudoi") {
    html += mawariPanel(st.turn_build && turnInfo ? turnInfo.panel : p, p);
  } else if (st.variant.id === "turncoat") {
    html += `<div>plans: ☗ <span id="plan-0">${p.plans[0]}</span> / ☖ <span id="plan-1">${p.plans[1]}</span></div>`;
  }
  el.innerHTML = html;
  const roll = st.events.roll;
  const rollKey = roll ? roll.i + roll.token : "";
  if (roll && rollKey !== lastRollKey && $("die")) $("die").classList.add("rolling");
  lastRollKey = rollKey;
  const card = st.events.card;
  const cardKey = card ? card.i + card.token : "";
  if (card && cardKey !== lastCardKey && $("card")) $("card").classList.add("fresh");
  lastCardKey = cardKey;
}

// Mawarikudoi: the last throw with the thrown generals' faces, then each side's runner progress.
function throwHTML(t) {
  let html = `<div id="throw" class="throw">`;
  for (const g of t.groups) {
    html += `<span class="group">`;
    for (const f of g.faces) html += `<span class="general face-${f}" title="${FACE_TITLE[f]}">${f === "d" ? "" : g.name}</span>`;
    html += `<span class="gscore">${g.score}</span></span>`;
  }
  return html + `<span class="throw-n">N = <b id="throw-n">${t.n}</b></span></div>`;
}

function mawariPanel(p, now) {
  let html = "";
  const t = now.last_throw;
  if (t) html += throwHTML(t);
  else html += `<div id="throw" class="k">no throw yet</div>`;
  if (S.turn_build && turnInfo) html += `<div class="k">building the turn: ${turnActs.join(", ") || "no action yet"}</div>`;
  p.sides.forEach((sd, side) => {
    html += `<div class="runner-box" id="runner-${side}"><b>${side ? "☖ gote" : "☗ sente"}</b> `;
    html += `<span class="relay">` + sd.relay.map((k, i) =>
      `<span class="${i < sd.runner ? "done" : i === sd.runner ? "current" : "todo"}">${k}</span>`).join("") + `</span>`;
    if (sd.finished) html += ` <b>finished</b>`;
    else {
      const touched = sd.corners.map((c) => `<span class="${sd.touched.includes(c) || sd.ready ? "hit" : ""}">${c}</span>`);
      html += `<div>runner <b>${sd.kanji}</b> ${sd.name} on ${sd.square}, facing ${FACING_ARROW[sd.facing]} ${sd.facing};
        corners ${touched.join(" ")}${sd.ready ? ` (two or more: back to ${sd.home})` : ""}; mixed throw
        ${sd.mixed_right ? (sd.mixed_allowed ? "allowed now" : "kept") : "lost"}</div>`;
    }
    html += `</div>`;
  });
  return html;
}

function renderInfo() {
  const i = S.info || {};
  let score = "–";
  if (i.winprob !== undefined && i.winprob !== null) score = `${(100 * i.winprob).toFixed(1)}% (sente)`;
  else if (i.mate !== undefined) score = `mate ${i.mate > 0 ? "+" : ""}${i.mate} (sente)`;
  else if (i.score !== undefined && i.score !== null) score = `${i.score > 0 ? "+" : ""}${i.score} (sente)`;
  $("info-score").textContent = score;
  $("info-depth").textContent = i.depth ?? "–";
  $("info-pv").textContent = (i.pv || []).join(" ") || "–";
}

// The move list: the main line, and each branch as a row under the move it replaces (its own branches under
// it, indented). Every move is clickable: the board shows the position after it (review).
function renderMoves() {
  const body = $("moves").querySelector("tbody");
  body.innerHTML = "";
  const lines = S.lines || [];
  const full = fullLines();
  const main = lines[0];
  if (!main) return;
  const groups = {};  // main-line index -> the branch rows shown after it
  let anchor = 0;
  for (const ln of lines.slice(1)) {
    if (ln.parent === 0) anchor = ln.fork;
    (groups[anchor] = groups[anchor] || []).push(ln);
  }
  const number = (line, i) => full[line].slice(0, i + 1).filter((h) => !h.event).length;
  const addBranches = (i) => {
    for (const ln of groups[i] || []) {
      const tr = document.createElement("tr");
      tr.className = "branch";
      tr.dataset.line = ln.line;
      const td = document.createElement("td");
      td.colSpan = 4;
      td.style.paddingLeft = (8 + 12 * depthOf(ln.line)) + "px";
      td.innerHTML = `<span class="k">変化 ${number(ln.line, ln.fork)}手</span> `;
      ln.moves.forEach((h, k) => {
        const i2 = ln.fork + k;
        const sp = document.createElement("span");
        sp.className = "bmove" + (h.event ? " event" : "");
        sp.dataset.line = ln.line;
        sp.dataset.ply = i2 + 1;
        sp.textContent = (h.event ? "" : `${number(ln.line, i2)}${h.side ? "☖" : "☗"}`) + h.ja + (h.comment ? " *" : "");
        if (h.comment) sp.title = h.comment;
        sp.onclick = () => showAt(ln.line, i2 + 1);
        td.appendChild(sp);
      });
      if (ln.result) td.insertAdjacentHTML("beforeend", ` <span class="k">${ln.result}</span>`);
      tr.appendChild(td);
      body.appendChild(tr);
    }
  };
  main.moves.forEach((h, i) => {
    const tr = document.createElement("tr");
    tr.dataset.line = 0;
    tr.dataset.ply = i + 1;
    if (h.event) tr.className = "event";
    tr.innerHTML = `<td>${h.event ? "" : number(0, i)}</td><td>${h.event ? "" : h.side ? "☖" : "☗"}</td>` +
      `<td class="usi">${h.token}</td><td class="ja">${h.ja}${h.comment ? " *" : ""}</td>`;
    if (h.comment) tr.title = h.comment;
    tr.onclick = () => showAt(0, i + 1);
    body.appendChild(tr);
    addBranches(i);
  });
  for (const i of Object.keys(groups)) if (+i >= main.moves.length) addBranches(+i);  // past the main line's end
  markShown();
}

function renderGraph() {
  const svg = $("graph");
  const pts = [];
  const useProb = S.history.some((h) => h.winprob !== null && h.winprob !== undefined);
  const moves = S.history.filter((h) => !h.event);
  moves.forEach((h, k) => {
    let y = null;
    if (useProb && h.winprob !== null && h.winprob !== undefined) y = 1 - h.winprob;
    else if (!useProb && h.score !== null && h.score !== undefined) y = 0.5 - Math.max(-2000, Math.min(2000, h.score)) / 4000;
    if (y !== null) pts.push([k, y, h]);
  });
  const w = 300, hgt = 100, n = Math.max(moves.length, 10);
  let html = `<line x1="0" y1="50" x2="300" y2="50" stroke="#bbb" stroke-width="1"/>`;
  if (pts.length) {
    const poly = pts.map(([k, y]) => `${(k / n) * w},${y * hgt}`).join(" ");
    html += `<polyline points="${poly}" fill="none" stroke="#c0392b" stroke-width="2" vector-effect="non-scaling-stroke"/>`;
  }
  svg.innerHTML = html + graphPointsSVG(pts, n, w, hgt);
  svg.dataset.points = pts.length;
}

// ---------------------------------------------------------------------------------------------- records
async function save(fmt) {
  try {
    const r = await api("/api/record?format=" + fmt);
    $("record-text").value = r.text;
    const blob = new Blob([r.text], { type: r.mime });
    const a = document.createElement("a");
    a.href = URL.createObjectURL(blob);
    a.download = r.name;
    if (!navigator.webdriver) a.click();
    showError("");
  } catch (e) {
    showError(e.message);
  }
}

// A JSON record brings its players (persons, engines the server offers, by name); the form's players play where it
// names none (KIF, CSA) and instead of an engine the server does not offer (a file never starts a program).
async function loadText(text) {
  // a pasted SFEN or position line is of the form's variant (if it reads it)
  await post("/api/load", { text, default_players: [playerSpec(0), playerSpec(1)], variant: $("variant").value },
    "the loaded record", () => { view = null; stopReplay(); });
}

// ---------------------------------------------------------------------------------------------- review and branches
// The page shows the live position, or (review) the one after any move of any line: the server sends it as this
// page may see it (/api/view: a turncoat plan the viewer may not see stays hidden) with the legal moves when a
// person may play there. A move played there goes on along a line that has it, or starts a branch.

// Every line's plies from the start (a branch: its parent's first ``fork`` plies, then its own).
function fullLines() {
  const out = {};
  for (const ln of (LIVE && LIVE.lines) || []) {
    out[ln.line] = (ln.parent >= 0 ? (out[ln.parent] || []).slice(0, ln.fork) : []).concat(ln.moves);
  }
  if (LIVE && !out[LIVE.line]) out[LIVE.line] = LIVE.history;  // a line with no move of its own yet (after undo)
  return out;
}

function depthOf(line) {
  const byId = Object.fromEntries(((LIVE && LIVE.lines) || []).map((ln) => [ln.line, ln]));
  let d = 0;
  for (let ln = byId[line]; ln && ln.parent > 0; ln = byId[ln.parent]) d++;
  return d;
}

// The line and plies shown: the reviewed position, else the live one.
function shownAt() {
  return view ? { line: view.line, ply: view.ply } : { line: LIVE.line, ply: LIVE.history.length };
}

// What the page draws: the live state, or with a reviewed position's board, moves and marks in its place.
function shownState(st) {
  if (editor) return { ...st, board: editorBoard(), legal: [], human_turn: false, last_move: [], check: null,
    turn_build: null, wave_build: false, thinking: false };
  if (!view) return st;
  return { ...st, board: view.board, legal: view.legal, human_turn: view.legal.length > 0, side: view.side,
    last_move: view.last_move, check: view.check, turn_build: null, wave_build: false, node: view.node, panel: view.panel,
    thinking: false, result: null };
}

// The move list's cell of the position after ``ply`` plies of ``line`` (a branch's first plies are its parent's).
function cellFor(line, ply) {
  const byId = Object.fromEntries(((LIVE && LIVE.lines) || []).map((ln) => [ln.line, ln]));
  for (let ln = byId[line]; ln && ply > 0; ln = byId[ln.parent]) {
    if (ply > ln.fork) return document.querySelector(`#moves [data-line="${ln.line}"][data-ply="${ply}"]`);
  }
  return null;
}

function markShown() {
  for (const el of document.querySelectorAll("#moves .current")) el.classList.remove("current");
  if (!LIVE) return;
  const at = shownAt();
  const cell = cellFor(at.line, at.ply);
  if (cell) {
    cell.classList.add("current");
    const box = cell.closest(".moves");
    if (box) box.scrollTop = Math.max(0, cell.offsetTop - box.clientHeight / 2);
  }
  const h = (fullLines()[at.line] || [])[at.ply - 1];
  const comment = at.ply === 0 ? (LIVE.start_comment || "") : (h && h.comment) || "";
  $("move-comment").textContent = comment;
  $("move-comment").hidden = !comment;
}

async function showAt(line, ply) {
  if (!LIVE || editor) return;
  const len = (fullLines()[line] || []).length;
  ply = Math.max(0, Math.min(ply, len));
  prefix = [];
  $("chooser").hidden = true;
  if (line === LIVE.line && ply === LIVE.history.length) {
    view = null;
    return render(LIVE);
  }
  try {
    const key = liveKey;
    const v = await api(`/api/view?line=${line}&ply=${ply}`);
    if (liveKey !== key) return;  // the game moved on meanwhile: the click is read again
    view = v;
    render(LIVE);
  } catch (e) {
    showError(e.message);
  }
}

function stepShown(delta) {
  const at = shownAt();
  const len = (fullLines()[at.line] || []).length;
  if (delta === -Infinity) return showAt(at.line, 0);
  if (delta === Infinity) return showAt(at.line, len);
  return showAt(at.line, Math.max(0, Math.min(len, at.ply + delta)));
}

// A move in a reviewed position: the server answers where it led (a line that has it, or a new branch).
async function reviewMove(token) {
  const at = { line: view.line, ply: view.ply };
  const st = await post("/api/move", { move: token, ...at });
  if (!st) return;
  view = null;
  if (st.at && !(st.at.line === st.line && st.at.ply === st.history.length)) await showAt(st.at.line, st.at.ply);
  else render(st);
}

function stopReplay() {
  if (replayTimer) clearInterval(replayTimer);
  replayTimer = null;
  if ($("replay")) $("replay").textContent = "▶ Replay";
}

// Replay: the shown line from its start, a move a second.
function toggleReplay() {
  if (replayTimer) return stopReplay();
  const line = shownAt().line;
  showAt(line, 0);
  $("replay").textContent = "■ Stop";
  replayTimer = setInterval(() => {
    const at = shownAt();
    if (at.ply >= (fullLines()[line] || []).length) return stopReplay();
    showAt(line, at.ply + 1);
  }, 1000);
}

function renderReview() {
  const box = $("review");
  if (!box || !LIVE) return;
  const at = shownAt();
  box.classList.toggle("reviewing", !!view);
  $("review-where").textContent = view
    ? `reviewing: after ${at.ply} of ${(fullLines()[at.line] || []).length} plies` +
      (at.line ? ` (branch ${at.line})` : "") + (view.legal.length ? " — a move here makes a branch" : "")
    : "live position";
  $("review-live").hidden = !view;
  if (view && !editor) $("status").textContent = view.refusal ? `reviewing (${view.refusal})` :
    `reviewing: ${sideName(view.side)} to move here`;
  markShown();
  if (editor) redrawEditor();
}

// ←/→/Home/End step through the shown line, except where the key has a job of its own: in a text field or a
// select, on a question over the board, and the arrow keys while the board has the focus (they move its focus square).
document.addEventListener("keydown", (ev) => {
  if (ev.defaultPrevented || ev.altKey || ev.ctrlKey || ev.metaKey) return;
  if (ev.target.closest && ev.target.closest("input, textarea, select, #chooser")) return;
  if (ev.key.startsWith("Arrow") && ev.target.closest && ev.target.closest("#board")) return;
  const keys = { ArrowLeft: -1, ArrowRight: 1, Home: -Infinity, End: Infinity };
  if (!(ev.key in keys) || !LIVE || editor) return;
  ev.preventDefault();
  stopReplay();
  stepShown(keys[ev.key]);
});

// ---------------------------------------------------------------------------------------------- position editor
// Any board variant's position set up by hand: a piece from the palette (either side, promoted ones too) placed
// with a click (a click with the same piece removes it; the eraser empties), the hands' counts, the side to move;
// SFEN in and out; "Start a game here" starts the form's game from it. SFEN fields past the hands (a variant's
// own state) are kept as read, except mawarikudoi's race (each runner: piece, square, facing, corners, throw right;
// the phase), which is the position itself (the board field is drawn from it), and enokian's headings.
const SFEN_TOKEN = /\d+|\+?[A-Za-z]'?/g;

function editorVariant() { return variants.find((v) => v.id === (editor ? editor.variant : $("variant").value)); }

function parseSfen(sfen, v) {
  const fields = sfen.trim().split(/\s+/);
  if (fields.length < 2 || !/^[bw]$/.test(fields[1])) throw new Error("an SFEN is '<board> <b|w> <hands> <n>'");
  const rows = fields[0].split("/");
  if (rows.length !== v.ranks) throw new Error(`the board has ${rows.length} ranks, not ${v.ranks}`);
  const squares = {};
  rows.forEach((row, r) => {
    let f = v.files;
    for (const tok of row.match(SFEN_TOKEN) || []) {
      if (/^\d+$/.test(tok)) { f -= +tok; continue; }
      if (f < 1) throw new Error(`rank ${r + 1} has more than ${v.files} squares`);
      squares[`${f}${RANKS[r]}`] = tok;
      f--;
    }
    if (f !== 0) throw new Error(`rank ${r + 1} has ${v.files - f} squares, not ${v.files}`);
  });
  const hands = {};
  if (fields[2] && fields[2] !== "-") {
    for (const [, n, p] of fields[2].matchAll(/(\d*)([A-Za-z])/g)) hands[p] = (hands[p] || 0) + (+n || 1);
  }
  const race = v.id === "mawarikudoi" ? parseRace(fields[4]) : null;
  return { variant: v.id, squares, hands, side: fields[1], extra: race ? [] : fields.slice(4), race,
    tool: editor ? editor.tool : "", color: editor ? editor.color : 0 };
}

// Mawarikudoi's race field "<sente>/<gote>/<phase>", a side "<runner><square>:<facing>:<corners>:<right>" or
// "done:<right>" (docs/mawarikudoi.md); the server checks the rest (corners, colours, the phase allowed).
function parseRace(text) {
  const parts = (text || "").split("/");
  if (parts.length !== 3) throw new Error("the race field is <sente>/<gote>/<phase>");
  const sides = parts.slice(0, 2).map((t, c) => {
    const it = t.split(":");
    if (it[0] === "done" && it.length === 2) return { runner: "done", sq: "", facing: "n", corners: "*", right: it[1] };
    if (it.length !== 4 || it[0].length !== 3) {
      throw new Error(`${SIDE_WORD[c]}'s runner ${t} is <runner><square>:<facing>:<corners>:<right>`);
    }
    return { runner: it[0][0].toUpperCase(), sq: it[0].slice(1), facing: it[1], corners: it[2], right: it[3] };
  });
  return { sides, phase: parts[2] };
}

function raceText(race) {
  const side = (r, c) => r.runner === "done" ? `done:${r.right}`
    : `${c ? r.runner.toLowerCase() : r.runner}${r.sq}:${r.facing}:${r.corners}:${r.right}`;
  return `${race.sides.map(side).join("/")}/${race.phase}`;
}

// The runners on the board: sente's drawn when both share a square (as the SFEN's board field).
function raceSquares(race) {
  const squares = {};
  for (const c of [1, 0]) {
    const r = race.sides[c];
    if (r.runner !== "done" && r.sq) squares[r.sq] = c ? r.runner.toLowerCase() : r.runner;
  }
  return squares;
}

function editorSfen() {
  const v = editorVariant(), e = editor;
  const squares = e.race ? raceSquares(e.race) : e.squares;
  const rows = [];
  for (let r = 0; r < v.ranks; r++) {
    let row = "", empty = 0;
    for (let f = v.files; f >= 1; f--) {
      const p = squares[`${f}${RANKS[r]}`];
      if (!p) { empty++; continue; }
      if (empty) { row += empty; empty = 0; }
      row += p;
    }
    rows.push(row + (empty ? empty : ""));
  }
  let hand = "";
  for (const upper of [true, false]) {
    for (const l of v.hand) {
      const key = upper ? l : l.toLowerCase();
      const n = e.hands[key] || 0;
      if (n > 0) hand += (n > 1 ? n : "") + key;
    }
  }
  return [rows.join("/"), e.side, hand || "-", "1", ...(e.race ? [raceText(e.race)] : e.extra)].join(" ");
}

// The editor's position as a board the page draws.
function editorBoard() {
  const v = editorVariant(), e = editor;
  const squares = {};
  for (const [sq, tok] of Object.entries(e.race ? raceSquares(e.race) : e.squares)) {
    const upper = tok.replace(/^\+/, "")[0] === tok.replace(/^\+/, "")[0].toUpperCase();
    const letter = tok.toUpperCase().replace(/'$/, "");
    squares[sq] = { letter, color: upper ? 0 : 1, kanji: v.kanji[letter] || letter, western: letter, marks: "" };
    if (e.race) squares[sq].facing = e.race.sides[upper ? 0 : 1].facing;
  }
  const hands = [[], []];
  for (const l of v.hand) {
    for (const [c, key] of [[0, l], [1, l.toLowerCase()]]) {
      if (e.hands[key]) hands[c].push({ key: l, letter: l, kanji: v.kanji[l] || l, western: l, count: e.hands[key] });
    }
  }
  return { files: v.files, ranks: v.ranks, squares, hands, turn: e.side === "b" ? 0 : 1 };
}

function openEditor(sfen) {
  const v = variants.find((x) => x.id === $("variant").value && x.editable)
    || variants.find((x) => x.id === LIVE.variant.id && x.editable) || variants.find((x) => x.id === "shogi");
  try {
    editor = parseSfen(sfen || (v.id === LIVE.variant.id ? (view ? view.sfen : LIVE.sfen) : ""), v);
  } catch (e) {
    editor = parseSfen(v.edit.start || `${"/".repeat(v.ranks - 1).split("/").map(() => v.files).join("/")} b - 1`, v);
  }
  editor.tool = "";
  editor.color = 0;
  view = null;
  stopReplay();
  $("editor").hidden = false;
  editorPalette();
  redrawEditor();
}

function closeEditor() {
  editor = null;
  $("editor").hidden = true;
  render(LIVE);
}

function editorPalette() {
  const v = editorVariant(), box = $("editor-palette");
  box.innerHTML = "";
  // mawarikudoi: the runners in relay order (a click moves the chosen side's runner there, as that piece)
  const letters = editor.race ? [...v.edit.runners] : Object.keys(v.kanji);
  for (const letter of letters) {  // drawn as on the board, in the chosen side's colours
    const kanji = v.kanji[letter];
    const b = addButton(box, "", () => { editor.tool = letter; editorPalette(); }, {
      cls: "epiece" + (editor.tool === letter ? " chosen" : ""), data: { piece: letter } });
    b.innerHTML = pieceSVG({ kanji, letter, owner: editor.color, promoted: letter.startsWith("+") });
    b.title = `${kanji} ${letter}`;
    b.setAttribute("aria-label", `${kanji} ${letter} (${SIDE_WORD[editor.color]})`);
  }
  if (!editor.race) {  // each side has one runner always (or has finished): nothing to erase
    addButton(box, "✕ empty", () => { editor.tool = "empty"; editorPalette(); },
      { cls: "epiece" + (editor.tool === "empty" ? " chosen" : ""), data: { piece: "empty" } });
  }
  const solo = v.id === "enokian";  // the solitaire: the player's pieces and the red ones; "w": a card comes next
  $("editor-color").textContent = solo ? (editor.color ? "red pieces" : "the player's pieces")
    : editor.race ? (editor.color ? "☖ gote's runner" : "☗ sente's runner")
    : editor.color ? "☖ gote's pieces" : "☗ sente's pieces";
  $("editor-side").options[0].textContent = solo ? "the player" : "☗ sente";
  $("editor-side").options[1].textContent = solo ? "a card (the deck)" : "☖ gote";
  editorFields(v);
  const hands = $("editor-hands");
  hands.innerHTML = "";
  for (const l of v.hand) {
    for (const [c, key] of [[0, l], [1, l.toLowerCase()]]) {
      const label = document.createElement("label");
      label.textContent = `${c ? "☖" : "☗"}${v.kanji[l] || l} `;
      const input = document.createElement("input");
      input.type = "number";
      input.min = 0;
      input.max = 18;
      input.value = editor.hands[key] || 0;
      input.dataset.hand = key;
      input.onchange = () => { editor.hands[key] = Math.max(0, parseInt(input.value, 10) || 0); redrawEditor(); };
      label.appendChild(input);
      hands.appendChild(label);
    }
  }
  $("editor-side").value = editor.side;
}

// A variant's own fields: mawarikudoi's runners (piece or finished, facing, corners touched, mixed-throw right) and
// phase; enokian's heading of each suit's dragon / horse (x: captured; upper case: flipped on 5e).
function editorFields(v) {
  const box = $("editor-race");
  box.innerHTML = "";
  box.hidden = !editor.race && v.id !== "enokian";
  const select = (label, key, value, choices, onchange) => {
    const l = document.createElement("label");
    l.textContent = label + " ";
    const sel = document.createElement("select");
    sel.dataset.field = key;
    for (const [val, text] of choices) sel.add(new Option(text, val));
    if (!choices.some(([val]) => val === value)) sel.add(new Option(value, value));  // as read: the server judges
    sel.value = value;
    sel.onchange = () => { onchange(sel.value); editorPalette(); redrawEditor(); };
    l.appendChild(sel);
    box.appendChild(l);
    return l;
  };
  if (editor.race) {
    const race = editor.race;
    race.sides.forEach((r, c) => {
      const who = c ? "☖" : "☗";
      const row = document.createElement("div");
      row.className = "editor-row";
      box.appendChild(row);
      select(`${who} runner`, `runner-${c}`, r.runner,
        [...[...v.edit.runners].map((l) => [l, `${v.kanji[l]} ${l}`]), ["done", "finished"]], (x) => {
          if (x !== "done" && !r.sq) r.sq = v.edit.corners[1 - c][2];  // back on its start corner
          r.runner = x;
        });
      if (r.runner !== "done") {
        select("facing", `facing-${c}`, r.facing, [...v.edit.facings].map((f) => [f, FACING_ARROW[f] + " " + f]),
          (x) => { r.facing = x; });
        select("corners", `corners-${c}`, r.corners,
          [["-", "none"], ...v.edit.corners[c].map((q) => [q, q]), ["*", "two or more"]], (x) => { r.corners = x; });
      }
      select("mixed throw", `right-${c}`, r.right, [["m", "kept"], ["-", "lost"]], (x) => { r.right = x; });
      row.append(...box.querySelectorAll(":scope > label"));  // one row per side
    });
    const turn = /^t\d+$/.test(race.phase);
    select("phase", "phase", turn ? "t" : race.phase, [["c", "throw choice"], ["g", "gold throw"],
      ["m", "mixed throw"], ["t", "a turn to play"], ["end", "race over"]],
    (x) => { race.phase = x === "t" ? "t1" : x; });
    if (turn) {
      const l = document.createElement("label");
      l.textContent = "actions ";
      const input = document.createElement("input");
      input.type = "number";
      input.min = 1;
      input.value = race.phase.slice(1);
      input.dataset.field = "steps";
      input.onchange = () => { race.phase = `t${Math.max(1, parseInt(input.value, 10) || 1)}`; redrawEditor(); };
      l.appendChild(input);
      box.appendChild(l);
    }
  } else if (v.id === "enokian" && editor.extra.length) {
    const parts = editor.extra[0].split("/");
    const heads = parts[0];
    [...v.edit.suits].forEach((suit, i) => {
      const dirs = [...v.edit.headings[i]];
      select(`${SUITS[suit]} heading`, `heading-${suit}`, heads[2 * i + 1] || "x",
        [...dirs.map((d) => [d, d]), ...dirs.map((d) => [d.toUpperCase(), `${d.toUpperCase()} (flipped on 5e)`]),
          ["x", "captured"]], (x) => {
          const h = parts[0].split("");
          h[2 * i + 1] = x;
          parts[0] = h.join("");
          editor.extra[0] = parts.join("/");
        });
    });
  }
}

function editorClick(sq) {
  if (!editor.tool) return;
  if (editor.race) {  // the chosen side's runner moves here, as the chosen piece
    const r = editor.race.sides[editor.color];
    if (editor.tool !== "empty") Object.assign(r, { runner: editor.tool, sq });
    editorFields(editorVariant());
    return redrawEditor();
  }
  const cur = editor.squares[sq];
  if (editor.tool === "empty") delete editor.squares[sq];
  else {
    const tok = editor.color ? editor.tool.toLowerCase() : editor.tool;
    if (cur === tok) delete editor.squares[sq]; else editor.squares[sq] = tok;
  }
  redrawEditor();
}

function redrawEditor() {
  $("editor-sfen").value = editorSfen();
  S = shownState(LIVE);
  drawBoard(S.board);
  renderHands();
  fitBoard();  // the editor's variant may have another board size than the game's
  $("status").textContent = "position editor: pick a piece, click squares; set hands and the side to move";
}

function editorReadSfen() {
  try {
    const v = editorVariant();
    const tool = editor.tool, color = editor.color;
    editor = parseSfen($("editor-sfen").value, v);
    editor.tool = tool;
    editor.color = color;
    editorPalette();
    redrawEditor();
    stickyError = "";
    showError("");
  } catch (e) {
    stickyError = "SFEN: " + e.message;
    showError(stickyError);
  }
}

function editorStart() {
  const options = {};
  for (const sel of document.querySelectorAll("#variant-options select")) options[sel.dataset.option] = sel.value;
  const body = { variant: editor.variant, options, players: [playerSpec(0), playerSpec(1)], sfen: editorSfen() };
  if (body.variant !== $("variant").value) body.options = {};
  return post("/api/new", body, "a game from this position", () => { editor = null; $("editor").hidden = true; });
}

function initReviewAndEditor() {
  $("review-start").onclick = () => { stopReplay(); stepShown(-Infinity); };
  $("review-back").onclick = () => { stopReplay(); stepShown(-1); };
  $("review-forward").onclick = () => { stopReplay(); stepShown(1); };
  $("review-end").onclick = () => { stopReplay(); stepShown(Infinity); };
  $("review-live").onclick = () => { stopReplay(); view = null; render(LIVE); };
  $("replay").onclick = toggleReplay;
  $("edit-position").onclick = () => openEditor();
  $("editor-close").onclick = closeEditor;
  $("editor-read").onclick = editorReadSfen;
  $("editor-start").onclick = editorStart;
  $("editor-color").onclick = () => { editor.color = 1 - editor.color; editorPalette(); };
  $("editor-side").onchange = () => { editor.side = $("editor-side").value; redrawEditor(); };
  $("editor-clear").onclick = () => {
    if (editor.race) {  // the race always has its runners: back to the start
      $("editor-sfen").value = editorVariant().edit.start;
      return editorReadSfen();
    }
    editor.squares = {};
    editor.hands = {};
    if (editor.variant === "enokian" && editor.extra.length) {  // no dragon or horse left: their headings say so
      editor.extra[0] = editor.extra[0].replace(/^S.C.H.D./, "SxCxHxDx");
    }
    redrawEditor();
    editorPalette();
  };
  $("editor-initial").onclick = () => {  // the game's start, when it is of the editor's variant
    if (LIVE.variant.id !== editor.variant) return;
    $("editor-sfen").value = LIVE.start_sfen;
    editorReadSfen();
  };
}

// ---------------------------------------------------------------------------------------------- polling
async function poll() {
  for (;;) {
    try {
      const st = await api(`/api/state?since=${pollVersion}&wait=20`);
      if (st.version !== (S && S.version)) render(st);
    } catch (e) {
      await new Promise((r) => setTimeout(r, 1000));
    }
  }
}

async function init() {
  try {
    await openGame();
  } catch (e) {
    showError(e.message);
    return;
  }
  variants = await api("/api/variants");
  rulesData = await api("/api/rules");
  fillVariants();
  const engines = await api("/api/engines");
  fillPlayers(engines);
  initAnalysis(engines);
  $("start").onclick = startGame;
  // a new kind of limit starts from a value of its own scale (1000 ms is no depth)
  for (const side of [0, 1]) {
    $("limit-kind-" + side).onchange = () => {
      const kind = $("limit-kind-" + side).value;
      if (kind !== "clock") $("limit-value-" + side).value = LIMIT_DEFAULTS[kind];
      showSideSetup();
    };
  }
  initClocksAndGameEnd();
  $("undo").onclick = () => post("/api/undo");
  $("redo").onclick = () => post("/api/redo");
  // resigning asks first, beside the button
  $("resign").onclick = () => { $("resign-confirm").hidden = false; $("resign-no").focus(); };
  $("resign-no").onclick = () => { $("resign-confirm").hidden = true; };
  $("resign-yes").onclick = () => { $("resign-confirm").hidden = true; post("/api/resign"); };
  $("flip").onclick = () => { flipped = !flipped; render(LIVE); };
  $("piece-style").value = pieceStyle;
  $("piece-style").onchange = () => {
    pieceStyle = $("piece-style").value;
    western = pieceStyle === "western";
    localStorage.setItem("fantasista-pieces", pieceStyle);
    render(LIVE);
    if (editor) editorPalette();
  };
  showSound();
  $("sound").onclick = () => {
    soundOn = !soundOn;
    localStorage.setItem(SOUND_KEY, soundOn ? "on" : "off");
    showSound();
  };
  for (const fmt of ["json", "kif", "ki2", "csa"]) $("save-" + fmt).onclick = () => save(fmt);
  initReviewAndEditor();
  $("load-file").onchange = async (ev) => {
    const file = ev.target.files[0];
    if (!file) return;
    const buf = await file.arrayBuffer();
    let text = new TextDecoder("utf-8", { fatal: false }).decode(buf);
    if (/\.kif$/i.test(file.name) && text.includes("\ufffd")) text = new TextDecoder("shift_jis").decode(buf);
    await loadText(text);
    ev.target.value = "";
  };
  $("load-text").onclick = () => loadText($("record-text").value);
  const st = await api("/api/state");
  $("variant").value = st.variant.id;
  fillOptions();
  render(st);
  poll();
}

// ---------------------------------------------------------------------------------------------- analysis and help
// Analysis mode (issue 51, item 5): the server's engine analyses the shown position (the live one, followed as the
// game goes on, or a reviewed one) until stopped; the page shows its lines as players read them and the rules'
// probabilities of the coming roll, throw or card. Each variant explained (item 8): the rules panel, readable
// labels of raw tokens, the last chance events kept on screen, the enemy pieces an enokian card moved and why.
let rulesData = { rules: {}, labels: { options: {}, option_names: {}, fairies: {}, effects: {}, rights: {} } };
let analysisSent = "";   // the position last asked for (JSON of {line, ply}; {} is the live one)
let rulesOpen = false;
let lastEventKey = "";
const CHANCE_WORD = { fantasista: "d20 roll 出目", mawarikudoi: "throw 振り", enokian: "card 札" };

function optionName(opt) { return rulesData.labels.option_names[opt.name] || opt.label; }

function optionText(name, value) {
  const text = (rulesData.labels.options[name] || {})[value];
  return text ? `${value} — ${text}` : value;
}

function fairyText(name) { return ((rulesData.labels.fairies || {})[name] || {}).label || name; }

function rightText(r) {
  const [word, count] = r.split(" ×");
  return (rulesData.labels.rights[word] || word) + (count ? " ×" + count : "");
}

// what a d20 result (a table row, "nothing" or another fairy's "<fairy>:<row>") gives, in words
function effectText(result, fairy) {
  if (result === "nothing") return "何もなし nothing";
  const [f, row] = result.includes(":") ? result.split(":") : [fairy, result];
  return ((rulesData.labels.effects || {})[f] || {})[row] || (EFFECTS[f] || {})[row] || result;
}

// a pre-game choice's button (fantasista: the fairy, then what its 9–18 give) says what it is
function stepText(s) {
  const w = s.slice(4);
  if (BUTTON_LABELS[w]) return BUTTON_LABELS[w];
  const i = w.indexOf(":");
  const word = w.slice(0, i), value = w.slice(i + 1);
  const fairy = (rulesData.labels.fairies || {})[value];
  if (word === "fairy" && fairy) return `${fairy.label} — ${fairy.description}`;
  if (word === "reserved") return (rulesData.labels.options.reserved_sente || {})[value] || w;
  return w;
}

// the roll of ``side`` as that side's table reads it (the rows come from the server's rules)
function rollText(n, side, panel) {
  const fairies = (panel && panel.fairies) || [], reserved = (panel && panel.reserved) || [];
  let row = (rulesData.labels.roll_rows || {})[n] || "";
  if ((rulesData.labels.reserved_rolls || []).includes(n)) row = reserved[side] || "4-8";
  return effectText(row, fairies[side]);
}

// The last chance events, newest first, each with what it did: your roll stays in view when the engine's follows.
function renderEventStrip() {
  const strip = $("event-strip");
  const st = LIVE;
  const events = st.history.filter((h) => h.event).slice(-4).reverse();
  strip.hidden = !events.length;
  if (!events.length) { strip.innerHTML = ""; return; }
  const effects = (st.panel && st.panel.card_effects) || [];
  strip.innerHTML = events.map((h, k) => {
    const [name, value] = h.token.split("=");
    let text = h.ja;
    if (name === "roll") text = `${sideName(h.side)} 出目 ${value}: ${rollText(+value, h.side, st.panel)}`;
    const why = effects.find((e) => e.i === h.i);
    if (why) text += ` — ${why.text}`;
    return `<span class="ev${k === 0 ? " newest" : ""}" data-i="${h.i}">${esc(text)}</span>`;
  }).join("");
  const key = events[0].i + events[0].token;
  if (key !== lastEventKey) strip.querySelector(".newest").classList.add("fresh");
  lastEventKey = key;
}

// Enokian: the cards of this round, a line each saying what they moved and why; their squares marked on the board.
function cardWhyHTML(p) {
  const effects = p.card_effects || [];
  if (!effects.length) return "";
  return `<ul id="card-why" class="card-why">` + effects.map((e) => `<li>${esc(e.text)}</li>`).join("") + `</ul>`;
}

function markCardEffects() {
  const effects = (S.panel && S.panel.card_effects) || [];
  const why = {};
  for (const e of effects) for (const q of e.squares) why[q] = e.text;
  for (const el of document.querySelectorAll("#board .sq")) {
    const text = why[el.dataset.sq];
    el.classList.toggle("enemy-move", !!text);
    if (text) el.title = text;
    else el.removeAttribute("title");
  }
}

// The evaluation graph's points: each a move to review (a click shows the position after it).
function graphPointsSVG(pts, n, w, hgt) {
  const at = LIVE ? shownAt() : null;
  let html = "";
  for (const [k, y, h] of pts) {
    const x = (k / n) * w, cur = at && at.line === LIVE.line && at.ply === h.i + 1;
    html += `<rect class="gpt${cur ? " current" : ""}" data-ply="${h.i + 1}" x="${x - w / n / 2}" y="0" width="${w / n}"
      height="${hgt}" fill="${cur ? "rgba(0,80,200,.18)" : "transparent"}"><title>move ${k + 1}: ${esc(h.ja)}</title></rect>`;
    html += `<circle cx="${x}" cy="${y * hgt}" r="2.2" fill="#c0392b" pointer-events="none"/>`;
  }
  return html;
}

function initGraphClicks() {
  $("graph").addEventListener("click", (ev) => {
    const r = ev.target.closest && ev.target.closest(".gpt");
    if (!r || !LIVE) return;
    stopReplay();
    showAt(LIVE.line, +r.dataset.ply);
  });
}

// a score as a player reads it: a mate as 詰み / mate in N, else sente's centipawns and win probability
function scoreText(l, sides) {
  if (l.mate !== undefined && l.mate !== null) {
    const n = Math.abs(l.mate), who = l.mate > 0 ? 0 : 1;
    return n === 0 ? `詰み checkmate: ${SIDE_WORD[who]} wins`
      : `詰み ${sideName(who)} ${n}手詰 (${SIDE_WORD[who]} mates in ${n})`;
  }
  const prob = l.winprob !== undefined && l.winprob !== null ? `${(100 * l.winprob).toFixed(1)}%` : "";
  if (sides === 1) return prob ? `win ${prob}` : (l.score ?? "–") + "";
  const cp = l.score !== undefined && l.score !== null ? `${l.score > 0 ? "+" : ""}${l.score}` : "–";
  return `${cp} ☗ ${prob ? "(☗ " + prob + ")" : ""}`.trim();
}

function renderAnalysis() {
  const a = (LIVE && LIVE.analysis) || {};
  $("analysis-toggle").textContent = a.on ? "■ Stop analysis" : "▶ Analyse";
  $("analysis-toggle").setAttribute("aria-pressed", a.on ? "true" : "false");
  $("analysis").classList.toggle("on", !!a.on);
  // a timed game being played has no analysis (the server refuses it): the button says why
  $("analysis-toggle").disabled = !a.on && !!a.refusal;
  $("analysis-toggle").title = a.refusal || "";
  if (a.multipv && document.activeElement !== $("analysis-multipv")) $("analysis-multipv").value = a.multipv;
  const stats = a.stats || {};
  let status = a.error || "";
  if (!status) {
    const where = a.follow ? "the live position" : `after ${a.ply} plies` + (a.line ? ` of branch ${a.line}` : "");
    status = a.on ? (a.running ? `analysing ${where}` : a.note || `analysed ${where}`)
      : (a.refusal || a.note || "off");
    if (a.on && stats.depth !== undefined) status += ` · depth ${stats.depth}` +
      (stats.nodes ? ` · ${stats.nodes} nodes` : "") + (stats.nps ? ` · ${Math.round(stats.nps / 1000)}k nps` : "");
  }
  $("analysis-status").textContent = status;
  const sides = LIVE ? LIVE.variant.sides : 2;
  $("analysis-lines").innerHTML = (a.lines || []).map((l) => `<li class="aline" data-multipv="${l.multipv}">
    <span class="ascore${l.mate !== undefined && l.mate !== null ? " mate" : ""}">${esc(scoreText(l, sides))}</span>
    <span class="k">d${l.depth ?? "–"}</span> <span class="apv">${esc((l.ja || l.pv || []).join(" "))}</span></li>`).join("");
  renderOutlook(a.outlook || { outlooks: [] });
}

// The coming chance event: the rules' probabilities (our engines report no expectation per event), grouped as a
// player reads them: fantasista by the roll's effect, mawarikudoi by N, enokian by the card's rank.
function renderOutlook(o) {
  const box = $("analysis-outlook");
  const word = CHANCE_WORD[LIVE ? LIVE.variant.id : ""] || "event";
  box.innerHTML = (o.outlooks || []).map((x) => {
    const when = x.after ? `after ${x.after} move${x.after > 1 ? "s" : ""}` : "next";
    const who = LIVE && LIVE.variant.sides > 1 ? ` ${sideName(x.side)}` : "";
    const head = `${x.choice ? (BUTTON_LABELS[x.choice] || x.choice) : "Coming " + word}${who} (${when})` +
      (x.mean !== undefined ? `, mean N ${x.mean.toFixed(2)}` : "") + " — by the rules";
    const rows = x.groups.slice(0, 8).map((g) => `<div class="orow"><span class="olabel">${esc(g.label)}` +
      `${g.count > 1 && LIVE.variant.id === "enokian" ? " ×" + g.count : ""}</span>` +
      `<span class="obar"><span style="width:${(100 * g.p).toFixed(1)}%"></span></span>` +
      `<span class="op">${(100 * g.p).toFixed(1)}%</span></div>`).join("");
    const rest = x.groups.slice(8).reduce((t, g) => t + g.p, 0);
    return `<div class="outlook-one"><div class="k">${esc(head)}</div>${rows}` +
      (rest > 0 ? `<div class="k">others ${(100 * rest).toFixed(1)}%</div>` : "") + `</div>`;
  }).join("");
}

function analysisWanted() { return view ? { line: view.line, ply: view.ply } : {}; }

async function sendAnalysis(on) {
  const body = on ? { on: true, multipv: +$("analysis-multipv").value, engine: $("analysis-engine").value,
    ...analysisWanted() } : { on: false };
  analysisSent = JSON.stringify(analysisWanted());
  await post("/api/analysis", body);
}

// The analysis follows the shown position: reviewing another move moves it there, back to the game follows the game.
function followAnalysis() {
  const a = LIVE && LIVE.analysis;
  if (!a || !a.on || editor) return;
  const want = JSON.stringify(analysisWanted());
  const have = JSON.stringify(a.follow ? {} : { line: a.line, ply: a.ply });
  if (want === have || want === analysisSent) return;
  sendAnalysis(true);
}

function initAnalysis(engines) {
  const sel = $("analysis-engine");
  for (const e of engines) {
    const o = document.createElement("option");
    o.value = e.name;
    o.textContent = e.builtin ? "Fantasista engine" : e.name;
    sel.appendChild(o);
  }
  $("analysis-toggle").onclick = () => sendAnalysis(!(LIVE && LIVE.analysis && LIVE.analysis.on));
  $("analysis-multipv").onchange = () => { if (LIVE && LIVE.analysis.on) sendAnalysis(true); };
  sel.onchange = $("analysis-multipv").onchange;
  $("rules-open").onclick = () => {
    rulesOpen = !rulesOpen;
    renderHelp();
    if (rulesOpen) $("rules").scrollIntoView({ block: "nearest" });
  };
  $("variant").addEventListener("change", renderRules);
  initGraphClicks();
}

// The rules panel of the game's variant (the form's, before a game of it starts), Japanese and English.
function renderRules() {
  const box = $("rules");
  $("rules-open").setAttribute("aria-expanded", rulesOpen ? "true" : "false");
  box.hidden = !rulesOpen;
  if (!rulesOpen) return;
  const id = $("variant").value || (LIVE && LIVE.variant.id);  // the form's: a variant can be read before playing
  const v = variants.find((x) => x.id === id) || { name: id, ja: "" };
  const r = rulesData.rules[id] || { ja: [], en: [] };
  box.dataset.variant = id;
  box.innerHTML = `<h3>${esc(v.ja)} ${esc(v.name)}: rules</h3>` +
    `<ul lang="ja" class="rules-ja">${r.ja.map((t) => `<li>${esc(t)}</li>`).join("")}</ul>` +
    `<ul lang="en" class="rules-en">${r.en.map((t) => `<li>${esc(t)}</li>`).join("")}</ul>`;
  addButton(box, "Close", () => { rulesOpen = false; renderRules(); }, { id: "rules-close" });
}

function renderHelp() {
  renderEventStrip();
  markCardEffects();
  renderAnalysis();
  renderRules();
  followAnalysis();
}

init();

// ---------------------------------------------------------------------------------------------- clocks and game end
// Issue 51 items 4 and 9: the form's per-side engine limit and time control, the clocks above the board (counted
// down here from the last state; the server owns them and decides a flag), draw offers and 入玉宣言.
const CLOCK_KIND = { "sudden death": "sudden", byoyomi: "byoyomi", fischer: "fischer" };
let clockState = null, clockAt = 0, clockTimer = null;

// "10" is ten minutes, "1:30" a minute and a half, "0:02" two seconds: ms, or NaN
function parseMainTime(text) {
  const t = String(text).trim();
  if (!t) return 0;
  const m = /^(\d+):(\d{1,2})$/.exec(t);
  if (m) return (parseInt(m[1], 10) * 60 + parseInt(m[2], 10)) * 1000;
  const minutes = Number(t);
  return Number.isFinite(minutes) && minutes >= 0 ? Math.round(minutes * 60000) : NaN;
}

function formatMainTime(ms) {
  const s = Math.round(ms / 1000);
  return s % 60 === 0 ? String(s / 60) : `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function clockSpec(side) {
  const kind = $("clock-kind-" + side).value;
  if (kind === "none") return null;
  const main = parseMainTime($("clock-main-" + side).value);
  const extra = Math.round((parseFloat($("clock-extra-" + side).value) || 0) * 1000);
  const spec = { main: Number.isFinite(main) ? main : 0 };
  if (kind === "byoyomi") spec.byoyomi = extra;
  if (kind === "fischer") spec.inc = extra;
  return spec;
}

// the form follows a game's player: its engine's limit and its time control
function syncSideSetup(side, p) {
  if (p.kind === "engine") {
    const kind = ["depth", "movetime", "nodes"].find((k) => p[k] !== null && p[k] !== undefined);
    $("limit-kind-" + side).value = kind || "clock";
    if (kind) $("limit-value-" + side).value = p[kind];
  }
  const c = p.clock;
  $("clock-kind-" + side).value = c ? (c.byoyomi != null ? "byoyomi" : c.inc != null ? "fischer" : "sudden") : "none";
  if (c) {
    $("clock-main-" + side).value = formatMainTime(c.main || 0);
    $("clock-extra-" + side).value = (c.byoyomi != null ? c.byoyomi : c.inc || 0) / 1000;
  }
}

// an engine's limit only for an engine, the byoyomi / increment box only for those kinds
function showSideSetup() {
  for (const side of [0, 1]) {
    const row = $("setup-" + side);
    row.querySelector(".engine-limit").hidden = $("player-" + side).value === "human";
    $("limit-value-" + side).hidden = $("limit-kind-" + side).value === "clock";
    const kind = $("clock-kind-" + side).value;
    $("clock-main-" + side).hidden = kind === "none";
    $("clock-extra-" + side).hidden = kind === "none" || kind === "sudden";
  }
}

function formatClock(ms) {
  const s = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
  return (h ? `${h}:${String(m).padStart(2, "0")}` : String(m)) + ":" + String(sec).padStart(2, "0");
}

function renderClocks(st) {
  if (st !== clockState) { clockState = st; clockAt = performance.now(); }
  const box = $("clocks");
  const c = st.clocks;
  box.hidden = !c;
  if (!c) return;
  const elapsed = performance.now() - clockAt;
  const sides = st.variant.sides === 1 ? [0] : [0, 1];
  $("clock-1").hidden = sides.length === 1;
  for (const side of sides) {
    const el = $("clock-" + side), t = c.sides[side];
    const running = c.running === side;
    el.classList.toggle("running", running);
    el.classList.toggle("to-move", !st.result && st.side === side);
    el.classList.toggle("flag", !!(t && t.flag));
    if (!t) { el.innerHTML = `<span class="who">${sideName(side)}</span> <span class="time">–</span>`; continue; }
    const main = t.left - (running ? elapsed : 0);
    let html = `<span class="who">${sideName(side)}</span> <span class="time">${formatClock(main)}</span>`;
    if (t.byoyomi != null) {
      const byo = t.byoyomi_left + (running ? Math.min(0, main) : 0);
      html += ` <span class="byo${main <= 0 ? " counting" : ""}">秒読み ${Math.max(0, Math.ceil(byo / 1000))}</span>`;
    } else if (t.inc) {
      html += ` <span class="inc">+${t.inc / 1000}s</span>`;
    }
    if (t.flag) html += ' <span class="flag-word">切れ負け</span>';
    el.innerHTML = html;
    el.setAttribute("aria-label", `${sideName(side)}'s clock: ${formatClock(main)}` + (t.flag ? ", time is up" : ""));
  }
  // counting down needs no request: the next state (a move, the flag) comes from the long poll
  if (c.running !== null && !st.result && !clockTimer) clockTimer = setInterval(() => renderClocks(clockState), 200);
  if ((c.running === null || st.result) && clockTimer) { clearInterval(clockTimer); clockTimer = null; }
}

function gameEndStatus(st) {
  let extra = "";
  if (!st.result && st.check) extra += " — 王手 check";
  if (st.draw_note) extra += ` — ${st.draw_note}`;
  return extra;
}

function renderGameEnd(st) {
  const people = st.players.filter((p) => p.kind === "human").length;
  $("draw-offer").hidden = st.variant.sides === 1;
  $("draw-offer").disabled = !!st.result || !people || st.draw_offer !== null;
  $("declare").hidden = st.variant.id !== "shogi";
  $("declare").disabled = !st.can_declare;
  // a person's offer waits for the other person's answer (an engine answers at once)
  const waiting = !st.result && st.draw_offer !== null && st.draw_offer !== undefined;
  $("draw-answer").hidden = !waiting;
  if (waiting) {
    $("draw-answer-text").textContent = `${sideName(st.draw_offer)} offers a draw — ${sideName(1 - st.draw_offer)}: `;
  }
}

function initClocksAndGameEnd() {
  for (const side of [0, 1]) {
    $("player-" + side).addEventListener("change", showSideSetup);
    $("clock-kind-" + side).addEventListener("change", showSideSetup);
  }
  // gote's time control follows sente's (change gote's afterwards for a time handicap)
  for (const part of ["kind", "main", "extra"]) {
    $(`clock-${part}-0`).addEventListener("change", () => {
      $(`clock-${part}-1`).value = $(`clock-${part}-0`).value;
      showSideSetup();
    });
  }
  $("draw-offer").onclick = () => post("/api/draw", { action: "offer" });
  $("draw-accept").onclick = () => post("/api/draw", { action: "accept" });
  $("draw-decline").onclick = () => post("/api/draw", { action: "decline" });
  $("declare").onclick = () => post("/api/declare", {});
  showSideSetup();
}
