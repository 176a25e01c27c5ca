"""Ratings by the language a study was taken in (``ratings_long.language``).

A study shown in several languages (protocols.definition.translation) may differ by language: the
wording of the questions, the rating scale's labels, or the people. ``analyze`` therefore

- summarizes the ratings per language (``by_language``): participants, ratings, mean
  acceptance and action, and for each further language the difference of its mean ratings
  from the most common language's, with a 95% interval from a participant bootstrap
  (participants resampled within each language, ``BOOTSTRAP`` times; the ratings of a
  resampled participant stay together, since a person's ratings are not independent);
- splits on request (``analyze --language ja``: ``only``): every model is then fitted on
  that language's ratings alone, so the models of two languages can be set side by side.

Ratings without a recorded language (imported ones) count as ``not recorded``.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from babel import Locale, UnknownLocaleError

from analysis.models import OUTCOMES, AnalysisDataError
from data.columns import RATINGS_LONG

BOOTSTRAP = 2000
UNRECORDED = "not recorded"
_LANGUAGE, _PID = RATINGS_LONG.pick("language", "participant_id")  # data.columns


def language_column(ratings: pd.DataFrame) -> pd.Series:
    """Each rating's language (``UNRECORDED`` where none is stored)."""
    if _LANGUAGE not in ratings:
        return pd.Series(UNRECORDED, index=ratings.index)
    return ratings[_LANGUAGE].fillna(UNRECORDED).astype(str)


def only(ratings: pd.DataFrame, language: str) -> pd.DataFrame:
    """The ratings given in ``language`` (AnalysisDataError naming the study's languages
    when there are none)."""
    column = language_column(ratings)
    kept = ratings[column == language]
    if kept.empty:
        found = ", ".join(sorted(column.unique())) or "none"
        raise AnalysisDataError(f"no ratings in language {language!r} (the study's: {found})")
    return kept


def name(code: str) -> str:
    """A language code's English name ("Japanese"); the code itself if Babel has none."""
    try:
        return Locale.parse(code).get_display_name("en") or code
    except (UnknownLocaleError, ValueError, TypeError):
        return code


def _means(ratings: pd.DataFrame) -> dict[str, float]:
    return {f"mean_{o}": round(float(ratings[o].mean()), 3) for o in OUTCOMES}


def _difference(a: pd.DataFrame, b: pd.DataFrame, outcome: str,
                rng: np.random.Generator) -> dict[str, float]:
    """Mean rating of ``a`` minus ``b`` with its participant-bootstrap 95% interval."""
    def sums(df: pd.DataFrame) -> tuple[np.ndarray, np.ndarray]:
        g = df.groupby(_PID)[outcome]
        return g.sum().to_numpy(float), g.count().to_numpy(float)

    (sa, na), (sb, nb) = sums(a), sums(b)
    ia = rng.integers(len(sa), size=(BOOTSTRAP, len(sa)))
    ib = rng.integers(len(sb), size=(BOOTSTRAP, len(sb)))
    draws = sa[ia].sum(1) / na[ia].sum(1) - sb[ib].sum(1) / nb[ib].sum(1)
    lo, hi = np.quantile(draws, [0.025, 0.975])
    diff = sa.sum() / na.sum() - sb.sum() / nb.sum()
    return {"difference": round(float(diff), 3), "lo": round(float(lo), 3),
            "hi": round(float(hi), 3)}


def by_language(ratings: pd.DataFrame, analysed: str | None = None,
                seed: int = 0) -> dict[str, Any]:
    """The per-language summary of the module docstring (``analysed``: the language the
    models were restricted to, None: all).

    >>> import pandas as pd
    >>> from analysis.languages import by_language
    >>> ratings = pd.DataFrame({"participant_id": ["a", "a", "b", "c"],
    ...                         "language": ["en", "en", "ja", "en"],
    ...                         "acceptance": [5, 3, 4, 2], "action": [4, 2, 3, 1]})
    >>> summary = by_language(ratings)
    >>> tuple((r["language"], r["participants"], r["mean_acceptance"])
    ...       for r in summary["by_language"])
    (('en', 2, 3.333), ('ja', 1, 4.0))
    >>> (acceptance, _) = summary["differences"]          # Japanese minus English
    >>> acceptance["difference"]
    0.667
    """
    column = language_column(ratings)
    order = list(column.value_counts().index)  # the most common language first
    rows = []
    for lang in order:
        part = ratings[column == lang]
        rows.append({"language": lang, "name": name(lang),
                     "participants": int(part[_PID].nunique()),
                     "ratings": int(len(part)), **_means(part)})
    rng = np.random.default_rng(seed)
    base = ratings[column == order[0]] if order else ratings
    differences = [
        {"language": lang, "versus": order[0], "outcome": outcome,
         **_difference(ratings[column == lang], base, outcome, rng)}
        for lang in order[1:] for outcome in OUTCOMES]
    block = {"analysed": analysed, "by_language": rows, "differences": differences}
    block["sentence"] = sentence(block)
    return block


def sentence(block: dict[str, Any]) -> str:
    """The report's sentence about languages."""
    rows = block["by_language"]
    if block["analysed"] is not None:
        return (f"The models use only the ratings given in {name(block['analysed'])} "
                f"(analyze --language {block['analysed']}).")
    if len(rows) <= 1:
        lang = rows[0]["name"] if rows else "one language"
        return f"All ratings were given in {lang}."
    parts = [f"{r['name']} ({r['participants']} participant"
             f"{'' if r['participants'] == 1 else 's'}, mean acceptance "
             f"{r['mean_acceptance']:.2f}, action {r['mean_action']:.2f})" for r in rows]
    diffs = "; ".join(
        f"{name(d['language'])} minus {name(d['versus'])}, {d['outcome']}: "
        f"{d['difference']:+.2f} [{d['lo']:+.2f}, {d['hi']:+.2f}]" for d in block["differences"])
    return (f"Ratings came in {len(rows)} languages: {', '.join(parts)}; {diffs} (95% "
            "participant-bootstrap intervals); the models pool the languages, and analyze "
            "--language LANG fits them on one language's ratings.")
