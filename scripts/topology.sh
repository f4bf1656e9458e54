#!/usr/bin/env bash
# The production topology of the service on ONE machine, from Debian's packages
# (postgresql-15, pgbouncer): a demo for deployers, and what test/topology.test.ts
# starts and breaks. Read it as documentation: every setting says why it is there.
#
#                 ┌──────── web 1 (node dist/src/main.js --no-worker) ────┐
#   HTTP clients ─┤                                                       ├─ DATABASE_URL ──► pgbouncer ──► primary
#                 └──────── web 2 (node dist/src/main.js --no-worker) ────┤   (?pgbouncer=true, pool_mode = transaction)
#                           worker (node dist/src/main.js --worker-only) ─┤─ DIRECT_URL ──────────────────► primary
#                                                                         └─ READ_REPLICA_URL ──► replica ◄─ streaming ─ primary
#
#   DATABASE_URL      everyday queries, through the transaction pooler. `?pgbouncer=true` tells
#                     the service it is one: no named prepared statements, no session state.
#   DIRECT_URL        the primary itself: migrations and their advisory lock, LISTEN/NOTIFY
#                     (session features a transaction pooler cannot carry).
#   READ_REPLICA_URL  a streaming replica: the audit log and the voice activity stats are read
#                     there while it is within REPLICA_MAX_LAG_MS; otherwise from the primary.
#
# Usage (npm run topology -- <command>):
#   start                 initdb + replica + pgbouncer (first time), then the three service
#                         processes, started at the same moment (they race for the migration
#                         lock: one migrates, the others wait); returns when all are ready and
#                         writes $TOPOLOGY_DIR/topology.env
#   stop [--clean]        SIGTERM the service processes (they drain), stop pgbouncer, stop the
#                         replica then the primary (pg_ctl -m fast). Idempotent. --clean also
#                         removes $TOPOLOGY_DIR (its data included).
#   status                what runs (exit 0 when everything does, 3 otherwise)
#   kill-web N            kill -9 web process N (1 or 2): a crash
#   start-web N           start web process N again (after kill-web), wait until it is ready
#   restart-pooler        stop pgbouncer (immediate shutdown: every client connection cut) and start it
#   stop-replica          stop the replica (pg_ctl -m fast)
#   start-replica         start it again; it catches up by streaming from the primary
#   restart-primary       pg_ctl -m fast stop, then start the primary again (sessions are cut)
#
# Settings (environment):
#   TOPOLOGY_DIR          where everything lives (default .topology, relative to the current folder)
#   TOPOLOGY_BASE_PORT    ports base..base+4 (primary, replica, pgbouncer, web 1, web 2); default: free ports
#   TOPOLOGY_TIMEOUT      seconds to wait for each component to be ready (default 120)
#   ADMIN_EMAIL, ADMIN_PASSWORD   the first admin (default admin@example.com, a generated password kept in the folder)
#   PUBLIC_URL            the service's public base URL (default: web 1's URL; in production, your load balancer's)
#   LOG_LEVEL             the service processes' log level (default info)
#   PGBIN                 PostgreSQL's programs (default: the newest /usr/lib/postgresql/*/bin)
#
# PostgreSQL and pgbouncer refuse to run as root: run as root, this script runs them as the
# user `postgres` (which Debian's postgresql package creates); as another user, directly.
# The service processes run as whoever runs the script.
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
DIR=$(realpath -m -- "${TOPOLOGY_DIR:-.topology}")
PG="$DIR/pg"          # everything PostgreSQL and pgbouncer write (owned by `postgres` when run as root)
TIMEOUT=${TOPOLOGY_TIMEOUT:-120}
DB_NAME=helpdesk
DB_USER=postgres

die() { echo "topology: $*" >&2; exit 1; }
say() { echo "topology: $*"; }

# ── programs ────────────────────────────────────────────────────────────────────────────
# PostgreSQL's server programs are not on PATH in Debian (only the wrappers in /usr/bin).
pgbin() {
  if [ -n "${PGBIN:-}" ]; then echo "$PGBIN"; return; fi
  local bin
  bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
  [ -n "$bin" ] || die "PostgreSQL not found under /usr/lib/postgresql/*/bin: apt-get install postgresql"
  echo "$bin"
}
pgbouncer_bin() {
  local bin
  bin=$(command -v pgbouncer || true)
  [ -n "$bin" ] || bin=/usr/sbin/pgbouncer   # sbin is not on a normal user's PATH
  [ -x "$bin" ] || die "pgbouncer not found: apt-get install pgbouncer"
  echo "$bin"
}

