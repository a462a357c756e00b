#!/usr/bin/env bash
# The README as a newcomer meets it: its first screen (the indented command
# lines before the first "##" or "---") and every block marked
# <!-- runnable --> are read from README.md and run, as written, in a fresh
# clone of the committed HEAD. A line of the first screen this script does
# not know fails it, so a new line cannot go untried:
#   git clone https://github.com/tcmkit/tcmkit && cd tcmkit
#       the URL becomes this repository (git clone of its HEAD);
#   go install ./cmd/tcmkit                      run in the clone (GOBIN: a temporary bin/);
#   go install github.com/tcmkit/tcmkit/cmd/tcmkit@latest
#       run outside any module, the HEAD published as v0.1.0 in a local module
#       proxy standing in for the Go module proxy (ci/modproxy, as ci/install.sh);
#   go tool ginkgo ./suites                      run in the clone;
#   go test ./...                                run in the clone with README_FULL=1; else
#       said and left to ci/check.sh's own `go test ./...` of the same commit
#       (minutes of CPU twice otherwise);
#   export CONTAINERS_CONF=$PWD/ci/containers.conf
#       kept for the podman lines below, which try without it first;
#   podman build -t tcmkit . && podman run …     the image (see "The image lines");
#   curl -fLO …/releases/download/…, sha256sum -c …
#       (the download of a release) left to ci/release.sh, which verifies
#       dist/ with the same sha256sum line.
# The runnable blocks run in a directory of their own with the clone's tcmkit
# first on PATH: a command that ends must exit 0; `tcmkit simulate` that
# serves must print its banner, then end with exit 0 on SIGINT (it listens
# on 127.0.0.1:0 through TCM_SIM_ADDR where the line gives no --addr, so
# that a busy 8080 fails nothing). Every build runs with GOFLAGS=-trimpath
# and CGO_ENABLED=0, the settings of ci/release.sh, so that it reuses that
# build cache wherever the clone is. Each part's time is printed.
#
# The image lines (podman, installed by ci/apt-install.sh when missing): the
# image of the first screen's `podman build -t tcmkit .` is built from the
# clone's Containerfile as written with ONLINE=1 (a registry and the Go
# module proxy in reach); otherwise by ci/container.sh build (the same
# Containerfile on an offline stand-in of the Go image), unless
# localhost/tcmkit:dev is already this commit's, and tagged tcmkit (what
# -t tcmkit names; the tag is removed at the end). Each `podman run` line
# then runs as written, in the clone, until its banner, then SIGINT (exit
# 0). Where it stops with "error setting rlimit" (a runtime that cannot set
# rlimits) it runs again after the first screen's export of
# CONTAINERS_CONF, which must make it serve; that is said. With 127.0.0.1
# :8080 taken on this machine, a line gets -e TCM_SIM_ADDR of a free port
# (said). No container of these lines may be left behind.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
readme="$root/README.md"
tmp="$(mktemp -d)"
pids=()
tagged="" # the tcmkit tag this script put on the image
cleanup() {
	for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
	# (podman untag IMAGE alone would take every name off the image)
	[[ -n "$tagged" ]] && podman untag localhost/tcmkit:latest localhost/tcmkit:latest 2>/dev/null || true
	chmod -R u+w "$tmp" 2>/dev/null || true # the module cache is read-only
	rm -rf "$tmp"
}
trap cleanup EXIT
export GOFLAGS="-trimpath ${GOFLAGS:-}" CGO_ENABLED=0 GOTOOLCHAIN=local
step_start=$(date +%s.%N)
took() { printf '    %.1f s\n' "$(echo "$(date +%s.%N) - $step_start" | bc)"; step_start=$(date +%s.%N); }
failed=0
fail() { echo "FAIL: $*"; failed=$((failed + 1)); }

# The lines: a code line without its comment (a # after a blank).
strip() { sed -E 's/[[:space:]]+#.*$//; s/[[:space:]]+$//'; }
first_screen() { awk '/^## |^---/ { exit } /^    [^ ]/ { sub(/^    /, ""); print }' "$readme" | strip; }
runnable() {
	awk '
		/<!-- runnable/ { state = 1; next }
		state == 1 && /^[[:space:]]*$/ { next }
		state >= 1 && /^    / { sub(/^    /, ""); print; state = 2; next }
		state == 2 && /^[[:space:]]*$/ { next }
		{ state = 0 }' "$readme" | strip
}

# stop_once_served PID LOG: interrupts the process PID once LOG shows the
# url line of a serving simulator (30 s at most); fails when it never did.
stop_once_served() {
	local pid="$1" log="$2"
	for _ in $(seq 1 300); do
		kill -0 "$pid" 2>/dev/null || return 1
		if grep -q '^  url:' "$log"; then
			kill -INT "$pid"
			return 0
		fi
		sleep 0.1
	done
	return 1
}

