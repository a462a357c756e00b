#!/usr/bin/env bash
# Fuzzes a client in any language over seeds: for each seed N from FIRST to
# LAST it starts a simulator with --fuzz-seed N (a world at the contract's
# edges and trouble on chosen requests: 429s with a truthful Retry-After,
# 5xx, slow answers, cut bodies, a key revoked mid-walk, events arriving
# mid-walk), runs the client's own test COMMAND against it, and prints the
# seeds that failed. A seed fails when COMMAND exits non-zero, when the
# client judge failed a client requirement (GET /_control/clients), when
# the fuzz schedule found a tight loop or a cursor cycle followed
# (GET /_control/fuzz), and also, since the loop judges rather than trusts
# its client: when the client sent no API request, when its run took
# longer than FUZZ_TIMEOUT (the client and every process it started are
# ended), or when the verdicts were erased during the run (DELETE
# /_control/clients, a reset, an import). Requests and erasures are read
# from the simulator's own log, which the client cannot touch. The same
# seed serves the same answers to the same requests on every run: the
# replay line of a failing seed reruns it as it ran.
#
#   ci/fuzz-seeds.sh 1 100 -- npm test
#   FUZZ_BREAK=1 ci/fuzz-seeds.sh 1 100 -- ./client-tests
#   ci/fuzz-seeds.sh 1 100 -- python3 simulator/fuzz/testdata/pyclient.py
#
# COMMAND gets the simulator in its environment: TCM_BASE_URL,
# TCM_CONTROL_URL, TCM_PRO_KEY, TCM_FREE_KEY and TCM_FUZZ_SEED. The clock
# is manual (--speed 0): a client that waits (Retry-After, backoff) must
# move it with POST $TCM_CONTROL_URL/clock/advance {"duration":"2s"}
# instead of sleeping (FUZZ_SPEED=1 runs in real time instead). A correct
# client may end in an error when GET $TCM_CONTROL_URL/fuzz says
# "mayFail": true (its key was revoked, an answer broke the contract); its
# "eventIds" are the feed events served, which a client that walked the
# feed holds, each once.
#
# Environment:
#   FUZZ_BREAK=1     also serve answers that break the contract (--fuzz-seed N:break)
#   FUZZ_SPEED=S     the simulator's --speed (default 0: manual clock)
#   FUZZ_STOP=1      stop at the first failing seed
#   FUZZ_TIMEOUT=S   seconds a seed's COMMAND may run (default 120, 1..86400)
#   FUZZ_MAX_OUTPUT=B bytes of a seed's COMMAND output kept (default 1 MiB)
#   FUZZ_OUT=DIR     keep each seed's fuzz.json, clients.json, simulator.log
#                    and output.txt under DIR/seed-N (default: only the
#                    failing seeds' are kept, under a temporary directory
#                    that is printed)
#   SIMULATOR=CMD    the simulator command (default: built from ./cmd/simulator)
#
# A failing seed shows the end of COMMAND's output (its last 20 lines),
# once: a seed whose output is the same (digits aside) says so instead.
# When 3 seeds in a row fail the same way before any API request, with the
# same output, COMMAND fails by itself, whatever a seed serves (npm test
# without a package.json, a client that does not build): the loop stops
# there and says so.
#
# FIRST and LAST are whole numbers, FIRST <= LAST, at most 100000 seeds a
# run. Exit status: 0 when every seed passed, 1 when one failed, 2 on bad
# usage.
set -euo pipefail
usage() { echo "usage: $0 FIRST LAST -- COMMAND [ARGS...] (${1:-see the comment at the top})" >&2; exit 2; }
[[ $# -ge 4 && "$3" == "--" ]] || usage "want FIRST LAST -- COMMAND"
first="$1" last="$2"
shift 3
maxseeds=100000
[[ "$first" =~ ^-?[0-9]{1,15}$ && "$last" =~ ^-?[0-9]{1,15}$ ]] || usage "FIRST and LAST are whole numbers of at most 15 digits"
((first <= last)) || usage "FIRST ($first) is after LAST ($last): no seed to try"
((last - first < maxseeds)) || usage "$((last - first + 1)) seeds: at most $maxseeds a run"
timeout="${FUZZ_TIMEOUT:-120}"
[[ "$timeout" =~ ^[0-9]{1,5}$ ]] && ((timeout >= 1 && timeout <= 86400)) || usage "FUZZ_TIMEOUT=$timeout: want 1..86400 seconds"
cap="${FUZZ_MAX_OUTPUT:-1048576}"
[[ "$cap" =~ ^[0-9]{1,10}$ ]] && ((cap >= 1)) || usage "FUZZ_MAX_OUTPUT=$cap: want a number of bytes, 1 or more"
speed="${FUZZ_SPEED:-0}"
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 2; }
command -v setsid >/dev/null || { echo "$0: needs setsid (util-linux)" >&2; exit 2; }
caller="$PWD" # COMMAND runs here; simulators.sh moves to the repository
source "$(dirname "${BASH_SOURCE[0]}")/simulators.sh"

if [[ -n "${SIMULATOR:-}" ]]; then
	read -r -a simcmd <<<"$SIMULATOR"
else
	go build -o "$work/simulator" ./cmd/simulator
	simcmd=("$work/simulator")
fi
out="${FUZZ_OUT:-}"
keep_all=1
if [[ -z "$out" ]]; then
	out="$(mktemp -d)"
	keep_all=0
fi
args=(--speed "$speed" --log-format json --log-level debug)
suffix=""
[[ "${FUZZ_BREAK:-}" == 1 ]] && suffix=":break"
# The replay line: this seed, as it ran (break mode and speed included).
replay_env="FUZZ_SPEED=$speed FUZZ_TIMEOUT=$timeout"
[[ -n "$suffix" ]] && replay_env="FUZZ_BREAK=1 $replay_env"
replay_cmd="$(printf '%q ' "$@")"

# alive PID: the process runs (a zombie, done but not waited for, does not).
alive() {
	local state
	state="$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null || ps -o stat= -p "$1" 2>/dev/null || true)"
	[[ -n "$state" && "$state" != Z* ]]
}

# capped FILE: keeps the first $cap bytes of its input in FILE, reads the
# rest away (a client's output may be endless).
capped() { head -c "$cap" >"$1" || true; cat >/dev/null; }

# same_output FILE: a digest of a seed's output, digits aside (a time, a
# log's name, a port differ from run to run).
same_output() { tr -d '0-9' <"$1" | cksum; }

failed=()
tried=0
shown=""       # the digest of the last output shown, and its seed
shown_seed=""
repeat=0       # failing seeds in a row, the same way, before any request
repeat_key=""
stopped=""
for ((seed = first; seed <= last; seed++)); do
	dir="$out/seed-$seed"
	tried=$((tried + 1))
	mkdir -p "$dir"
	"${simcmd[@]}" --addr 127.0.0.1:0 --info-file "$work/sim.json" --fuzz-seed "$seed$suffix" "${args[@]}" >"$dir/simulator.out" 2>"$dir/simulator.log" &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 100); do [[ -s "$work/sim.json" ]] && break; sleep 0.1; done
	[[ -s "$work/sim.json" ]] || { echo "seed $seed: the simulator did not start"; cat "$dir/simulator.log"; exit 1; }
	control="$(jq -r .controlUrl "$work/sim.json")"
	status=0
	started=$SECONDS
	# Its own session: the client and whatever it starts are one process
	# group, ended together.
	TCM_BASE_URL="$(jq -r .url "$work/sim.json")" TCM_CONTROL_URL="$control" \
		TCM_PRO_KEY="$(jq -r .proKey "$work/sim.json")" TCM_FREE_KEY="$(jq -r .freeKey "$work/sim.json")" \
		TCM_FUZZ_SEED="$seed" setsid bash -c 'cd "$0" && exec "$@"' "$caller" "$@" > >(capped "$dir/output.txt") 2>&1 &
	cpid=$!
	timed_out=0
	while alive "$cpid"; do
		if ((SECONDS - started >= timeout)); then
			timed_out=1
			kill -TERM -- "-$cpid" 2>/dev/null || true
			sleep 1
			break
		fi
		sleep 0.1
	done
	kill -KILL -- "-$cpid" 2>/dev/null || true # and every process it left behind
	wait "$cpid" || status=$?
	took=$((SECONDS - started))
	curl -fsS "$control/fuzz" >"$dir/fuzz.json"
	curl -fsS "$control/clients?final=true" >"$dir/clients.json"
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -f "$work/sim.json"
	requests="$(jq -r 'select(.msg == "request" and (.request.path | startswith("/api/"))) | 1' "$dir/simulator.log" 2>/dev/null | wc -l)"
	erased="$(jq -r 'select(.msg == "client verdicts cleared") | 1' "$dir/simulator.log" 2>/dev/null | wc -l)"
	why=()
	if ((timed_out)); then
		why+=("the command ran past FUZZ_TIMEOUT=${timeout}s (it and its children were ended)")
	elif [[ $status -ne 0 ]]; then
		why+=("the command exited $status")
	fi
	((requests == 0)) && why+=("the client sent no API request")
	((erased > 0)) && why+=("the verdicts were erased during the run ($erased times: DELETE /_control/clients, a reset or an import)")
	# The one judge's verdicts, as they are: it lets a client leave a walk
	# the schedule broke, and finds tight loops and cursor cycles itself.
	judged="$(jq -r '[(.clients // [])[] | (.requirements // [])[] | select(.result == "failed") | .id] | unique | join(", ")' "$dir/clients.json")"
	[[ -n "$judged" ]] && why+=("broke $judged")
	if [[ ${#why[@]} -eq 0 ]]; then
		echo "seed $seed: passed ($requests requests, ${took}s)"
		[[ $keep_all == 1 ]] || rm -rf "$dir"
		continue
	fi
	failed+=("$seed")
	reason="$(printf '%s; ' "${why[@]}")"
	reason="${reason%; }"
	echo "seed $seed FAILED: $reason"
	jq -r '(.served // [])[] | "  " + .' "$dir/fuzz.json" | head -12 || true
	jq -r '(.clients // [])[] | (.findings // [])[] | "  finding: " + .requirement + ": " + .evidence' "$dir/clients.json" || true
	digest="$(same_output "$dir/output.txt")"
	if [[ ! -s "$dir/output.txt" ]]; then
		echo "  (the command printed nothing)"
	elif [[ "$digest" == "$shown" ]]; then
		echo "  (the command's output: as seed $shown_seed's, digits aside)"
	else
		echo "  the command's output ($(wc -l <"$dir/output.txt") lines), its end:"
		tail -n 20 "$dir/output.txt" | sed 's/^/  | /'
		shown="$digest" shown_seed="$seed"
	fi
	echo "  (replay: $replay_env $0 $seed $seed -- $replay_cmd; everything under $dir)"
	[[ "${FUZZ_STOP:-}" == 1 ]] && break
	# The same failure before any request, seed after seed: the command
	# itself fails.
	if ((requests == 0)) && [[ "$reason|$digest" == "$repeat_key" ]]; then
		repeat=$((repeat + 1))
	elif ((requests == 0)); then
		repeat=1 repeat_key="$reason|$digest"
	else
		repeat=0 repeat_key=""
	fi
	if ((repeat >= 3 && seed < last)); then
		stopped="seeds $((seed - 2))..$seed failed the same way before any API request, with the same output: the command fails by itself, whatever a seed serves (see its output above); stopped, $((last - seed)) seeds untried"
		break
	fi
done
[[ -n "$stopped" ]] && echo "$stopped"
if [[ ${#failed[@]} -eq 0 ]]; then
	echo "fuzz seeds $first..$last: all $tried passed"
	[[ $keep_all == 1 ]] || rm -rf "$out"
	exit 0
fi
echo "fuzz seeds $first..$last: ${#failed[@]} of $tried tried failed: ${failed[*]}"
exit 1
