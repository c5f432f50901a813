"""Fill static/vendor/ with what the pages and the image renderer load from npm packages (package-lock.json).

    python scripts/vendor.py [--check]

Runs `npm ci` and the copy unless static/vendor/ already matches package-lock.json and this file (a stamp in the
folder records both); `--check` only says whether it does (exit status 1 when not).

- socket.io.min.js: the official Socket.IO client (casino networks are closed: never a CDN).
- swagger-ui/: Swagger UI (swagger-ui-dist), which renders the API's OpenAPI document at /api/docs.
- fonts/noto-sans-sc/, fonts/noto-sans-tc/: Noto Sans SC and TC from @fontsource, weights 400 and 700, as WOFF2.
  Browsers load them through the package's own CSS, whose unicode-range rules fetch only the chunks a page's text
  uses; the renderer draws with the one-file subset of each.

Nothing here is committed: `npm ci` installs the packages from the lock file, then this copies what is served. It
is the one place that knows which files are vendored: scripts/install and the wheel's build hook both call it.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
FONT_FAMILIES = ("noto-sans-sc", "noto-sans-tc")
# What /api/docs loads of swagger-ui-dist, with its licences.
SWAGGER_UI = ("swagger-ui-bundle.js", "swagger-ui-bundle.js.LICENSE.txt", "swagger-ui.css", "LICENSE", "NOTICE")
FONT_WEIGHTS = (400, 700)
# The one-file subsets the renderer reads (they hold every glyph the boards write, Latin included).
RENDER_SUBSET = {"noto-sans-sc": "chinese-simplified", "noto-sans-tc": "chinese-traditional"}
STAMP = "vendored-from.sha256"  # in static/vendor/: the hash of what the folder was made from
_WOFF = re.compile(r",\s*url\(\./files/[^)]+\.woff\)\s*format\('woff'\)")


class VendorError(RuntimeError):
    """What is missing to build static/vendor/, in one sentence."""


def npm_ci(root: Path = ROOT) -> None:
    npm = shutil.which("npm")
    if npm is None:
        raise VendorError(
            "npm is not installed: the Socket.IO client and the fonts come from npm "
            "(install Node.js with npm, e.g. Debian's nodejs and npm packages, then build again)"
        )
    # No package's install script runs (none is needed to copy files; swagger-ui-dist's would report the install
    # to its publisher's analytics).
    result = subprocess.run(
        [npm, "ci", "--silent", "--no-audit", "--no-fund", "--ignore-scripts"],
        cwd=root,
        capture_output=True,
        text=True,
        env={**os.environ, "SCARF_ANALYTICS": "false"},
    )
    if result.returncode != 0:
        raise VendorError(f"npm ci failed in {root}: {result.stderr.strip()[-500:]}")


def vendor(root: Path = ROOT) -> list[Path]:
    """Copy the served files from node_modules/ into static/vendor/; returns what was written."""
    modules, out = root / "node_modules", root / "static" / "vendor"
    if not (modules / "socket.io-client").is_dir():
        raise VendorError(f"{modules} lacks socket.io-client: run `npm ci` in {root} first")
    if out.exists():
        shutil.rmtree(out)
    written = [_copy(modules / "socket.io-client" / "dist" / "socket.io.min.js", out / "socket.io.min.js")]
    for name in SWAGGER_UI:
        written.append(_copy(modules / "swagger-ui-dist" / name, out / "swagger-ui" / name))
    for family in FONT_FAMILIES:
        package, target = modules / "@fontsource" / family, out / "fonts" / family
        for weight in FONT_WEIGHTS:
            css = (package / f"{weight}.css").read_text()
            # Keep the WOFF2 sources only: every browser the boards run in reads WOFF2, and the package's WOFF
            # copies would double what is shipped.
            css = _WOFF.sub("", css)
            target.mkdir(parents=True, exist_ok=True)
            (target / f"{weight}.css").write_text(css)
            written.append(target / f"{weight}.css")
            for name in re.findall(r"url\(\./files/([^)]+\.woff2)\)", css):
                written.append(_copy(package / "files" / name, target / "files" / name))
            subset = f"{family}-{RENDER_SUBSET[family]}-{weight}-normal.woff2"
            written.append(_copy(package / "files" / subset, target / "files" / subset))
        written.append(_copy(package / "LICENSE", target / "LICENSE"))
    return written


def source_hash(root: Path = ROOT) -> str:
    """What static/vendor/ is made from: the lock file and this script."""
    digest = hashlib.sha256((root / "package-lock.json").read_bytes())
    digest.update(Path(__file__).read_bytes())
    return digest.hexdigest()


def up_to_date(root: Path = ROOT) -> bool:
    stamp = root / "static" / "vendor" / STAMP
    return stamp.is_file() and stamp.read_text().strip() == source_hash(root)


def ensure(root: Path = ROOT) -> list[Path] | None:
    """Make static/vendor/ match the lock file: npm ci and the copy, or nothing (None) when it already does.

    scripts/install and the wheel's build hook both call this, so an install runs npm once, and a build from an
    sdist (which carries static/vendor/) needs no npm at all.
    """
    if up_to_date(root):
        return None
    npm_ci(root)
    files = vendor(root)
    (root / "static" / "vendor" / STAMP).write_text(source_hash(root) + "\n")
    return files


def _copy(src: Path, dst: Path) -> Path:
    if not src.is_file():
        raise VendorError(f"{src} is missing: the npm package changed its layout; check package-lock.json")
    dst.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(src, dst)
    return dst


def main(argv: list[str]) -> int:
    if argv == ["--check"]:
        fresh = up_to_date()
        print(f"static/vendor: {'up to date' if fresh else 'missing or older than package-lock.json'}")
        return 0 if fresh else 1
    try:
        files = ensure()
    except VendorError as e:
        print(f"scripts/vendor.py: {e}", file=sys.stderr)
        return 1
    if files is None:
        print("static/vendor: up to date with package-lock.json")
        return 0
    size = sum(f.stat().st_size for f in files)
    print(f"static/vendor: {len(files)} files, {size / 1e6:.1f} MB")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