# The image lines (see above).
conf_line='export CONTAINERS_CONF=$PWD/ci/containers.conf'
image_built=""
image_label="tcmkit.ci.run=${TCM_CI_RUN:-readme-$$}"
rlimit_error='error setting rlimit'
# build_image BUILD_LINE: the image of the first screen, tagged tcmkit.
build_image() {
	[[ -n "$image_built" ]] && return 0
	image_built=1
	command -v podman >/dev/null || "$root/ci/apt-install.sh" podman runc
	if [[ "${ONLINE:-}" == 1 ]]; then
		echo "    $1   (as written, in the clone)"
		if ! (cd "$clone" && bash -c "$1") >"$tmp/build.log" 2>&1; then
			grep -q "$rlimit_error" "$tmp/build.log" || { tail -n 20 "$tmp/build.log"; return 1; }
			echo "    it stopped with \"$rlimit_error\": again after $conf_line"
			(cd "$clone" && CONTAINERS_CONF="$clone/ci/containers.conf" bash -c "$1") >"$tmp/build.log" 2>&1 ||
				{ tail -n 20 "$tmp/build.log"; return 1; }
		fi
		tagged=1
		return 0
	fi
	local want have
	want="tcmkit $(cd "$root" && git describe --tags --always --dirty 2>/dev/null || echo dev) "
	have="$(CONTAINERS_CONF="$root/ci/containers.conf" podman run --rm --label "$image_label" localhost/tcmkit:dev version 2>/dev/null || true)"
	if [[ "$have" == "$want"* ]]; then
		echo "    the image: localhost/tcmkit:dev of ci/container.sh, this commit's ($have)"
	else
		echo "    the image: ci/container.sh build (the Containerfile on an offline stand-in of the Go image; ONLINE=1 builds it as written)"
		"$root/ci/container.sh" build >"$tmp/build.log" 2>&1 || { tail -n 20 "$tmp/build.log"; return 1; }
		grep '^podman build of' "$tmp/build.log" | sed 's/^/    /'
	fi
	podman tag localhost/tcmkit:dev localhost/tcmkit:latest
	tagged=1
}
# ours: the containers of the image tagged tcmkit (those of the lines).
ours() { podman ps -aq --no-trunc --filter ancestor=localhost/tcmkit:latest | sort; }
# serve_once LINE ENV...: runs a podman run line in the clone until its
# banner, then SIGINT; prints served, rlimit or failed.
serve_once() {
	local line="$1" log="$tmp/podman.$RANDOM.log" before after pid served="" code=0
	shift
	before="$(ours)"
	(cd "$clone" && exec env "$@" bash -c "exec $line") >"$log" 2>&1 &
	pid=$!
	stop_once_served "$pid" "$log" && served=1
	[[ -z "$served" ]] && kill -INT "$pid" 2>/dev/null
	wait "$pid" || code=$?
	after="$(ours)"
	local left
	left="$(comm -13 <(echo "$before") <(echo "$after"))"
	if [[ -n "$left" ]]; then
		podman rm -f -t 0 $left >/dev/null 2>&1 || true
		echo "left a container behind (removed now): $left"
	elif [[ -n "$served" && $code == 0 ]]; then
		echo "    served ($(grep -m1 '^  url:' "$log" | sed 's/^ *//')), stopped by SIGINT: exit 0" >&2
		echo served
	elif grep -q "$rlimit_error" "$log"; then
		echo "    exit $code: $(grep -m1 -o "$rlimit_error[^:]*" "$log" | head -n 1)" >&2
		echo rlimit
	else
		tail -n 20 "$log" >&2
		echo "failed (exit $code)"
	fi
}
# podman_line LINE: a podman line of the README, as written (see above).
podman_line() {
	local line="$1" run="$1" env=() got port
	if [[ "$line" == "podman build "*" && podman run "* ]]; then
		build_image "${line%% && *}" || { fail "$line: the image was not built"; return; }
		run="${line#* && }"
	else
		build_image "podman build -t tcmkit ." || { fail "$line: the image was not built"; return; }
	fi
	if [[ "$run" != "podman run "* ]]; then
		fail "a podman line this script does not know; teach it how to run it: $line"
		return
	fi
	if ! python3 -c 'import socket; socket.socket().bind(("127.0.0.1",8080))' 2>/dev/null; then
		port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
		run="podman run -e TCM_SIM_ADDR=127.0.0.1:$port ${run#podman run }"
		echo "    127.0.0.1:8080 is taken on this machine: $run"
	fi
	got="$(serve_once "$run")"
	if [[ "$got" == rlimit ]]; then
		echo "    this runtime cannot set rlimits: again after the first screen's $conf_line"
		got="$(serve_once "$run" CONTAINERS_CONF="$clone/ci/containers.conf")"
	fi
	[[ "$got" == served ]] || fail "$line: $got"
}

