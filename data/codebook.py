"""What every stored column means (types come from the database itself).

``MEANINGS[table][column]`` is a one-line description; ``codebook(store)`` joins them with
the live column types; the export writes it next to the tables. ``EVENT_KINDS`` is every
kind of ``events`` row with its meaning (writing another kind is an error:
``check_event_kind``). ``NOT_EXPORTED`` lists columns that never leave the database
(secrets), ``PRIVATE_TABLES`` tables that never do (resume tokens, the dashboard's sign-in
log). ``FREE_TEXT`` and ``LINKAGE`` are what an export leaves out unless asked
(data.export): text participants typed, and what links a row to a person outside the
study (recruitment-id hashes, completion codes).
"""

from __future__ import annotations

from typing import Any

_STUDY = "study id (a protocol run or an imported data set)"
_PID = "participant id (random; never a recruitment platform id)"

MEANINGS: dict[str, dict[str, str]] = {
    "schema_version": {
        "version": "applied schema migration number",
        "description": "what the migration created or changed",
        "applied_at": "when the migration was applied (UTC)",
    },
    "studies": {
        "study_id": _STUDY,
        "protocol_id": "id of the protocol file the study ran (or 'imported')",
        "title": "protocol title",
        "scenario": "scenario name (e.g. loan)",
        "source": "protocol (run here) or imported (import-ratings)",
        "protocol_json": "the full validated protocol as JSON",
        "protocol_hash": "SHA-256 of the canonical protocol JSON",
        "seed": "protocol seed (assignment, personas, plan choice and order)",
        "salt": "salt of the external-id hashes (secret; not exported); null when the salt "
        "comes from RECOURSE_STUDY_SALT",
        "salt_check": "fingerprint (PBKDF2) of the RECOURSE_STUDY_SALT the study was created "
        "with, so another salt is refused; null when the salt is stored",
        "simulation_json": "synthetic-participant settings of a simulated run (seed and "
        "the full behaviour), null otherwise",
        "created_at": "when the study was registered (UTC)",
    },
    "participants": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "seq": "arrival order within the study (0-based), every visit that started a "
        "participant, consenting or not",
        "token_hash": "SHA-256 of the first resume token (not exported; every token is in "
        "the tokens table)",
        "external_id_hash": "salted SHA-256 of the recruitment platform id, if given "
        "(linkage: exported only on request)",
        "source": "web (a person), synthetic (simulated) or imported",
        "arm": "assigned arm id ('within': every arm)",
        "status": "the end state: active (still answering), complete, declined (did not "
        "consent), screened_out, approved (own profile approved, session ended), no_plans "
        "(fewer plans than asked under plans.shortfall.then: end) or withdrawn (answers "
        "deleted at the participant's or researcher's request; never exported)",
        "current_page": "id of the page the participant is on",
        "step": "number of answers recorded (-1: withdrawn)",
        "state_json": "session state (answered pages, HARE state, the screening answers "
        "the profile takes) as JSON",
        "completion_code": "code shown on the debrief page (linkage: exported only on "
        "request)",
        "created_at": "when the participant started (UTC)",
        "updated_at": "last recorded answer (UTC)",
        "consent_seq": "order of consent within the study (0-based); drives assignment, "
        "persona, plan choice and order; null until the participant consents (and for "
        "imported participants)",
        "session_hash": "salted SHA-256 of the recruitment session (e.g. SESSION_ID) of the "
        "first visit; a later visit by recruitment id must carry the same (linkage: exported "
        "only on request)",
    },
    "events": {
        "event_id": "increasing event number (append-only audit log)",
        "study_id": _STUDY,
        "participant_id": _PID,
        "page_id": "page the event belongs to (null for session-level events)",
        "event": "",  # filled in from EVENT_KINDS below
        "detail_json": "event details as JSON (plans: n shown, asked, found, showable, "
        "fallback and the reason of a shortfall); recruitment-link hashes only on request "
        "(linkage)",
        "occurred_at": "when (UTC)",
    },
    "responses": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "page_id": "page answered (consent, screening, profile, plan-1, attention-x, ...)",
        "kind": "page kind (protocols.running.pages)",
        "step": "0-based index of this answer in the participant's session",
        "answer_json": "the validated answer as JSON (free-text reasons only on request); "
        "screening: {question id: the option chosen, a list of the options ticked (select "
        "all that apply) or a number}",
        "correct": "attention checks: answered correctly; null for other pages",
        "answered_at": "when (UTC)",
        "seconds": "time on the page: seconds from the participant's previous answer (or "
        "their start) to this answer, measured by the server; synthetic participants: the "
        "simulated time; null before schema 4",
        "language": "the language the page was shown in (en, ja, ...: the protocol's "
        "translations); en before schema 5",
    },
    "profiles": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "source": "own (entered), persona (assigned) or persona_fallback (the entered "
        "profile was approved, so a persona was assigned)",
        "x_json": "the profile the plans act on, model units, by feature",
        "display_json": "the same profile as shown (display units)",
        "proba": "decision model's probability of the favourable outcome",
        "rejected": "the decision model rejects the profile",
    },
    "elicitations": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "scheme": "binary, ranking or likert",
        "answer_json": "the answer as given, by feature",
        "hard_mask_json": "stated individually actionable features (true/false by feature)",
        "scores_json": "actionability scores s (1 = easiest; K + 1 = cannot change)",
        "levels": "K, the top of the person's score scale",
    },
    "plans": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "plan_id": "plan id (unique within a participant)",
        "arm": "arm that produced the plan",
        "method": "recourse method (oracle, icarma, carma, pool, hare, imported, ...)",
        "position": "0-based position in the order shown",
        "selection": "why the design chose it: sparsest, most_proximate, random, "
        "stratum_k, best, hare_final, hare_base, imported",
        "found": "the method offered an action",
        "valid": "the decision model approves the counterfactual profile",
        "cost": "unweighted action cost: sum over acted features of |x'-x|/range",
        "weighted_cost": "action cost weighted by the stated difficulty (arm's cost profile)",
        "log_prob_factual": "log-density of the factual profile (density_source)",
        "log_prob_cf": "log-density of the counterfactual profile",
        "plausible": "log_prob_cf >= log_prob_factual",
        "hap": "1 if the plan acts on the least-preferred stated feature; null if fewer "
        "than two stated features",
        "violations": "number of acted features outside the stated actionable set",
        "l0_actions": "sparsity over the actions: number of acted features that change",
        "l1_actions": "proximity over the actions: sum of |x'-x|/range over acted features",
        "l0_profile": "sparsity over the whole profile (actions and consequences)",
        "l1_profile": "proximity over the whole profile (actions and consequences)",
        "satisfaction": "1 - mean stated relative difficulty of the acted actionable "
        "features (0..1); null without elicitation",
        "violation": "1 if the plan acts on a feature stated as unchangeable, else 0; null "
        "without elicitation",
        "density_source": "where densities come from (scm = exact)",
        "actions_json": "acted features and their new values (model units)",
        "x_json": "factual profile (model units)",
        "x_cf_json": "counterfactual profile (model units)",
        "created_at": "when the plan was generated (UTC)",
    },
    "ratings": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "plan_id": "rated plan",
        "acceptance": "7-point rating (1 Strongly no .. 7 Strongly yes): is the plan a "
        "reasonable explanation of the rejection",
        "action": "7-point rating: would you carry out the plan",
        "acceptance_why": "free-text reason for the acceptance rating (exported only on "
        "request)",
        "action_why": "free-text reason for the action rating (exported only on request)",
        "impossible": "the participant marked at least one changed item impossible",
        "impossible_json": "per action item: marked impossible (true/false)",
        "answered_at": "when (UTC)",
        "language": "the language the plan page was shown in (en, ja, ...); en before "
        "schema 5",
    },
    "comparisons": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "step": "HARE query number (1-based)",
        "kind": "compare (two plans) or accept (one plan)",
        "options_json": "the candidate plans shown (actions, profiles, distances)",
        "choice": "compare: 0 = first option, 1 = second",
        "accepted": "accept: the participant accepted the plan",
        "answered_at": "when (UTC)",
    },
    "sim_participants": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "sim_seed": "simulation seed",
        "params_json": "hidden truth: factual profile, true hard mask, ranks, difficulty, "
        "cost weights, rating effects, HARE threshold",
    },
    "sim_ratings": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "plan_id": "rated plan",
        "distance": "the distance that drove the simulated ratings",
        "satisfaction_true": "satisfaction under the TRUE constraints",
        "violation_true": "violation under the TRUE constraints",
        "eta_acceptance": "latent acceptance (before logistic noise)",
        "eta_action": "latent action (before logistic noise)",
    },
    "ratings_long": {
        "study_id": _STUDY,
        "participant_id": _PID,
        "plan_id": "rated plan",
        "arm": "arm that produced the plan",
        "method": "recourse method",
        "position": "0-based position shown",
        "l0_actions": "sparsity over the actions",
        "l1_actions": "proximity over the actions",
        "l0_profile": "sparsity over the whole profile",
        "l1_profile": "proximity over the whole profile",
        "satisfaction": "stated-preference satisfaction (null without elicitation)",
        "violation": "plan uses a feature stated as unchangeable (null without elicitation)",
        "acceptance": "7-point acceptance rating",
        "action": "7-point action rating",
        "impossible": "at least one changed item marked impossible",
        "source": "web, synthetic or imported",
        "attention_passed": "every attention check the participant answered was answered "
        "correctly (null: none answered)",
        "language": "the language the plan was rated in (analyze --by-language)",
    },
}

