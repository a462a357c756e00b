#!/usr/bin/env bash
# Installs Debian packages that are missing, for the CI scripts that need
# them (chromium, podman, ...):
#
#   ci/apt-install.sh PACKAGE...
#
# CI runs some scripts side by side, so two installs may meet: they take
# turns on one lock instead of failing on dpkg's. The package lists are
# refreshed only when an install without them fails.
set -euo pipefail
missing=()
for p in "$@"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
((${#missing[@]} == 0)) && exit 0
echo "installing ${missing[*]} (apt-get)" >&2
export DEBIAN_FRONTEND=noninteractive
exec 9>/tmp/tcmkit-apt.lock
flock 9
apt-get install -y -q "${missing[@]}" >/dev/null 2>&1 ||
	{ apt-get update -q >/dev/null && apt-get install -y -q "${missing[@]}" >/dev/null; }
