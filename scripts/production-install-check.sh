#!/usr/bin/env bash
# CI step (issue 31, .ci/run): the built tree, installed for production (`npm ci --omit=dev`) in a
# temporary directory, has no development dependency and starts: `npm start` runs the compiled
# service (no build, no tsx) against a fresh database of the system cluster and /api/health/
# answers 200; `node dist/src/cli/start.js` is what serves. Run after `npm ci` (whose prepare
# step builds dist/ and web/dist/). Prints one line per step; exits non-zero on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
root_url="${TEST_DATABASE_URL:-postgres://postgres@127.0.0.1:5432/postgres}"
[ -f dist/src/cli/start.js ] && [ -f web/dist/index.html ] || { echo "production install: build first (npm ci or npm run build)"; exit 1; }

work="$(mktemp -d /tmp/wfm-production-XXXXXX)"
db="wfm_production_check_$$"
pgid=""
cleanup() {
  if [ -n "$pgid" ]; then kill -TERM -- "-$pgid" 2>/dev/null || true; sleep 1; kill -KILL -- "-$pgid" 2>/dev/null || true; fi
  psql "$root_url" -qAtc "drop database if exists $db" >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT

started=$(date +%s)
# The tree as a release ships it: sources, builds, lockfile; tar keeps the files' times, so the
# builds stay newer than their sources.
tar --exclude=./node_modules --exclude=./.git --exclude=./.data --exclude=./test-results --exclude=./bench/results -cf - . | tar -xf - -C "$work"
(cd "$work" && npm ci --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error >"$work/install.log" 2>&1) \
  || { cat "$work/install.log"; echo "production install: npm ci --omit=dev failed"; exit 1; }
# No development dependency of package.json is installed for its own sake. A few come along as
# dependencies of runtime packages (TypeScript: an optional peer of graphile-worker's cosmiconfig;
# React: postgraphile's GraphiQL): they are removed here, so that the start below proves the
# service needs none of them (and npm start finds no build tool).
for dev in $(node -e 'console.log(Object.keys(require(process.argv[1]).devDependencies).join(" "))' "$work/package.json"); do
  [ -e "$work/node_modules/$dev" ] || continue
  if ! (cd "$work" && npm ls "$dev" --omit=dev --all 2>/dev/null | grep -q "$dev@"); then
    echo "production install: the development dependency $dev is installed for its own sake"; exit 1
  fi
  echo "production install: $dev came along with a runtime dependency ($(cd "$work" && npm ls "$dev" --omit=dev --all 2>/dev/null | sed -n 2p | tr -d '│├└─┬ ')): removed for the start"
  rm -rf "${work:?}/node_modules/$dev"
done
for tool in tsx vite typescript; do
  [ ! -e "$work/node_modules/$tool" ] || { echo "production install: $tool is still there"; exit 1; }
done
echo "production install: npm ci --omit=dev in $(( $(date +%s) - started )) s, no development dependency"

psql "$root_url" -qAtc "create database $db" >/dev/null
db_url="$(node -e 'const u = new URL(process.argv[1]); u.pathname = "/" + process.argv[2]; console.log(u.toString())' "$root_url" "$db")"
port="$(node -e 'const s = require("node:net").createServer().listen(0, "127.0.0.1", () => { console.log(s.address().port); s.close(); })')"
cd "$work"
DATABASE_URL="$db_url" JWT_SECRET="$(head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n')" PORT="$port" HOST=127.0.0.1 \
  DATA_DIR="$work/.data" PATH="$work/node_modules/.bin:$PATH" setsid npm start >"$work/start.log" 2>&1 &
pgid=$!
for _ in $(seq 1 240); do
  if [ "$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/health/")" = 200 ]; then break; fi
  if ! kill -0 "$pgid" 2>/dev/null; then cat "$work/start.log"; echo "production install: npm start exited"; exit 1; fi
  sleep 0.5
done
status="$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/api/health/")"
[ "$status" = 200 ] || { cat "$work/start.log"; echo "production install: /api/health/ answered $status"; exit 1; }
if grep -q "Building" "$work/start.log"; then cat "$work/start.log"; echo "production install: npm start rebuilt"; exit 1; fi
# What serves is node running the compiled code: no tsx anywhere in the process group.
if ps -o args= -g "$pgid" | grep -q tsx; then ps -o pid,args -g "$pgid"; echo "production install: tsx runs"; exit 1; fi
echo "production install: npm start answered /api/health/ 200 in $(( $(date +%s) - started )) s in all"
