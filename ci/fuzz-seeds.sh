#!/usr/bin/env bash
# Fuzzes a client in any language over seeds: for each seed N from FIRST to
# LAST it starts a simulator with --fuzz-seed N (a world at the contract's
# edges and trouble on chosen requests: 429s with a truthful Retry-After,
# 5xx, slow answers, cut bodies, a key revoked mid-walk, events arriving
# mid-walk), runs the client's own test COMMAND against it, and prints the
# seeds that failed. A seed fails when COMMAND exits non-zero, when the
# client judge failed a client requirement (GET /_control/clients), or when
# the fuzz schedule found a tight loop or a cursor cycle followed
# (GET /_control/fuzz). The same seed serves the same answers to the same
# requests on every run: rerun one with FIRST = LAST.
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
#   FUZZ_BREAK=1   also serve answers that break the contract (--fuzz-seed N:break)
#   FUZZ_SPEED=S   the simulator's --speed (default 0: manual clock)
#   FUZZ_STOP=1    stop at the first failing seed
#   FUZZ_OUT=DIR   keep each seed's fuzz.json, clients.json and output.txt
#                  under DIR/seed-N (default: only the failing seeds' are
#                  kept, under a temporary directory that is printed)
#   SIMULATOR=CMD  the simulator command (default: built from ./cmd/simulator)
#
# Exit status: 0 when every seed passed, 1 when one failed, 2 on bad usage.
set -euo pipefail
usage() { echo "usage: $0 FIRST LAST -- COMMAND [ARGS...]" >&2; exit 2; }
[[ $# -ge 4 && "$3" == "--" ]] || usage
first="$1" last="$2"
shift 3
[[ "$first" =~ ^-?[0-9]+$ && "$last" =~ ^-?[0-9]+$ ]] || usage
command -v jq >/dev/null || { echo "$0: needs jq" >&2; exit 2; }
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
args=(--speed "${FUZZ_SPEED:-0}")
suffix=""
[[ "${FUZZ_BREAK:-}" == 1 ]] && suffix=":break"

failed=()
tried=0
for seed in $(seq "$first" "$last"); do
	dir="$out/seed-$seed"
	tried=$((tried + 1))
	mkdir -p "$dir"
	"${simcmd[@]}" --addr 127.0.0.1:0 --info-file "$work/sim.json" --fuzz-seed "$seed$suffix" "${args[@]}" >"$dir/simulator.log" 2>&1 &
	pid=$!
	pids+=("$pid")
	for _ in $(seq 100); do [[ -s "$work/sim.json" ]] && break; sleep 0.1; done
	[[ -s "$work/sim.json" ]] || { echo "seed $seed: the simulator did not start"; cat "$dir/simulator.log"; exit 1; }
	control="$(jq -r .controlUrl "$work/sim.json")"
	status=0
	TCM_BASE_URL="$(jq -r .url "$work/sim.json")" TCM_CONTROL_URL="$control" \
		TCM_PRO_KEY="$(jq -r .proKey "$work/sim.json")" TCM_FREE_KEY="$(jq -r .freeKey "$work/sim.json")" \
		TCM_FUZZ_SEED="$seed" bash -c 'cd "$0" && exec "$@"' "$caller" "$@" >"$dir/output.txt" 2>&1 || status=$?
	curl -fsS "$control/fuzz" >"$dir/fuzz.json"
	curl -fsS "$control/clients?final=true" >"$dir/clients.json"
	kill "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
	rm -f "$work/sim.json"
	why=()
	[[ $status -ne 0 ]] && why+=("the command exited $status")
	# The one judge's verdicts, as they are: it lets a client leave a walk
	# the schedule broke, and finds tight loops and cursor cycles itself.
	judged="$(jq -r '[.clients[] | .requirements[] | select(.result == "failed") | .id] | unique | join(", ")' "$dir/clients.json")"
	[[ -n "$judged" ]] && why+=("broke $judged")
	if [[ ${#why[@]} -eq 0 ]]; then
		[[ $keep_all == 1 ]] || rm -rf "$dir"
		continue
	fi
	failed+=("$seed")
	echo "seed $seed FAILED: $(IFS=';'; echo "${why[*]}")"
	jq -r '.served[] | "  " + .' "$dir/fuzz.json" | head -12 || true
	jq -r '.clients[] | .findings[] | "  finding: " + .requirement + ": " + .evidence' "$dir/clients.json" || true
	echo "  (replay: $0 $seed $seed -- $*; everything under $dir)"
	[[ "${FUZZ_STOP:-}" == 1 ]] && break
done
if [[ ${#failed[@]} -eq 0 ]]; then
	echo "fuzz seeds $first..$last: all $tried passed"
	[[ $keep_all == 1 ]] || rm -rf "$out"
	exit 0
fi
echo "fuzz seeds $first..$last: ${#failed[@]} of $tried tried failed: ${failed[*]}"
exit 1
