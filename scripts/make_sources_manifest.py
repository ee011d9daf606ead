"""Write the native track's shipped source manifest from a staged sources folder.

Usage: ``python scripts/make_sources_manifest.py [SOURCES_DIR]`` (default: the folder the native
build would read, ``../shared/sources`` in this workplace). The manifest lists every file of
``openfga-sample-stores/`` and ``cedar-examples/`` with the upstream commit its ``PROVENANCE.md``
names and its SHA-256; ``authpairs data fetch-sources`` checks fetched files against it, and
``tests/tracks/native/test_fetch.py`` checks that it matches the staged folder.
"""

from __future__ import annotations

import sys
from pathlib import Path

from authpairs.tracks.native.fetch import MANIFEST_FILE, build_manifest
from authpairs.tracks.native.sources import resolve_sources

TARGET = Path(__file__).resolve().parents[1] / "src" / "authpairs" / "tracks" / "native" \
    / MANIFEST_FILE


def main(argv: list[str]) -> int:
    """Build the manifest of ``argv[0]`` (or the default sources) and write it into the package."""
    root = resolve_sources(argv[0] if argv else None)
    manifest = build_manifest(root)
    TARGET.write_text(manifest.to_json(), encoding="utf-8")
    size = sum(f.size for f in manifest.files)
    print(f"wrote {TARGET.name}: {len(manifest.files)} files, {size} bytes, "
          f"manifest sha256 {manifest.sha256[:12]}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
