#!/usr/bin/env bash
# Clock advances against API requests: the simulator (manual clock) is
# moved seven times by a year (POST /_control/clock/advance 8760h, one after
# the other) while a client asks for the first feed page in a loop; the
# script prints how long each advance took, the slowest feed answer seen
# meanwhile, the events and whether the world became full, and the
# simulator's peak memory (VmHWM). 127.0.0.1 only; it stops by itself.
#
#   ci/load/advance.sh           # YEARS=7 MAX_EVENTS=1000000 (the default)
set -euo pipefail
YEARS=${YEARS:-7}
MAX_EVENTS=${MAX_EVENTS:-1000000}
root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
sim_pid=""
loop_pid=""
cleanup() {
  [ -n "$loop_pid" ] && kill "$loop_pid" 2>/dev/null || true
  [ -n "$sim_pid" ] && kill "$sim_pid" 2>/dev/null || true
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
cd "$root"
go build -o "$work/simulator" ./cmd/simulator
"$work/simulator" --addr 127.0.0.1:0 --speed 0 --feed-limit -1 --max-events "$MAX_EVENTS" \
  --log-level warn --info-file "$work/info.json" >/dev/null &
sim_pid=$!
for _ in $(seq 100); do [ -s "$work/info.json" ] && break; sleep 0.1; done
url=$(jq -r .url "$work/info.json")
key=$(jq -r .proKey "$work/info.json")

# The client: the first feed page, again and again, each answer's time.
(while :; do
  curl -s -o /dev/null -w '%{time_total}\n' -H "Authorization: Bearer $key" "$url/api/public-feed?limit=50" || true
done) >"$work/latency.txt" &
loop_pid=$!

for y in $(seq "$YEARS"); do
  start=$(date +%s.%N)
  out=$(curl -s -X POST -H 'Content-Type: application/json' -d '{"duration":"8760h"}' "$url/_control/clock/advance")
  end=$(date +%s.%N)
  printf 'year %d: advance took %.1f s, %s events, full %s\n' "$y" "$(echo "$end - $start" | bc)" \
    "$(jq -r .events <<<"$out")" "$(jq -r .full <<<"$out")"
done
kill "$loop_pid" 2>/dev/null || true
wait "$loop_pid" 2>/dev/null || true
loop_pid=""
sort -n "$work/latency.txt" | awk '{ a[NR] = $1 } END {
  printf "feed answers during the advances: %d, median %.1f ms, p99 %.1f ms, slowest %.1f ms\n", NR, 1000 * a[int(NR / 2) + 1], 1000 * a[int(NR * 0.99) + 1], 1000 * a[NR] }'
grep VmHWM "/proc/$sim_pid/status" | awk '{ printf "simulator peak memory (VmHWM): %d MB\n", $2 / 1024 }'
