"""2017 Futsu-Shodoshu Dai Shogi (2017年版普通唱導集大将棋): 13x13, 108 pieces, lion-type movers, exchange, try.

Rules as read in ``shared/spec/daishogi2017.md``; the decisions are listed in ``docs/daishogi2017.md``.
Every letter A-Z names one kind (one letter per kind, as SFEN needs); the promoted phoenix is ``+X`` because it
must stay apart from an original free king (which may still promote to gold). Every other promotion turns the
piece into an existing kind (gold, prince, lion), which behaves exactly like one, so SFEN writes that kind.
"""
from ..geometry import BoardGeometry
from ..pieces import PieceType
from ..variant import Variant

_G = "G"  # most pieces promote to gold
# Values: `python -m eval.material daishogi2017` (mobility method, see eval/material.py and docs/daishogi2017.md).

DAISHOGI_PIECES: tuple[PieceType, ...] = (
    PieceType("pawn", "P", "fW", "歩兵", promotes_to=_G, value=100),
    PieceType("lance", "L", "fR", "香車", promotes_to=_G, value=100),
    PieceType("knight", "N", "ffN", "桂馬", promotes_to=_G, value=104),
    PieceType("iron general", "I", "fFfW", "鉄将", promotes_to=_G, value=137),
    PieceType("copper general", "C", "fFvW", "銅将", promotes_to=_G, value=165),
    PieceType("silver general", "S", "FfW", "銀将", promotes_to=_G, value=166),
    PieceType("gold general", "G", "WfF", "金将", value=366),
    PieceType("king", "K", "K", "玉将", royal=True, value=0),
    PieceType("drunk elephant", "E", "FfsW", "酔象", promotes_to="A", value=468),
    PieceType("prince", "A", "K", "太子", royal=True, value=0),
    PieceType("kirin", "J", "FD", "麒麟", promotes_to="Z", value=473),
    PieceType("lion", "Z", "KNAD", "獅子", special="lion", value=3204),
    PieceType("phoenix", "X", "WA", "鳳凰", promotes_to="+X", value=417),
    PieceType("free king (promoted phoenix)", "+X", "Q", "奔王", value=2136),
    PieceType("free king", "F", "Q", "奔王", promotes_to=_G, value=2136),
    PieceType("fierce tiger", "T", "FbsW", "猛虎", promotes_to=_G, value=329),
    PieceType("side mover", "Y", "sRvW", "横行", promotes_to=_G, value=370),
    PieceType("vertical mover", "V", "vRsW", "竪行", promotes_to=_G, value=620),
    PieceType("square mover", "Q", "RfF", "方行", promotes_to=_G, value=778),
    PieceType("reverse chariot", "U", "vR", "反車", promotes_to=_G, value=293),
    PieceType("rook", "R", "R", "飛車", value=581),
    PieceType("bishop", "B", "B", "角行", promotes_to=_G, value=817),
    PieceType("dragon king", "D", "RF", "龍王", promotes_to=_G, value=1292),
    PieceType("dragon horse", "H", "BW", "龍馬", promotes_to=_G, value=1081),
    PieceType("go-between", "M", "vW", "仲人", promotes_to=_G, value=176),
    PieceType("violent ox", "O", "WD", "猛牛", promotes_to=_G, special="pass-orthogonal", value=387),
    PieceType("flying dragon", "W", "FA", "飛龍", promotes_to=_G, special="pass-diagonal", value=390),
)

DAISHOGI_START = ("lnicsgkgscinl/uoqytxejtyqou/rwvbhdfdhbvwr/ppppppppppppp/3m5m3/13/13/13/3M5M3/"
                  "PPPPPPPPPPPPP/RWVBHDFDHBVWR/UOQYTJEXTYQOU/LNICSGKGSCINL b - 1")

DAISHOGI2017 = Variant(
    id="daishogi2017",
    geometry=BoardGeometry(13, 13),
    pieces=DAISHOGI_PIECES,
    start_sfen=DAISHOGI_START,
    promotion_ranks=4,
    drops=False,
    nifu=False,
    uchifuzume=False,
    hand_order="",
    royal_rule="last_royal",
    try_rule=True,
    exchange_piece="E",
)
