"""Languages: gettext catalogs (`translations/<locale>/LC_MESSAGES/messages.po`), read by the pages through
Flask-Babel and by the image renderer directly.

The catalogs are compiled in memory when first used, so a checkout, an editable install and a wheel all read the same
`.po` files and no compiled `.mo` file is ever built or committed.

>>> translate("zh-Hant", "Cockroach Road")
'曱甴路'
>>> translate("zh-Hans", "B", context="winner"), translate("en", "B", context="winner")
('庄', 'B')
"""

from __future__ import annotations

import io
from functools import cache
from importlib import resources

from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from babel.support import NullTranslations, Translations

LANGUAGES = ("en", "zh-Hans", "zh-Hant")
DEFAULT_LANGUAGE = "en"
# Our language tags (BCP 47, as in `?lang=`) and the Babel locale each one's catalog is filed under.
LOCALES = {"en": "en", "zh-Hans": "zh_Hans", "zh-Hant": "zh_Hant"}


@cache
def translations(lang: str) -> NullTranslations:
    """The catalog of `lang` (one of LANGUAGES); English is the source language and needs none."""
    locale = LOCALES[lang]
    po = resources.files("scoreboard") / "translations" / locale / "LC_MESSAGES" / "messages.po"
    if not po.is_file():
        return NullTranslations()
    with po.open("rb") as f:
        catalog = read_po(f, locale=locale)
    buffer = io.BytesIO()
    write_mo(buffer, catalog)
    buffer.seek(0)
    return Translations(buffer)


def translate(lang: str, message: str, context: str | None = None) -> str:
    """`message` in `lang`; with `context`, the entry filed under that msgctxt."""
    t = translations(lang)
    return str(t.pgettext(context, message) if context else t.gettext(message))
