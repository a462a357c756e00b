#!/usr/bin/env bash
# A release of the kit, into dist/ (git-ignored):
#
#   ci/release.sh VERSION          # such as v0.1.0
#
#   1. tcmkit for linux, darwin and windows × amd64 and arm64, static
#      (CGO_ENABLED=0), -trimpath, the version stamped (-X main.release:
#      `tcmkit version` says it): dist/tcmkit_VERSION_OS_ARCH[.exe]; the six
#      builds share one build cache, so a second release only links;
#   2. dist/SHA256SUMS, which `sha256sum -c SHA256SUMS` verifies in dist/;
#   3. when podman is there (ci/container.sh installs it), the image: the
#      Containerfile's final stage around the linux/amd64 binary above,
#      saved as dist/tcmkit_VERSION_image.tar (`podman load -i` it; it is
#      localhost/tcmkit:VERSION); NO_IMAGE=1 leaves it out;
#   4. the binary of this machine's platform, as a user who downloaded it:
#      the checksums verify, `tcmkit version` names VERSION, and `tcmkit
#      conform` passes `tcmkit simulate` of the same binary (manual clock, on
#      127.0.0.1).
# Each step's time is printed. ci/check.sh (and so .ci/run) runs it.
set -euo pipefail
version="${1:-}"
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
	echo "usage: ci/release.sh VERSION (a semantic version: v0.1.0, v1.2.3-rc.1)" >&2
	exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dist="$root/dist"
rm -rf "$dist"
mkdir -p "$dist"
tmp="$(mktemp -d)"
pids=()
cleanup() {
	for p in ${pids[@]+"${pids[@]}"}; do kill "$p" 2>/dev/null || true; done
	rm -rf "$tmp"
}
trap cleanup EXIT
step() { printf '%-44s %5.1f s\n' "$1" "$(echo "$(date +%s.%N) - $2" | bc)"; }

# 1. The binaries.
t=$(date +%s.%N)
for os in linux darwin windows; do
	for arch in amd64 arm64; do
		ext=""
		[[ "$os" == windows ]] && ext=.exe
		CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOFLAGS=-buildvcs=false go build -trimpath \
			-ldflags "-s -w -X main.release=$version" -o "$dist/tcmkit_${version}_${os}_${arch}$ext" ./cmd/tcmkit
	done
done
step "6 binaries (linux, darwin, windows × amd64, arm64)" "$t"

# 3. The image (before the checksums, which cover it): the Containerfile's
# final stage around the linux/amd64 binary of this release, byte for byte
# (the build stage would compile the same source again).
t=$(date +%s.%N)
if [[ "${NO_IMAGE:-}" != 1 ]] && command -v podman >/dev/null; then
	image="localhost/tcmkit:$version"
	mkdir -p "$tmp/image"
	awk '/^FROM scratch/ { p = 1 } p' Containerfile |
		sed 's|^COPY --from=build /out/tcmkit /tcmkit$|COPY tcmkit /tcmkit|' >"$tmp/image/Containerfile"
	grep -qx 'COPY tcmkit /tcmkit' "$tmp/image/Containerfile" ||
		{ cat "$tmp/image/Containerfile"; echo "the Containerfile's final stage no longer copies /out/tcmkit: update ci/release.sh"; exit 1; }
	cp "$dist/tcmkit_${version}_linux_amd64" "$tmp/image/tcmkit"
	printf '[containers]\ndefault_ulimits = []\n' >"$tmp/containers.conf"
	podman=(env CONTAINERS_CONF="$tmp/containers.conf" podman --runtime runc --cgroup-manager cgroupfs)
	"${podman[@]}" build -q --format docker --platform linux/amd64 -t "$image" "$tmp/image" >/dev/null
	got="$("${podman[@]}" run --rm --no-healthcheck "$image" version)"
	[[ "$got" == "tcmkit $version "* ]] || { echo "the image's tcmkit version: $got"; exit 1; }
	"${podman[@]}" save -q --format docker-archive -o "$dist/tcmkit_${version}_image.tar" "$image"
	"${podman[@]}" rmi -f "$image" >/dev/null
	step "the image (linux/amd64), saved: $got" "$t"
else
	echo "the image: left out ($([[ "${NO_IMAGE:-}" == 1 ]] && echo NO_IMAGE=1 || echo "no podman here: ci/container.sh installs it"))"
fi

# 2. The checksums.
(cd "$dist" && sha256sum tcmkit_* >SHA256SUMS)

# 4. This platform's binary, as downloaded.
t=$(date +%s.%N)
(cd "$dist" && sha256sum -c --quiet SHA256SUMS)
echo "sha256sum -c SHA256SUMS: every file verifies"
mine="$dist/tcmkit_${version}_$(go env GOOS)_$(go env GOARCH)"
[[ "$(go env GOOS)" == windows ]] && mine+=.exe
cp "$mine" "$tmp/tcmkit"
chmod +x "$tmp/tcmkit"
got="$("$tmp/tcmkit" version)"
echo "$got"
[[ "$got" == "tcmkit $version "* ]] || { echo "tcmkit version: want $version"; exit 1; }
for f in "$dist"/tcmkit_*_linux_* "$dist"/tcmkit_*_darwin_* "$dist"/tcmkit_*_windows_*; do
	# Static: no interpreter for the dynamic linker (file(1) is not everywhere).
	if head -c 4096 "$f" | grep -aq 'ld-linux'; then
		echo "$f is linked dynamically"
		exit 1
	fi
done
cd "$tmp"
"$tmp/tcmkit" simulate --addr 127.0.0.1:0 --speed 0 --info-file sim.json >sim.log 2>&1 &
pids+=($!)
for _ in $(seq 1 100); do [[ -s sim.json ]] && break; sleep 0.1; done
[[ -s sim.json ]] || { cat sim.log; echo "tcmkit simulate did not start"; exit 1; }
if ! "$tmp/tcmkit" conform --target "$(jq -r .url sim.json)" --pro-key "$(jq -r .proKey sim.json)" \
	--free-key "$(jq -r .freeKey sim.json)" --revoked-key "$(jq -r .revokedKey sim.json)" --control-clock \
	--report-dir reports --no-color >conform.log 2>&1; then
	tail -n 30 conform.log
	echo "tcmkit conform (the release) failed against tcmkit simulate (the release)"
	exit 1
fi
grep -E '^(SUCCESS|FAIL)' conform.log || true
step "the $(go env GOOS)/$(go env GOARCH) binary: version, conform ⟷ simulate" "$t"
echo
ls -l "$dist" | awk 'NR > 1 { printf "  %-40s %6.1f MiB\n", $9, $5 / 1048576 }'
echo "dist/: $(ls "$dist" | wc -l) files; verify with: cd dist && sha256sum -c SHA256SUMS"
