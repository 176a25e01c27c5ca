"""`recourse-study preview FILE --out DIR`: every page kind of a protocol as PNG and an index."""

from __future__ import annotations

from pathlib import Path

import typer

from study_app.cli.apps import app
from study_app.cli.output import emit, err, fail, json_file_option, json_option


@app.command()
def preview(
    protocol: str = typer.Argument(..., help="A protocol YAML file or a shipped protocol id."),
    out: Path = typer.Option(..., help="Folder for index.html and pages/<n>-<kind>.png/.html."),
    decision_model: str | None = typer.Option(
        None, help="Override the protocol's decision model: trained | bayes."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """See the study without serving it: one synthetic participant walks the protocol and
    the first page of every kind (and the end page of one who declines) is laid out and
    photographed in Debian's Chromium (headless). Needs the scenario's trained artifacts
    when the protocol uses them (`recourse-study train`) or --decision-model bayes.

    --json prints: protocol, index (the index page), pages [{kind, page_id, title, png,
    html}] (paths relative to OUT), seconds.
    """
    import time

    from protocols.resources import MethodUnavailableError
    from protocols.schema import ProtocolError, load_protocol
    from study_app.preview import PreviewError, collect_pages, write_preview

    if decision_model not in (None, "trained", "bayes"):
        raise typer.BadParameter("expected trained or bayes", param_hint="--decision-model")
    start = time.perf_counter()
    try:
        proto = load_protocol(protocol)
    except ProtocolError as e:
        fail(e, 2, keep_lines=True)
    try:
        err.print(f"walking {proto.id} with a synthetic participant", highlight=False)
        pages = collect_pages(proto, decision_model=decision_model)
        err.print(f"photographing {len(pages)} page kinds", highlight=False)
        result = write_preview(pages, out, proto.title)
    except (MethodUnavailableError, FileNotFoundError) as e:
        fail(e, 2)
    except PreviewError as e:
        fail(e, 1)
    doc = {"protocol": proto.id, **result, "seconds": round(time.perf_counter() - start, 3)}
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: err.print(
        f"{len(result['pages'])} pages ({', '.join(p['kind'] for p in result['pages'])}) "
        f"-> {result['index']}", highlight=False))
