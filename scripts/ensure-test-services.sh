#!/usr/bin/env bash
# Make sure everything the test suite needs from the system is there, so that
# `make test` passes on a fresh machine (and `.ci/run`, which only runs `make test`):
#
#   * Redis on 127.0.0.1:6379 (apt `redis-server`; started when not answering)
#   * Postgres on 127.0.0.1:5432 with trust auth for `postgres` over loopback
#     (apt `postgresql`; the cluster is created/started when needed)
#   * Debian Chromium at /usr/bin/chromium (apt `chromium`; Playwright drives it,
#     it never downloads a browser of its own)
#   * the pinned npm `@openfn/project` for tests/external (needs node >= 20 and npm)
#   * the pinned npm `@openfn/runtime` + language-common/-http for tests/external
#     and the eval runtime grader (agents/testrun/node, same mechanism)
#   * the web page's pinned npm libraries (app/web/packages, same mechanism)
#
# Idempotent and silent when everything is already there. Installing packages
# needs root; without it the script lists what is missing and how to install
# it, and exits 1. Setting PLANWRIGHT_TEST_REDIS_URL / PLANWRIGHT_TEST_POSTGRES_URL
# means "I run that server myself": the script then leaves that service alone.
set -euo pipefail
cd "$(dirname "$0")/.."

export DEBIAN_FRONTEND=noninteractive
CHROMIUM="${PLANWRIGHT_CHROMIUM:-/usr/bin/chromium}"
PYTHON="${PYTHON:-.venv/bin/python}"
PG_URL="postgresql://postgres@127.0.0.1:5432/postgres"

missing=()
apt_updated=0
is_root=0
[ "$(id -u)" = 0 ] && is_root=1

say() { echo "ensure-test-services: $*" >&2; }

need() { # need WHAT HOW
  missing+=("$1 -> $2")
}

apt_install() { # apt_install PACKAGE...; returns 1 when not root
  [ "$is_root" = 1 ] || return 1
  local log
  log="$(mktemp)"
  if [ "$apt_updated" = 0 ]; then
    apt-get update -qq >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; exit 1; }
    apt_updated=1
  fi
  say "installing $* with apt-get"
  apt-get install -y -qq "$@" >"$log" 2>&1 || { cat "$log" >&2; rm -f "$log"; exit 1; }
  rm -f "$log"
}

wait_for() { # wait_for SECONDS COMMAND...
  local deadline=$((SECONDS + $1))
  shift
  until "$@" >/dev/null 2>&1; do
    [ "$SECONDS" -lt "$deadline" ] || return 1
    sleep 0.2
  done
}

# --- Redis -------------------------------------------------------------------
redis_up() { redis-cli -h 127.0.0.1 -p 6379 ping 2>/dev/null | grep -q PONG; }

ensure_redis() {
  [ -z "${PLANWRIGHT_TEST_REDIS_URL:-}" ] || return 0
  if command -v redis-cli >/dev/null 2>&1 && redis_up; then return 0; fi
  if ! command -v redis-server >/dev/null 2>&1; then
    apt_install redis-server || { need "Redis" "apt-get install -y redis-server"; return 0; }
  fi
  local dir=/var/lib/redis logdir=/var/log/redis
  if [ "$is_root" != 1 ]; then # a user can run its own Redis, just not in /var
    dir="${TMPDIR:-/tmp}/planwright-redis-$(id -u)"
    logdir="$dir"
  fi
  mkdir -p "$dir" "$logdir"
  say "starting redis-server on 127.0.0.1:6379"
  redis-server --daemonize yes --bind 127.0.0.1 -::1 --port 6379 --save "" --appendonly no \
    --dir "$dir" --logfile "$logdir/ci.log"
  wait_for 10 redis_up || need "Redis on 127.0.0.1:6379" "see $logdir/ci.log"
}

# --- Postgres ----------------------------------------------------------------
pg_up() { pg_isready -h 127.0.0.1 -p 5432 -q; }
pg_login() { psql "$PG_URL" -w -qAtc 'select 1' >/dev/null 2>&1; }
pg_cluster() { ls /etc/postgresql 2>/dev/null | head -n1; }