EVENT_KINDS: dict[str, str] = {
    "start": "a participant started (detail: seq, the arrival order)",
    "recruitment": "a visit by recruitment id was let in (detail: outcome started or "
    "resumed; hashes: the link's recorded parameters, salted SHA-256)",
    "id_refused": "a visit by a known recruitment id was refused: its recruitment session "
    "differs from the first visit's, or is missing (detail: the session's salted hash)",
    "language": "the participant chose the language of the pages on the first page (detail: "
    "language)",
    "token_issued": "a new resume token was issued to a returning participant (a visit by "
    "recruitment id with the same recruitment session); earlier tokens stay valid",
    "assigned": "the participant consented and counts for assignment (detail: consent_seq, "
    "arm)",
    "answer": "a page was answered (page_id)",
    "plans": "the participant's plans were generated (detail: n shown, asked, found, "
    "showable, short, fallback, reason of a shortfall)",
    "no_plans": "fewer plans than asked under plans.shortfall.then: end; the session ended",
    "complete": "the participant reached the debrief",
    "declined": "the participant did not consent",
    "screened_out": "the screening answers made the participant ineligible",
    "approved": "the entered profile is approved by the decision model; the session ended",
    "imported": "the participant came from import-ratings",
    "token_renewed": "(before schema 2) a visit by recruitment id replaced the resume token",
}
MEANINGS["events"]["event"] = "what happened: " + "; ".join(
    f"{kind} = {meaning}" for kind, meaning in EVENT_KINDS.items())

