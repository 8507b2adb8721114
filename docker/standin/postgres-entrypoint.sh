#!/bin/sh
# The official image's contract, reduced to what docker-compose.yml and the tests use: POSTGRES_USER,
# POSTGRES_PASSWORD, POSTGRES_DB, POSTGRES_HOST_AUTH_METHOD; initdb on first start, then a temporary
# server creates the database and the final one starts (so "ready to accept connections" is logged twice).
set -eu
case "${1:-}" in ''|-*) set -- postgres "$@" ;; esac
if [ "$1" != postgres ]; then exec "$@"; fi
if [ "$(id -u)" = 0 ]; then
  mkdir -p "$PGDATA" && chown -R postgres:postgres "$PGDATA" && chmod 700 "$PGDATA"
  exec setpriv --reuid=postgres --regid=postgres --init-groups "$0" "$@"
fi
user="${POSTGRES_USER:-postgres}"
db="${POSTGRES_DB:-$user}"
auth="${POSTGRES_HOST_AUTH_METHOD:-scram-sha-256}"
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  pwfile=$(mktemp)
  printf '%s\n' "${POSTGRES_PASSWORD:-}" >"$pwfile"
  initdb --username="$user" --pwfile="$pwfile" --auth-local=trust --auth-host="$auth" -D "$PGDATA" >/dev/null
  rm -f "$pwfile"
  printf 'host all all all %s\n' "$auth" >>"$PGDATA/pg_hba.conf"
  printf "listen_addresses = '*'\n" >>"$PGDATA/postgresql.conf"
  pg_ctl -D "$PGDATA" -o "-c listen_addresses=''" -w start
  if [ "$db" != postgres ]; then psql -v ON_ERROR_STOP=1 --username="$user" --dbname=postgres -c "CREATE DATABASE \"$db\""; fi
  pg_ctl -D "$PGDATA" -m fast -w stop
fi
shift; exec postgres -D "$PGDATA" "$@"
