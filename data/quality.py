"""Data-quality flags per participant: speeders, straight-liners, attention failures.

Definitions (the codebook's words; the thresholds are the protocol's ``quality`` block,
stored with the study, defaults below):

- page time t_pj: ``responses.seconds``, measured by the server from participant p's
  previous answer (or their start) to their answer of page j;
- m_j: the median time of page j over the participants of the same source who answered it;
- ``total_ratio`` = T_p / M_p with T_p = sum_j t_pj and M_p = sum_j m_j over the pages p
  answered: the total time against the median total of those pages (the same as against
  the median participant's total when everyone sees the same pages, and fair to those who
  saw fewer or other pages: fewer plans, an early end);
- ``page_ratio`` = median_j (t_pj / m_j): how fast p is page by page, robust to one long
  pause;
- both null under ``MIN_TIMED_PAGES`` timed pages;
- ``fast_pages``: the pages p answered in under f * m_j;
- ``speeder``: total_ratio < f or page_ratio < f (f = ``speeder_fraction``);
- ``straightliner``: at least ``straightliner_min_ratings`` plans rated, and the same
  acceptance rating on every plan and the same action rating on every plan (null: fewer
  ratings);
- ``attention_failed``: at least one attention check answered wrongly (null: none
  answered);
- ``flagged``: any of the three.

The flags are computed from the stored rows whenever they are asked for (export, analyze,
dashboard), never stored, so they always follow the data (a withdrawal, new participants).
Reads are the portable SQL subset; the rest is pandas, the same on both backends.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pandas as pd

from data.store import Store

DEFAULT_SPEEDER_FRACTION = 0.5
DEFAULT_STRAIGHTLINER_MIN_RATINGS = 3
MIN_TIMED_PAGES = 3
FLAGS = ("speeder", "straightliner", "attention_failed")
COLUMNS = ("study_id", "participant_id", "source", "arm", "status", "pages_timed",
           "total_seconds", "total_ratio", "page_ratio", "fast_pages", "speeder", "ratings",
           "straightliner", "attention_checks", "attention_failed", "flagged")


def thresholds(protocol_json: str | None) -> dict[str, Any]:
    """(speeder_fraction, straightliner_min_ratings) of a stored protocol's ``quality``
    block; the defaults where it has none (older or imported studies)."""
    try:
        block = (json.loads(protocol_json or "null") or {}).get("quality") or {}
    except (ValueError, AttributeError):
        block = {}
    return {"speeder_fraction": float(block.get("speeder_fraction",
                                                DEFAULT_SPEEDER_FRACTION)),
            "straightliner_min_ratings": int(block.get("straightliner_min_ratings",
                                                       DEFAULT_STRAIGHTLINER_MIN_RATINGS))}


def participant_flags(store: Store, study_id: str, *, speeder_fraction: float | None = None,
                      straightliner_min_ratings: int | None = None) -> pd.DataFrame:
    """One row per participant who answered a page (``COLUMNS``; module docstring);
    thresholds default to the stored protocol's."""
    rows = store.query("SELECT protocol_json FROM studies WHERE study_id = ?", [study_id])
    limits = thresholds(rows[0]["protocol_json"] if rows else None)
    f = speeder_fraction if speeder_fraction is not None else limits["speeder_fraction"]
    k = (straightliner_min_ratings if straightliner_min_ratings is not None
         else limits["straightliner_min_ratings"])
    people = store.frame("SELECT participant_id, source, arm, status FROM participants "
                         "WHERE study_id = ? AND status <> 'withdrawn'", [study_id])
    answers = store.frame("SELECT participant_id, page_id, kind, seconds, correct FROM "
                          "responses WHERE study_id = ?", [study_id])
    ratings = store.frame("SELECT participant_id, acceptance, action FROM ratings "
                          "WHERE study_id = ?", [study_id])
    people = people[people["participant_id"].isin(set(answers["participant_id"]))]
    out = people.set_index("participant_id")
    out.insert(0, "study_id", study_id)
    out = out.join(_speed(answers, people, f)).join(_straight(ratings, k))
    out = out.join(_attention(answers))
    for col in ("pages_timed", "fast_pages", "ratings", "attention_checks"):
        out[col] = out[col].fillna(0).astype("int64")
    for col in FLAGS:
        out[col] = out[col].astype("boolean")
    out["flagged"] = out[list(FLAGS)].fillna(False).any(axis=1)
    return out.reset_index()[list(COLUMNS)].sort_values("participant_id", ignore_index=True)


