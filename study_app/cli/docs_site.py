"""`recourse-study docs generate`: write the documentation site's generated pages (the
command-line reference and the Python API index) or check that the committed ones are
current. `make docs` builds the site from them with MkDocs."""

from __future__ import annotations

from pathlib import Path

import typer

from study_app.cli.apps import app
from study_app.cli.output import emit, err, fail, json_file_option, json_option

docs_app = typer.Typer(help="The documentation site's generated pages.", no_args_is_help=True)
app.add_typer(docs_app, name="docs")


@docs_app.command("generate")
def generate(
    out: Path = typer.Option(Path("docs"), help="The documentation folder (mkdocs docs_dir)."),
    check: bool = typer.Option(False, "--check", help="Write nothing; exit 1 when a committed "
                               "page differs from what the code generates now."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Regenerate the documentation site's generated pages.

    Generate docs/reference/cli.md (every command, from its own help and options),
    docs/reference/api.md (every public class and function of engine, data, protocols,
    analysis and study_app, rendered from docstrings by the site build) and the measured
    tables of docs/reproductions/*.md from the stored `reproduce` outputs
    (docs/reproductions/data/<target>.json, written by `recourse-study reproduce TARGET
    --json-file ...`; each page's generated block, the prose around it is kept), and the
    Tominaga truth's spread table of docs/analysis-mgcv.md from
    docs/reproductions/tominaga/sd-intercept-<sd>-seed-<seed>.json.

    --json prints: pages (path -> "written" | "current" | "stale"), stale (count).
    Exit 1 with --check when a page is stale.
    """
    from study_app.cli.reference_pages import API_PAGE, CLI_PAGE, api_markdown, cli_markdown
    from study_app.cli.reproduction_pages import reproduction_pages
    from study_app.cli.spread_pages import spread_pages

    if not out.is_dir():
        fail(f"--out {out}: no such folder (the documentation folder, e.g. docs)", 2,
             json_out=json_out)
    try:
        pages = {CLI_PAGE: cli_markdown(app), API_PAGE: api_markdown(),
                 **reproduction_pages(out), **spread_pages(out)}
    except (ValueError, OSError) as e:  # a broken data file or a missing page
        fail(f"docs generate: {e}", 2, json_out=json_out)
    status: dict[str, str] = {}
    for rel, text in pages.items():
        path = out / rel
        current = path.exists() and path.read_text(encoding="utf-8") == text
        if check:
            status[rel] = "current" if current else "stale"
        else:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
            status[rel] = "written"
    stale = sum(s == "stale" for s in status.values())
    doc = {"pages": status, "stale": stale}

    def human() -> None:
        for rel, s in status.items():
            err.print(f"{out / rel}: {s}", highlight=False)

    emit(doc, json_out=json_out, json_file=json_file, human=human)
    if stale:
        raise typer.Exit(1)
