#!/usr/bin/env bash
# Installs the Node tools of ci/ (ci/package.json: Redocly, Spectral, Prism,
# openapi-typescript, TypeScript; exact versions from
# ci/package-lock.json) with `npm ci`, unless the locked version of every
# tool is already installed; ci/node_modules links to the install, kept in
# the user's cache (below). Quiet when there is nothing to do.
set -euo pipefail
ci="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

for tool in node npm; do
	if ! command -v "$tool" >/dev/null; then
		echo "ci/npm-install.sh: $tool not found; install Node.js >= 20.19 with npm (the OpenAPI tools of ci/ need it)" >&2
		exit 1
	fi
done

# Redocly CLI 2.x runs on Node.js 20.19+ (20.x) or 22.12+; say so plainly
# instead of letting it fail obscurely.
if ! node -e '
	const [major, minor] = process.versions.node.split(".").map(Number);
	process.exit((major === 20 && minor >= 19) || (major === 22 && minor >= 12) || major > 22 ? 0 : 1);
'; then
	echo "ci/npm-install.sh: Node.js $(node --version) is too old for Redocly CLI; need 20.19+ (20.x) or 22.12+" >&2
	exit 1
fi

# Up to date when every package of the lock file is installed at its locked
# version; anything else (no node_modules, a bumped pin) reinstalls.
if node -e '
	const fs = require("fs"), path = require("path");
	const dir = process.argv[1];
	const lock = JSON.parse(fs.readFileSync(path.join(dir, "package-lock.json"), "utf8"));
	for (const [where, pkg] of Object.entries(lock.packages)) {
		if (where === "") continue;
		let have;
		try {
			have = JSON.parse(fs.readFileSync(path.join(dir, where, "package.json"), "utf8")).version;
		} catch {
			// An optional package for another platform (fsevents on macOS)
			// is never installed here.
			if (pkg.optional) continue;
			process.exit(1);
		}
		if (have !== pkg.version) process.exit(1);
	}
' "$ci"; then
	exit 0
fi

# An install is kept in the user's cache, one per lockfile, and
# ci/node_modules links to it: a new clone or the next CI run on this
# machine installs nothing (npm ci took 18 s and 16 s of CPU a run). It is
# made in a directory of its own and renamed into place when whole, so that
# two runs at once never share a half-made one.
cache="${TCM_NPM_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/tcmkit/node_modules}"
kept="$cache/$(sha256sum "$ci/package-lock.json" | cut -c1-16)"
if [[ ! -e "$kept/.whole" ]]; then
	mkdir -p "$cache"
	making="$(mktemp -d "$cache/.making.XXXXXX")"
	trap 'rm -rf "$making"' EXIT
	cp "$ci/package.json" "$ci/package-lock.json" "$making/"
	echo "ci/npm-install.sh: npm ci, kept in $kept"
	npm ci --prefix "$making" --no-audit --no-fund --loglevel=error
	touch "$making/.whole"
	# another run may have put its own in place meanwhile: that one stays
	mv -T "$making" "$kept" 2>/dev/null || true
fi
rm -rf "$ci/node_modules"
ln -s "$kept/node_modules" "$ci/node_modules"
echo "ci/npm-install.sh: ci/node_modules → $kept/node_modules"