AS_ROOT=0
[ "$(id -u)" = 0 ] && AS_ROOT=1

# Runs a PostgreSQL or pgbouncer program: as `postgres` when we are root (both refuse root),
# from inside $DIR (a working folder the postgres user may enter: not /root).
as_pg() {
  if [ "$AS_ROOT" = 1 ]; then
    (cd "$DIR" && runuser -u postgres -- "$@")
  else
    (cd "$DIR" && "$@")
  fi
}

# psql as a client (any user may run it): -X no ~/.psqlrc, -A -t bare values.
psql_at() { # $1 = port, rest = psql arguments
  local port=$1; shift
  "$(pgbin)/psql" -X -A -t -q -h 127.0.0.1 -p "$port" -U "$DB_USER" "$@"
}

# ── ports ───────────────────────────────────────────────────────────────────────────────
# Five ports at once, each the kernel's pick for port 0 while the others are held (so they
# are distinct). Something may take one before we listen on it: then a start fails clearly.
pick_ports() {
  if [ -n "${TOPOLOGY_BASE_PORT:-}" ]; then
    local b=$TOPOLOGY_BASE_PORT
    echo "$b $((b + 1)) $((b + 2)) $((b + 3)) $((b + 4))"
    return
  fi
  node -e '
    const net = require("net");
    const servers = Array.from({ length: 5 }, () => net.createServer());
    Promise.all(servers.map((s) => new Promise((r) => s.listen(0, "127.0.0.1", r)))).then(() => {
      console.log(servers.map((s) => s.address().port).join(" "));
      servers.forEach((s) => s.close());
    });'
}

# ports.env is written once, at the first start: the topology keeps its ports across stop/start
# (the replica's primary_conninfo and pgbouncer.ini name them).
load_ports() {
  [ -f "$DIR/ports.env" ] || return 1
  # shellcheck source=/dev/null
  . "$DIR/ports.env"
}

# ── topology.env ────────────────────────────────────────────────────────────────────────
# shell KEY=value lines; a value with anything unusual is single-quoted (as the shell reads it)
kv() {
  local v=$2
  if [[ $v =~ ^[A-Za-z0-9_@%+=:,./?-]*$ ]]; then
    printf '%s=%s\n' "$1" "$v"
  else
    printf "%s='%s'\n" "$1" "${v//\'/\'\\\'\'}"
  fi
}
pid_of() { [ -f "$1" ] && cat "$1" || true; }
pg_pid() { [ -f "$1/postmaster.pid" ] && head -1 "$1/postmaster.pid" || true; }
write_env() {
  {
    echo "# written by scripts/topology.sh; source it: . $DIR/topology.env"
    kv TOPOLOGY_DIR "$DIR"
    kv PRIMARY_URL "$PRIMARY_URL"
    kv REPLICA_URL "$REPLICA_URL"
    kv POOLER_URL "$POOLER_URL"
    kv WEB1_URL "http://127.0.0.1:$WEB1_PORT"
    kv WEB2_URL "http://127.0.0.1:$WEB2_PORT"
    kv PUBLIC_URL "$SERVICE_PUBLIC_URL"
    kv ADMIN_EMAIL "$SERVICE_ADMIN_EMAIL"
    kv ADMIN_PASSWORD "$(cat "$DIR/secrets/admin-password")"
    kv WEB1_PID "$(pid_of "$DIR/web1.pid")"
    kv WEB2_PID "$(pid_of "$DIR/web2.pid")"
    kv WORKER_PID "$(pid_of "$DIR/worker.pid")"
    kv PGBOUNCER_PID "$(pid_of "$PG/pgbouncer.pid")"
    kv PRIMARY_PID "$(pg_pid "$PG/primary")"
    kv REPLICA_PID "$(pg_pid "$PG/replica")"
    kv WEB1_LOG "$DIR/web1.log"
    kv WEB2_LOG "$DIR/web2.log"
    kv WORKER_LOG "$DIR/worker.log"
  } >"$DIR/topology.env.tmp"
  mv "$DIR/topology.env.tmp" "$DIR/topology.env"
}

