"""The catalogue of the store's columns: every table and view, each column's name, SQL
declaration and meaning (``data.column_spec``), in the database's order.

One spelling of every column for the code that writes and reads the store: the codebook's
meanings (``data.codebook``), the tables the store knows (``data.contract.TABLES``), the
import's columns (``data.imports``), the rows pages write (``Table.row``), the columns the
analysis reads and the statements of a new migration (``Table.create_sql``,
``Table.add_column_sql``). The migrations that already ran (``data.migrations``) are history
and keep their own SQL text; a test checks that a freshly migrated database has exactly
these columns, types, nullability and defaults.

The plan metrics' column names (``METRIC_COLUMNS``, ``PREFERENCE_COLUMNS``,
``DISTANCE_COLUMNS``) are the engine's metric names (``engine.metric_names``: the engine
computes them, the store keeps them under the same names; neither package imports the other,
and a test checks the two lists agree).

>>> from data.columns import PLANS, RATINGS
>>> RATINGS.column("acceptance").sql
'INTEGER NOT NULL'
>>> PLANS.names[:4]
('study_id', 'participant_id', 'plan_id', 'arm')
"""

from __future__ import annotations

from data.column_spec import Column, Table

_STUDY = "study id (a protocol run or an imported data set)"
_PID = "participant id (random; never a recruitment platform id)"

# The kinds of ``events`` row, with their meanings (data.codebook.check_event_kind).
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
    "arm; under quotas, quota: every arm's target, counted, in_progress and shortfall the "
    "decision saw)",
    "study_full": "every arm had reached its quota when the participant came or consented; "
    "the session ended on the study-full page (detail: the arms' standing)",
    "timed_out": "the session passed the protocol's time limit and ended (detail: "
    "limit_seconds)",
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

STUDIES = Table("studies", (
    Column("study_id", "VARCHAR PRIMARY KEY", _STUDY),
    Column("protocol_id", "VARCHAR NOT NULL",
           "id of the protocol file the study ran (or 'imported')"),
    Column("title", "VARCHAR", "protocol title"),
    Column("scenario", "VARCHAR", "scenario name (e.g. loan)"),
    Column("source", "VARCHAR NOT NULL", "protocol (run here) or imported (import-ratings)"),
    Column("protocol_json", "VARCHAR", "the full validated protocol as JSON"),
    Column("protocol_hash", "VARCHAR", "SHA-256 of the canonical protocol JSON"),
    Column("seed", "BIGINT", "protocol seed (assignment, personas, plan choice and order)"),
    Column("salt", "VARCHAR",
           "salt of the external-id hashes (secret; not exported); null when the salt "
           "comes from RECOURSE_STUDY_SALT"),
    Column("simulation_json", "VARCHAR",
           "synthetic-participant settings of a simulated run (seed and "
           "the full behaviour), null otherwise"),
    Column("created_at", "TIMESTAMP NOT NULL", "when the study was registered (UTC)"),
    Column("salt_check", "VARCHAR",
           "fingerprint (PBKDF2) of the RECOURSE_STUDY_SALT the study was created "
           "with, so another salt is refused; null when the salt is stored"),
))

