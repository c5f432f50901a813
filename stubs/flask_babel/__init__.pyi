from collections.abc import Callable

from babel import Locale
from babel.support import NullTranslations, Translations
from flask import Flask
from werkzeug.utils import cached_property

class Domain:
    def __init__(self, translation_directories: str | list[str] | None = None, domain: str = "messages") -> None: ...
    def get_translations(self) -> Translations | NullTranslations: ...

class Babel:
    def __init__(self, app: Flask | None = None) -> None: ...
    def init_app(
        self,
        app: Flask,
        default_locale: str = "en",
        default_domain: str = "messages",
        default_translation_directories: str = "translations",
        default_timezone: str = "UTC",
        locale_selector: Callable[[], str | Locale | None] | None = None,
        timezone_selector: Callable[[], str | None] | None = None,
    ) -> None: ...
    @cached_property
    def domain_instance(self) -> Domain: ...

def get_locale() -> Locale | None: ...

# The message's `%(name)s` placeholders are filled from the keyword arguments.
def gettext(string: str, **variables: object) -> str: ...
def pgettext(context: str, string: str, **variables: object) -> str: ...