# the URLs every command needs, from the ports
set_urls() {
  PRIMARY_URL="postgresql://$DB_USER@127.0.0.1:$PRIMARY_PORT/$DB_NAME"
  REPLICA_URL="postgresql://$DB_USER@127.0.0.1:$REPLICA_PORT/$DB_NAME"
  # ?pgbouncer=true: the service's own flag, "this is a transaction pooler" (see the top)
  POOLER_URL="postgresql://$DB_USER@127.0.0.1:$POOLER_PORT/$DB_NAME?pgbouncer=true"
  SERVICE_PUBLIC_URL=${PUBLIC_URL:-http://127.0.0.1:$WEB1_PORT}
  SERVICE_ADMIN_EMAIL=${ADMIN_EMAIL:-admin@example.com}
}

# ── waiting ─────────────────────────────────────────────────────────────────────────────
alive() { [ -n "${1:-}" ] && kill -0 "$1" 2>/dev/null; }

# the last lines of a log, to say why something did not start
tail_log() {
  echo "── last lines of $1 ──" >&2
  tail -n 30 "$1" >&2 2>/dev/null || echo "(no log)" >&2
}

# HTTP status of GET url's path, with nothing but bash (/dev/tcp): curl may not be installed.
http_status() { # $1 = port, $2 = path
  local line
  (
    exec 3<>"/dev/tcp/127.0.0.1/$1" || exit 1
    printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' "$2" >&3
    IFS= read -r -t 5 line <&3 || exit 1
    echo "$line" | cut -d' ' -f2
  ) 2>/dev/null || echo 000
}

wait_pg() { # $1 = port, $2 = what, $3 = log
  local end=$((SECONDS + TIMEOUT))
  until psql_at "$1" -d postgres -c 'SELECT 1' >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || { tail_log "$3"; die "$2 on port $1 did not accept connections within $TIMEOUT s"; }
    sleep 0.2
  done
}

# ── PostgreSQL ──────────────────────────────────────────────────────────────────────────
init_primary() {
  local bin; bin=$(pgbin)
  say "initdb: the primary in $PG/primary"
  # -A trust: anyone who reaches 127.0.0.1 is let in, without a password. A demo on one
  # machine only; a real deployment uses scram-sha-256 and passwords in the URLs.
  as_pg "$bin/initdb" -D "$PG/primary" -A trust -U "$DB_USER" --no-sync >/dev/null
  cat >>"$PG/primary/postgresql.conf" <<EOF

# ── scripts/topology.sh ──
port = $PRIMARY_PORT
listen_addresses = '127.0.0.1'
unix_socket_directories = '$PG/sock'
# the connections: pgbouncer's pool (default_pool_size + reserve_pool_size), each process's
# direct ones (migrations, LISTEN), the replica's WAL sender, and room for psql
max_connections = 200
# streaming replication: WAL with what a standby needs, senders for the replica (and a
# pg_basebackup at the same time), and some WAL kept for a replica that was stopped a while
wal_level = replica
max_wal_senders = 10
wal_keep_size = '256MB'
# a standby accepts read-only queries (the setting is copied into the replica's folder)
hot_standby = on
# the replica tells the primary which rows its queries still read, so that VACUUM on the
# primary does not cancel them
hot_standby_feedback = on
# DEMO ONLY: no fsync (a crash of the machine can corrupt the database). It makes initdb,
# the migrations and the tests fast; never set it on a database that matters.
fsync = off
synchronous_commit = off
full_page_writes = off
EOF
  as_pg "$bin/pg_ctl" -D "$PG/primary" -w -t "$TIMEOUT" -l "$PG/primary.log" start >/dev/null \
    || { tail_log "$PG/primary.log"; die "the primary did not start"; }
  psql_at "$PRIMARY_PORT" -d postgres -c "CREATE DATABASE $DB_NAME" >/dev/null
}

init_replica() {
  local bin; bin=$(pgbin)
  say "pg_basebackup: the replica in $PG/replica"
  # -R writes standby.signal and primary_conninfo (to this primary), so the copy starts as a
  # streaming standby; -X stream copies the WAL written during the backup too; -c fast: a
  # checkpoint now (the default, spread, waits for up to minutes of paced checkpoint writes).
  as_pg "$bin/pg_basebackup" -h 127.0.0.1 -p "$PRIMARY_PORT" -U "$DB_USER" -D "$PG/replica" -R -X stream -c fast --no-sync
  # the copy has the primary's postgresql.conf: a later line wins, so only the port differs
  cat >>"$PG/replica/postgresql.conf" <<EOF

# ── scripts/topology.sh: the replica ──
port = $REPLICA_PORT
hot_standby = on
EOF
}

start_pg() { # $1 = primary|replica
  local port=$PRIMARY_PORT
  [ "$1" = replica ] && port=$REPLICA_PORT
  if alive "$(pg_pid "$PG/$1")"; then return; fi
  as_pg "$(pgbin)/pg_ctl" -D "$PG/$1" -w -t "$TIMEOUT" -l "$PG/$1.log" start >/dev/null \
    || { tail_log "$PG/$1.log"; die "the $1 did not start"; }
  wait_pg "$port" "the $1" "$PG/$1.log"
}

stop_pg() { # $1 = primary|replica; fast: sessions are ended, a clean shutdown
  [ -f "$PG/$1/postmaster.pid" ] || return 0
  as_pg "$(pgbin)/pg_ctl" -D "$PG/$1" -m fast -w -t "$TIMEOUT" stop >/dev/null || true
}

# until the primary lists the replica as streaming
wait_streaming() {
  local end=$((SECONDS + TIMEOUT))
  until [ "$(psql_at "$PRIMARY_PORT" -d postgres -c "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'" 2>/dev/null)" = 1 ]; do
    [ $SECONDS -lt $end ] || { tail_log "$PG/replica.log"; die "the replica is not streaming from the primary after $TIMEOUT s"; }
    sleep 0.2
  done
}

# ── pgbouncer ───────────────────────────────────────────────────────────────────────────
write_pgbouncer_ini() {
  # trust as PostgreSQL's: the user must still be listed in auth_file (any password)
  echo "\"$DB_USER\" \"\"" >"$PG/userlist.txt"
  cat >"$PG/pgbouncer.ini" <<EOF
;; scripts/topology.sh: pgbouncer in front of the primary, in transaction mode
[databases]
;; every database name a client asks for, on the primary
* = host=127.0.0.1 port=$PRIMARY_PORT

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $POOLER_PORT
unix_socket_dir = $PG/sock
;; as PostgreSQL's own: no password on this one-machine demo (use scram-sha-256 in production)
auth_type = trust
auth_file = $PG/userlist.txt
admin_users = $DB_USER
;; a server connection is lent for one transaction, then goes back to the pool: many client
;; connections share few server ones, and a session's state (named prepared statements, SET,
;; advisory locks, LISTEN) is NOT kept between transactions; the service knows it from
;; ?pgbouncer=true and uses DIRECT_URL for what needs a session
pool_mode = transaction
;; clients (every process's pool: DB_POOL_SIZE, 10 by default, per process) ...
max_client_conn = 1000
;; ... share at most this many connections to PostgreSQL (below its max_connections), plus
;; a reserve lent when a client has waited reserve_pool_timeout seconds
default_pool_size = 20
reserve_pool_size = 5
reserve_pool_timeout = 1
;; a client waits at most this long for a server connection, then gets an error (the
;; default, 120 s, would hold a request for two minutes while the primary is down)
query_wait_timeout = 10
;; after a failed connection to the primary, try again after 1 s (the default, 15 s, would
;; keep the service down for up to 15 s after a restarted primary is back)
server_login_retry = 1
;; node-postgres sends extra_float_digits, other drivers options: accept, ignore
ignore_startup_parameters = extra_float_digits,options
logfile = $PG/pgbouncer.log
pidfile = $PG/pgbouncer.pid
EOF
}

start_pooler() {
  alive "$(pid_of "$PG/pgbouncer.pid")" && return
  rm -f "$PG/pgbouncer.pid"
  # -d: it forks into the background and writes its pid file (-q: nothing on stdout)
  as_pg "$(pgbouncer_bin)" -d -q "$PG/pgbouncer.ini" || { tail_log "$PG/pgbouncer.log"; die "pgbouncer did not start"; }
  local end=$((SECONDS + TIMEOUT))
  until psql_at "$POOLER_PORT" -d "$DB_NAME" -c 'SELECT 1' >/dev/null 2>&1; do
    [ $SECONDS -lt $end ] || { tail_log "$PG/pgbouncer.log"; die "pgbouncer on port $POOLER_PORT did not answer within $TIMEOUT s"; }
    sleep 0.2
  done
}

stop_pooler() {
  local pid; pid=$(pid_of "$PG/pgbouncer.pid")
  alive "$pid" || return 0
  # SIGTERM (pgbouncer 1.18): immediate shutdown, every client and server connection closed
  kill -TERM "$pid"
  local end=$((SECONDS + 30))
  while alive "$pid"; do
    [ $SECONDS -lt $end ] || { kill -KILL "$pid" 2>/dev/null || true; break; }
    sleep 0.1
  done
  rm -f "$PG/pgbouncer.pid"
}

# ── the service ─────────────────────────────────────────────────────────────────────────
# name → its command-line flag and port (web1, web2: --no-worker; worker: --worker-only)
role_args() { case $1 in web1 | web2) echo --no-worker ;; worker) echo --worker-only ;; *) die "unknown process $1" ;; esac; }
role_port() { case $1 in web1) echo "$WEB1_PORT" ;; web2) echo "$WEB2_PORT" ;; *) echo 0 ;; esac; }

