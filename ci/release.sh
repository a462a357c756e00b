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
#      localhost/tcmkit:VERSION); NO_IMAGE=1 leaves it out. The same
#      commit gives the same bytes: every time in it is SOURCE_DATE_EPOCH
#      (default: the commit's time), and what podman makes afresh on each
#      build (the build container's id and host name) is left out of the
#      image's configuration; REPRO=1 builds it twice and compares;
#   4. the binary of this machine's platform, as a user who downloaded it:
#      the checksums verify, `tcmkit version` names VERSION, and `tcmkit
#      conform` passes `tcmkit simulate` of the same binary (manual clock, on
#      127.0.0.1).
# Each step's time is printed. ci/check.sh (and so .ci/run) runs it, in two
# parts: `ci/release.sh --binaries VERSION` (step 1 alone) at its start, in
# the background, so that the six builds take the CPU its other steps leave
# idle, and the whole release later, which reuses the binaries when
# dist/.binaries says they are this commit's at VERSION (else builds them).
binaries_only=0
if [[ "${1:-}" == --binaries ]]; then
	binaries_only=1
	shift
fi
set -euo pipefail
version="${1:-}"
if [[ ! "$version" =~ ^v[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
	echo "usage: ci/release.sh VERSION (a semantic version: v0.1.0, v1.2.3-rc.1)" >&2
	exit 2
fi
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
dist="$root/dist"
# Every time the release holds (the image's creation, its files' times) is
# the commit's, or SOURCE_DATE_EPOCH's: two builds of a commit are equal.
if [[ -z "${SOURCE_DATE_EPOCH:-}" ]]; then
	SOURCE_DATE_EPOCH="$(git log -1 --format=%ct 2>/dev/null || echo 0)"
fi
export SOURCE_DATE_EPOCH
# what the binaries were built from: this commit (and its changes), at VERSION
made="$version $(git rev-parse HEAD 2>/dev/null) $(git status --porcelain 2>/dev/null | sha256sum | cut -c1-16)"
reuse=0
if ((!binaries_only)) && [[ -f "$dist/.binaries" && "$(cat "$dist/.binaries")" == "$made" ]]; then
	reuse=1
else
	rm -rf "$dist"
fi
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
if ((reuse)); then
	rm -f "$dist/.binaries" "$dist"/SHA256SUMS "$dist"/*_image.tar
	echo "6 binaries (linux, darwin, windows × amd64, arm64): built before, by ci/release.sh --binaries $version of this commit"
else
	# linux/amd64 last: where this machine is one (CI's), its packages are
	# those the other Go steps of a run compile meanwhile, with the same
	# settings (ci/check.sh), and a go command compiles what another one is
	# compiling at the same time again
	for target in darwin/amd64 darwin/arm64 windows/amd64 windows/arm64 linux/arm64 linux/amd64; do
		os=${target%/*} arch=${target#*/} ext=""
		[[ "$os" == windows ]] && ext=.exe
		CGO_ENABLED=0 GOOS="$os" GOARCH="$arch" GOFLAGS=-buildvcs=false go build -trimpath \
			-ldflags "-s -w -X main.release=$version" -o "$dist/tcmkit_${version}_${os}_${arch}$ext" ./cmd/tcmkit
	done
	step "6 binaries (linux, darwin, windows × amd64, arm64)" "$t"
fi
if ((binaries_only)); then
	echo "$made" >"$dist/.binaries"
	exit 0
fi

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
	chmod 0755 "$tmp/image/tcmkit" # not the umask's
	printf '[containers]\ndefault_ulimits = []\n' >"$tmp/containers.conf"
	podman=(env CONTAINERS_CONF="$tmp/containers.conf" podman --runtime runc --cgroup-manager cgroupfs)
	# image_tar FILE builds the image and saves it, the same bytes for the
	# same commit: podman stamps the layer's files and the image with
	# --timestamp, and keeps no history nor build label; the build
	# container's id and host name, which docker's format keeps and no
	# option sets, are taken out of the configuration, whose file (named
	# by its digest) and manifest.json are written again, and the archive
	# is packed in name order with fixed owners and times.
	image_tar() {
		local out="$1" saved="$tmp/saved" cfg layers sum
		"${podman[@]}" build -q --timestamp "$SOURCE_DATE_EPOCH" --layers=false --omit-history --identity-label=false \
			--format docker --platform linux/amd64 -t "$image" "$tmp/image" >/dev/null
		rm -rf "$saved" "$saved.tar" && mkdir -p "$saved/in" "$saved/out"
		"${podman[@]}" save -q --format docker-archive -o "$saved.tar" "$image"
		"${podman[@]}" rmi -f "$image" >/dev/null
		tar -C "$saved/in" -xf "$saved.tar"
		cfg="$(jq -r '.[0].Config' "$saved/in/manifest.json")"
		layers="$(jq -c '.[0].Layers' "$saved/in/manifest.json")"
		jq -cj 'del(.container) | .config.Hostname = "" | .container_config.Hostname = ""' "$saved/in/$cfg" >"$saved/out/config.json"
		sum="$(sha256sum "$saved/out/config.json" | cut -c1-64)"
		mv "$saved/out/config.json" "$saved/out/$sum.json"
		jq -cnj --arg c "$sum.json" --arg t "$image" --argjson l "$layers" '[{Config: $c, RepoTags: [$t], Layers: $l}]' >"$saved/out/manifest.json"
		for l in $(jq -r '.[]' <<<"$layers"); do cp "$saved/in/$l" "$saved/out/$l"; done
		(cd "$saved/out" && tar --sort=name --mtime="@$SOURCE_DATE_EPOCH" --owner=0 --group=0 --numeric-owner \
			--mode=a=r --format=gnu -cf "$out" manifest.json "$sum.json" $(jq -r '.[]' <<<"$layers"))
	}
	image_tar "$dist/tcmkit_${version}_image.tar"
	# As a user would: load the archive, run it.
	"${podman[@]}" load -q -i "$dist/tcmkit_${version}_image.tar" >/dev/null
	got="$("${podman[@]}" run --rm --no-healthcheck "$image" version)"
	[[ "$got" == "tcmkit $version "* ]] || { echo "the image's tcmkit version: $got"; exit 1; }
	health="$("${podman[@]}" image inspect --format '{{.HealthCheck.Test}}' "$image")"
	[[ "$health" == *"--health-check"* ]] || { echo "the image lost its HEALTHCHECK: $health"; exit 1; }
	"${podman[@]}" rmi -f "$image" >/dev/null
	if [[ "${REPRO:-}" == 1 ]]; then
		image_tar "$tmp/again.tar"
		cmp -s "$tmp/again.tar" "$dist/tcmkit_${version}_image.tar" ||
			{ echo "the image differs between two builds of the same commit"; exit 1; }
		echo "the image: two builds, the same bytes ($(sha256sum "$tmp/again.tar" | cut -c1-16)…)"
	fi
	step "the image (linux/amd64), saved, loaded and run: $got" "$t"
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