MEANINGS["tokens"] = {
    "token_hash": "SHA-256 of a resume token",
    "study_id": _STUDY,
    "participant_id": _PID,
    "issued_at": "when the token was issued (UTC)",
    "via": "start (first visit) or recruitment (a returning visit by recruitment id and "
    "session)",
}
MEANINGS["dashboard_logins"] = {
    "login_id": "increasing attempt number",
    "attempted_at": "when (UTC)",
    "ok": "the password was right",
    "client": "the client address as the server saw it (a proxy's, behind one)",
    "delay_seconds": "how long the answer was held back (grows with recent failures)",
}

MEANINGS["withdrawals"] = {
    "withdrawal_id": "increasing withdrawal number",
    "study_id": _STUDY,
    "participant_id": _PID + " of the withdrawn participant",
    "requested_by": "participant (the withdraw link of the study page) or researcher "
    "(recourse-study withdraw)",
    "requested_at": "when the answers were deleted (UTC)",
    "status_before": "the participant's status when they withdrew",
    "page_before": "the page they were on",
    "rows_json": "rows deleted per table as JSON (responses, profiles, elicitations, plans, "
    "ratings, comparisons, events, sim_participants, sim_ratings)",
    "rows_deleted": "rows deleted in all",
}
# Computed at export time from the stored rows (data.quality), not a table of the database.
MEANINGS["quality_flags"] = {
    "study_id": _STUDY,
    "participant_id": _PID,
    "source": "web, synthetic or imported",
    "arm": "assigned arm (null before consent)",
    "status": "the participant's end state (participants.status)",
    "pages_timed": "answered pages with a recorded time (responses.seconds)",
    "total_seconds": "T: the sum of the participant's page times",
    "total_ratio": "T divided by the sum of the median times (over the participants of the "
    "same source) of the pages the participant answered: the total against the median "
    "total of those pages; null under 3 timed pages",
    "page_ratio": "the median over the participant's pages of (page time / that page's "
    "median time over the participants of the same source); null under 3 timed pages",
    "fast_pages": "pages answered in under speeder_fraction times that page's median time",
    "speeder": "total_ratio or page_ratio under the protocol's quality.speeder_fraction "
    "(null: neither known)",
    "ratings": "plans rated",
    "straightliner": "the same acceptance rating on every plan and the same action rating "
    "on every plan, over at least quality.straightliner_min_ratings plans (null: fewer "
    "ratings)",
    "attention_checks": "attention checks answered",
    "attention_failed": "at least one attention check answered wrongly (null: none answered)",
    "flagged": "speeder, straightliner or attention_failed",
}