# a pid that is still one of ours (a pid file can outlive its process, and the pid be reused)
service_pid() { # $1 = name
  local pid; pid=$(pid_of "$DIR/$1.pid")
  alive "$pid" && grep -q 'dist/src/main.js' "/proc/$pid/cmdline" 2>/dev/null && echo "$pid" || true
}

start_service() { # $1 = name; in the background, log in $DIR/<name>.log
  local name=$1
  [ -z "$(service_pid "$name")" ] || return 0
  echo "── started $(date -u +%FT%TZ) ──" >>"$DIR/$name.log"
  # env -i: exactly these variables, nothing inherited from the shell that runs the script
  # (a DATABASE_URL of yours must not leak in). Every setting is in README's "Configuration".
  # setsid: its own session, so that closing the terminal that started it does not stop it.
  (
    cd "$ROOT"
    exec env -i PATH="$PATH" HOME="${HOME:-/}" \
      NODE_ENV=production \
      HOST=127.0.0.1 PORT="$(role_port "$name")" \
      PUBLIC_URL="$SERVICE_PUBLIC_URL" \
      DATABASE_URL="$POOLER_URL" \
      DIRECT_URL="$PRIMARY_URL" \
      READ_REPLICA_URL="$REPLICA_URL" \
      HASH_KEY="$(cat "$DIR/secrets/hash-key")" \
      ADMIN_EMAIL="$SERVICE_ADMIN_EMAIL" \
      ADMIN_PASSWORD="$(cat "$DIR/secrets/admin-password")" \
      WEB_CONCURRENCY=1 \
      WEBHOOK_ALLOW_PRIVATE_ENDPOINTS=true \
      LOG_LEVEL="${LOG_LEVEL:-info}" \
      setsid node dist/src/main.js "$(role_args "$name")" </dev/null >>"$DIR/$name.log" 2>&1
  ) &
  echo $! >"$DIR/$name.pid"
  # (WEB_CONCURRENCY=1: one Node process each, the pid above; more processes = more of these)
  # (WEBHOOK_ALLOW_PRIVATE_ENDPOINTS=true: a production setting refuses webhooks to loopback
  #  and private addresses; the demo's (and the test's) webhook receiver is on 127.0.0.1.)
}

