"""Flask-Babel for the pages, reading the catalogs `scoreboard.i18n` compiles in memory.

Flask-Babel's own Domain looks for compiled `.mo` files on disk, which we never build: our Domain hands it the
in-memory catalog of the request's language instead, so templates use the usual `_()` and `pgettext()`.
A page picks its language (`use_language`) before it renders; the locale selector reads it back.
"""

from __future__ import annotations

from typing import cast

from babel.support import NullTranslations
from flask import Flask, g
from flask_babel import Babel, Domain, get_locale
from werkzeug.utils import cached_property

from ....i18n import DEFAULT_LANGUAGE, LOCALES, translations

# Babel's locale names back to our language tags: str(Locale.parse("zh_Hant")) == "zh_Hant".
LANGUAGE_OF_LOCALE = {locale: lang for lang, locale in LOCALES.items()}


class CatalogDomain(Domain):
    """The `messages` domain, served from `scoreboard.i18n.translations` (cached there, once per language)."""

    def get_translations(self) -> NullTranslations:
        locale = get_locale()
        return translations(LANGUAGE_OF_LOCALE.get(str(locale), DEFAULT_LANGUAGE))


class CatalogBabel(Babel):
    @cached_property
    def domain_instance(self) -> CatalogDomain:
        return CatalogDomain()


def use_language(lang: str) -> None:
    """Render this request in `lang` (one of i18n.LANGUAGES)."""
    g.scoreboard_lang = lang


def current_language() -> str:
    # flask.g is an untyped namespace (its values are Any); use_language is the one writer, and stores a str.
    return cast(str, g.get("scoreboard_lang", DEFAULT_LANGUAGE))


def _locale() -> str:
    return LOCALES[current_language()]


def init_app(app: Flask) -> None:
    """Install Flask-Babel (gettext callables in Jinja) once per app."""
    if "babel" not in app.extensions:
        CatalogBabel().init_app(app, locale_selector=_locale)
