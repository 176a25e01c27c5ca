"""`recourse-study preview FILE --out DIR`: every page kind of a protocol as the app draws it,
as images and an index; `--gallery DIR`: the same for every shipped protocol and a docs page."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import typer

from study_app.cli.apps import app
from study_app.cli.choices import DecisionModel
from study_app.cli.output import emit, err, fail, json_file_option, json_option

GALLERY_WIDTHS = (1280, 390)


@app.command()
def preview(
    protocol: str | None = typer.Argument(
        None, help="A protocol YAML file or a shipped protocol id (not with --gallery)."),
    out: Path | None = typer.Option(
        None, help="Folder for index.html and pages/<n>-<kind>.png."),
    gallery: Path | None = typer.Option(
        None, help="Photograph every shipped protocol at 1280 and 390 px into this folder "
        "(<protocol>/pages/*.jpg) and write the docs page <folder>.md beside it."),
    decision_model: DecisionModel | None = typer.Option(
        None, help="Override the protocol's decision model: trained | bayes."),
    kind: list[str] = typer.Option(
        [], "--kind", metavar="<str>", help="Only this page kind (repeatable), e.g. --kind plan; "
        "default: every kind the protocol shows."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Photograph a protocol's pages in a headless browser.

    See the study without serving it: one synthetic participant walks the protocol and
    the first page of every kind (and the end page of one who declines) is drawn by the
    participant app's own renderers in a local Streamlit server and photographed in
    Debian's Chromium (headless). Needs the scenario's trained artifacts when the protocol
    uses them (`recourse-study train`) or --decision-model bayes.

    --json prints: protocol, index (the index page), pages [{kind, page_id, title, width,
    png}] (paths relative to OUT), seconds; with --gallery: {gallery, page, protocols
    [{protocol, pages}]}.
    """
    if (gallery is None) == (protocol is None) or (gallery is None) == (out is None):
        raise typer.BadParameter("give PROTOCOL with --out, or --gallery alone",
                                 param_hint="PROTOCOL / --out / --gallery")
    if kind and gallery is not None:
        raise typer.BadParameter("--kind is for one protocol, not --gallery (the gallery shows "
                                 "every kind)", param_hint="--kind")
    start = time.perf_counter()
    if gallery is not None:
        from protocols.definition.schema import shipped_protocols

        docs = [_one(pid, gallery / pid, decision_model, GALLERY_WIDTHS, "jpg")
                for pid in shipped_protocols()]
        page = gallery.with_suffix(".md")
        page.write_text(gallery_markdown(docs, gallery), encoding="utf-8")
        emit({"gallery": str(gallery), "page": str(page), "protocols": docs,
              "seconds": round(time.perf_counter() - start, 3)}, json_out=json_out,
             json_file=json_file, human=lambda: err.print(f"gallery -> {page}", highlight=False))
        return
    assert protocol is not None and out is not None
    doc = _one(protocol, out, decision_model, (1280,), "png", kinds=tuple(kind))
    doc["seconds"] = round(time.perf_counter() - start, 3)
    emit(doc, json_out=json_out, json_file=json_file, human=lambda: err.print(
        f"{len(doc['pages'])} pages ({', '.join(p['kind'] for p in doc['pages'])}) "
        f"-> {doc['index']}", highlight=False))


def _one(protocol: str, out: Path, decision_model: str | None, widths: tuple[int, ...],
         image: str, kinds: tuple[str, ...] = ()) -> dict[str, Any]:
    from protocols.definition.schema import ProtocolError, load_protocol
    from protocols.running.resources import MethodUnavailableError
    from study_app.preview import PreviewError, collect_pages, write_preview

    try:
        proto = load_protocol(protocol)
    except ProtocolError as e:
        fail(e, 2, keep_lines=True)
    try:
        err.print(f"walking {proto.id} with a synthetic participant", highlight=False)
        pages = collect_pages(proto, decision_model=decision_model)
        if kinds:
            shown = [p.kind for p in pages]
            unknown = sorted(set(kinds) - set(shown))
            if unknown:
                fail(f"--kind {', '.join(unknown)}: {proto.id} shows no such page; its kinds: "
                     f"{', '.join(shown)}", 2)
            pages = [p for p in pages if p.kind in kinds]
        err.print(f"photographing {len(pages)} page kinds", highlight=False)
        result = write_preview(pages, out, proto.title, widths=widths, image=image)
    except (MethodUnavailableError, FileNotFoundError) as e:
        fail(e, 2)
    except PreviewError as e:
        fail(e, 1)
    return {"protocol": proto.id, "title": proto.title, **result}


def gallery_markdown(docs: list[dict[str, Any]], folder: Path) -> str:
    """The docs page of a gallery: per protocol, every page kind at each width."""
    lines = ["# Gallery: every page of every shipped protocol", "",
             "Generated by `recourse-study preview --gallery docs/gallery` (do not edit): one",
             "synthetic participant walks each shipped protocol, and the first page of every",
             "kind is drawn by the participant app's own renderers and photographed at 1280",
             "and 390 px.", ""]
    for doc in docs:
        lines += [f"## {doc['title']} (`{doc['protocol']}`)", ""]
        for shot in doc["pages"]:
            src = f"{folder.name}/{doc['protocol']}/{shot['png']}"
            lines.append(f"- **{shot['kind']}** ({shot['page_id']}, {shot['width']} px): "
                         f"![{shot['kind']} at {shot['width']} px]({src})")
        lines.append("")
    return "\n".join(lines)
