#!/usr/bin/env bash
# Measures a run of the conformance suite against each hostile target of
# suites/hostile, with the suite's default bounds unless SUITE_FLAGS says
# otherwise: wall time and peak memory (/usr/bin/time -v), exit code,
# outcome, and requests that reached the other listener. Loopback only.
#
#   ci/hostile/measure.sh                       # every target
#   ci/hostile/measure.sh huge-body drip        # some
#   SIZE=4190000 ci/hostile/measure.sh invalid-json   # bodies just under 4 MiB
set -euo pipefail
cd "$(dirname "$0")/../.."
out=${OUT:-/tmp/tcmkit-hostile}
mkdir -p "$out"
go test -c -o "$out/suite.test" ./suites
go build -o "$out/hostile" ./cmd/hostile
names=("$@")
if [ ${#names[@]} -eq 0 ]; then
  mapfile -t names < <("$out/hostile" --list | awk '{print $1}')
fi
port=${PORT:-19911}
printf '%-26s %-8s %10s %12s %5s %s\n' target outcome wall "peak memory" exit "other listener"
for name in "${names[@]}"; do
  port=$((port + 1))
  "$out/hostile" --name "$name" --addr "127.0.0.1:$port" --size "${SIZE:-245760}" > "$out/$name.hostile.log" 2>&1 &
  pid=$!
  sleep 0.5
  # the target and keys go in the environment, not on a command line that
  # /usr/bin/time and ps show
  read -r _ target _ pro _ free _ revoked < <(sed -n 's/^  suite: //p' "$out/$name.hostile.log")
  rm -rf "$out/$name"
  set +e
  # shellcheck disable=SC2086
  TCM_TARGET=$target TCM_PRO_KEY=$pro TCM_FREE_KEY=$free TCM_REVOKED_KEY=$revoked \
    /usr/bin/time -v -o "$out/$name.time" "$out/suite.test" --report-dir "$out/$name" ${SUITE_FLAGS:-} \
    > "$out/$name.log" 2>&1
  code=$?
  set -e
  kill "$pid"; wait "$pid" 2>/dev/null || true
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$out/$name.time")
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$out/$name.time")
  outcome=$(sed -n 's/^  "outcome": "\(.*\)",/\1/p' "$out/$name/conformance-report.json")
  other=$(sed -n 's/^the other listener got \([0-9]*\) requests/\1/p' "$out/$name.hostile.log")
  printf '%-26s %-8s %10s %9d MiB %5s %s\n' "$name" "$outcome" "$wall" $((rss / 1024)) "$code" "$other"
done
