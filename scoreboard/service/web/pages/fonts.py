"""Which CJK font stylesheet a page links, so a display without CJK fonts of its own still draws 庄 and 莊.

The stylesheets are @fontsource's, vendored from npm into static/vendor/fonts/: one @font-face per chunk of the
font with a unicode-range, so a browser fetches only the chunks holding glyphs the page draws. A page links one
stylesheet at most: Traditional glyph shapes for zh-Hant, Simplified for zh-Hans, and for an English page only when
some text on it (a table's name) is CJK, in the Simplified font. Only the bold weight is linked: the roads' letters,
names and values are bold, and a regular-weight label falls back to the one face the page has, where a second weight
would cost a second 100 KB stylesheet and a second set of chunks.

>>> stylesheet("zh-Hant", [])
'vendor/fonts/noto-sans-tc/700.css'
>>> stylesheet("en", ["Baccarat 1"]) is None, stylesheet("en", ["百家樂 1"])
(True, 'vendor/fonts/noto-sans-sc/700.css')
"""

from __future__ import annotations

import re
from collections.abc import Iterable

FAMILY = {"zh-Hans": "noto-sans-sc", "zh-Hant": "noto-sans-tc"}
FALLBACK_FAMILY = "noto-sans-sc"
WEIGHT = 700
# CJK symbols and punctuation, kana, Hangul, the unified ideographs with extension A, compatibility ideographs and
# the full-width forms: text in any of these needs the CJK font.
CJK = re.compile(
    "[\u2e80-\u2fff\u3000-\u30ff\u3130-\u318f\u3400-\u4dbf\u4e00-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef]"
)


def needs_cjk(texts: Iterable[str]) -> bool:
    """True if any of `texts` has a CJK character.

    >>> needs_cjk(["Table 1", "Baccarat"]), needs_cjk(["貴賓廳"])
    (False, True)
    """
    return any(CJK.search(t) for t in texts if t)


def stylesheet(lang: str, texts: Iterable[str]) -> str | None:
    """The static path of the CJK stylesheet a page in `lang` showing `texts` links, or None."""
    family = FAMILY.get(lang)
    if family is None and needs_cjk(texts):
        family = FALLBACK_FAMILY
    return None if family is None else f"vendor/fonts/{family}/{WEIGHT}.css"