PARTICIPANTS = Table("participants", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("seq", "INTEGER",
           "arrival order within the study (0-based), every visit that started a "
           "participant, consenting or not"),
    Column("token_hash", "VARCHAR UNIQUE",
           "SHA-256 of the first resume token (not exported; every token is in "
           "the tokens table)"),
    Column("external_id_hash", "VARCHAR",
           "salted SHA-256 of the recruitment platform id, if given "
           "(linkage: exported only on request)"),
    Column("source", "VARCHAR NOT NULL", "web (a person), synthetic (simulated) or imported"),
    Column("arm", "VARCHAR", "assigned arm id ('within': every arm)"),
    Column("status", "VARCHAR NOT NULL",
           "the end state: active (still answering), complete, declined (did not "
           "consent), screened_out, approved (own profile approved, session ended), no_plans "
           "(fewer plans than asked under plans.shortfall.then: end), timed_out (past the "
           "protocol's time limit), full (every arm's quota was reached when they came) or "
           "withdrawn (answers deleted at the participant's or researcher's request; never "
           "exported)"),
    Column("current_page", "VARCHAR", "id of the page the participant is on"),
    Column("step", "INTEGER NOT NULL", "number of answers recorded, plus one for a time-out "
           "(-1: withdrawn)"),
    Column("state_json", "VARCHAR NOT NULL",
           "session state (answered pages, HARE state, the screening answers "
           "the profile takes) as JSON"),
    Column("completion_code", "VARCHAR",
           "code shown on the debrief page (linkage: exported only on "
           "request)"),
    Column("created_at", "TIMESTAMP NOT NULL", "when the participant started (UTC)"),
    Column("updated_at", "TIMESTAMP NOT NULL", "last recorded answer (UTC)"),
    Column("consent_seq", "INTEGER",
           "order of consent within the study (0-based); drives assignment, "
           "persona, plan choice and order; null until the participant consents (and for "
           "imported participants)"),
    Column("session_hash", "VARCHAR",
           "salted SHA-256 of the recruitment session (e.g. SESSION_ID) of the "
           "first visit; a later visit by recruitment id must carry the same (linkage: exported "
           "only on request)"),
), constraints=("PRIMARY KEY (study_id, participant_id)", "UNIQUE (study_id, seq)"))

EVENTS = Table("events", (
    Column("event_id", "BIGINT NOT NULL DEFAULT nextval('event_seq')",
           "increasing event number (append-only audit log)"),
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("page_id", "VARCHAR", "page the event belongs to (null for session-level events)"),
    Column("event", "VARCHAR NOT NULL", "what happened: " + "; ".join(
           f"{kind} = {meaning}" for kind, meaning in EVENT_KINDS.items())),
    Column("detail_json", "VARCHAR",
           "event details as JSON (plans: n shown, asked, found, showable, "
           "fallback and the reason of a shortfall); recruitment-link hashes only on request "
           "(linkage)"),
    Column("occurred_at", "TIMESTAMP NOT NULL", "when (UTC)"),
))

RESPONSES = Table("responses", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("page_id", "VARCHAR NOT NULL",
           "page answered (consent, screening, profile, plan-1, attention-x, ...)"),
    Column("kind", "VARCHAR NOT NULL", "page kind (protocols.running.pages)"),
    Column("step", "INTEGER NOT NULL",
           "0-based index of this answer in the participant's session"),
    Column("answer_json", "VARCHAR NOT NULL",
           "the validated answer as JSON (free-text reasons only on request); "
           "screening: {question id: the option chosen, a list of the options ticked (select "
           "all that apply) or a number}"),
    Column("correct", "BOOLEAN", "attention checks: answered correctly; null for other pages"),
    Column("answered_at", "TIMESTAMP NOT NULL", "when (UTC)"),
    Column("seconds", "DOUBLE",
           "time on the page: seconds from the participant's previous answer (or "
           "their start) to this answer, measured by the server; synthetic participants: the "
           "simulated time; null before schema 4"),
    Column("language", "VARCHAR",
           "the language the page was shown in (en, ja, ...: the protocol's "
           "translations); en before schema 5"),
), constraints=("PRIMARY KEY (study_id, participant_id, page_id)",))

PROFILES = Table("profiles", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("source", "VARCHAR NOT NULL",
           "own (entered), persona (assigned) or persona_fallback (the entered "
           "profile was approved, so a persona was assigned)"),
    Column("x_json", "VARCHAR NOT NULL", "the profile the plans act on, model units, by feature"),
    Column("display_json", "VARCHAR NOT NULL", "the same profile as shown (display units)"),
    Column("proba", "DOUBLE", "decision model's probability of the favourable outcome"),
    Column("rejected", "BOOLEAN", "the decision model rejects the profile"),
), constraints=("PRIMARY KEY (study_id, participant_id)",))