def _speed(answers: pd.DataFrame, people: pd.DataFrame, f: float) -> pd.DataFrame:
    timed = answers.dropna(subset=["seconds"]).merge(people[["participant_id", "source"]],
                                                     on="participant_id")
    cols = ["pages_timed", "total_seconds", "total_ratio", "page_ratio", "fast_pages",
            "speeder"]
    if timed.empty:
        return pd.DataFrame(columns=cols, index=pd.Index([], name="participant_id"))
    timed["seconds"] = timed["seconds"].astype(float)
    timed["median"] = timed.groupby(["source", "page_id"])["seconds"].transform("median")
    timed["ratio"] = timed["seconds"] / timed["median"].where(timed["median"] > 0)
    timed["fast"] = timed["seconds"] < f * timed["median"]
    by = timed.groupby("participant_id")
    out = pd.DataFrame({"pages_timed": by.size(), "total_seconds": by["seconds"].sum(),
                        "page_ratio": by["ratio"].median(), "fast_pages": by["fast"].sum()})
    expected = by["median"].sum()
    out["total_ratio"] = out["total_seconds"] / expected.where(expected > 0)
    out.loc[out["pages_timed"] < MIN_TIMED_PAGES, ["page_ratio", "total_ratio"]] = np.nan
    slow_enough = ~((out["total_ratio"] < f) | (out["page_ratio"] < f))
    known = out["total_ratio"].notna() | out["page_ratio"].notna()
    out["speeder"] = pd.Series(~slow_enough, dtype="boolean").where(known, pd.NA)
    return out[cols]


def _straight(ratings: pd.DataFrame, k: int) -> pd.DataFrame:
    if ratings.empty:
        return pd.DataFrame(columns=["ratings", "straightliner"],
                            index=pd.Index([], name="participant_id"))
    by = ratings.groupby("participant_id")
    out = pd.DataFrame({"ratings": by.size()})
    same = by["acceptance"].nunique().eq(1) & by["action"].nunique().eq(1)
    out["straightliner"] = pd.Series(same, dtype="boolean").where(out["ratings"] >= k, pd.NA)
    return out


def _attention(answers: pd.DataFrame) -> pd.DataFrame:
    checks = answers[answers["kind"] == "attention"]
    by = checks.groupby("participant_id")
    return pd.DataFrame({"attention_checks": by.size(),
                         "attention_failed": by["correct"].apply(
                             lambda c: bool((c == False).any()))})  # noqa: E712


def flag_counts(flags: pd.DataFrame, by: str = "arm") -> pd.DataFrame:
    """Per ``by`` (arm; null arms as '(no consent)'): participants, speeders,
    straightliners, attention_failed, flagged (participants with that flag)."""
    if flags.empty:
        return pd.DataFrame(columns=[by, "participants", *FLAGS, "flagged"])
    frame = flags.assign(**{by: flags[by].fillna("(no consent)")})
    grouped = frame.groupby(by)
    out = pd.DataFrame({"participants": grouped.size()})
    for col in (*FLAGS, "flagged"):
        out[col] = grouped[col].apply(lambda c: int(c.fillna(False).sum()))
    return out.rename(columns={"speeder": "speeders", "straightliner": "straightliners"}
                      ).reset_index()


def flag_recovery(store: Store, study_id: str) -> dict[str, dict[str, Any]]:
    """For a simulated study: per flag (speeder, straightliner), how the flags match the
    simulation truth (``sim_participants.params_json`` ``quality``): truth (careless
    participants of that kind), flagged, both, precision = both / flagged, recall = both /
    truth (null when undefined); over the participants the flags cover."""
    truth = {r["participant_id"]: (json.loads(r["params_json"]) or {}).get("quality")
             for r in store.query("SELECT participant_id, params_json FROM sim_participants "
                                  "WHERE study_id = ?", [study_id])}
    flags = participant_flags(store, study_id)
    flags = flags[flags["participant_id"].isin(set(truth))]
    out: dict[str, dict[str, Any]] = {}
    for flag in ("speeder", "straightliner"):
        said = set(flags["participant_id"][flags[flag].fillna(False).astype(bool)])
        real = {p for p in flags["participant_id"] if truth[p] == flag}
        both = len(said & real)
        out[flag] = {"truth": len(real), "flagged": len(said), "both": both,
                     "precision": both / len(said) if said else None,
                     "recall": both / len(real) if real else None}
    return out
