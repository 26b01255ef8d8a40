"""Ousho Fantasista (王将ファンタジスタ): shogi with fairies, d20 magic, token pieces and multi-part turns.

Rules as implemented, the readings, piece letters and the turn notation: ``docs/fantasista.md``. This is an
:class:`engine.game.GameState` game; its board and full-turn generator are in :mod:`.board`.

>>> g = new_game(("hiko", "ayumi"))
>>> g.sfen()
'lnsgkgsnl/1r5b1/ppppppppp/9/9/9/PPPPPPPPP/1B5R1/LNSGKGSNL b - 1 f=ha'
>>> len(g.legal_actions()), g.node_kind().value
(30, 'decision')
"""
from . import hooks  # noqa: F401  (registers the rule hooks of the shared kernels for fantasista's tables)
from .magic import (FAIRIES, RESERVED_CHOICES, RESERVED_RESULTS, magic_after, magic_of, normalize_reserved,
                    roll_effect)
from .state import VARIANT_ID, FantasistaState, new_game

__all__ = ["FAIRIES", "RESERVED_CHOICES", "RESERVED_RESULTS", "VARIANT_ID", "FantasistaState", "magic_after",
           "magic_of", "new_game", "normalize_reserved", "roll_effect"]
