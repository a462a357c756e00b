#!/usr/bin/env bash
# with-simulator.sh: start the tcmkit simulator on 127.0.0.1, export its
# address and keys, run a command (your client's tests), stop the simulator.
#
#   ci/examples/with-simulator.sh [simulator flags...] -- COMMAND [ARGS...]
#
# The simulator is `tcmkit simulate`: the tcmkit on PATH (go install
# github.com/tcmkit/tcmkit/cmd/tcmkit@latest), or, with TCMKIT_DIR set to a
# tcmkit checkout (or without tcmkit on PATH: the current directory), one
# built from it. The command runs in the current directory.
# The command sees:
#   TCM_BASE_URL        the simulator's base URL (http://127.0.0.1:PORT)
#   TCM_CONTROL_URL     its control API (clock, accounts, faults), if on
#   TCM_PRO_KEY, TCM_FREE_KEY, TCM_REVOKED_KEY   the seeded accounts' keys
#   TCM_SIM_INFO        the path of the info file (all of the above, as JSON)
# Simulator flags go before "--", for example --seed 7 or --faults NAME.
# The simulator judges the requests of the command's client (the client
# requirements of the contract): once the command ends, the script stops
# the simulator, prints the judge's verdict (each requirement a client
# broke, and the client report's path: --client-report DIR, or a temporary
# directory) and exits on it: the command's status when it failed, else
# the judge's: 0 every client passed, 3 a client broke a requirement, 4 no
# client was judged (the command sent the simulator no request).
# Needs bash and jq (and go to build).
set -euo pipefail

sim_args=()
report_dir=""
while [[ $# -gt 0 && "$1" != "--" ]]; do
	case "$1" in
	--client-report | -client-report) report_dir="${2:-}" ;;
	--client-report=* | -client-report=*) report_dir="${1#*=}" ;;
	esac
	sim_args+=("$1")
	shift
done
if [[ $# -lt 2 ]]; then
	echo "usage: $0 [simulator flags...] -- COMMAND [ARGS...]" >&2
	exit 2
fi
shift # the "--"

work="$(mktemp -d)"
info="$work/sim.json"
log="$work/sim.log"

# A binary, not "go run": "go run" would put the go command between us and
# the simulator, and killing it would not stop the server.
tcmkit=tcmkit
if [[ -n "${TCMKIT_DIR:-}" ]] || ! command -v tcmkit >/dev/null; then
	go build -C "${TCMKIT_DIR:-.}" -o "$work/tcmkit" ./cmd/tcmkit
	tcmkit="$work/tcmkit"
fi

if [[ -z "$report_dir" ]]; then
	report_dir="$work/client-report"
	sim_args+=(--client-report "$report_dir")
fi
"$tcmkit" simulate --addr 127.0.0.1:0 --info-file "$info" ${sim_args[@]+"${sim_args[@]}"} >"$log" 2>&1 &
sim_pid=$!

stop() {
	kill "$sim_pid" 2>/dev/null || true
	wait "$sim_pid" 2>/dev/null || true
	rm -rf "$work"
}
trap stop EXIT

# verdict prints the judge's verdict from the client report the simulator
# wrote at exit: the outcome, each requirement not met with the clients
# (keys redacted) that broke it, and where the report is.
verdict() {
	local json="$report_dir/client-report.json"
	if [[ ! -f "$json" ]]; then
		echo "client verdict: no report (the simulator's log follows)" >&2
		tail -n 20 "$log" >&2
		return
	fi
	jq -r '"client verdict: \(.outcome) (\(.totals.passed) passed, \(.totals.failed) failed, \(.totals.skipped) not exercised)",
		(.requirements[] | select(.result == "failed") | "  broke \(.id): \(.specs | join("; "))")' "$json" >&2
	if [[ "$report_dir" == "$work/"* ]]; then
		echo "client report: not kept (--client-report DIR keeps it)" >&2
	else
		grep -h '^client report:' "$log" >&2 || true
	fi
}

# Wait (at most 30 s) for the info file to hold the URL; it is written once
# the listener is up, so a URL in it is a URL that answers.
for _ in $(seq 1 300); do
	if jq -e '.url' "$info" >/dev/null 2>&1; then
		break
	fi
	if ! kill -0 "$sim_pid" 2>/dev/null; then
		echo "simulator exited before it was ready:" >&2
		cat "$log" >&2
		exit 1
	fi
	sleep 0.1
done
if ! jq -e '.url' "$info" >/dev/null 2>&1; then
	echo "simulator not ready after 30 s:" >&2
	cat "$log" >&2
	exit 1
fi

TCM_BASE_URL="$(jq -r '.url' "$info")"
TCM_CONTROL_URL="$(jq -r '.controlUrl // ""' "$info")"
TCM_PRO_KEY="$(jq -r '.proKey' "$info")"
TCM_FREE_KEY="$(jq -r '.freeKey' "$info")"
TCM_REVOKED_KEY="$(jq -r '.revokedKey' "$info")"
TCM_SIM_INFO="$info"
export TCM_BASE_URL TCM_CONTROL_URL TCM_PRO_KEY TCM_FREE_KEY TCM_REVOKED_KEY TCM_SIM_INFO
echo "simulator ready at $TCM_BASE_URL (pid $sim_pid)" >&2

# Not exec: the simulator is stopped, and judges, when the command ends.
set +e
"$@"
status=$?
kill -INT "$sim_pid" 2>/dev/null
wait "$sim_pid"
judged=$?
set -e
verdict
if ((status != 0)); then
	exit "$status"
fi
case "$judged" in
0) ;;
3) echo "with-simulator.sh: a client broke a client requirement (exit 3)" >&2 ;;
4) echo "with-simulator.sh: no client was judged: the command sent the simulator no request (exit 4)" >&2 ;;
*) echo "with-simulator.sh: the simulator exited with status $judged" >&2 ;;
esac
exit "$judged"
