#!/usr/bin/env bash
# Load measurement: the simulator against a minimal static-bytes Go server
# (ci/load/static) that serves the very bytes the simulator answered, side by
# side in one run. Servers run on one core (GOMAXPROCS=1, taskset), the load
# generator (wrk) on another, against 127.0.0.1 only, for a bounded time each.
#
#   ci/load/bench.sh        # DURATION=10s ROUNDS=3 CONNECTIONS=16 by default
#
# Two phases, each with its own simulator (--feed-limit -1 --videos-limit -1:
# a rate limit would answer 429 to a load test) and its own capture:
#   still  --speed 0 (a manual clock: the world stands still, answers are
#          kept): the first feed page, one 20-id tracked-videos request
#   live   --speed 60 --history 8760h (the world moves, an hour of polling a
#          minute, no answer asked for twice at the same moment): the first
#          feed page, every deep page of the feed (limit=50, thousands of
#          cursors, at random), one 20-id request again and again, random
#          sets of 20 ids
# The ceilings (CEILING, a list; each a static server of its own, measured
# in the same rounds):
#   typical   (issue 27) one constant answer per case, hot, no lookup, of
#             the case's mean size: the first page, a deep page of the deep
#             pages' mean size, the first set's answer for the one set, an
#             answer of the random sets' mean size for the random sets
#   first     the first page and the first set's answer for every request
#             (the ceiling as issue 27 was first measured: the first set
#             names the newest videos, a fifth smaller than a random set's)
#   captured  the very answers the simulator gave, each by its request
# Targets in requests per server CPU-second, simulator / typical: live deep
# pages (DEEP cursors drawn from the whole walk, 1,912) and random 20-id
# sets (SETS of them, 5,000) >= 65%, and the simulator's p99 latency <= 5 ms
# at 16 connections.
set -euo pipefail

DURATION=${DURATION:-10s}
ROUNDS=${ROUNDS:-3}
CONNECTIONS=${CONNECTIONS:-16}
SERVER_CPU=${SERVER_CPU:-0}
LOAD_CPU=${LOAD_CPU:-1}
# About 525 days of history: a feed of more than DEEP pages of 50.
LIVE_HISTORY=${LIVE_HISTORY:-12600h}
DEEP=${DEEP:-1912}
SETS=${SETS:-5000}
read -r -a ceilings <<<"${CEILING:-typical first}"
for ceil in "${ceilings[@]}"; do
  case $ceil in typical | first | captured) ;; *) echo "bench.sh: CEILING: typical, first or captured, not $ceil" >&2; exit 2 ;; esac
done
# SIM_FLAGS: more flags for both simulators, such as "--journal-size -1".
read -r -a sim_flags <<<"${SIM_FLAGS:-}"
capture_flags=(-answers=false)
[[ " ${ceilings[*]} " == *" captured "* ]] && capture_flags=()

root=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
pids=()
stop_servers() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  pids=()
}
trap 'stop_servers; rm -rf "$work"' EXIT

if ! command -v wrk >/dev/null; then
  echo "installing wrk (apt-get)" >&2
  (apt-get install -y wrk >/dev/null 2>&1 || { apt-get update >/dev/null && apt-get install -y wrk >/dev/null; })
fi
command -v taskset >/dev/null || { echo "bench.sh: taskset (util-linux) is needed" >&2; exit 1; }
if [ "$(nproc)" -lt 2 ]; then
  echo "bench.sh: needs 2 cores to pin servers and wrk apart" >&2; exit 1
fi

# PROFILE=DIR: the simulator is built with -tags pprof (net/http/pprof on a
# second listener, cmd/simulator/pprof.go), and the first round of each
# case writes a CPU profile of it under that load to DIR/PHASE-CASE.pprof
# (go tool pprof -top FILE).
PROFILE=${PROFILE:-}

cd "$root"
if [[ -n "$PROFILE" ]]; then
  mkdir -p "$PROFILE"
  PROFILE=$(cd "$PROFILE" && pwd)
  go build -tags pprof -o "$work/simulator" ./cmd/simulator
else
  go build -o "$work/simulator" ./cmd/simulator
fi
go build -o "$work/static" ./ci/load/static
HZ=$(getconf CLK_TCK)

