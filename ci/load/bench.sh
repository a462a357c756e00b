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

# cpu_ticks PID: user+system CPU time of a process, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# measure PID URL SCRIPT: prints "rps requests-per-cpu-second" for one wrk
# run against the server PID; non-2xx answers fail the run. The second
# figure counts only the CPU the server itself used, so other load on the
# machine (a shared 2-core box) disturbs it far less than requests/s.
measure() {
  local out before after reqs
  before=$(cpu_ticks "$1")
  out=$(taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNECTIONS" -d"$DURATION" -s "$3" "$2")
  after=$(cpu_ticks "$1")
  if grep -q "Non-2xx" <<<"$out"; then
    echo "bench.sh: non-2xx answers from $2:" >&2; echo "$out" >&2; exit 1
  fi
  reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
  awk -v o="$out" -v r="$reqs" -v t=$((after - before)) -v hz="$HZ" \
    'BEGIN { n = split(o, l, "\n"); for (i = 1; i <= n; i++) if (l[i] ~ /Requests\/sec/) { split(l[i], f, " "); rps = f[2] }
             printf "%s %.0f\n", rps, (t > 0 ? r / (t / hz) : 0) }'
}
HZ=$(getconf CLK_TCK)

feed_q="/api/public-feed?limit=50"
# Warm up both.
taskset -c "$LOAD_CPU" wrk -t1 -c4 -d1s -s "$work/feed.lua" "$url$feed_q" >/dev/null
taskset -c "$LOAD_CPU" wrk -t1 -c4 -d1s -s "$work/feed.lua" "http://127.0.0.1:$STATIC_PORT$feed_q" >/dev/null

# Rounds alternate static and simulator, and the best of each figure is
# kept: on a shared machine, interference only ever lowers a figure.
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 > b + 0 ? a : b) }'; }
declare -A rps eff
for k in static_feed sim_feed static_videos sim_videos; do rps[$k]=0; eff[$k]=0; done
sim_pid=${pids[0]} static_pid=${pids[1]}
for round in $(seq "$ROUNDS"); do
  for k in static_feed sim_feed static_videos sim_videos; do
    case $k in
      static_feed) m=$(measure "$static_pid" "http://127.0.0.1:$STATIC_PORT$feed_q" "$work/feed.lua") || exit 1 ;;
      sim_feed) m=$(measure "$sim_pid" "$url$feed_q" "$work/feed.lua") || exit 1 ;;
      static_videos) m=$(measure "$static_pid" "http://127.0.0.1:$STATIC_PORT/api/public/videos" "$work/videos.lua") || exit 1 ;;
      sim_videos) m=$(measure "$sim_pid" "$url/api/public/videos" "$work/videos.lua") || exit 1 ;;
    esac
    rps[$k]=$(best "${rps[$k]}" "${m% *}")
    eff[$k]=$(best "${eff[$k]}" "${m#* }")
  done
  echo "round $round (best so far, rps / requests per server CPU-second): feed static ${rps[static_feed]} / ${eff[static_feed]}, sim ${rps[sim_feed]} / ${eff[sim_feed]}; videos static ${rps[static_videos]} / ${eff[static_videos]}, sim ${rps[sim_videos]} / ${eff[sim_videos]}" >&2
done

feed_bytes=$(wc -c <"$work/feed.json")
videos_bytes=$(wc -c <"$work/videos.json")
printf '\n%-26s %11s %11s %7s %12s %12s %7s %7s\n' "operation (body bytes)" "static rps" "sim rps" "ratio" "static /cpu-s" "sim /cpu-s" "ratio" "target"
row() {
  awk -v n="$1" -v s="${rps[$2]}" -v m="${rps[$3]}" -v se="${eff[$2]}" -v me="${eff[$3]}" -v t="$4" \
    'BEGIN { printf "%-26s %11.0f %11.0f %6.0f%% %12.0f %12.0f %6.0f%% %7s\n", n, s, m, 100*m/s, se, me, 100*me/se, t }'
}
row "feed limit=50 ($feed_bytes)" static_feed sim_feed 60%
row "videos 20 ids ($videos_bytes)" static_videos sim_videos 40%
echo "(best of $ROUNDS alternating rounds of wrk -t1 -c$CONNECTIONS -d$DURATION on cpu $LOAD_CPU; servers GOMAXPROCS=1 on cpu $SERVER_CPU; $(go version | cut -d' ' -f3))"
