"""What the page says about each variant (issue 51, item 8): a short rules text in Japanese and English (from the
readings in ``docs/<variant>.md``), readable labels for the raw tokens a player meets (fantasista's fairies,
reserved results, rights; the form's options) and why an enokian card moved the enemy's pieces.

Served whole by ``GET /api/rules``; nothing here decides a rule (the rules layer does).
"""
from __future__ import annotations

import re
from typing import Any, Optional

#: Each variant's rules, short: (Japanese lines, English lines).
RULES: dict[str, dict[str, list[str]]] = {
    "shogi": {
        "ja": ["本将棋。王を詰めた方が勝ち。",
               "取った駒は持ち駒として打てる。二歩・打ち歩詰め・行き所のない駒は反則。",
               "敵陣（奥の3段）に入る・出る・中で動く駒は成れる。千日手は引き分け（連続王手は王手側の負け）。"],
        "en": ["Standard shogi: checkmate the enemy king.",
               "Captured pieces are yours to drop. No two unpromoted pawns on a file, no pawn-drop mate, no piece "
               "where it could never move.",
               "A piece moving into, out of or within the last three ranks may promote. Fourfold repetition is a draw "
               "(perpetual check loses)."],
    },
    "daishogi2017": {
        "ja": ["13×13、2017年版普通唱導集大将棋。持ち駒はなし（取った駒は消える）。",
               "獅子は1手で2回動ける（居食い・2歩目で止まる選択あり）。酔象は成ると太子になり、王と太子の両方を"
               "取られると負け。",
               "敵陣（奥の4段）で成れる。相手の王（と太子）を全部取るか、相手が指せなくなれば勝ち。"],
        "en": ["13x13 dai shogi as read from the 2017 Futsu-Shodoshu. No drops: captured pieces leave the game.",
               "The lion moves twice in one turn (it may capture and return, igui, or stop after one step). A "
               "promoted drunk elephant is a crown prince: a side loses only when its king and prince are both gone.",
               "Pieces promote in the last four ranks. Win by taking every royal piece or leaving the enemy no move."],
    },
    "fantasista": {
        "ja": ["王将ファンタジスタ：本将棋に魔法が加わる。対局前に各自フェアリー（飛子・あゆみ・妖角・銀砂螺）を選ぶ。",
               "15手目・16手目の後（以後15手ごと）、指した側が20面ダイスを振り、フェアリーの表で魔法を得る："
               "1〜3はフェアリー固有、4〜8はトークン駒、9〜18は保留（各自が対局前に決めた結果。無ければ4〜8と同じ）、"
               "19〜20は何もなし。",
               "トークン駒は取られると消える。特殊駒：火炎竜（打つと息で1枚取れる）・王神竜・槍歩兵・雷王馬・疾風馬・剣の銀。",
               "権利（飛車覚醒・銀幕展開・銀の波動）はそれを使うことで手番全体になる。王は決して取られない；"
               "詰めれば勝ち。"],
        "en": ["Ousho Fantasista: shogi with magic. Before the game each side picks a fairy (hiko, ayumi, yokaku, "
               "ginsara).",
               "After plies 15 and 16 (then every 15) the side that has just moved rolls a d20 on its fairy's table: "
               "1–3 the fairy's own magic, 4–8 tokens, 9–18 the side's reserved result (chosen before the game; none "
               "means as 4–8), 19–20 nothing.",
               "A captured token leaves the game. Special pieces: fire dragon (its drop may breathe one capture), "
               "king-god dragon, spear pawn, thunder horse, gale horse, sword silver.",
               "Rights (rook awakening, silver curtain, silver wave) are each a whole turn. A king is never captured: "
               "checkmate wins."],
    },
    "turncoat": {
        "ja": ["寝返り将棋：本将棋＋秘密の計画。対局前に先手・後手の順で、相手の駒を指名する計画（埋伏の毒）を"
               "密かに選ぶ：飛か角1枚／金と歩／銀と桂香歩1枚／桂香歩から3枚。",
               "31手目以降、手番の初めに1度だけ「寝返り」を宣言できる：計画の駒で盤上の相手の駒が自分の駒になり、"
               "続けて1手指す。寝返りで相手の王に当たりがあれば即勝ち。",
               "相手の計画は対局が終わるまで見えない。"],
        "en": ["Turncoat shogi: shogi plus a secret plan. Before the first move sente, then gote, secretly names "
               "enemy pieces: a rook or bishop; a gold and a pawn; a silver and a knight, lance or pawn; or three "
               "knights, lances or pawns.",
               "From move 31, once a game, a side may defect at the start of its turn: the named enemy pieces on the "
               "board change sides, then it moves. A defection that attacks the enemy king wins at once.",
               "The other side's plan stays hidden until the game ends."],
    },
    "mawarikudoi": {
        "ja": ["まわりくどい将棋：サイコロ代わりに将棋の駒を振る競走。走者は歩→香→桂→銀→角→飛→王の順に1枚ずつ。",
               "手番：金4枚を振る（表1・裏0・横5・縦10・逆さ100、全部裏なら20）。出た数Nだけ、走者を動かすか"
               "向きを変える。",
               "他の3隅のうち2つに止まってから出発の隅に戻ると次の走者へ。格上の相手走者を踏むと即リレー。"
               "王の周回を終えれば勝ち。",
               "自分の走者が相手より格下なら金銀振り（金の点×銀の点、最大50）も選べる。10以上が出ると権利を失う。"],
        "en": ["Mawarikudoi: a race thrown with shogi pieces for dice. Each side runs one runner at a time: pawn, "
               "lance, knight, silver, bishop, rook, king.",
               "A turn: throw four golds (face up 1, face down 0, on its side 5, upright 10, upside down 100; all face "
               "down 20) and make exactly that many actions: a move of the runner or a turn to another facing.",
               "Touch two of the other three corners, then return to the start corner: the next runner starts. "
               "Landing on a higher enemy runner relays at once. Finishing the king's lap wins.",
               "While your runner is lower than the enemy's you may throw golds and silvers (gold × silver score, "
               "at most 50); a mixed throw of 10 or more loses that right."],
    },
    "enokian": {
        "ja": ["榎庵将棋（一人用）：王将と8枚の歩で、道真（玉将）と赤い駒（馬・龍・炎）から身を守る。",
               "毎巡、山札から1枚引く：J・Q・Kはそのスートの駒が線上を滑る（Kなら道真も王へ1歩）。10は馬と龍が"
               "中央へ1歩。数札はもう1枚引き、♠♣の数が筋・♥♦の数が段で落雷（同じ軸なら何も起きない）。",
               "♠東の龍・♣西の龍・♥南の馬・♦北の馬。その後、歩か王を1歩動かす（赤い駒を取れる）。",
               "王が取られたら負け。赤い駒が全部消えた後に道真を取るか、山札が尽きるまで生き残れば勝ち。"],
        "en": ["Enokian shogi (a solitaire): your emperor and eight guards against Michizane and his red horses, "
               "dragons and flames.",
               "Each round a card is drawn: J, Q, K slide the suit's piece along its line (a K also steps Michizane "
               "toward your emperor); a 10 steps the horses and dragons toward 5e; a number card draws a second one: "
               "a ♠/♣ number is the file, a ♥/♦ number the rank of a lightning strike (two of one axis: nothing).",
               "♠ east dragon, ♣ west dragon, ♥ south horse, ♦ north horse. Then move one guard or the emperor one "
               "step (capturing red pieces).",
               "Lose when the emperor dies. Win by capturing Michizane once every red piece is gone, or by surviving "
               "the whole deck."],
    },
}

