#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root): install the dependencies,
# build, and run the main job offline: gatekeeperd in the foreground and
# `gk-run --allow '*.github.com' -- git clone ...` against a stand-in
# internet in network namespaces, with denied attempts alongside.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh build
exec bash deploy/demo.sh build/gatekeeperd build/spawner/gk-run
