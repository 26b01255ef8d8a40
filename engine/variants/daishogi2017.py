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

DAISHOGI_PIECES: tuple[PieceType, ...] = (
    PieceType("pawn", "P", "fW", "歩兵", promotes_to=_G, value=100),
    PieceType("lance", "L", "fR", "香車", promotes_to=_G, value=250),
    PieceType("knight", "N", "ffN", "桂馬", promotes_to=_G, value=200),
    PieceType("iron general", "I", "fFfW", "鉄将", promotes_to=_G, value=250),
    PieceType("copper general", "C", "fFvW", "銅将", promotes_to=_G, value=300),
    PieceType("silver general", "S", "FfW", "銀将", promotes_to=_G, value=350),
    PieceType("gold general", "G", "WfF", "金将", value=400),
    PieceType("king", "K", "K", "玉将", royal=True, value=5000),
    PieceType("drunk elephant", "E", "FfsW", "酔象", promotes_to="A", value=450),
    PieceType("prince", "A", "K", "太子", royal=True, value=5000),
    PieceType("kirin", "J", "FD", "麒麟", promotes_to="Z", value=500),
    PieceType("lion", "Z", "KNAD", "獅子", special="lion", value=1800),
    PieceType("phoenix", "X", "WA", "鳳凰", promotes_to="+X", value=500),
    PieceType("free king (promoted phoenix)", "+X", "Q", "奔王", value=1200),
    PieceType("free king", "F", "Q", "奔王", promotes_to=_G, value=1200),
    PieceType("fierce tiger", "T", "FbsW", "猛虎", promotes_to=_G, value=400),
    PieceType("side mover", "Y", "sRvW", "横行", promotes_to=_G, value=500),
    PieceType("vertical mover", "V", "vRsW", "竪行", promotes_to=_G, value=550),
    PieceType("square mover", "Q", "RfF", "方行", promotes_to=_G, value=850),
    PieceType("reverse chariot", "U", "vR", "反車", promotes_to=_G, value=400),
    PieceType("rook", "R", "R", "飛車", value=800),
    PieceType("bishop", "B", "B", "角行", promotes_to=_G, value=650),
    PieceType("dragon king", "D", "RF", "龍王", promotes_to=_G, value=1100),
    PieceType("dragon horse", "H", "BW", "龍馬", promotes_to=_G, value=900),
    PieceType("go-between", "M", "vW", "仲人", promotes_to=_G, value=150),
    PieceType("violent ox", "O", "WD", "猛牛", promotes_to=_G, special="pass-orthogonal", value=600),
    PieceType("flying dragon", "W", "FA", "飛龍", promotes_to=_G, special="pass-diagonal", value=600),
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
