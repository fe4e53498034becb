#!/usr/bin/env bash
# The test command (`npm test`): type-checks, then runs the whole suite on the
# embedded database and, when TEST_DATABASE_URL names a PostgreSQL server,
# again on PostgreSQL. Extra arguments go to mocha (e.g. a spec file).
set -uo pipefail
cd "$(dirname "$0")/.."
mkdir -p .tmp
status=0
passed=0
failed=0

# The directory sign-in tests start a private slapd of their own; it must be installed.
echo "== OpenLDAP for the directory tests"
bash scripts/ensure-slapd.sh || status=1

# The browser tests drive Debian's chromium through playwright-core; it must be installed.
echo "== Chromium for the browser tests"
bash scripts/ensure-chromium.sh || status=1

echo "== type check"
npx tsc -p tsconfig.json --noEmit || status=1

run_suite() {
  local label=$1; shift
  echo "== test suite on $label"
  local log=".tmp/mocha-$label.log"
  npx mocha "$@" 2>&1 | tee "$log"
  local rc=${PIPESTATUS[0]}
  local p f
  p=$(grep -Eo '^ +[0-9]+ passing' "$log" | grep -Eo '[0-9]+' | tail -1)
  f=$(grep -Eo '^ +[0-9]+ failing' "$log" | grep -Eo '[0-9]+' | tail -1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  [ "$rc" -eq 0 ] || status=1
}

# Without arguments, every spec; with them, what they name (mocha would add its config's specs to named ones).
[ $# -gt 0 ] || set -- 'test/**/*.spec.ts'
TEST_DATABASE_URL= SERVICE_TEST_DATABASE_URL= run_suite pglite "$@"
if [ -n "${TEST_DATABASE_URL:-}" ]; then
  run_suite postgresql "$@"
else
  echo "== TEST_DATABASE_URL is not set: the PostgreSQL run is skipped"
fi

echo "tests: $passed passed, $failed failed"
exit $status
