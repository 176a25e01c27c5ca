"""Reading one study of a study database for the commands that analyse it (``analyze``,
``power --from``, ``simulate --like``): the database checked, the study chosen, its
ratings, plans and stored row (protocol and simulation settings)."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd


class StudyReadError(ValueError):
    """The study cannot be read: no database, not a study database, no such study, several
    studies and none named, or no ratings yet. The message says which."""


def read_study(db: str, study: str | None, *, needs: str = "nothing to analyse"
               ) -> tuple[str, pd.DataFrame, pd.DataFrame, dict[str, Any]]:
    """(study id, ratings, plans, the study's row) of ``study`` in ``db`` (the only study
    when None); StudyReadError otherwise. ``needs`` ends the message of a study without
    ratings (what the caller cannot do)."""
    from data.store import Store, StoreError, is_postgres

    if not is_postgres(db) and not Path(db).exists():
        raise StudyReadError(f"no database at {db}")
    try:
        with Store(db, read_only=True) as store:
            studies = list(store.studies()["study_id"])
            study = choose_study(db, studies, study)
            ratings, plans = store.ratings_long(study), store.plans(study)
            row = store.studies().set_index("study_id").loc[study].to_dict()
    except StudyReadError:
        raise
    except StoreError as e:
        raise StudyReadError(str(e)) from None
    except Exception as e:  # noqa: BLE001 - not a DuckDB file, or not one of ours
        raise StudyReadError(f"cannot read {db} as a study database: {e}") from None
    if ratings.empty:
        raise StudyReadError(f"study {study!r} in {db} has no ratings yet: {needs}")
    return study, ratings, plans, row


def choose_study(db: str, studies: list[str], study: str | None) -> str:
    """``study`` if ``db`` holds it, else the only study; StudyReadError otherwise."""
    held = ", ".join(studies) or "none"
    if study is None:
        if not studies:
            raise StudyReadError(f"{db} holds no study yet: simulate or import one first")
        if len(studies) > 1:
            raise StudyReadError(f"{db} holds {len(studies)} studies ({held}); name one with "
                                 "--study")
        return studies[0]
    if study not in studies:
        raise StudyReadError(f"no study {study!r} in {db} (it holds: {held})")
    return study