ELICITATIONS = Table("elicitations", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("scheme", "VARCHAR NOT NULL", "binary, ranking or likert"),
    Column("answer_json", "VARCHAR NOT NULL", "the answer as given, by feature"),
    Column("hard_mask_json", "VARCHAR NOT NULL",
           "stated individually actionable features (true/false by feature)"),
    Column("scores_json", "VARCHAR NOT NULL",
           "actionability scores s (1 = easiest; K + 1 = cannot change)"),
    Column("levels", "DOUBLE NOT NULL", "K, the top of the person's score scale"),
), constraints=("PRIMARY KEY (study_id, participant_id)",))

PLANS = Table("plans", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("plan_id", "VARCHAR NOT NULL", "plan id (unique within a participant)"),
    Column("arm", "VARCHAR", "arm that produced the plan"),
    Column("method", "VARCHAR",
           "recourse method (oracle, icarma, carma, pool, hare, imported, ...)"),
    Column("position", "INTEGER", "0-based position in the order shown"),
    Column("selection", "VARCHAR", "why the design chose it: sparsest, most_proximate, random, "
           "stratum_k, best, hare_final, hare_base, imported"),
    Column("found", "BOOLEAN", "the method offered an action"),
    Column("valid", "BOOLEAN", "the decision model approves the counterfactual profile"),
    Column("cost", "DOUBLE", "unweighted action cost: sum over acted features of |x'-x|/range"),
    Column("weighted_cost", "DOUBLE",
           "action cost weighted by the stated difficulty (arm's cost profile)"),
    Column("log_prob_factual", "DOUBLE", "log-density of the factual profile (density_source)"),
    Column("log_prob_cf", "DOUBLE", "log-density of the counterfactual profile"),
    Column("plausible", "BOOLEAN", "log_prob_cf >= log_prob_factual"),
    Column("hap", "DOUBLE",
           "1 if the plan acts on the least-preferred stated feature; null if fewer "
           "than two stated features"),
    Column("violations", "INTEGER", "number of acted features outside the stated actionable set"),
    Column("l0_actions", "DOUBLE",
           "sparsity over the actions: number of acted features that change"),
    Column("l1_actions", "DOUBLE",
           "proximity over the actions: sum of |x'-x|/range over acted features"),
    Column("l0_profile", "DOUBLE", "sparsity over the whole profile (actions and consequences)"),
    Column("l1_profile", "DOUBLE", "proximity over the whole profile (actions and consequences)"),
    Column("satisfaction", "DOUBLE", "1 - mean stated relative difficulty of the acted actionable "
           "features (0..1); null without elicitation"),
    Column("violation", "DOUBLE",
           "1 if the plan acts on a feature stated as unchangeable, else 0; null "
           "without elicitation"),
    Column("density_source", "VARCHAR", "where densities come from (scm = exact)"),
    Column("actions_json", "VARCHAR", "acted features and their new values (model units)"),
    Column("x_json", "VARCHAR", "factual profile (model units)"),
    Column("x_cf_json", "VARCHAR", "counterfactual profile (model units)"),
    Column("created_at", "TIMESTAMP NOT NULL", "when the plan was generated (UTC)"),
), constraints=("PRIMARY KEY (study_id, participant_id, plan_id)",))

RATINGS = Table("ratings", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("plan_id", "VARCHAR NOT NULL", "rated plan"),
    Column("acceptance", "INTEGER NOT NULL",
           "7-point rating (1 Strongly no .. 7 Strongly yes): is the plan a "
           "reasonable explanation of the rejection"),
    Column("action", "INTEGER NOT NULL", "7-point rating: would you carry out the plan"),
    Column("acceptance_why", "VARCHAR",
           "free-text reason for the acceptance rating (exported only on "
           "request)"),
    Column("action_why", "VARCHAR",
           "free-text reason for the action rating (exported only on request)"),
    Column("impossible", "BOOLEAN", "the participant marked at least one changed item impossible"),
    Column("impossible_json", "VARCHAR", "per action item: marked impossible (true/false)"),
    Column("answered_at", "TIMESTAMP NOT NULL", "when (UTC)"),
    Column("language", "VARCHAR",
           "the language the plan page was shown in (en, ja, ...); en before "
           "schema 5"),
), constraints=("PRIMARY KEY (study_id, participant_id, plan_id)",))

