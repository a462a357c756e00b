#!/usr/bin/env bash
# Load measurement: the simulator against a minimal static-bytes Go server
# (ci/load/static) that serves the very bytes the simulator answered, side by
# side in one run. Servers run on one core, the load generator (wrk) on
# another, against 127.0.0.1 only, for a bounded time each.
#
#   ci/load/bench.sh            # DURATION=10s ROUNDS=3 CONNECTIONS=32 by default
#
# Targets: feed page (limit=50) >= 60% of static; tracked videos (20 ids)
# >= 40% of static. The simulator runs with --feed-limit 0 --videos-limit 0
# (unlimited; a rate limit would answer 429 to a load test) and a manual clock.
set -euo pipefail

DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-32}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
SIM_PORT=${SIM_PORT:-18080}
STATIC_PORT=${STATIC_PORT:-18090}

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)" >&2
  (apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; })
fi
command -v taskset >/dev/null || { echo "bench.sh: taskset (util-linux) is needed" >&2; exit 1; }
if [ "$(nproc)" -lt 2 ]; then
  echo "bench.sh: needs 2 cores to pin servers and wrk apart" >&2; exit 1
fi

cd "$root"
go build -o "$work/simulator" ./cmd/simulator
go build -o "$work/static" ./ci/load/static

GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/simulator" --addr "127.0.0.1:$SIM_PORT" --speed 0 \
  --feed-limit 0 --videos-limit 0 --log-level warn --info-file "$work/info.json" >/dev/null &
pids+=($!)
for _ in $(seq 100); do [ -s "$work/info.json" ] && break; sleep 0.1; done
[ -s "$work/info.json" ] || { echo "bench.sh: the simulator did not start" >&2; exit 1; }
url=$(sed -n 's/.*"url": "\([^"]*\)".*/\1/p' "$work/info.json")
key=$(sed -n 's/.*"proKey": "\([^"]*\)".*/\1/p' "$work/info.json")

"$work/static" -capture -url "$url" -key "$key" -dir "$work"
GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/static" -addr "127.0.0.1:$STATIC_PORT" -dir "$work" &
pids+=($!)
sleep 0.5

body=$(cat "$work/videos-request.json")
cat >"$work/videos.lua" <<LUA
wrk.method = "POST"
wrk.body = '$body'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Bearer $key"
LUA
cat >"$work/feed.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $key"
LUA

# rps URL SCRIPT: requests/s that wrk measured; non-2xx answers fail the run.
rps() {
  local out
  out=$(taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -s "$2" "$1")
  if grep -q "Non-2xx" <<<"$out"; then
    echo "bench.sh: non-2xx answers from $1:" >&2; echo "$out" >&2; exit 1
  fi
  awk '/Requests\/sec/ {print $2}' <<<"$out"
}

feed_q="/api/public-feed?limit=50"
# Warm up both (JIT-free Go, but connection setup and page cache).
taskset -c "$LOAD_CPU" wrk -t1 -c4 -d1s -s "$work/feed.lua" "$url$feed_q" >/dev/null
taskset -c "$LOAD_CPU" wrk -t1 -c4 -d1s -s "$work/feed.lua" "http://127.0.0.1:$STATIC_PORT$feed_q" >/dev/null

# Rounds alternate static and simulator, and the best of each is kept: on a
# shared machine, interference only ever lowers a figure.
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a > b ? a : b) }'; }
static_feed=0 sim_feed=0 static_videos=0 sim_videos=0
for round in $(seq "$ROUNDS"); do
  static_feed=$(best "$static_feed" "$(rps "http://127.0.0.1:$STATIC_PORT$feed_q" "$work/feed.lua")")
  sim_feed=$(best "$sim_feed" "$(rps "$url$feed_q" "$work/feed.lua")")
  static_videos=$(best "$static_videos" "$(rps "http://127.0.0.1:$STATIC_PORT/api/public/videos" "$work/videos.lua")")
  sim_videos=$(best "$sim_videos" "$(rps "$url/api/public/videos" "$work/videos.lua")")
  echo "round $round: feed static $static_feed sim $sim_feed; videos static $static_videos sim $sim_videos (best so far)" >&2
done

feed_bytes=$(wc -c <"$work/feed.json")
videos_bytes=$(wc -c <"$work/videos.json")
printf '\n%-28s %12s %12s %8s %8s\n' "operation (body bytes)" "static rps" "sim rps" "ratio" "target"
awk -v s="$static_feed" -v m="$sim_feed" -v b="$feed_bytes" \
  'BEGIN { printf "%-28s %12.0f %12.0f %7.0f%% %7s\n", "feed limit=50 (" b ")", s, m, 100*m/s, "60%" }'
awk -v s="$static_videos" -v m="$sim_videos" -v b="$videos_bytes" \
  'BEGIN { printf "%-28s %12.0f %12.0f %7.0f%% %7s\n", "videos 20 ids (" b ")", s, m, 100*m/s, "40%" }'
echo "(best of $ROUNDS alternating rounds of wrk -t1 -c$CONNECTIONS -d$DURATION on cpu $LOAD_CPU; servers GOMAXPROCS=1 on cpu $SERVER_CPU; $(go version | cut -d' ' -f3))"
