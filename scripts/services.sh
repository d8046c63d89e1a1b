#!/usr/bin/env bash
# Real services for the test suites, on free loopback ports: PostgreSQL 15 (with a streaming
# replica, and PgBouncer in front of it in transaction mode), MariaDB (with a GTID replica) and Redis.
#   source scripts/services.sh && services_start   # exports the CRUDKIT_TEST_* URLs below
#   services_stop                                  # stops only what services_start started
# Installs the Debian packages it needs (mariadb-server, redis-server, pgbouncer) when they are missing.
#   CRUDKIT_TEST_POSTGRES_URL  postgres://postgres@127.0.0.1:PORT/crudkit
#   CRUDKIT_TEST_PGBOUNCER_URL postgres://postgres@127.0.0.1:PORT/crudkit (any database name reaches
#                              the server's database of that name)
#   CRUDKIT_TEST_MYSQL_URL     mysql://crudkit:crudkit@127.0.0.1:PORT/crudkit
#   CRUDKIT_TEST_POSTGRES_REPLICA_URL, CRUDKIT_TEST_MYSQL_REPLICA_URL: the replicas, same users
#   CRUDKIT_TEST_REDIS_URL     redis://127.0.0.1:PORT

PG_BIN=/usr/lib/postgresql/15/bin
SERVICES_DIR=""

free_port() {
  node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'
}

