"""The native-policy track: public OpenFGA sample stores and Cedar examples, labelled by engines.

Entry points:

* :func:`.dataset.load_native_dataset` -- the track as a :class:`~authpairs.cases.dataset.Dataset`,
  built from the staged sources (or read from a cached JSONL build).
* :func:`~authpairs.tracks.native.build.build_native` -- build with engine answers and timings.
* :func:`~authpairs.tracks.native.verify.verify_native` -- replay every upstream assertion.
* :func:`~authpairs.tracks.native.byo.import_openfga` / ``import_cedar`` -- a user's own files.
* :func:`~authpairs.tracks.native.fetch.fetch_sources` -- the upstream sources at their pinned
  revisions, checked against the SHA-256 manifest shipped in the package.
"""