# ready: a web process answers GET /readyz 200; the worker has logged "worker started"
# (src/main.ts, runWorker: after the migrations and the engine's start)
wait_service() { # $1 = name
  local name=$1 end=$((SECONDS + TIMEOUT)) pid
  pid=$(pid_of "$DIR/$name.pid")
  while :; do
    alive "$pid" || { tail_log "$DIR/$name.log"; die "$name (pid $pid) exited before it was ready"; }
    if [ "$name" = worker ]; then
      # only the lines since this start count
      sed -n '/── started/h; /── started/!H; ${x;p}' "$DIR/$name.log" | grep -q 'worker started' && return
    else
      [ "$(http_status "$(role_port "$name")" /readyz)" = 200 ] && return
    fi
    [ $SECONDS -lt $end ] || { tail_log "$DIR/$name.log"; die "$name was not ready within $TIMEOUT s (see $DIR/$name.log)"; }
    sleep 0.25
  done
}

stop_service() { # $1 = name, $2 = signal (TERM: drain and exit; KILL: a crash)
  local pid; pid=$(service_pid "$1")
  [ -n "$pid" ] || { rm -f "$DIR/$1.pid"; return 0; }
  kill -"$2" "$pid" 2>/dev/null || true
  # SIGTERM: in-flight requests and jobs finish (src/main.ts allows 10 s, then exits 1)
  local end=$((SECONDS + 20))
  while alive "$pid"; do
    [ $SECONDS -lt $end ] || { kill -KILL "$pid" 2>/dev/null || true; }
    sleep 0.1
  done
  rm -f "$DIR/$1.pid"
}