ensure_postgres() {
  [ -z "${PLANWRIGHT_TEST_POSTGRES_URL:-}" ] || return 0
  if command -v psql >/dev/null 2>&1 && pg_login; then return 0; fi
  if ! command -v pg_ctlcluster >/dev/null 2>&1; then
    apt_install postgresql || { need "Postgres" "apt-get install -y postgresql"; return 0; }
  fi
  if [ "$is_root" != 1 ]; then
    need "Postgres on 127.0.0.1:5432 (user postgres, trust auth)" \
      "as root: pg_ctlcluster --skip-systemctl-redirect \$(ls /etc/postgresql | head -n1) main start"
    return 0
  fi
  if [ -z "$(pg_cluster)" ]; then # installed with create_main_cluster = false
    local version
    version="$(ls /usr/lib/postgresql | sort -V | tail -n1)"
    say "creating Postgres cluster $version/main"
    pg_createcluster "$version" main >/dev/null
  fi
  local version hba
  version="$(pg_cluster)"
  if ! pg_up; then
    say "starting Postgres $version/main"
    pg_ctlcluster --skip-systemctl-redirect "$version" main start
    wait_for 20 pg_up || { need "Postgres on 127.0.0.1:5432" "see /var/log/postgresql/"; return 0; }
  fi
  if ! pg_login; then # a stock cluster asks for a password over TCP; the tests log in without
    hba="/etc/postgresql/$version/main/pg_hba.conf"
    say "allowing postgres@127.0.0.1 without password in $hba"
    sed -i '1i host all postgres 127.0.0.1/32 trust\nhost all postgres ::1/128 trust' "$hba"
    pg_ctlcluster --skip-systemctl-redirect "$version" main reload
    wait_for 10 pg_login || need "Postgres login as postgres@127.0.0.1" "trust auth in $hba"
  fi
}

# --- Chromium ----------------------------------------------------------------
ensure_chromium() {
  [ -x "$CHROMIUM" ] && return 0
  apt_install chromium || { need "Chromium at $CHROMIUM" "apt-get install -y chromium"; return 0; }
  [ -x "$CHROMIUM" ] || need "Chromium at $CHROMIUM" "apt-get install -y chromium"
}

# --- @openfn/project for tests/external ----------------------------------------
ensure_openfn_project() {
  if ! command -v node >/dev/null 2>&1 || ! command -v npm >/dev/null 2>&1; then
    need "Node.js >= 20 and npm" "apt-get install -y nodejs npm (or NodeSource 20.x)"
    return 0
  fi
  # Without the venv there is nothing to run yet; the tests install it on demand.
  [ -x "$PYTHON" ] || return 0
  "$PYTHON" -c 'from tests.external.openfn_harness import ensure_openfn_project_installed as f; f()' \
    || need "@openfn/project (npm ci)" "needs the npm registry; see the error above"
}

# --- @openfn/runtime + adaptors for tests/external and the eval grader ---------
ensure_openfn_runtime() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || return 0 # said above
  [ -x "$PYTHON" ] || return 0
  "$PYTHON" -c 'from agents.testrun.install import ensure_installed as f; f()' \
    || need "@openfn/runtime (npm ci in .cache/openfn-runtime)" "needs the npm registry; see the error above"
}

# --- the web page's npm libraries (js-yaml, jsdiff, dagre) for the browser tests -
ensure_web_assets() {
  command -v node >/dev/null 2>&1 && command -v npm >/dev/null 2>&1 || return 0 # said above
  [ -x "$PYTHON" ] || return 0
  "$PYTHON" -m app.web.assets >/dev/null \
    || need "the web page's libraries (npm ci in .cache/web-assets)" "needs the npm registry; see the error above"
}

ensure_redis
ensure_postgres
ensure_chromium
ensure_openfn_project
ensure_openfn_runtime
ensure_web_assets

if [ "${#missing[@]}" -gt 0 ]; then
  say "the test suite needs these and they are missing:"
  for item in "${missing[@]}"; do say "  $item"; done
  [ "$is_root" = 1 ] || say "(not root: run this script as root, or install them yourself)"
  exit 1
fi