COMPARISONS = Table("comparisons", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("step", "INTEGER NOT NULL", "HARE query number (1-based)"),
    Column("kind", "VARCHAR NOT NULL", "compare (two plans) or accept (one plan)"),
    Column("options_json", "VARCHAR NOT NULL",
           "the candidate plans shown (actions, profiles, distances)"),
    Column("choice", "INTEGER", "compare: 0 = first option, 1 = second"),
    Column("accepted", "BOOLEAN", "accept: the participant accepted the plan"),
    Column("answered_at", "TIMESTAMP NOT NULL", "when (UTC)"),
), constraints=("PRIMARY KEY (study_id, participant_id, step)",))

SIM_PARTICIPANTS = Table("sim_participants", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("sim_seed", "BIGINT NOT NULL", "simulation seed"),
    Column("params_json", "VARCHAR NOT NULL",
           "hidden truth: factual profile, true hard mask, ranks, difficulty, "
           "cost weights, rating effects, HARE threshold"),
), constraints=("PRIMARY KEY (study_id, participant_id)",))

SIM_RATINGS = Table("sim_ratings", (
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("plan_id", "VARCHAR NOT NULL", "rated plan"),
    Column("distance", "DOUBLE", "the distance that drove the simulated ratings"),
    Column("satisfaction_true", "DOUBLE", "satisfaction under the TRUE constraints"),
    Column("violation_true", "DOUBLE", "violation under the TRUE constraints"),
    Column("eta_acceptance", "DOUBLE", "latent acceptance (before logistic noise)"),
    Column("eta_action", "DOUBLE", "latent action (before logistic noise)"),
), constraints=("PRIMARY KEY (study_id, participant_id, plan_id)",))

SCHEMA_VERSION = Table("schema_version", (
    Column("version", "INTEGER PRIMARY KEY", "applied schema migration number"),
    Column("description", "VARCHAR", "what the migration created or changed"),
    Column("applied_at", "TIMESTAMP NOT NULL", "when the migration was applied (UTC)"),
))

TOKENS = Table("tokens", (
    Column("token_hash", "VARCHAR PRIMARY KEY", "SHA-256 of a resume token"),
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID),
    Column("issued_at", "TIMESTAMP NOT NULL", "when the token was issued (UTC)"),
    Column("via", "VARCHAR NOT NULL",
           "start (first visit) or recruitment (a returning visit by recruitment id and "
           "session)"),
))

DASHBOARD_LOGINS = Table("dashboard_logins", (
    Column("login_id", "BIGINT NOT NULL DEFAULT nextval('login_seq')",
           "increasing attempt number"),
    Column("attempted_at", "TIMESTAMP NOT NULL", "when (UTC)"),
    Column("ok", "BOOLEAN NOT NULL", "the password was right"),
    Column("client", "VARCHAR", "the client address as the server saw it (a proxy's, behind one)"),
    Column("delay_seconds", "DOUBLE",
           "how long the answer was held back (grows with recent failures)"),
    Column("account", "VARCHAR",
           "the researcher account signing in (null: the single dashboard password)"),
))

WITHDRAWALS = Table("withdrawals", (
    Column("withdrawal_id", "BIGINT NOT NULL DEFAULT nextval('withdrawal_seq')",
           "increasing withdrawal number"),
    Column("study_id", "VARCHAR NOT NULL", _STUDY),
    Column("participant_id", "VARCHAR NOT NULL", _PID + " of the withdrawn participant"),
    Column("requested_by", "VARCHAR NOT NULL",
           "participant (the withdraw link of the study page) or researcher "
           "(recourse-study withdraw)"),
    Column("requested_at", "TIMESTAMP NOT NULL", "when the answers were deleted (UTC)"),
    Column("status_before", "VARCHAR NOT NULL", "the participant's status when they withdrew"),
    Column("page_before", "VARCHAR", "the page they were on"),
    Column("rows_json", "VARCHAR NOT NULL",
           "rows deleted per table as JSON (responses, profiles, elicitations, plans, "
           "ratings, comparisons, events, sim_participants, sim_ratings)"),
    Column("rows_deleted", "INTEGER NOT NULL", "rows deleted in all"),
    Column("account", "VARCHAR",
           "the researcher account that withdrew them (null: the participant themselves)"),
), constraints=("PRIMARY KEY (study_id, participant_id)",))