#: Fantasista's fairies: (Japanese name, English description).
FAIRIES = {"hiko": ("飛子", "rook fairy"), "ayumi": ("あゆみ", "pawn fairy"), "yokaku": ("妖角", "bishop fairy"),
           "ginsara": ("銀砂螺", "silver fairy")}
#: What each row of each fairy's d20 table gives: (Japanese, English).
EFFECTS = {
    "hiko": {"1": ("火炎竜", "fire dragon token"), "2": ("王神竜", "king-god dragon token"),
             "3": ("飛車覚醒", "rook awakening"), "4-8": ("飛車トークン", "rook token")},
    "ayumi": {"1": ("紋章", "emblem (pawns drop as tokin)"), "2": ("槍歩兵2枚", "two spear pawns"),
              "3": ("無敵の歩", "an invincible pawn"), "4-8": ("歩2・金1トークン", "2 pawn + 1 gold tokens")},
    "yokaku": {"1": ("雷王馬", "thunder horse token"), "2": ("疾風馬", "gale horse token"),
               "3": ("搭乗駒", "a carrier"), "4-8": ("角トークン", "bishop token")},
    "ginsara": {"1": ("銀幕展開", "silver curtain"), "2": ("剣の銀", "sword silver token"),
                "3": ("銀の波動", "silver wave"), "4-8": ("銀トークン2枚", "two silver tokens")},
}
#: The rights a fantasista side may hold (the panel's words) and the emblem.
RIGHTS = {"awakening": "飛車覚醒 rook awakening", "curtain": "銀幕展開 silver curtain",
          "wave": "銀の波動 silver wave", "emblem": "紋章 emblem"}
