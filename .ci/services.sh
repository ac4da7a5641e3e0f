#!/usr/bin/env bash
# Installs (apt) and starts the servers the test suite uses, on 127.0.0.1 only:
# PostgreSQL 15, Redis, Debian's chromium for the browser tests and bubblewrap
# (bwrap) for the code-submission sandbox, npm for the workbench's text-annotation component,
# pdflatex to compile the report's tables.
# Prints the environment variables to export.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
need=()
command -v redis-server >/dev/null || need+=(redis-server)
command -v bwrap >/dev/null || need+=(bubblewrap)      # the code-submission sandbox
[ -x /usr/bin/chromium ] || need+=(chromium)
command -v npm >/dev/null || need+=(npm)               # make vendor: the annotation component
[ -x /usr/lib/postgresql/15/bin/postgres ] || need+=(postgresql-15)
fc-list 2>/dev/null | grep -qi dejavu || need+=(fonts-dejavu-core)
if [ ${#need[@]} -gt 0 ]; then
  apt-get update -qq >&2
  apt-get install -y -qq "${need[@]}" >&2
fi
# pdflatex: the report's LaTeX is compiled in a test (booktabs is in -recommended)
if ! command -v pdflatex >/dev/null; then
  [ ${#need[@]} -gt 0 ] || apt-get update -qq >&2
  apt-get install -y -qq --no-install-recommends texlive-latex-base texlive-latex-recommended >&2
fi
PGBIN=/usr/lib/postgresql/15/bin
PGDATA=${SHAREVAL_CI_PGDATA:-/tmp/shareval-ci-pg}
PGPORT=${SHAREVAL_CI_PGPORT:-55432}
if ! su postgres -c "$PGBIN/pg_ctl -D $PGDATA status" >/dev/null 2>&1; then
  rm -rf "$PGDATA"; mkdir -p "$PGDATA"; chown postgres "$PGDATA"
  su postgres -c "$PGBIN/initdb -D $PGDATA -A trust -U postgres" >/dev/null
  su postgres -c "$PGBIN/pg_ctl -D $PGDATA -l $PGDATA/log -w -o '-h 127.0.0.1 -p $PGPORT -k /tmp -c max_connections=300 -c fsync=off' start" >/dev/null
fi
psql -h 127.0.0.1 -p "$PGPORT" -U postgres -tAc "SELECT 1 FROM pg_roles WHERE rolname='shareval'" | grep -q 1 || \
  psql -h 127.0.0.1 -p "$PGPORT" -U postgres -qc "CREATE ROLE shareval LOGIN SUPERUSER PASSWORD 'shareval'"
REDISPORT=${SHAREVAL_CI_REDISPORT:-56379}
redis-cli -p "$REDISPORT" ping >/dev/null 2>&1 || \
  redis-server --port "$REDISPORT" --bind 127.0.0.1 --save '' --appendonly no --daemonize yes >/dev/null
for i in $(seq 50); do redis-cli -p "$REDISPORT" ping >/dev/null 2>&1 && break; sleep 0.1; done
echo "export SHAREVAL_TEST_PG=postgres://shareval:shareval@127.0.0.1:$PGPORT"
echo "export SHAREVAL_TEST_REDIS=redis://127.0.0.1:$REDISPORT"
