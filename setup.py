"""How the wheel and the sdist are built (the project's metadata is in pyproject.toml).

The pages are edited in templates/ and static/ at the top of the checkout. They are installed as the packages
`scoreboard.templates` and `scoreboard.static` (the `package_dir` mapping below), so the app finds them through
importlib.resources both in a wheel (where they sit inside `scoreboard/`) and in an editable install of the checkout
(where setuptools' editable finder maps the two names onto the top-level folders).

`static/vendor/` (the Socket.IO client and the fonts) is never committed: before the files are collected, the build
hook runs scripts/vendor.py's functions (`npm ci` from package-lock.json, then the copy), unless the folder is already
up to date with the lock file, as it is in an sdist. Without npm the build stops with one sentence saying so.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

from setuptools import find_packages, setup
from setuptools.command.build_py import build_py
from setuptools.command.sdist import sdist
from setuptools.errors import ExecError

ROOT = Path(__file__).resolve().parent


def vendor_static() -> None:
    """Fill static/vendor/ from npm unless it already matches package-lock.json."""
    spec = importlib.util.spec_from_file_location("scoreboard_vendor", ROOT / "scripts" / "vendor.py")
    assert spec is not None and spec.loader is not None
    vendor = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(vendor)
    try:
        vendor.ensure(ROOT)
    except vendor.VendorError as e:
        # setuptools prints an ExecError as one "error: ..." line, without a traceback.
        raise ExecError(f"cannot build scoreboard: {e}") from None


class BuildPy(build_py):
    def run(self) -> None:
        vendor_static()
        super().run()


class Sdist(sdist):
    def run(self) -> None:
        vendor_static()
        super().run()


setup(
    packages=[*find_packages(include=["scoreboard", "scoreboard.*"]), "scoreboard.templates", "scoreboard.static"],
    package_dir={"scoreboard.templates": "templates", "scoreboard.static": "static"},
    package_data={
        "scoreboard": ["py.typed", "translations/*/LC_MESSAGES/*.po"],
        "scoreboard.templates": ["**/*"],
        "scoreboard.static": ["**/*"],
    },
    exclude_package_data={"": ["__pycache__/*", "*.pyc"]},
    cmdclass={"build_py": BuildPy, "sdist": Sdist},
)