RESEARCHER_ACCOUNTS = Table("researcher_accounts", (
    Column("account", "VARCHAR NOT NULL", "the researcher's account name"),
    Column("role", "VARCHAR NOT NULL",
           "viewer (progress), exporter (also export) or admin (also withdraw, back up)"),
    Column("password_hash", "VARCHAR NOT NULL",
           "scrypt hash of the password with its parameters and salt (data.accounts)"),
    Column("created_at", "TIMESTAMP NOT NULL", "when the account was added (UTC)"),
    Column("updated_at", "TIMESTAMP NOT NULL", "last change of role or password (UTC)"),
), constraints=("PRIMARY KEY (account)",))

RESEARCHER_ACTIONS = Table("researcher_actions", (
    Column("action_id", "BIGINT NOT NULL DEFAULT nextval('action_seq')",
           "increasing action number"),
    Column("acted_at", "TIMESTAMP NOT NULL", "when (UTC)"),
    Column("account", "VARCHAR NOT NULL",
           "the researcher account (dashboard: the single-password mode; local:USER: the "
           "command line without accounts)"),
    Column("action", "VARCHAR NOT NULL",
           "sign_in, export, withdraw, backup, restore or accounts"),
    Column("via", "VARCHAR NOT NULL", "dashboard, cli (a stopped study) or server (the CLI "
           "through the running server)"),
    Column("detail_json", "VARCHAR", "what was done, as JSON (no participant answers)"),
))

RATINGS_LONG = Table("ratings_long", view=True, columns=(
    Column("study_id", "VARCHAR", _STUDY),
    Column("participant_id", "VARCHAR", _PID),
    Column("plan_id", "VARCHAR", "rated plan"),
    Column("arm", "VARCHAR", "arm that produced the plan"),
    Column("method", "VARCHAR", "recourse method"),
    Column("position", "INTEGER", "0-based position shown"),
    Column("l0_actions", "DOUBLE", "sparsity over the actions"),
    Column("l1_actions", "DOUBLE", "proximity over the actions"),
    Column("l0_profile", "DOUBLE", "sparsity over the whole profile"),
    Column("l1_profile", "DOUBLE", "proximity over the whole profile"),
    Column("satisfaction", "DOUBLE", "stated-preference satisfaction (null without elicitation)"),
    Column("violation", "DOUBLE",
           "plan uses a feature stated as unchangeable (null without elicitation)"),
    Column("acceptance", "INTEGER", "7-point acceptance rating"),
    Column("action", "INTEGER", "7-point action rating"),
    Column("impossible", "BOOLEAN", "at least one changed item marked impossible"),
    Column("source", "VARCHAR", "web, synthetic or imported"),
    Column("attention_passed", "BOOLEAN",
           "every attention check the participant answered was answered "
           "correctly (null: none answered)"),
    Column("language", "VARCHAR", "the language the plan was rated in (analyze --by-language)"),
))

# Every table, then every view, in the order the store lists them (data.contract).
CATALOGUE: dict[str, Table] = {t.name: t for t in (
    STUDIES, PARTICIPANTS, EVENTS, RESPONSES, PROFILES, ELICITATIONS, PLANS, RATINGS,
    COMPARISONS, SIM_PARTICIPANTS, SIM_RATINGS, SCHEMA_VERSION, TOKENS, DASHBOARD_LOGINS,
    WITHDRAWALS, RESEARCHER_ACCOUNTS, RESEARCHER_ACTIONS, RATINGS_LONG)}

# A plan's measured columns, in the engine's order (engine.metric_names.METRIC_NAMES), the
# distances among them, and the two measured against the stated constraints.
DISTANCE_COLUMNS = PLANS.pick("l0_actions", "l1_actions", "l0_profile", "l1_profile")
METRIC_COLUMNS = PLANS.pick("found", "valid", "cost", "weighted_cost", "log_prob_factual",
                            "log_prob_cf", "plausible", "hap", "violations", *DISTANCE_COLUMNS)
PREFERENCE_COLUMNS = PLANS.pick("satisfaction", "violation")