web_name() { # $1 = N
  case ${1:-} in 1 | 2) echo "web$1" ;; *) die "which web process? 1 or 2 (got '${1:-}')" ;; esac
}

# ── commands ────────────────────────────────────────────────────────────────────────────
cmd_start() {
  if [ -f "$DIR/topology.env" ] && load_ports && [ -n "$(service_pid web1)$(service_pid web2)$(service_pid worker)" ]; then
    die "already running in $DIR (scripts/topology.sh stop first)"
  fi
  command -v node >/dev/null || die "node is not on PATH"
  # a start that fails leaves what it started running, to be looked at: say how to stop it
  trap '[ $? = 0 ] || echo "topology: start failed; to stop what did start: TOPOLOGY_DIR=$DIR scripts/topology.sh stop" >&2' EXIT
  local bin; bin=$(pgbin); pgbouncer_bin >/dev/null

  # the build: NODE_ENV=production never builds (scripts/ensure-built.js), so without it;
  # it does nothing when dist/ is up to date
  (cd "$ROOT" && env -u NODE_ENV node scripts/ensure-built.js) || die "the build failed"

  mkdir -p "$DIR" "$PG/sock" "$DIR/secrets"
  chmod 755 "$DIR"
  chmod 700 "$DIR/secrets"
  if [ "$AS_ROOT" = 1 ]; then
    id postgres >/dev/null 2>&1 || die "run as root, PostgreSQL needs the user postgres (apt-get install postgresql creates it)"
    chown -R postgres "$PG"
    runuser -u postgres -- test -x "$DIR" || die "the user postgres cannot enter $DIR: choose a TOPOLOGY_DIR outside /root (e.g. under /tmp or /srv)"
  fi

  # secrets of this topology, kept beside it (the same key every start: tokens stay valid)
  [ -s "$DIR/secrets/hash-key" ] || node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))' >"$DIR/secrets/hash-key"
  if [ -n "${ADMIN_PASSWORD:-}" ]; then
    printf '%s\n' "$ADMIN_PASSWORD" >"$DIR/secrets/admin-password"
  elif [ ! -s "$DIR/secrets/admin-password" ]; then
    node -e 'console.log(require("crypto").randomBytes(12).toString("base64url"))' >"$DIR/secrets/admin-password"
  fi

  if ! load_ports; then
    read -r PRIMARY_PORT REPLICA_PORT POOLER_PORT WEB1_PORT WEB2_PORT <<<"$(pick_ports)"
    printf 'PRIMARY_PORT=%s\nREPLICA_PORT=%s\nPOOLER_PORT=%s\nWEB1_PORT=%s\nWEB2_PORT=%s\n' \
      "$PRIMARY_PORT" "$REPLICA_PORT" "$POOLER_PORT" "$WEB1_PORT" "$WEB2_PORT" >"$DIR/ports.env"
  fi
  set_urls
  say "PostgreSQL from $bin, in $DIR"

  if [ -f "$PG/primary/PG_VERSION" ]; then start_pg primary; else init_primary; fi
  [ -f "$PG/replica/PG_VERSION" ] || init_replica
  start_pg replica
  wait_streaming
  write_pgbouncer_ini
  start_pooler

  # the three at the same moment: they race for the migration lock (one migrates, the
  # others log that they wait for it, then find nothing to do)
  say "starting web1, web2 and the worker"
  start_service web1
  start_service web2
  start_service worker
  wait_service web1
  wait_service web2
  wait_service worker
  write_env

  cat <<EOF

  primary   $PRIMARY_URL   (pid $(pg_pid "$PG/primary"), log $PG/primary.log)
  replica   $REPLICA_URL   (pid $(pg_pid "$PG/replica"), streaming)
  pgbouncer $POOLER_URL   (pool_mode = transaction)
  web 1     http://127.0.0.1:$WEB1_PORT   (pid $(pid_of "$DIR/web1.pid"), log $DIR/web1.log)
  web 2     http://127.0.0.1:$WEB2_PORT   (pid $(pid_of "$DIR/web2.pid"), log $DIR/web2.log)
  worker    (pid $(pid_of "$DIR/worker.pid"), log $DIR/worker.log)
  admin     $SERVICE_ADMIN_EMAIL (password in $DIR/secrets/admin-password)

  everything above: $DIR/topology.env     stop: scripts/topology.sh stop [--clean]
