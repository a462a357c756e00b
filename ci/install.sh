#!/usr/bin/env bash
# `go install github.com/tcmkit/tcmkit/cmd/tcmkit@VERSION`, proven as a new
# user would meet it, without a tag on GitHub:
#   1. the committed HEAD is published as VERSION (default v0.1.0) in a local
#      module proxy, a GOPROXY=file://… directory (ci/modproxy: @v/list,
#      .info, .mod, .zip);
#   2. go install …/cmd/tcmkit@VERSION runs with an empty module cache
#      (GOMODCACHE, and GOCACHE unless KEEP_GOCACHE=1, in a temporary
#      directory) and GOFLAGS=-mod=mod; the kit comes from the local proxy,
#      its dependencies from this machine's module cache used as a second
#      file proxy (offline), then the usual Go module proxy; the time is printed;
#   3. from a temporary directory outside the repository, the installed
#      binary: prints its version; runs `tcmkit conform` against the bundled
#      simulator; starts `tcmkit simulate` and passes `tcmkit conform
#      --target` against it; starts `tcmkit simulate --fault NAME` and fails
#      against it (non-zero); every run leaves its reports in ./reports of
#      that directory.
# Uncommitted changes are not in the published version: commit first.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${VERSION:-v0.1.0}"
fault="${FAULT:-oldest-first}"
tmp="$(mktemp -d)"
pids=()
cleanup() {
	for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
	chmod -R u+w "$tmp" 2>/dev/null || true # the module cache is read-only
	rm -rf "$tmp"
}
trap cleanup EXIT

# 1. The local proxy.
(cd "$root/ci/modproxy" && go run . -repo "$root" -rev HEAD -version "$version" -out "$tmp/proxy")

# 2. The install, on an empty module cache.
mkdir -p "$tmp/modcache" "$tmp/gocache" "$tmp/bin" "$tmp/user"
deps="$(go env GOMODCACHE)/cache/download" upstream="$(go env GOPROXY)" GOFLAGS_BEFORE="${GOFLAGS:-}"
export GOMODCACHE="$tmp/modcache" GOBIN="$tmp/bin" GOFLAGS=-mod=mod GOTOOLCHAIN=local
# A kept build cache is reused only with the build settings that filled it
# (ci/check.sh builds everything -trimpath): the modules now sit in another
# directory, which is part of a package's build key without -trimpath.
if [[ "${KEEP_GOCACHE:-}" == 1 ]]; then
	[[ " ${GOFLAGS_BEFORE:-} " == *" -trimpath "* ]] && GOFLAGS="-mod=mod -trimpath"
else
	export GOCACHE="$tmp/gocache"
fi
export GOPROXY="file://$tmp/proxy,file://$deps,$upstream"
export GONOSUMDB=github.com/tcmkit/tcmkit # the published version is in no checksum database
cd "$tmp/user" # outside the repository: no go.mod around
start=$(date +%s.%N)
go install "github.com/tcmkit/tcmkit/cmd/tcmkit@$version"
end=$(date +%s.%N)
printf 'go install github.com/tcmkit/tcmkit/cmd/tcmkit@%s: %.1f s (empty module cache%s)\n' "$version" \
	"$(echo "$end - $start" | bc)" "$([[ "${KEEP_GOCACHE:-}" == 1 ]] && echo ", build cache kept" || echo " and build cache")"
tcmkit="$tmp/bin/tcmkit"
got="$("$tcmkit" version)"
echo "$got"
[[ "$got" == "tcmkit $version "* ]] || { echo "want version $version"; exit 1; }

# expect WANT NAME COMMAND...: runs a conform job, wants exit 0 (pass) or
# non-zero (fail), and its reports in ./reports/NAME of the user's directory.
expect() {
	local want="$1" name="$2"
	shift 2
	local code=0
	"$@" --report-dir "reports/$name" --no-color >"$name.log" 2>&1 || code=$?
	local report="$tmp/user/reports/$name/conformance-report.json"
	printf '%-10s exit %d, outcome %s, %s\n' "$name" "$code" "$(jq -r .outcome "$report" 2>/dev/null || echo '(no report)')" "$(grep -o 'report: [^ ]*' "$name.log" || true)"
	if [[ ! -f "$report" ]] || { [[ "$want" == pass ]] && ((code != 0)); } || { [[ "$want" == fail ]] && ((code == 0)); }; then
		tail -n 30 "$name.log"
		echo "$name: want $want with a report in $tmp/user/reports/$name"
		exit 1
	fi
}

# simulate NAME [FLAGS]: starts tcmkit simulate (manual clock) and waits
# for its info file.
simulate() {
	local name="$1"
	shift
	"$tcmkit" simulate --addr 127.0.0.1:0 --speed 0 --info-file "$name.json" "$@" >"$name.sim.log" 2>&1 &
	pids+=($!)
	for _ in $(seq 1 100); do [[ -s "$name.json" ]] && return; sleep 0.1; done
	cat "$name.sim.log"
	echo "tcmkit simulate $* did not start"
	exit 1
}
keys() { jq -r '"--target", .url, "--pro-key", .proKey, "--free-key", .freeKey, "--revoked-key", .revokedKey' "$1"; }

# 3. The jobs, from the user's directory.
expect pass bundled "$tcmkit" conform
simulate good
mapfile -t good < <(keys good.json)
expect pass simulated "$tcmkit" conform "${good[@]}" --control-clock
simulate broken --fault "$fault"
mapfile -t broken < <(keys broken.json)
expect fail broken "$tcmkit" conform "${broken[@]}" --control-clock
echo "the installed tcmkit passes the bundled simulator and tcmkit simulate, and fails tcmkit simulate --fault $fault"