#: Enokian suits: the red piece each drives.
SUIT_PIECES = {"S": ("♠", "東の龍", "east dragon"), "C": ("♣", "西の龍", "west dragon"),
               "H": ("♥", "南の馬", "south horse"), "D": ("♦", "北の馬", "north horse")}


def fairy_label(name: str) -> str:
    """``hiko`` -> ``飛子 hiko (rook fairy)``."""
    if name not in FAIRIES:
        return name
    ja, en = FAIRIES[name]
    return f"{ja} {name} ({en})"


def fairy_description(name: str) -> str:
    """One line: what the fairy's rolls give."""
    table = EFFECTS.get(name)
    if not table:
        return ""
    return "; ".join(f"{row.replace('-', '–')}: {table[row][1]}" for row in ("1", "2", "3", "4-8"))


def effect_label(result: str, own_fairy: Optional[str] = None) -> str:
    """A d20 result (``roll_effect``'s: ``1`` .. ``4-8``, ``nothing``, ``<fairy>:<row>``) in words."""
    if result == "nothing":
        return "何もなし nothing"
    fairy, _, row = result.rpartition(":")
    fairy = fairy or own_fairy or ""
    if fairy in EFFECTS and row in EFFECTS[fairy]:
        ja, en = EFFECTS[fairy][row]
        return f"{ja} {en}"
    return result


def reserved_label(value: str) -> str:
    """What the option value (or ``reserved:`` token part) of the 9–18 rolls means."""
    if value in ("default",):
        return "as the both-sides setting"
    if value == "choose":
        return "chosen by the player before the game"
    if value == "4-8":
        return "as 4–8 (nothing added)"
    if value == "nothing":
        return "nothing"
    fairy, _, row = value.rpartition(":")
    if not fairy:
        return f"the own fairy's {row.replace('-', '–')}"
    return f"{FAIRIES.get(fairy, (fairy,))[0]}'s {row.replace('-', '–')}: {effect_label(value)}"


def option_labels() -> dict[str, dict[str, str]]:
    """Each option value's readable text, by option name (the form shows it; the value sent stays the token)."""
    from usi.games import FANTASISTA_RESERVED, FANTASISTA_RESERVED_SIDE

    fairy = {f: fairy_label(f) for f in FAIRIES} | {"choose": "chosen by the player before the game"}
    both = {v: f"9–18 give {reserved_label(v)}" for v in FANTASISTA_RESERVED}
    side = {v: f"9–18 give {reserved_label(v)}" for v in FANTASISTA_RESERVED_SIDE}
    return {"fairy_sente": fairy, "fairy_gote": fairy, "reserved": both, "reserved_sente": side,
            "reserved_gote": side,
            "michizane": {"1a": "1a (northeast, the usual corner)", "9i": "9i (southwest, 裏鬼門)"}}


