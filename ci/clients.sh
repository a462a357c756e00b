#!/usr/bin/env bash
# The simulator judges real clients, as programs:
#   1. the rude example client (ci/examples/clients/rude) against a
#      simulator on a manual clock (its waits move the clock): the client
#      report at exit must fail exactly the client requirements it breaks (all but the two a conforming server gives no cause to break), one
#      finding each, and the simulator exit 3 (a client failed);
#   2. the polite example client (ci/examples/clients/polite, built on
#      tcmclient) against a simulator in real time at 20 requests a minute:
#      it sends more than 20 requests, so it must pace itself over a minute;
#      the client report must pass and the simulator exit 0. Its wall time
#      and requests are printed.
# Then both HTML reports are rendered in headless Chromium (Debian's
# chromium, through ci/hostile/screenshot.sh) when it is installed or
# installable; SCREENSHOTS=DIR keeps the PNGs and the reports.
# About 70 s; everything listens on 127.0.0.1 and stops by itself.
source "$(dirname "${BASH_SOURCE[0]}")/simulators.sh"
go build -o "$work/" ./cmd/simulator ./ci/examples/clients/polite ./ci/examples/clients/rude

# judged NAME ARGS...: a simulator that writes its client report into
# $work/NAME-report at exit.
judged() {
	local name="$1"
	shift
	start "$name" --client-report "$work/$name-report" "$@"
}

# stop N NAME STATUS: SIGTERM, as a container runtime or CI does; the
# simulator writes its client report and exits with STATUS (0 every client
# passed, 3 a client failed, 4 no client judged).
stop() {
	local pid="${pids[$1]}" status=0
	kill -TERM "$pid"
	wait "$pid" || status=$?
	if [[ "$status" != "$3" ]]; then
		echo "the simulator exited $status, want $3"; cat "$work/$2.log"; return 1
	fi
}

# client NAME PROGRAM ARGS...: runs an example client against simulator NAME.
client() {
	local sim="$1" prog="$2"
	shift 2
	TCM_BASE_URL="$(field "$sim" url)" TCM_PRO_KEY="$(field "$sim" proKey)" TCM_CONTROL_URL="$(field "$sim" controlUrl)" \
		timeout 300 "$work/$prog" "$@"
}

failed=0
echo "== 1. the rude client, manual clock"
judged rude --speed 0
client rude rude --advance-clock >"$work/rude-client.log" 2>&1 || { echo "rude exited $?"; cat "$work/rude-client.log"; failed=1; }
stop 0 rude 3 || failed=1
report="$work/rude-report/client-report.json"
broke="$(jq -r '[.requirements[] | select(.result == "failed") | .id] | sort | join(" ")' "$report")"
# Every client rule but the two a conforming server never gives cause to
# break (a tight retry after errors, a cursor that leads back to itself:
# the fuzz schedule serves those, ci/fuzz-planted.sh finds them).
want="$(jq -r '[.requirements[] | select(.kind == "client" and .id != "CLIENT-BACKOFF" and .id != "CLIENT-CURSOR-CYCLE") | .id] | sort | join(" ")' "$report")"
once="$(jq -r --argjson n "$(wc -w <<<"$want")" '[.specs[] | select(.state == "failed")] | (length == $n) and all(.failure.message | startswith("1 finding, "))' "$report")"
echo "outcome $(jq -r .outcome "$report"); failed: $broke; one finding each: $once"
if [[ "$broke" != "$want" || "$(jq -r .outcome "$report")" != failed || "$once" != true ]]; then
	echo "the rude client must fail exactly these client requirements, one finding each: $want"; failed=1
fi

echo "== 2. the polite client, real time, 20 requests a minute"
judged polite --speed 1
t0=$(date +%s.%N)
if ! client polite polite --polls 5 --interval 5s >"$work/polite-client.log" 2>&1; then
	echo "polite exited with an error:"; cat "$work/polite-client.log"; failed=1
fi
t1=$(date +%s.%N)
stop 1 polite 0 || failed=1
report="$work/polite-report/client-report.json"
requests="$(jq -r '[.specs[] | select(.requirements == ["CLIENT-KEY-NOT-IN-URL"]) | .requests] | add' "$report")"
printf 'polite client: %s requests judged, %.1f s wall time, outcome %s\n' "$requests" "$(echo "$t1 - $t0" | bc)" "$(jq -r .outcome "$report")"
tail -1 "$work/polite-client.log"
if [[ "$(jq -r .outcome "$report")" != passed || "$requests" -le 20 ]]; then
	echo "the polite client must pass, with more than 20 requests"; cat "$work/polite-client.log"; failed=1
fi

echo "== 3. the client reports in headless Chromium"
out="${SCREENSHOTS:-$work/png}"
mkdir -p "$out"
if command -v chromium >/dev/null || command -v apt-get >/dev/null; then
	for name in rude polite; do
		cp "$work/$name-report/client-report.html" "$out/$name-client-report.html"
		ci/hostile/screenshot.sh "$work/$name-report/client-report.html" "$out/$name-client-report.png" 1280,2400 >/dev/null
		size=$(stat -c %s "$out/$name-client-report.png")
		echo "$name: $out/$name-client-report.png ($size bytes)"
		if ((size < 20000)); then echo "the $name report rendered blank"; failed=1; fi
	done
else
	echo "no chromium and no apt-get: not rendered"
fi
exit $failed
