"""`recourse-study protocol docs`: the protocol reference, generated from the schema, with a
picture of the rating curves the synthetic behaviour settings produce."""

from __future__ import annotations

from pathlib import Path

import typer

from study_app.cli.apps import app
from study_app.cli.output import emit, err, json_file_option, json_option

protocol_app = typer.Typer(help="Protocol authoring: the reference of the format.",
                           no_args_is_help=True)
app.add_typer(protocol_app, name="protocol")


@protocol_app.command("docs")
def docs(
    out: Path | None = typer.Option(
        None, help="Write the reference here (Markdown) and the rating-curve picture beside "
        "it (protocol-rating-curves.png); default: print the Markdown on stdout."),
    json_out: bool = json_option(),
    json_file: Path | None = json_file_option(),
) -> None:
    """Write the protocol format's reference.

    The protocol reference: every field (type, default, allowed values, bounds, meaning,
    the page whose text it controls), realistic plans, and the synthetic behaviour model's
    equations and knobs with a picture of the rating curves of documented settings.

    --json prints: markdown (the file written, or null), figure (the picture, or null),
    fields (number of fields documented), text (the Markdown when no --out, else null).
    """
    from protocols.definition.reference import fields, markdown

    figure = None
    if out is not None:
        figure = out.with_name("protocol-rating-curves.png")
        out.parent.mkdir(parents=True, exist_ok=True)
        draw_curves(figure)
        out.write_text(markdown(figure.name), encoding="utf-8")
        text = None
    else:
        text = markdown(None)
    doc = {"markdown": str(out) if out else None, "figure": str(figure) if figure else None,
           "fields": len(fields()), "text": text}

    def human() -> None:
        if text is not None:
            typer.echo(text)
        else:
            err.print(f"reference written to {out} (picture {figure})", highlight=False)

    emit(doc, json_out=json_out, json_file=json_file, human=None if json_out else human)


def draw_curves(path: Path) -> None:
    """The typical participant's mean action rating against distance for each documented
    setting (protocols.definition.reference.CURVES)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from engine.synthetic.rating_model import RatingBehaviour
    from protocols.definition.reference import CURVES
    from protocols.definition.simulation import OutcomeOverrides

    d = np.linspace(0.0, 1.0, 200)
    fig, ax = plt.subplots(figsize=(7, 4))
    base = RatingBehaviour.reference().action
    for label, settings in CURVES:
        model = OutcomeOverrides.model_validate(settings).apply(base)
        ax.plot(d, model.typical_curve(d), lw=2, label=label)
    ax.set_xlabel("distance (L1 over the profile)")
    ax.set_ylabel("mean action rating (typical participant)")
    ax.set_ylim(1, 7)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7, loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
