#!/usr/bin/env bash
# A private PostgreSQL 15 (Debian's package) for tests and local studies: its own data
# directory, listening on 127.0.0.1 only, stopping by itself after a while.
#
#   scripts/local_postgres.sh start [DIR] [PORT] [MINUTES]   prints the database URL
#   scripts/local_postgres.sh stop  [DIR]
#   scripts/local_postgres.sh url   [DIR]                     the URL of a running one
#
# DIR defaults to /tmp/recourse-study-postgres, PORT to 55432, MINUTES (how long it runs
# before it stops itself; 0 = until `stop`) to 120. The package is installed with apt-get
# when missing (scripts/apt_install.sh). Connections from 127.0.0.1 are trusted (no
# password): this is a database for one machine's tests and pilots, not for a deployment
# (docs/deploy.md). As root, the server runs as the `postgres` user (PostgreSQL refuses
# root). A database `recourse` is created on the first start.
set -euo pipefail

cmd="${1:-start}"
DIR="${2:-/tmp/recourse-study-postgres}"
PORT="${3:-55432}"
MINUTES="${4:-120}"
BIN=/usr/lib/postgresql/15/bin
HERE="$(cd "$(dirname "$0")" && pwd)"

if [ ! -x "$BIN/initdb" ]; then
    echo "local_postgres: installing Debian's postgresql-15" >&2
    bash "$HERE/apt_install.sh" postgresql-15 >&2
fi

as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u postgres -- "$@"
    else
        "$@"
    fi
}
owner() { if [ "$(id -u)" -eq 0 ]; then echo postgres; else id -un; fi; }
url() { echo "postgresql://$(owner)@127.0.0.1:$(cat "$DIR/port")/recourse"; }

case "$cmd" in
start)
    mkdir -p "$DIR"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$DIR"; fi
    chmod 700 "$DIR"
    if [ ! -f "$DIR/data/PG_VERSION" ]; then
        as_owner "$BIN/initdb" -D "$DIR/data" -A trust -U "$(owner)" -E UTF8 >/dev/null
    fi
    if as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1; then
        url
        exit 0
    fi
    echo "$PORT" > "$DIR/port"
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -l "$DIR/server.log" -w -t 60 start \
        -o "-c listen_addresses=127.0.0.1 -p $PORT -k $DIR -c max_connections=200 -c fsync=on" >/dev/null
    as_owner "$BIN/psql" -h 127.0.0.1 -p "$PORT" -d postgres -Atqc \
        "SELECT 1 FROM pg_database WHERE datname = 'recourse'" | grep -q 1 \
        || as_owner "$BIN/createdb" -h 127.0.0.1 -p "$PORT" recourse
    if [ "$MINUTES" -gt 0 ]; then
        # The watchdog: stop this server after MINUTES, whatever happens to the caller. It
        # stops only the server it was started with (the same postmaster PID): a later start
        # in the same DIR gets its own watchdog and is never stopped by an older one.
        pm="$(head -1 "$DIR/data/postmaster.pid")"
        setsid nohup bash -c "sleep $((MINUTES * 60)); $(declare -f as_owner);
            if [ \"\$(head -1 '$DIR/data/postmaster.pid' 2>/dev/null)\" = '$pm' ]; then
                as_owner $BIN/pg_ctl -D '$DIR/data' -m fast stop; fi" >/dev/null 2>&1 &
        echo $! > "$DIR/watchdog.pid"
    fi
    url
    ;;
stop)
    if [ -f "$DIR/watchdog.pid" ]; then
        kill -- "-$(cat "$DIR/watchdog.pid")" 2>/dev/null || true  # its sleep too
        rm -f "$DIR/watchdog.pid"
    fi
    as_owner "$BIN/pg_ctl" -D "$DIR/data" -m fast stop >/dev/null 2>&1 || true
    ;;
url)
    as_owner "$BIN/pg_ctl" -D "$DIR/data" status >/dev/null 2>&1 || { echo "not running" >&2; exit 1; }
    url
    ;;
*)
    echo "usage: $0 start|stop|url [DIR] [PORT] [MINUTES]" >&2
    exit 2
    ;;
esac