services_install() {
  local missing=()
  [ -x "$PG_BIN/postgres" ] || missing+=(postgresql-15)
  command -v mariadbd >/dev/null 2>&1 || missing+=(mariadb-server)
  command -v redis-server >/dev/null 2>&1 || missing+=(redis-server)
  [ -x /usr/sbin/pgbouncer ] || missing+=(pgbouncer)
  if [ ${#missing[@]} -gt 0 ]; then
    echo "services: installing ${missing[*]}"
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  fi
}

services_start() {
  services_install || return 1
  SERVICES_DIR=$(mktemp -d /tmp/crudkit-services-XXXXXX)
  chmod 755 "$SERVICES_DIR"

  # PostgreSQL: initdb refuses root, so the cluster belongs to postgres.
  local pg_port pg_data="$SERVICES_DIR/pg"
  pg_port=$(free_port)
  mkdir -p "$pg_data" && chown postgres:postgres "$pg_data"
  runuser -u postgres -- "$PG_BIN/initdb" -D "$pg_data" -U postgres --auth=trust -E UTF8 --locale=C.UTF-8 --no-sync >/dev/null || return 1
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$pg_data" -l "$pg_data/log" -w \
    -o "-p $pg_port -k $pg_data -c listen_addresses=127.0.0.1 -c fsync=off -c synchronous_commit=off -c max_connections=300" start >/dev/null || return 1
  runuser -u postgres -- "$PG_BIN/createdb" -h 127.0.0.1 -p "$pg_port" -U postgres crudkit || return 1
  export CRUDKIT_TEST_POSTGRES_URL="postgres://postgres@127.0.0.1:$pg_port/crudkit"
  export CRUDKIT_TEST_PG_DATA="$pg_data" CRUDKIT_TEST_PG_BIN="$PG_BIN" CRUDKIT_TEST_PG_PORT="$pg_port"

  # A streaming replica of it (read replicas, issue 37): a base backup that follows the primary.
  local replica_port replica_data="$SERVICES_DIR/pg-replica"
  replica_port=$(free_port)
  mkdir -p "$replica_data" && chown postgres:postgres "$replica_data" && chmod 700 "$replica_data"
  runuser -u postgres -- "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$pg_port" -U postgres -D "$replica_data" -R -X stream --checkpoint=fast --no-sync >/dev/null 2>&1 || return 1
  runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$replica_data" -l "$replica_data/log" -w \
    -o "-p $replica_port -k $replica_data -c listen_addresses=127.0.0.1 -c fsync=off -c max_connections=300 -c hot_standby_feedback=on" start >/dev/null || return 1
  export CRUDKIT_TEST_POSTGRES_REPLICA_URL="postgres://postgres@127.0.0.1:$replica_port/crudkit"

  # PgBouncer in transaction mode, as managed PostgreSQL puts it in front. It refuses to run as root.
  local bouncer_port bouncer_dir="$SERVICES_DIR/pgbouncer"
  bouncer_port=$(free_port)
  mkdir -p "$bouncer_dir" && chown postgres:postgres "$bouncer_dir"
  echo '"postgres" ""' >"$bouncer_dir/users.txt"
  cat >"$bouncer_dir/pgbouncer.ini" <<INI
[databases]
* = host=127.0.0.1 port=$pg_port user=postgres
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $bouncer_port
unix_socket_dir =
auth_type = trust
auth_file = $bouncer_dir/users.txt
pool_mode = transaction
max_client_conn = 900
default_pool_size = 20
max_db_connections = 40
logfile = $bouncer_dir/log
pidfile = $bouncer_dir/pid
INI
  chown postgres:postgres "$bouncer_dir"/*
  runuser -u postgres -- /usr/sbin/pgbouncer -d "$bouncer_dir/pgbouncer.ini" >/dev/null || return 1
  export CRUDKIT_TEST_PGBOUNCER_URL="postgres://postgres@127.0.0.1:$bouncer_port/crudkit"

  # MariaDB: root uses socket auth, so tests get a TCP user of their own.
  local my_port my_data="$SERVICES_DIR/mariadb"
  my_port=$(free_port)
  mkdir -p "$my_data" && chown mysql:mysql "$my_data"
  mariadb-install-db --no-defaults --user=mysql --datadir="$my_data" --auth-root-authentication-method=socket --skip-test-db >/dev/null 2>&1 || return 1
  mariadbd --no-defaults --user=mysql --datadir="$my_data" --socket="$my_data/sock" --port="$my_port" \
    --bind-address=127.0.0.1 --skip-name-resolve --pid-file="$my_data/pid" --max-connections=300 \
    --server-id=1 --log-bin="$my_data/binlog" --log-bin-trust-function-creators=1 >"$my_data/log" 2>&1 &
  for _ in $(seq 1 100); do mariadb-admin --socket="$my_data/sock" ping >/dev/null 2>&1 && break; sleep 0.2; done
  mariadb --socket="$my_data/sock" -e "CREATE DATABASE crudkit; CREATE USER 'crudkit'@'127.0.0.1' IDENTIFIED BY 'crudkit';
    GRANT ALL ON *.* TO 'crudkit'@'127.0.0.1' WITH GRANT OPTION; FLUSH PRIVILEGES;" || return 1
  export CRUDKIT_TEST_MYSQL_URL="mysql://crudkit:crudkit@127.0.0.1:$my_port/crudkit"
  MARIADB_PID_FILE="$my_data/pid"

  # A GTID replica of it, which replays the primary's binary log from its start (users included).
  local replica_port replica_dir="$SERVICES_DIR/mariadb-replica"
  replica_port=$(free_port)
  mariadb --socket="$my_data/sock" -e "CREATE USER 'repl'@'127.0.0.1' IDENTIFIED BY 'repl';
    GRANT REPLICATION SLAVE ON *.* TO 'repl'@'127.0.0.1';" || return 1
  mkdir -p "$replica_dir" && chown mysql:mysql "$replica_dir"
  mariadb-install-db --no-defaults --user=mysql --datadir="$replica_dir" --auth-root-authentication-method=socket --skip-test-db >/dev/null 2>&1 || return 1
  mariadbd --no-defaults --user=mysql --datadir="$replica_dir" --socket="$replica_dir/sock" --port="$replica_port" \
    --bind-address=127.0.0.1 --skip-name-resolve --pid-file="$replica_dir/pid" --max-connections=300 \
    --server-id=2 --read-only=1 >"$replica_dir/log" 2>&1 &
  for _ in $(seq 1 100); do mariadb-admin --socket="$replica_dir/sock" ping >/dev/null 2>&1 && break; sleep 0.2; done
  mariadb --socket="$replica_dir/sock" -e "CHANGE MASTER TO MASTER_HOST='127.0.0.1', MASTER_PORT=$my_port,
    MASTER_USER='repl', MASTER_PASSWORD='repl', MASTER_USE_GTID=slave_pos; START SLAVE;" || return 1
  for _ in $(seq 1 100); do
    mariadb --socket="$replica_dir/sock" -N -e "SELECT 1 FROM mysql.user WHERE user = 'crudkit'" 2>/dev/null | grep -q 1 && break
    sleep 0.2
  done
  export CRUDKIT_TEST_MYSQL_REPLICA_URL="mysql://crudkit:crudkit@127.0.0.1:$replica_port/crudkit"
  MARIADB_REPLICA_PID_FILE="$replica_dir/pid"

  # Redis
  local redis_port
  redis_port=$(free_port)
  redis-server --port "$redis_port" --bind 127.0.0.1 --daemonize yes --pidfile "$SERVICES_DIR/redis.pid" --save '' --appendonly no >/dev/null || return 1
  export CRUDKIT_TEST_REDIS_URL="redis://127.0.0.1:$redis_port"
  echo "services: postgres :$pg_port (replica ${CRUDKIT_TEST_POSTGRES_REPLICA_URL##*:}), pgbouncer :$bouncer_port, mariadb :$my_port (replica ${CRUDKIT_TEST_MYSQL_REPLICA_URL##*:}), redis :$redis_port"
}

services_stop() {
  [ -n "$SERVICES_DIR" ] || return 0
  [ -f "$SERVICES_DIR/pgbouncer/pid" ] && kill "$(cat "$SERVICES_DIR/pgbouncer/pid")" 2>/dev/null
  [ -d "$SERVICES_DIR/pg-replica" ] && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$SERVICES_DIR/pg-replica" -m fast -w stop >/dev/null 2>&1
  [ -d "$SERVICES_DIR/pg" ] && runuser -u postgres -- "$PG_BIN/pg_ctl" -D "$SERVICES_DIR/pg" -m fast -w stop >/dev/null 2>&1
  [ -f "${MARIADB_PID_FILE:-}" ] && kill "$(cat "$MARIADB_PID_FILE")" 2>/dev/null
  [ -f "${MARIADB_REPLICA_PID_FILE:-}" ] && kill "$(cat "$MARIADB_REPLICA_PID_FILE")" 2>/dev/null
  [ -f "$SERVICES_DIR/redis.pid" ] && kill "$(cat "$SERVICES_DIR/redis.pid")" 2>/dev/null
  sleep 1
  rm -rf "$SERVICES_DIR"
  SERVICES_DIR=""
}