NOT_EXPORTED: dict[str, tuple[str, ...]] = {
    "studies": ("salt", "salt_check"),
    "participants": ("token_hash",),
}
PRIVATE_TABLES: tuple[str, ...] = ("tokens", "dashboard_logins", "withdrawals")
FREE_TEXT: dict[str, tuple[str, ...]] = {"ratings": ("acceptance_why", "action_why")}
# Keys of answer_json (responses) that hold free text; removed unless free text is asked for.
FREE_TEXT_ANSWER_KEYS: tuple[str, ...] = ("acceptance_why", "action_why")
LINKAGE: dict[str, tuple[str, ...]] = {
    "participants": ("external_id_hash", "completion_code", "session_hash"),
}
# Events whose detail_json holds recruitment-link hashes (left out unless linkage is asked).
LINKAGE_EVENTS: tuple[str, ...] = ("recruitment", "id_refused")


def check_event_kind(kind: str) -> str:
    """``kind`` when the codebook knows it; ValueError otherwise (every event kind written
    is documented)."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown event kind {kind!r}; add it to data.codebook.EVENT_KINDS")
    return kind


def withheld(free_text: bool, linkage: bool) -> dict[str, tuple[str, ...]]:
    """Columns left out of an export: the secrets, plus free text and linkage columns
    unless asked for."""
    out = {t: tuple(cols) for t, cols in NOT_EXPORTED.items()}
    for flag, spec in ((free_text, FREE_TEXT), (linkage, LINKAGE)):
        if not flag:
            for table, cols in spec.items():
                out[table] = out.get(table, ()) + cols
    return out


def codebook(store: Any, tables: tuple[str, ...],
             left_out: dict[str, tuple[str, ...]] | None = None) -> list[dict[str, str]]:
    """Rows (table, column, type, meaning) of the exported columns of ``tables`` (every
    column but those ``left_out``, by default the secrets)."""
    skip = NOT_EXPORTED if left_out is None else left_out
    out = []
    for table in tables:
        for name, dtype in store.columns(table):
            if name in skip.get(table, ()):
                continue
            meaning = MEANINGS.get(table, {}).get(name)
            if meaning is None:
                raise KeyError(f"codebook has no meaning for {table}.{name}")
            out.append({"table": table, "column": name, "type": dtype, "meaning": meaning})
    return out
