"""Native-policy track commands: ``data fetch-sources``, ``verify-native``, ``build-native``,
``import-openfga``, ``import-cedar``. Thin wrappers over :mod:`authpairs.tracks.native`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

SourcesOpt = Annotated[Path | None, typer.Option(
    "--sources", help="Sources folder (default: $AUTHPAIRS_SOURCES, ../shared/sources, or where "
                      "fetch-sources puts them).")]
OutOpt = Annotated[Path, typer.Option("--out", help="Output JSONL case file.")]


def register(app: typer.Typer, data_app: typer.Typer) -> None:
    """Add the native-policy commands to the ``data`` group."""

    @data_app.command("fetch-sources")
    def fetch_sources_cmd(
        dest: Annotated[Path | None, typer.Option(
            "--dest", help="Folder to write (default: $AUTHPAIRS_CACHE/sources or "
                           "~/.cache/authpairs/sources, which the native build reads).")] = None,
        origin: Annotated[str | None, typer.Option(
            "--from", help="A local mirror instead of the upstream repositories: a folder or git "
                           "repository laid out like the sources folder, a URL of one, or a URL "
                           "template with {repository}, {commit}, {path}.")] = None,
        revision: Annotated[str, typer.Option(
            "--revision", help="Revision of a git mirror to read.")] = "HEAD",
        force: Annotated[bool, typer.Option(
            "--force", help="Replace source trees in --dest that are not the pinned set.")
        ] = False,
        check: Annotated[bool, typer.Option(
            "--check", help="Fetch nothing: check the folder the native build reads (or --dest) "
                            "against the manifest.")] = False,
    ) -> None:
        """Get the OpenFGA sample stores and Cedar examples at their pinned revisions.

        Every file is checked against the SHA-256 manifest shipped with authpairs; a
        PROVENANCE.md records where and when the files came from.
        """
        from authpairs.tracks.native.fetch import check_tree as check_sources
        from authpairs.tracks.native.fetch import fetch_sources
        from authpairs.tracks.native.sources import default_sources

        if check:
            folder = dest if dest is not None else default_sources()
            problems = check_sources(folder) if folder.is_dir() else [f"{folder}: not found"]
            for problem in problems[:20]:
                typer.echo(problem)
            if problems:
                typer.echo(f"{folder}: {len(problems)} problem(s); not the pinned sources "
                           "(authpairs data fetch-sources --force --dest DIR replaces them)")
                raise typer.Exit(code=1)
            typer.echo(f"{folder}: every file matches the shipped SHA-256 manifest")
            return
        result = fetch_sources(dest, origin, revision=revision, force=force)
        if result.already_present:
            typer.echo(f"{result.dest}: already holds the pinned sources ({result.files} files "
                       "match the manifest); nothing fetched")
            return
        trees = ", ".join(f"{name} {n}" for name, n in sorted(result.trees.items()))
        typer.echo(f"fetched {result.files} files ({result.bytes:,} bytes; {trees}) from "
                   f"{result.origin} into {result.dest}; every SHA-256 matches the manifest")

    @data_app.command("verify-native")
    def verify_native_cmd(
        sources: SourcesOpt = None,
        report: Annotated[Path | None, typer.Option(
            "--report", help="Also write the per-file agreement table (markdown).")] = None,
    ) -> None:
        """Replay every upstream OpenFGA / Cedar assertion through the real engines."""
        from authpairs.tracks.native.verify import verify_native

        result = verify_native(sources)
        text = result.to_markdown()
        typer.echo(text)
        for engine, version in result.engines.items():
            typer.echo(f"{engine}: {version}")
        if report is not None:
            report.write_text(text, encoding="utf-8")
        totals = result.totals()
        summary = ", ".join(f"{k} {a}/{t}" for k, (a, t) in totals.items())
        if not result.ok:
            typer.echo(f"DISAGREEMENT: {summary}")
            raise typer.Exit(code=1)
        typer.echo(f"all assertions agree: {summary}")

    @data_app.command("build-native")
    def build_native_cmd(
        out: OutOpt,
        sources: SourcesOpt = None,
        seed: Annotated[str | None, typer.Option("--seed", help="Split seed.")] = None,
        dev_fraction: Annotated[float | None, typer.Option(
            "--dev-fraction", help="Largest dev share of all cases.")] = None,
    ) -> None:
        """Build the native-policy track (engine-labelled, split) into a JSONL case file."""
        from authpairs.cases.dataset import Dataset
        from authpairs.tracks.native import split
        from authpairs.tracks.native.build import build_native
        from authpairs.tracks.native.stats import summary_markdown

        built = build_native(sources, seed=seed or split.DEFAULT_SEED,
                             dev_fraction=split.DEFAULT_DEV_FRACTION
                             if dev_fraction is None else dev_fraction)
        dataset = Dataset(name="native", cases=built.cases)
        dataset.write_jsonl(out)
        typer.echo(summary_markdown(built.cases))
        manifest = dataset.manifest()
        typer.echo(f"wrote {len(dataset)} cases to {out} (public sha256 "
                   f"{manifest.public_sha256[:12]}) in {built.timings['total_s']:.1f} s")

    @data_app.command("import-openfga")
    def import_openfga_cmd(
        path: Annotated[Path, typer.Argument(help="A *.fga.yaml store test file or a folder.")],
        out: OutOpt,
        name: Annotated[str | None, typer.Option("--name", help="Dataset name.")] = None,
    ) -> None:
        """Turn your own OpenFGA store test file(s) into an engine-labelled case file."""
        from authpairs.tracks.native.byo import import_openfga

        dataset = import_openfga(path, name=name)
        dataset.write_jsonl(out)
        typer.echo(f"wrote {len(dataset)} cases to {out}")

    @data_app.command("import-cedar")
    def import_cedar_cmd(
        path: Annotated[Path, typer.Argument(help="A Cedar example folder (ALLOW/, DENY/).")],
        out: OutOpt,
        name: Annotated[str | None, typer.Option("--name", help="Dataset name.")] = None,
        schema: Annotated[bool, typer.Option(
            "--schema/--no-schema", help="Pass the folder's schema to the engine.")] = True,
    ) -> None:
        """Turn your own Cedar example folder into an engine-labelled case file."""
        from authpairs.tracks.native.byo import import_cedar

        dataset = import_cedar(path, name=name, use_schema=schema)
        dataset.write_jsonl(out)
        typer.echo(f"wrote {len(dataset)} cases to {out}")
