# shellcheck shell=bash
# Sourced by the test scripts: installs PostgreSQL from Debian's packages when it is missing,
# starts its main cluster, makes the `examkit_test` role and database, and exports what the
# PostgreSQL variants of the service tests read (EXAMKIT_TEST_POSTGRES_URL, and
# EXAMKIT_REQUIRE_POSTGRES so they are never skipped silently). Each test case makes its own
# database; `pg_drop_test_databases` drops them, and callers run it on exit.
#
#   source tests/postgres-server.sh && trap pg_drop_test_databases EXIT

pg_as_root() {
  if [ "$(id -u)" = 0 ]; then "$@"; else sudo -n "$@"; fi
}

pg_admin() {
  pg_as_root su postgres -c "psql -p $pg_port -v ON_ERROR_STOP=1 -qAt -c \"$1\""
}

pg_drop_test_databases() {
  [ -n "${pg_port:-}" ] || return 0
  local db
  for db in $(pg_admin "SELECT datname FROM pg_database WHERE datname LIKE 'examkit\_test\_%'"); do
    pg_admin "DROP DATABASE IF EXISTS $db" >/dev/null
  done
}

pg_server_start() {
  if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    echo "installing PostgreSQL from Debian's packages"
    pg_as_root apt-get update -qq &&
      DEBIAN_FRONTEND=noninteractive pg_as_root apt-get install -y -qq postgresql >/dev/null || return 1
  fi
  local version
  version="$(ls /usr/lib/postgresql | sort -V | tail -n 1)"
  if ! pg_lsclusters -h | awk '{print $1" "$2}' | grep -qx "$version main"; then
    pg_as_root pg_createcluster "$version" main >/dev/null || return 1
  fi
  if ! pg_lsclusters -h | awk -v v="$version" '$1==v && $2=="main" {print $4}' | grep -qx online; then
    pg_as_root pg_ctlcluster "$version" main start || return 1
  fi
  pg_port="$(pg_lsclusters -h | awk -v v="$version" '$1==v && $2=="main" {print $3}')"
  local _
  for _ in $(seq 1 30); do
    pg_admin "SELECT 1" >/dev/null 2>&1 && break
    sleep 1
  done
  if [ "$(pg_admin "SELECT 1 FROM pg_roles WHERE rolname = 'examkit_test'")" != 1 ]; then
    pg_admin "CREATE ROLE examkit_test LOGIN PASSWORD 'examkit_test' CREATEDB" || return 1
  fi
  if [ "$(pg_admin "SELECT 1 FROM pg_database WHERE datname = 'examkit_test'")" != 1 ]; then
    pg_admin "CREATE DATABASE examkit_test OWNER examkit_test" || return 1
  fi
  # The databases of earlier runs go now; this run's go at exit.
  pg_drop_test_databases
  export EXAMKIT_TEST_POSTGRES_URL="postgres://examkit_test:examkit_test@127.0.0.1:$pg_port/examkit_test"
  export EXAMKIT_REQUIRE_POSTGRES=1
}

pg_server_start