def labels() -> dict[str, Any]:
    """Every label the page uses, for ``GET /api/rules``."""
    from engine.variants.fantasista import roll_effect

    # which table row each d20 roll selects; the reserved rolls give the roller's reserved result instead
    rows = {n: roll_effect(n, "4-8") for n in range(1, 21)}
    reserved = [n for n in range(1, 21) if roll_effect(n, "nothing") != rows[n]]
    return {"roll_rows": rows, "reserved_rolls": reserved,
            "fairies": {f: {"label": fairy_label(f), "description": fairy_description(f)} for f in FAIRIES},
            "effects": {f: {row: effect_label(f"{f}:{row}") for row in rows} for f, rows in EFFECTS.items()},
            "rights": RIGHTS, "options": option_labels(),
            "option_names": {"fairy_sente": "sente's fairy", "fairy_gote": "gote's fairy",
                             "reserved": "rolls 9–18 give", "reserved_sente": "sente's 9–18",
                             "reserved_gote": "gote's 9–18", "michizane": "Michizane's corner"}}


# ------------------------------------------------------------------------------------------ enokian: why pieces moved
def _card_words(value: str) -> tuple[str, str]:
    rank, suit = value[:-1], value[-1]
    sign, ja, en = SUIT_PIECES.get(suit, (suit, "?", "?"))
    return f"{sign}{'10' if rank == 'T' else rank}", suit


def card_reason(value: str, pending: Optional[str] = None) -> str:
    """Why a card (``KS``; ``pending``: the number card it follows) does what it does, by the rules."""
    name, suit = _card_words(value)
    rank = value[:-1]
    piece = SUIT_PIECES.get(suit, ("", "?", "?"))
    if rank in ("J", "Q"):
        return f"{name}: {piece[1]} {piece[2]} slides along its line"
    if rank == "K":
        return f"{name}: {piece[1]} {piece[2]} slides along its line, then 道真 Michizane steps toward the emperor"
    if rank == "T":
        return f"{name}: a ten, every horse and dragon steps toward 5e"
    if pending:
        first, _ = _card_words(pending)
        axis = {"S": "file", "C": "file", "H": "rank", "D": "rank"}
        if axis.get(pending[-1]) == axis.get(suit):
            return f"{first} then {name}: two numbers of one axis, a stand-off (nothing happens)"
        return f"{first} then {name}: lightning strikes"
    return f"{name}: a number card, a second card is drawn"


def card_effect(before: dict, after: dict, value: str, pending: Optional[str] = None) -> dict:
    """What a card did on the board: ``before`` / ``after`` are :class:`gui.games.Board` squares. Answers the red
    pieces' moves (``[{"from", "to", "kanji"}]``, paired by kind, nearest first), the player's pieces lost, the
    flames put down, the squares to highlight and a line saying why (:func:`card_reason`)."""
    def red(sq: dict) -> dict:
        return {k: v["kanji"] for k, v in sq.items() if v and v["color"] == 1}

    rb, ra = red(before), red(after)
    left = [q for q in rb if ra.get(q) != rb[q]]
    came = [q for q in ra if rb.get(q) != ra[q]]
    moves = []

    def xy(q: str) -> tuple[int, int]:
        return int(q[:-1]), ord(q[-1])

    for q in list(came):
        kanji = ra[q]
        src = [s for s in left if rb[s] == kanji]
        if not src:
            continue
        s = min(src, key=lambda s: max(abs(xy(s)[0] - xy(q)[0]), abs(xy(s)[1] - xy(q)[1])))
        left.remove(s)
        came.remove(q)
        moves.append({"from": s, "to": q, "kanji": kanji})
    lost = sorted(q for q, v in before.items() if v and v["color"] == 0 and (after.get(q) or {}).get("color") != 0)
    flames = sorted(q for q in came if ra[q] == "炎")
    parts = [f"{m['kanji']} {m['from']}→{m['to']}" for m in moves] + [f"炎 flame on {q}" for q in flames]
    parts += [f"{before[q]['kanji']} {q} taken" for q in lost]
    reason = card_reason(value, pending)
    squares = sorted({q for m in moves for q in (m["from"], m["to"])} | set(flames) | set(lost))
    return {"card": value, "moves": moves, "lost": lost, "flames": flames, "squares": squares,
            "text": reason + (": " + ", ".join(parts) if parts else ("" if re.search(r"second card|stand-off", reason)
                                                                      else ": nothing moved"))}
