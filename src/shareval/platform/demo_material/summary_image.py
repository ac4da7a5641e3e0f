"""A summary's image (plan 7.2.4.5): the summary text on white, exactly 1024 px
wide and at most 768 px high, as PNG. Drawn with Pillow and matplotlib's
bundled DejaVu font (a few milliseconds per image; a matplotlib figure takes
ten times as long, and the demo draws hundreds)."""
from __future__ import annotations

import io
import textwrap
from functools import lru_cache

WIDTH, MAX_HEIGHT, LINE, MARGIN = 1024, 768, 22, 14


@lru_cache(maxsize=2)
def _font(size: int):
    from matplotlib import font_manager
    from PIL import ImageFont
    return ImageFont.truetype(font_manager.findfont("DejaVu Sans"), size)


def render(title: str, sentences: list[str]) -> bytes:
    from PIL import Image, ImageDraw
    lines = [title, ""] + [w for s in sentences for w in textwrap.wrap(s, 110) or [""]]
    lines = lines[:(MAX_HEIGHT - 2 * MARGIN) // LINE]
    height = min(MAX_HEIGHT, 2 * MARGIN + LINE * len(lines))
    img = Image.new("L", (WIDTH, height), 255)
    draw = ImageDraw.Draw(img)
    for i, text in enumerate(lines):
        draw.text((MARGIN, MARGIN + i * LINE), text, fill=0, font=_font(15 if i else 16))
    buf = io.BytesIO()
    img.save(buf, format="PNG", optimize=False, compress_level=6)
    return buf.getvalue()