declare -A static_pid static_url
# start_phase NAME SIMULATOR-FLAGS...: starts a simulator and, once it has
# captured the simulator's answers, the static server on them.
start_phase() {
  local dir="$work/$1"
  shift
  mkdir -p "$dir"
  TCM_PPROF_FILE="$dir/pprof.txt" GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/simulator" --addr 127.0.0.1:0 \
    --feed-limit -1 --videos-limit -1 --log-level warn --info-file "$dir/info.json" "$@" ${sim_flags[@]+"${sim_flags[@]}"} >/dev/null &
  pids+=($!)
  sim_pid=$!
  for _ in $(seq 600); do [ -s "$dir/info.json" ] && break; sleep 0.1; done
  [ -s "$dir/info.json" ] || { echo "bench.sh: the simulator did not start" >&2; exit 1; }
  url=$(sed -n 's/.*"url": "\([^"]*\)".*/\1/p' "$dir/info.json")
  key=$(sed -n 's/.*"proKey": "\([^"]*\)".*/\1/p' "$dir/info.json")
  "$work/static" -capture -url "$url" -key "$key" -dir "$dir" -deep "$DEEP" -sets "$SETS" ${capture_flags[@]+"${capture_flags[@]}"}
  for ceil in "${ceilings[@]}"; do
    rm -f "$dir/addr.txt"
    GOMAXPROCS=1 taskset -c "$SERVER_CPU" "$work/static" -addr 127.0.0.1:0 -dir "$dir" -ceiling "$ceil" &
    pids+=($!)
    static_pid[$ceil]=$!
    for _ in $(seq 600); do [ -s "$dir/addr.txt" ] && break; sleep 0.1; done
    static_url[$ceil]="http://$(cat "$dir/addr.txt")"
    for _ in $(seq 50); do curl -fs -o /dev/null "${static_url[$ceil]}/api/public-feed?limit=50" && break; sleep 0.1; done
  done
  # One wrk script per case: GET targets or POST bodies, one drawn at
  # random per request from the case's list.
  for list in first deep; do
    cat >"$dir/$list.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $key"
local targets = {}
for line in io.lines("$dir/$list.txt") do targets[#targets + 1] = line end
request = function() return wrk.format("GET", targets[math.random(#targets)]) end
LUA
  done
  for list in one random; do
    cat >"$dir/$list.lua" <<LUA
wrk.headers["Authorization"] = "Bearer $key"
wrk.headers["Content-Type"] = "application/json"
local bodies = {}
for line in io.lines("$dir/$list.txt") do bodies[#bodies + 1] = line end
request = function() return wrk.format("POST", "/api/public/videos", nil, bodies[math.random(#bodies)]) end
LUA
  done
}

# cpu_ticks PID: user+system CPU time of a process, in clock ticks.
cpu_ticks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# measure PID URL SCRIPT: prints "rps requests-per-cpu-second p99-ms" for
# one wrk run against the server PID; non-2xx answers fail the run. The
# second figure counts only the CPU the server itself used, so other load on
# the machine disturbs it far less than requests/s.
measure() {
  local out before after reqs
  before=$(cpu_ticks "$1")
  out=$(taskset -c "$LOAD_CPU" wrk -t1 -c"$CONNECTIONS" -d"$DURATION" --latency -s "$3" "$2")
  after=$(cpu_ticks "$1")
  if grep -q "Non-2xx" <<<"$out"; then
    echo "bench.sh: non-2xx answers from $2:" >&2; echo "$out" >&2; exit 1
  fi
  reqs=$(awk '/requests in/ { print $1 }' <<<"$out")
  awk -v o="$out" -v r="$reqs" -v t=$((after - before)) -v hz="$HZ" '
    function ms(v) { if (v ~ /us$/) return v / 1000; if (v ~ /ms$/) return v + 0; if (v ~ /s$/) return v * 1000; return v }
    BEGIN { n = split(o, l, "\n")
            for (i = 1; i <= n; i++) { split(l[i], f, " ")
              if (l[i] ~ /Requests\/sec/) rps = f[2]
              if (f[1] == "99%") p99 = ms(f[2]) }
            printf "%s %.0f %.2f\n", rps, (t > 0 ? r / (t / hz) : 0), p99 }'
}

# Rounds alternate static and simulator, and the best of each figure is
# kept: on a shared machine, interference only ever lowers a figure (and
# raises a latency). Under heavy load the best of each side can come from
# different moments; the median of the rounds' paired ratios cannot.
best() { awk -v a="$1" -v b="$2" 'BEGIN { print (a + 0 > b + 0 ? a : b) }'; }
least() { awk -v a="$1" -v b="$2" 'BEGIN { print (b + 0 < a + 0 ? b : a) }'; }
declare -A rps eff p99 bytes paired
# median of numbers given as one string.
median() { tr ' ' '\n' <<<"$1" | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'; }
# run_phase NAME CASE...: measures each case (first, deep, one, random).
run_phase() {
  local phase=$1 c k m ceil
  shift
  local dir="$work/$phase"
  local sides=("${ceilings[@]}" sim)
  for c in "$@"; do
    for k in "${sides[@]}"; do rps[$k:$phase-$c]=0; eff[$k:$phase-$c]=0; p99[$k:$phase-$c]=1000000; done
    for ceil in "${ceilings[@]}"; do paired[$ceil:$phase-$c]=""; done
  done
  for c in "$@"; do # warm up all
    taskset -c "$LOAD_CPU" wrk -t1 -c4 -d1s -s "$dir/$c.lua" "$url" >/dev/null
    for ceil in "${ceilings[@]}"; do taskset -c "$LOAD_CPU" wrk -t1 -c4 -d1s -s "$dir/$c.lua" "${static_url[$ceil]}" >/dev/null; done
  done
  for round in $(seq "$ROUNDS"); do
    for c in "$@"; do
      declare -A pair=()
      for k in "${sides[@]}"; do
        profiling=""
        if [[ -n "$PROFILE" && $k == sim && $round == 1 ]]; then
          curl -fs -o "$PROFILE/$phase-$c.pprof" "http://$(cat "$dir/pprof.txt")/debug/pprof/profile?seconds=${DURATION%s}" &
          profiling=$!
        fi
        if [[ $k == sim ]]; then
          m=$(measure "$sim_pid" "$url" "$dir/$c.lua") || exit 1
        else
          m=$(measure "${static_pid[$k]}" "${static_url[$k]}" "$dir/$c.lua") || exit 1
        fi
        [[ -z "$profiling" ]] || wait "$profiling" || true
        read -r r e l <<<"$m"
        # The ratio of this round's pair (each ceiling, then the simulator,
        # back to back): the load of other jobs moves them alike.
        if [[ $k == sim ]]; then
          for ceil in "${ceilings[@]}"; do
            paired[$ceil:$phase-$c]+=" $(awk -v a="$e" -v b="${pair[$ceil]}" 'BEGIN { print (b > 0 ? a / b : 0) }')"
          done
        else
          pair[$k]=$e
        fi
        rps[$k:$phase-$c]=$(best "${rps[$k:$phase-$c]}" "$r")
        eff[$k:$phase-$c]=$(best "${eff[$k:$phase-$c]}" "$e")
        p99[$k:$phase-$c]=$(least "${p99[$k:$phase-$c]}" "$l")
      done
      line="$phase round $round $c:"
      for ceil in "${ceilings[@]}"; do line+=" $ceil ${rps[$ceil:$phase-$c]} rps / ${eff[$ceil:$phase-$c]} per cpu-s,"; done
      echo "$line sim ${rps[sim:$phase-$c]} / ${eff[sim:$phase-$c]}, sim p99 ${p99[sim:$phase-$c]} ms" >&2
    done
  done
}

# PHASES: the phases to run (default both; "live" for the targets alone).
PHASES=${PHASES:-still live}
if [[ " $PHASES " == *" still "* ]]; then
  start_phase still --speed 0
  run_phase still first one
  stop_servers
fi
# CASES: the live cases to run (default all four; "deep random" for the
# two targets alone).
read -r -a live_cases <<<"${CASES:-first deep one random}"
[[ " $PHASES " == *" live "* ]] || live_cases=()
if [[ ${#live_cases[@]} -gt 0 ]]; then
  start_phase live --speed 60 --history "$LIVE_HISTORY"
  run_phase live "${live_cases[@]}"
  pages=$(wc -l <"$work/live/deep.txt")
  sets=$(wc -l <"$work/live/random.txt")
  stop_servers
fi

printf '\n%-38s %-9s %10s %10s %6s %13s %11s %6s %7s %7s %8s %8s\n' "case" "ceiling" "static rps" "sim rps" "ratio" "static/cpu-s" "sim/cpu-s" "ratio" "paired" "target" "sim p99" "static"
pairs=""
# row NAME KEY TARGET: per ceiling, best figures of the rounds, their
# ratios, and the median of the rounds' paired CPU-second ratios (the figure
# to hold against the target, which is the typical ceiling's).
row() {
  local ceil t
  for ceil in "${ceilings[@]}"; do
    t=-
    [[ $ceil == typical ]] && t=$3
    awk -v n="$1" -v cl="$ceil" -v s="${rps[$ceil:$2]}" -v m="${rps[sim:$2]}" -v se="${eff[$ceil:$2]}" -v me="${eff[sim:$2]}" -v t="$t" \
      -v lp="${p99[sim:$2]}" -v sp="${p99[$ceil:$2]}" -v pr="$(median "${paired[$ceil:$2]}")" \
      'BEGIN { printf "%-38s %-9s %10.0f %10.0f %5.0f%% %13.0f %11.0f %5.0f%% %6.0f%% %7s %6.2fms %6.2fms\n", n, cl, s, m, 100*m/s, se, me, 100*me/se, 100*pr, t, lp, sp }'
    pairs+="$1, $ceil:${paired[$ceil:$2]}"$'\n'
  done
}
if [[ " $PHASES " == *" still "* ]]; then
  row "still: first feed page (limit=50)" still-first -
  row "still: videos, one set of 20 ids" still-one -
fi
has() { [[ " ${live_cases[*]} " == *" $1 "* ]]; }
if has first; then row "live: first feed page" live-first -; fi
if has deep; then row "live: deep pages ($pages cursors, at random)" live-deep 65%; fi
if has one; then row "live: videos, one set of 20 ids" live-one -; fi
if has random; then row "live: videos, random sets ($sets)" live-random 65%; fi
printf 'paired ratios of each round, in order:\n%s' "$pairs"
echo "(best of $ROUNDS alternating rounds of wrk -t1 -c$CONNECTIONS -d$DURATION --latency on cpu $LOAD_CPU; servers GOMAXPROCS=1 on cpu $SERVER_CPU; live: --speed 60 --history $LIVE_HISTORY; simulator flags: ${SIM_FLAGS:-none}; ceilings: ${ceilings[*]}; $(go version | cut -d' ' -f3); load average $(cut -d' ' -f1-3 /proc/loadavg))"
