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
  local log=".tmp/mocha-$label.log"
  rm -f ".tmp/timing-$label.jsonl"
  TIMING_OUT=".tmp/timing-$label.jsonl" npx mocha "${parallel[@]}" "$@" >"$log" 2>&1
}

# The spec files a suite spent the most time in (the root hooks write a line per file).
show_timing() {
  local file=".tmp/timing-$1.jsonl"
  [ -f "$file" ] || return 0
  echo "== slowest spec files on $1 (seconds)"
  node -e 'const t = require("fs").readFileSync(process.argv[1], "utf8").split("\n").filter(Boolean).map((l) => JSON.parse(l));
    t.sort((a, b) => b.ms - a.ms);
    for (const { file, ms } of t.slice(0, 15)) console.log(`  ${(ms / 1000).toFixed(1).padStart(7)}  ${file}`);
    console.log(`  ${(t.reduce((a, b) => a + b.ms, 0) / 1000).toFixed(1).padStart(7)}  all ${t.length} files`);' "$file"
}

count_suite() {
  local label=$1 rc=$2
  local log=".tmp/mocha-$label.log"
  local p f
  p=$(grep -Eo '^ +[0-9]+ passing' "$log" | grep -Eo '[0-9]+' | tail -1)
  f=$(grep -Eo '^ +[0-9]+ failing' "$log" | grep -Eo '[0-9]+' | tail -1)
  passed=$((passed + ${p:-0}))
  failed=$((failed + ${f:-0}))
  [ "$rc" -eq 0 ] || status=1
}

# TEST_JOBS=N runs each suite's spec files in N worker processes at once (mocha's parallel mode). The default is one process per suite: measured in a
# full run on two cores (2026-11-27), two workers per suite took as long as one (the two suites together
# already keep both cores busy), and the longest specs (contract, fuzz) ran past their timeouts.
parallel=()
[ "${TEST_JOBS:-1}" = 1 ] || parallel=(--parallel --jobs "${TEST_JOBS}")

# Without arguments, every spec; with them, what they name (mocha would add its config's specs to named ones).
[ $# -gt 0 ] || set -- 'test/**/*.spec.ts'
if [ -z "${TEST_DATABASE_URL:-}" ]; then
  echo "== test suite on pglite"
  rm -f .tmp/timing-pglite.jsonl
  TIMING_OUT=.tmp/timing-pglite.jsonl TEST_DATABASE_URL= SERVICE_TEST_DATABASE_URL= npx mocha "$@" 2>&1 | tee .tmp/mocha-pglite.log
  count_suite pglite "${PIPESTATUS[0]}"
  show_timing pglite
  echo "== TEST_DATABASE_URL is not set: the PostgreSQL run is skipped"
elif [ "${TEST_SERIAL:-}" = 1 ]; then
  for label in pglite postgresql; do
    echo "== test suite on $label"
    if [ "$label" = pglite ]; then TEST_DATABASE_URL= SERVICE_TEST_DATABASE_URL= run_suite pglite "$@"; else run_suite postgresql "$@"; fi
    rc=$?
    cat ".tmp/mocha-$label.log"
    show_timing "$label"
    count_suite "$label" "$rc"
  done
else
  # Both backends at once, each in a mocha process of its own (its own PostgreSQL database, ports,
  # folders and browser): a suite waits on the network, the databases and its timers for over half
  # of its time (measured: 47% of a core for the PostgreSQL run), so two fit on two cores.
  # TEST_SERIAL=1 runs them one after the other.
  echo "== test suites on pglite and postgresql, at once (logs: .tmp/mocha-pglite.log, .tmp/mocha-postgresql.log)"
  TEST_DATABASE_URL= SERVICE_TEST_DATABASE_URL= run_suite pglite "$@" &
  lite=$!
  run_suite postgresql "$@" &
  pg=$!
  wait "$lite"; lite_rc=$?
  wait "$pg"; pg_rc=$?
  for label in pglite postgresql; do
    echo "== test suite on $label"
    cat ".tmp/mocha-$label.log"
    show_timing "$label"
  done
  count_suite pglite "$lite_rc"
  count_suite postgresql "$pg_rc"
fi

echo "tests: $passed passed, $failed failed"
exit $status
