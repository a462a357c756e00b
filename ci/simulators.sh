# Sourced by the CI scripts that run simulator processes ($work/simulator,
# which the script builds): a work directory, removed at exit together with
# every process the script started (pids), and the helpers below. Everything
# listens on 127.0.0.1.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	rm -rf "$work"
}
trap cleanup EXIT
cd "$root"

# start NAME ARGS...: a simulator on a free port, given ARGS; its info file
# is $work/NAME.json, its output $work/NAME.log.
start() {
	local name="$1"
	shift
	"$work/simulator" --addr 127.0.0.1:0 --info-file "$work/$name.json" "$@" >"$work/$name.log" 2>&1 &
	pids+=("$!")
	for _ in $(seq 100); do [[ -s "$work/$name.json" ]] && return 0; sleep 0.1; done
	echo "the simulator $name did not start"; cat "$work/$name.log"; return 1
}

# field NAME KEY: a field of simulator NAME's info file (url, proKey, ...).
field() { jq -r ".$2" "$work/$1.json"; }
