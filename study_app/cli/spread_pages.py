"""The Tominaga truth's participant spread measured seed by seed, rendered from stored runs.

Each file ``docs/reproductions/tominaga/sd-intercept-<sd>-seed-<seed>.json`` is what
``python scripts/tominaga_seeds.py --seeds <seed> --out FILE`` wrote with the protocol's
``sd_intercept`` at <sd> for both outcomes, or, named ``sd-intercept-<acc>-<act>-...``, at
<acc> for acceptance and <act> for action ({rows, seeds: [{seed, findings, table_s2}]}).
``recourse-study docs generate`` renders them into a block of docs/analysis-mgcv.md: per
spread and seed the random-intercept F and EDF of the four models (the paper's Table S2
terms "uid (r.i.)"), the participant slopes' EDF, the smooths' p values and whether the three
findings hold; per spread the mean and median F of each model over its seeds and how many
F values fall within the paper's own range (its smallest to its largest F over the four
models). A spread run at ``SAMPLING_SEEDS`` seeds or more also gets its sampling
distribution: per model the 5th and 95th percentiles of F over the seeds and the paper's F
as a percentile of ours (the empirical CDF, the share of our F values <= the paper's), and
the share q of seeds whose four F values all lie within the paper's range, hence q^6, about
how often six independent seeds would all land inside (with no such seed, the rule of
three's 95% bound q < 3 / n).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import numpy as np

from analysis.table_s2 import MODELS, PAPER, format_p

SPREAD_DIR = "reproductions/tominaga"
PAGE = "analysis-mgcv.md"
BLOCK = "tominaga-spread"
FILE = re.compile(r"sd-intercept-(?P<acc>[0-9.]+)(?:-(?P<act>[0-9.]+))?-seed-(?P<seed>[0-9]+)"
                  r"\.json")
LABELS = [m[0] for m in MODELS]
PAPER_F = [float(PAPER[m]["participant_intercept"]["F"]) for m in LABELS]
PAPER_RANGE = (min(PAPER_F), max(PAPER_F))
SAMPLING_SEEDS = 10  # fewer seeds give no meaningful 5th / 95th percentile


def load_spreads(docs: Path) -> list[dict[str, Any]]:
    """Every stored seed: {sd (acceptance, action), sd_text ("<acc> / <act>" as the file
    names them), seed, file, terms {model: {term: {edf, F, p}}}, findings}."""
    out = []
    for path in sorted((docs / SPREAD_DIR).glob("sd-intercept-*-seed-*.json")):
        match = FILE.fullmatch(path.name)
        if match is None:
            raise ValueError(f"{path}: not named sd-intercept-<sd>-seed-<seed>.json or "
                             "sd-intercept-<acceptance sd>-<action sd>-seed-<seed>.json")
        acc, act = match["acc"], match["act"] or match["acc"]
        doc = json.loads(path.read_text(encoding="utf-8"))
        for entry in doc["seeds"]:
            if entry["seed"] != int(match["seed"]):
                raise ValueError(f"{path}: holds seed {entry['seed']}, its name says "
                                 f"{match['seed']}")
            terms: dict[str, dict[str, dict[str, Any]]] = {}
            for row in entry["table_s2"]:
                terms.setdefault(row["model"], {})[row["variable"]] = row
            out.append({"sd": (float(acc), float(act)), "sd_text": f"{acc} / {act}",
                        "seed": entry["seed"], "file": path.name, "terms": terms,
                        "findings": [f["holds"] for f in entry["findings"]]})
    return sorted(out, key=lambda r: (r["sd"], r["seed"]))


def _smooth(terms: dict[str, dict[str, Any]]) -> dict[str, Any]:
    return next(r for name, r in terms.items() if name in ("Sparsity", "Proximity"))


def spread_markdown(spreads: list[dict[str, Any]]) -> str:
    """The block: one row per stored seed, a summary per spread, the paper's row."""
    lo, hi = PAPER_RANGE
    lines = ["| sd_intercept (acceptance / action) | seed | r.i. F (Models 1-4) | r.i. EDF | "
             "r.s. EDF | acceptance L0 / L1 p | action L0 / L1 p (EDF) | findings 1 / 2 / 3 | "
             "file |",
             "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in spreads:
        t = [r["terms"][m] for m in LABELS]
        ri = [x["uid (r.i.)"] for x in t]
        rs = [x["uid (r.s.)"] for x in t]
        sm = [_smooth(x) for x in t]
        holds = " / ".join("holds" if h else "fails" for h in r["findings"])
        lines.append(
            f"| {r['sd_text']} | {r['seed']} | " + " / ".join(f"{x['F']:.2f}" for x in ri)
            + " | " + " / ".join(f"{x['edf']:.0f}" for x in ri)
            + " | " + " / ".join(f"{x['edf']:.0f}" for x in rs)
            + f" | {format_p(sm[0]['p'])} / {format_p(sm[1]['p'])} | "
            f"{format_p(sm[2]['p'])} ({sm[2]['edf']:.2f}) / "
            f"{format_p(sm[3]['p'])} ({sm[3]['edf']:.2f}) | {holds} | "
            f"[{r['file']}](reproductions/tominaga/{r['file']}) |")
    lines.append("| paper | - | " + " / ".join(f"{f:.2f}" for f in PAPER_F) + " | "
                 + " / ".join(f"{PAPER[m]['participant_intercept']['edf']:.0f}"
                              for m in LABELS) + " | "
                 + " / ".join(f"{PAPER[m]['participant_slope']['edf']:.0f}" for m in LABELS)
                 + " | 1.000 / 0.347 | <0.001 (4.25) / <0.001 (4.32) | - | - |")
    lines.append("")
    for sd in dict.fromkeys(r["sd"] for r in spreads):
        mine = [r for r in spreads if r["sd"] == sd]
        text = mine[0]["sd_text"]
        f = np.array([[r["terms"][m]["uid (r.i.)"]["F"] for m in LABELS] for r in mine])
        means, medians = f.mean(axis=0), np.median(f, axis=0)
        within = (f >= lo) & (f <= hi)  # seeds x models
        inside = int(within.sum())
        all_hold = sum(all(r["findings"]) for r in mine)
        lines.append(
            f"- `sd_intercept` {text}, seed(s) {', '.join(str(r['seed']) for r in mine)}: "
            f"random-intercept F mean " + " / ".join(f"{v:.2f}" for v in means)
            + ", median " + " / ".join(f"{v:.2f}" for v in medians)
            + " (the paper's " + " / ".join(f"{v:.2f}" for v in PAPER_F) + "); "
            f"{inside} of {f.size} F values within the paper's {lo:.2f}-{hi:.2f}; "
            f"all three findings hold at {all_hold} of {len(mine)} seed(s)")
        if len(mine) >= SAMPLING_SEEDS:
            lines.append(_sampling_line(text, f, within))
    return "\n".join(lines) + "\n"


def _sampling_line(sd_text: str, f: np.ndarray, within: np.ndarray) -> str:
    """The sampling distribution of one spread's F values, ``f`` (seeds x models; module
    docstring); ``within``: which of them lie within the paper's range."""
    lo, hi = PAPER_RANGE
    p5, p95 = np.percentile(f, 5, axis=0), np.percentile(f, 95, axis=0)
    ranks = [100.0 * float(np.mean(f[:, j] <= paper)) for j, paper in enumerate(PAPER_F)]
    whole = int(within.all(axis=1).sum())
    if whole:
        q = whole / len(f)
        share = f"{whole} of {len(f)} (q = {q:.3f}), so six seeds all within: q^6 = {q ** 6:.2g}"
    else:  # the rule of three: no success in n trials puts q below 3 / n at 95% confidence
        q = 3 / len(f)
        share = (f"none of {len(f)} (q < {q:.3f} at 95% confidence, the rule of three), so six "
                 f"seeds all within: q^6 < {q ** 6:.2g}")
    return (f"- `sd_intercept` {sd_text}, sampling distribution over {len(f)} seeds: F 5th-95th "
            "percentile " + " / ".join(f"{a:.2f}-{b:.2f}" for a, b in zip(p5, p95, strict=True))
            + "; the paper's F at percentile " + " / ".join(f"{r:.0f}" for r in ranks)
            + f" of ours; seeds with all four F within {lo:.2f}-{hi:.2f}: {share}")


def spread_pages(docs: Path) -> dict[str, str]:
    """rel path -> the page with its spread block current (no stored seed: no change)."""
    from study_app.cli.reproduction_pages import with_block

    spreads = load_spreads(docs)
    path = docs / PAGE
    if not spreads or not path.is_file():
        return {}
    src = f"`{SPREAD_DIR}/sd-intercept-*-seed-*.json`"
    return {PAGE: with_block(path.read_text(encoding="utf-8"), spread_markdown(spreads), src,
                             BLOCK)}