EOF
}

cmd_stop() {
  local clean=0
  [ "${1:-}" = --clean ] && clean=1
  if load_ports; then
    # the service first (it drains while its databases are still there), then what it uses
    stop_service web1 TERM & stop_service web2 TERM & stop_service worker TERM & wait
    stop_pooler
    stop_pg replica
    stop_pg primary
    say "stopped"
  fi
  if [ "$clean" = 1 ] && [ -d "$DIR" ]; then
    # only a folder this script made (TOPOLOGY_DIR set to some other folder by mistake is left alone)
    if [ -f "$DIR/ports.env" ] || [ -z "$(ls -A "$DIR")" ]; then
      rm -rf "$DIR"
      say "removed $DIR"
    else
      die "$DIR does not look like a topology folder (no ports.env): not removed"
    fi
  fi
}

cmd_status() {
  load_ports || { echo "nothing in $DIR"; exit 3; }
  local all=0 pid
  row() { # $1 = name, $2 = pid
    if alive "$2"; then printf '  %-10s running (pid %s)\n' "$1" "$2"; else printf '  %-10s stopped\n' "$1"; all=3; fi
  }
  row primary "$(pg_pid "$PG/primary")"
  row replica "$(pg_pid "$PG/replica")"
  row pgbouncer "$(pid_of "$PG/pgbouncer.pid")"
  for name in web1 web2 worker; do
    pid=$(service_pid "$name"); row "$name" "$pid"
  done
  exit $all
}

# the drills need a started topology
need_started() {
  load_ports && [ -f "$DIR/topology.env" ] || die "no topology in $DIR: scripts/topology.sh start first"
  set_urls
}

main() {
  local cmd=${1:-}
  shift || true
  case $cmd in
    start) cmd_start ;;
    stop) cmd_stop "$@" ;;
    status) cmd_status ;;
    kill-web) need_started; stop_service "$(web_name "${1:-}")" KILL; write_env; say "killed $(web_name "$1") (SIGKILL)" ;;
    start-web) need_started; start_service "$(web_name "${1:-}")"; wait_service "$(web_name "$1")"; write_env; say "$(web_name "$1") is ready" ;;
    restart-pooler) need_started; stop_pooler; start_pooler; write_env; say "pgbouncer restarted" ;;
    stop-replica) need_started; stop_pg replica; write_env; say "replica stopped" ;;
    start-replica) need_started; start_pg replica; wait_streaming; write_env; say "replica started, streaming" ;;
    restart-primary) need_started; stop_pg primary; start_pg primary; write_env; say "primary restarted" ;;
    *)
      sed -n '/^# Usage/,/^# Settings/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//' >&2
      exit 2
      ;;
  esac
}

main "$@"
