"""The store's schema, as an ordered list of migrations, and the code that applies them.

``schema_version`` holds one row per applied migration. Opening a database read-write applies
every migration newer than its version, each in its own transaction; a database written by
a newer version of this code is refused rather than guessed at.

Every column (name, declaration, meaning) is catalogued in ``data.columns``; a new migration
takes its DDL from there (``Table.create_sql``, ``Table.add_column_sql``) after the column is
added to the catalogue. The statements below already ran somewhere: they are history and
never change (a test checks that they build exactly the catalogue's schema).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any


@dataclass(frozen=True)
class Migration:
    version: int
    description: str
    statements: tuple[str, ...]


_V1 = (
    """CREATE TABLE studies (
        study_id VARCHAR PRIMARY KEY,
        protocol_id VARCHAR NOT NULL,
        title VARCHAR,
        scenario VARCHAR,
        source VARCHAR NOT NULL,
        protocol_json VARCHAR,
        protocol_hash VARCHAR,
        seed BIGINT,
        salt VARCHAR,
        simulation_json VARCHAR,
        created_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE participants (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        seq INTEGER,
        token_hash VARCHAR UNIQUE,
        external_id_hash VARCHAR,
        source VARCHAR NOT NULL,
        arm VARCHAR,
        status VARCHAR NOT NULL,
        current_page VARCHAR,
        step INTEGER NOT NULL,
        state_json VARCHAR NOT NULL,
        completion_code VARCHAR,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        PRIMARY KEY (study_id, participant_id),
        UNIQUE (study_id, seq)
    )""",
    "CREATE SEQUENCE event_seq START 1",
    """CREATE TABLE events (
        event_id BIGINT NOT NULL DEFAULT nextval('event_seq'),
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        page_id VARCHAR,
        event VARCHAR NOT NULL,
        detail_json VARCHAR,
        occurred_at TIMESTAMP NOT NULL
    )""",
    """CREATE TABLE responses (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        page_id VARCHAR NOT NULL,
        kind VARCHAR NOT NULL,
        step INTEGER NOT NULL,
        answer_json VARCHAR NOT NULL,
        correct BOOLEAN,
        answered_at TIMESTAMP NOT NULL,
        PRIMARY KEY (study_id, participant_id, page_id)
    )""",
    """CREATE TABLE profiles (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        source VARCHAR NOT NULL,
        x_json VARCHAR NOT NULL,
        display_json VARCHAR NOT NULL,
        proba DOUBLE,
        rejected BOOLEAN,
        PRIMARY KEY (study_id, participant_id)
    )""",
    """CREATE TABLE elicitations (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        scheme VARCHAR NOT NULL,
        answer_json VARCHAR NOT NULL,
        hard_mask_json VARCHAR NOT NULL,
        scores_json VARCHAR NOT NULL,
        levels DOUBLE NOT NULL,
        PRIMARY KEY (study_id, participant_id)
    )""",
    """CREATE TABLE plans (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        plan_id VARCHAR NOT NULL,
        arm VARCHAR,
        method VARCHAR,
        position INTEGER,
        selection VARCHAR,
        found BOOLEAN,
        valid BOOLEAN,
        cost DOUBLE,
        weighted_cost DOUBLE,
        log_prob_factual DOUBLE,
        log_prob_cf DOUBLE,
        plausible BOOLEAN,
        hap DOUBLE,
        violations INTEGER,
        l0_actions DOUBLE,
        l1_actions DOUBLE,
        l0_profile DOUBLE,
        l1_profile DOUBLE,
        satisfaction DOUBLE,
        violation DOUBLE,
        density_source VARCHAR,
        actions_json VARCHAR,
        x_json VARCHAR,
        x_cf_json VARCHAR,
        created_at TIMESTAMP NOT NULL,
        PRIMARY KEY (study_id, participant_id, plan_id)
    )""",
    """CREATE TABLE ratings (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        plan_id VARCHAR NOT NULL,
        acceptance INTEGER NOT NULL,
        action INTEGER NOT NULL,
        acceptance_why VARCHAR,
        action_why VARCHAR,
        impossible BOOLEAN,
        impossible_json VARCHAR,
        answered_at TIMESTAMP NOT NULL,
        PRIMARY KEY (study_id, participant_id, plan_id)
    )""",
    """CREATE TABLE comparisons (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        step INTEGER NOT NULL,
        kind VARCHAR NOT NULL,
        options_json VARCHAR NOT NULL,
        choice INTEGER,
        accepted BOOLEAN,
        answered_at TIMESTAMP NOT NULL,
        PRIMARY KEY (study_id, participant_id, step)
    )""",
    """CREATE TABLE sim_participants (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        sim_seed BIGINT NOT NULL,
        params_json VARCHAR NOT NULL,
        PRIMARY KEY (study_id, participant_id)
    )""",
    """CREATE TABLE sim_ratings (
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        plan_id VARCHAR NOT NULL,
        distance DOUBLE,
        satisfaction_true DOUBLE,
        violation_true DOUBLE,
        eta_acceptance DOUBLE,
        eta_action DOUBLE,
        PRIMARY KEY (study_id, participant_id, plan_id)
    )""",
    """CREATE VIEW ratings_long AS
    SELECT r.study_id, r.participant_id, r.plan_id, p.arm, p.method, p.position,
           p.l0_actions, p.l1_actions, p.l0_profile, p.l1_profile,
           p.satisfaction, p.violation, r.acceptance, r.action, r.impossible,
           pa.source
    FROM ratings r
    JOIN plans p
      ON p.study_id = r.study_id AND p.participant_id = r.participant_id
     AND p.plan_id = r.plan_id
    JOIN participants pa ON pa.study_id = r.study_id AND pa.participant_id = r.participant_id""",
)

# Security: every resume token in ``tokens`` (a visit by recruitment id adds one
# and never revokes another); assignment by the order of consent (``consent_seq``, unique per
# study, null before consent; existing participants keep their arrival order); the hashed
# recruitment session of the first visit; a salt supplied from the environment is checked
# against a fingerprint instead of being stored; the dashboard's sign-in log.
_V2 = (
    """CREATE TABLE tokens (
        token_hash VARCHAR PRIMARY KEY,
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        issued_at TIMESTAMP NOT NULL,
        via VARCHAR NOT NULL
    )""",
    """INSERT INTO tokens SELECT token_hash, study_id, participant_id, created_at, 'start'
       FROM participants WHERE token_hash IS NOT NULL""",
    "ALTER TABLE participants ADD COLUMN consent_seq INTEGER",
    "ALTER TABLE participants ADD COLUMN session_hash VARCHAR",
    "UPDATE participants SET consent_seq = seq WHERE source <> 'imported'",
    "CREATE UNIQUE INDEX participants_consent_seq ON participants (study_id, consent_seq)",
    "ALTER TABLE studies ADD COLUMN salt_check VARCHAR",
    "CREATE SEQUENCE login_seq START 1",
    """CREATE TABLE dashboard_logins (
        login_id BIGINT NOT NULL DEFAULT nextval('login_seq'),
        attempted_at TIMESTAMP NOT NULL,
        ok BOOLEAN NOT NULL,
        client VARCHAR,
        delay_seconds DOUBLE
    )""",
)

# ratings_long carries whether the participant passed every attention check they answered
# (null: none answered, e.g. imported ratings), so exclusions are visible in every export
_V3 = (
    "DROP VIEW ratings_long",
    """CREATE VIEW ratings_long AS
    SELECT r.study_id, r.participant_id, r.plan_id, p.arm, p.method, p.position,
           p.l0_actions, p.l1_actions, p.l0_profile, p.l1_profile,
           p.satisfaction, p.violation, r.acceptance, r.action, r.impossible,
           pa.source, att.attention_passed
    FROM ratings r
    JOIN plans p
      ON p.study_id = r.study_id AND p.participant_id = r.participant_id
     AND p.plan_id = r.plan_id
    JOIN participants pa ON pa.study_id = r.study_id AND pa.participant_id = r.participant_id
    LEFT JOIN (SELECT study_id, participant_id, bool_and(correct) AS attention_passed
               FROM responses WHERE kind = 'attention'
               GROUP BY study_id, participant_id) att
      ON att.study_id = r.study_id AND att.participant_id = r.participant_id""",
)

# Participants' data rights and data quality: the server-measured time of every answered page
# (``responses.seconds``: from the previous answer, or the start, to this answer; synthetic
# participants' simulated times), and the audit of every withdrawal (one row per deletion:
# who asked, when, how many rows of each table went). Re-runnable (IF NOT EXISTS).
_V4 = (
    "ALTER TABLE responses ADD COLUMN IF NOT EXISTS seconds DOUBLE",
    "CREATE SEQUENCE IF NOT EXISTS withdrawal_seq START 1",
    """CREATE TABLE IF NOT EXISTS withdrawals (
        withdrawal_id BIGINT NOT NULL DEFAULT nextval('withdrawal_seq'),
        study_id VARCHAR NOT NULL,
        participant_id VARCHAR NOT NULL,
        requested_by VARCHAR NOT NULL,
        requested_at TIMESTAMP NOT NULL,
        status_before VARCHAR NOT NULL,
        page_before VARCHAR,
        rows_json VARCHAR NOT NULL,
        rows_deleted INTEGER NOT NULL,
        PRIMARY KEY (study_id, participant_id)
    )""",
)

# Languages: the language each answer was given in (a protocol shown in several languages);
# earlier answers were all given in English. ratings_long carries it for the analysis.
_V5 = (
    "ALTER TABLE responses ADD COLUMN IF NOT EXISTS language VARCHAR",
    "ALTER TABLE ratings ADD COLUMN IF NOT EXISTS language VARCHAR",
    "UPDATE responses SET language = 'en' WHERE language IS NULL",
    "UPDATE ratings SET language = 'en' WHERE language IS NULL",
    "DROP VIEW ratings_long",
    _V3[1].replace("pa.source, att.attention_passed", "pa.source, att.attention_passed, r.language"),
)

# Researcher accounts with roles and the audit of what researchers did (sign-ins, exports,
# withdrawals, backups, restores); which account withdrew a participant or signed in.
_V6 = (
    "ALTER TABLE withdrawals ADD COLUMN IF NOT EXISTS account VARCHAR",
    "ALTER TABLE dashboard_logins ADD COLUMN IF NOT EXISTS account VARCHAR",
    """CREATE TABLE IF NOT EXISTS researcher_accounts (
        account VARCHAR NOT NULL,
        role VARCHAR NOT NULL,
        password_hash VARCHAR NOT NULL,
        created_at TIMESTAMP NOT NULL,
        updated_at TIMESTAMP NOT NULL,
        PRIMARY KEY (account)
    )""",
    "CREATE SEQUENCE IF NOT EXISTS action_seq START 1",
    """CREATE TABLE IF NOT EXISTS researcher_actions (
        action_id BIGINT NOT NULL DEFAULT nextval('action_seq'),
        acted_at TIMESTAMP NOT NULL,
        account VARCHAR NOT NULL,
        action VARCHAR NOT NULL,
        via VARCHAR NOT NULL,
        detail_json VARCHAR
    )""",
)

MIGRATIONS: tuple[Migration, ...] = (
    Migration(1, "studies, participants, events, answers, plans, ratings, simulation truth", _V1),
    Migration(2, "tokens, consent order, recruitment session, salt check, dashboard sign-ins",
              _V2),
    Migration(3, "ratings_long: attention_passed", _V3),
    Migration(4, "responses.seconds (time per page), withdrawals (deletion audit)", _V4),
    Migration(5, "responses.language, ratings.language (and in ratings_long)", _V5),
    Migration(6, "researcher accounts and actions; withdrawals.account, "
              "dashboard_logins.account", _V6),
)
LATEST = MIGRATIONS[-1].version


class SchemaVersionError(RuntimeError):
    """The database's schema is newer than this code, or too old to read without migrating."""


def current_version(cursor: Any, schema: str = "main") -> int:
    """The highest applied migration (0 for a new database); ``schema``: where the tables
    live (DuckDB: main; PostgreSQL: the connection's current schema)."""
    exists = cursor.execute(
        "SELECT count(*) FROM information_schema.tables "
        "WHERE table_schema = ? AND table_name = 'schema_version'", [schema]
    ).fetchone()[0]
    if not exists:
        return 0
    row = cursor.execute("SELECT max(version) FROM schema_version").fetchone()
    return int(row[0] or 0)


def migrate(cursor: Any, schema: str = "main") -> int:
    """Apply every pending migration, each in one transaction; return the final version.

    ``cursor`` runs DuckDB's SQL with ``?`` placeholders (data.postgres_store gives one that
    translates for PostgreSQL)."""
    version = current_version(cursor, schema)
    if version > LATEST:
        raise SchemaVersionError(
            f"the database has schema version {version}, newer than this code's {LATEST}; "
            "upgrade recourse-study"
        )
    if version == 0:
        cursor.execute(
            "CREATE TABLE IF NOT EXISTS schema_version ("
            "version INTEGER PRIMARY KEY, description VARCHAR, applied_at TIMESTAMP NOT NULL)"
        )
    for m in MIGRATIONS:
        if m.version <= version:
            continue
        cursor.execute("BEGIN TRANSACTION")
        try:
            for stmt in m.statements:
                cursor.execute(stmt)
            cursor.execute(
                "INSERT INTO schema_version VALUES (?, ?, ?)",
                [m.version, m.description, datetime.now(UTC).replace(tzinfo=None)],
            )
            cursor.execute("COMMIT")
        except Exception:
            cursor.execute("ROLLBACK")
            raise
        version = m.version
    return version


def check_readable(cursor: Any, schema: str = "main") -> None:
    """Refuse a database a read-only connection cannot use as is."""
    version = current_version(cursor, schema)
    if version != LATEST:
        raise SchemaVersionError(
            f"the database has schema version {version}, this code expects {LATEST}; open it "
            "read-write once (any command that writes to it) to migrate"
            if version < LATEST
            else f"the database has schema version {version}, newer than this code's {LATEST}"
        )