mkdir -p "$tmp/home" "$tmp/user" "$tmp/bin" "$tmp/bin-published" "$tmp/examples"
mapfile -t screen < <(first_screen)
echo "the first screen: ${#screen[@]} command lines"
((${#screen[@]} >= 5)) || { echo "too few: the extraction is broken"; exit 1; }

# The clone first: the lines above it run in it ("a clone: the two commands above").
clone_line="git clone https://github.com/tcmkit/tcmkit && cd tcmkit"
printf '%s\n' "${screen[@]}" | grep -qxF "$clone_line" || fail "the first screen has no line: $clone_line"
echo "==> $clone_line   (from $root, its HEAD)"
(cd "$tmp/home" && git clone -q "$root" tcmkit)
clone="$tmp/home/tcmkit"
took

for line in "${screen[@]}"; do
	case "$line" in
	"$clone_line") ;;
	"go install ./cmd/tcmkit")
		echo "==> $line   (in the clone)"
		(cd "$clone" && GOBIN="$tmp/bin" go install ./cmd/tcmkit) || fail "$line"
		v="$("$tmp/bin/tcmkit" version 2>&1)" || fail "tcmkit version: $v"
		echo "    $v"
		took
		;;
	"go install github.com/tcmkit/tcmkit/cmd/tcmkit@latest")
		echo "==> $line   (the local module proxy stands in for the published module)"
		(cd "$root/ci/modproxy" && go run . -repo "$root" -rev HEAD -version v0.1.0 -out "$tmp/proxy") >/dev/null
		deps="$(go env GOMODCACHE)/cache/download"
		(cd "$tmp/user" && GOBIN="$tmp/bin-published" GOMODCACHE="$tmp/modcache" GOFLAGS="$GOFLAGS -mod=mod" \
			GOPROXY="file://$tmp/proxy,file://$deps,$(go env GOPROXY)" GONOSUMDB=github.com/tcmkit/tcmkit \
			bash -c "$line") || fail "$line"
		v="$("$tmp/bin-published/tcmkit" version 2>&1)" || fail "tcmkit version: $v"
		[[ "$v" == "tcmkit v0.1.0 "* ]] || fail "the published tcmkit says: $v"
		echo "    $v"
		took
		;;
	"go tool ginkgo ./suites")
		echo "==> $line   (in the clone)"
		if (cd "$clone" && go tool ginkgo --no-color ./suites >"$tmp/ginkgo.log" 2>&1); then
			grep -E '^(Ran|SUCCESS|Ginkgo ran)' "$tmp/ginkgo.log" | sed 's/^/    /'
		else
			tail -n 30 "$tmp/ginkgo.log"
			fail "$line"
		fi
		took
		;;
	"go test ./...")
		if [[ "${README_FULL:-}" == 1 ]]; then
			echo "==> $line   (in the clone)"
			(cd "$clone" && go test ./... >"$tmp/test.log" 2>&1) || { grep -v '^ok' "$tmp/test.log" | tail -n 40; fail "$line"; }
			took
		else
			echo "==> $line   not run here: ci/check.sh runs it on the same commit (README_FULL=1 runs it in the clone too)"
		fi
		;;
	"$conf_line") echo "==> $line   (kept for the podman lines, which try without it first)" ;;
	podman\ *)
		echo "==> $line"
		podman_line "$line"
		took
		;;
	*) fail "a first-screen line this script does not know; teach it how to run it: $line" ;;
	esac
done

# The runnable blocks, with the clone's tcmkit.
mapfile -t examples < <(runnable)
echo "the runnable examples: ${#examples[@]} command lines"
((${#examples[@]} >= 3)) || fail "too few runnable examples: the markers (<!-- runnable -->) are gone"
export PATH="$tmp/bin:$PATH"
for line in "${examples[@]}"; do
	if [[ "$line" == podman\ * ]]; then
		echo "==> $line"
		podman_line "$line"
		continue
	fi
	echo "==> $line"
	log="$tmp/examples/$((${#pids[@]} + RANDOM)).log"
	dir="$tmp/examples"
	[[ "$line" == go\ * ]] && dir="$clone" # the Go commands are a clone's
	env=()
	if [[ "$line" == "tcmkit simulate"* && "$line" != *--addr* ]]; then
		env=(TCM_SIM_ADDR=127.0.0.1:0)
	fi
	(cd "$dir" && exec env ${env[@]+"${env[@]}"} bash -c "exec $line") >"$log" 2>&1 &
	pid=$!
	pids+=("$pid")
	served=""
	stop_once_served "$pid" "$log" && served=1
	code=0
	if [[ -z "$served" ]] && kill -0 "$pid" 2>/dev/null; then
		kill -INT "$pid"
		wait "$pid" || true
		tail -n 20 "$log"
		fail "$line: neither ended nor served within 30 s"
		continue
	fi
	wait "$pid" || code=$?
	if ((code != 0)); then
		tail -n 20 "$log"
		fail "$line: exit $code"
		continue
	fi
	if [[ -n "$served" ]]; then
		echo "    served ($(grep -m1 '^  url:' "$log" | sed 's/^ *//')), stopped by SIGINT: exit 0"
	else
		echo "    exit 0, $(wc -l <"$log") lines"
	fi
done
# A runnable example that rewrites checked-in files must leave them as they are.
if [[ -n "$(cd "$clone" && git status --porcelain)" ]]; then
	(cd "$clone" && git status --short | head -n 20)
	fail "the examples changed checked-in files of the clone (a generated file is stale)"
fi
took

if ((failed > 0)); then
	echo "ci/readme.sh: $failed line(s) of the README failed as written"
	exit 1
fi
echo "ci/readme.sh: every line of the first screen and of the runnable examples works as written"
