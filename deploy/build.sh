#!/usr/bin/env bash
# Configure and build gatekeeper into build/ (or $1). Needs the packages
# from install-deps.sh.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build}
shift || true
if [ -d "$dir" ]; then
	meson setup --reconfigure "$dir" "$@" >/dev/null
else
	meson setup "$dir" "$@" >/dev/null
fi
ninja -C "$dir"
