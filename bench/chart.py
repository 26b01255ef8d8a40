"""A PNG bar chart: matplotlib when it is importable, else a tiny numpy rasteriser and PNG writer (zlib)."""
from __future__ import annotations

import math
import struct
import zlib
from pathlib import Path

import numpy as np


def write_png(pixels: np.ndarray, path: str | Path) -> None:
    """Write an ``(h, w, 3)`` uint8 RGB array as a PNG file."""
    h, w, _ = pixels.shape
    raw = b"".join(b"\x00" + pixels[y].astype(np.uint8).tobytes() for y in range(h))

    def chunk(kind: bytes, data: bytes) -> bytes:
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", w, h, 8, 2, 0, 0, 0))
    png += chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")
    Path(path).write_bytes(png)


def bar_chart(bars: list[tuple[str, float]], path: str | Path, title: str = "") -> Path:
    """Horizontal bars on a log scale, one per ``(label, value)``."""
    path = Path(path)
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(8, 0.35 * len(bars) + 1))
        ax.barh([b[0] for b in bars], [b[1] for b in bars])
        ax.set_xscale("log")
        ax.set_title(title)
        fig.tight_layout()
        fig.savefig(path)
        plt.close(fig)
        return path
    except ImportError:
        pass
    # No matplotlib: plain bars (no text rendering), log-scaled, 20 px per bar, one colour per group.
    w, bh, pad = 600, 16, 4
    h = len(bars) * (bh + pad) + pad
    img = np.full((h, w, 3), 255, np.uint8)
    top = max(math.log10(max(v for _, v in bars) + 1), 1.0)
    palette = [(31, 119, 180), (255, 127, 14), (44, 160, 44), (214, 39, 40)]
    groups = {}
    for i, (label, value) in enumerate(bars):
        colour = palette[groups.setdefault(label.split()[-1], len(groups)) % len(palette)]
        length = int((w - 2 * pad) * math.log10(value + 1) / top)
        y = pad + i * (bh + pad)
        img[y:y + bh, pad:pad + max(length, 1)] = colour
    write_png(img, path)
    return path
