#!/usr/bin/env bash
# From a fresh Debian 12 machine (as root): install the dependencies,
# build, and run gatekeeperd in the foreground with an offline demo of
# allowed and denied lookups from two cages.
set -euo pipefail
cd "$(dirname "$0")/.."
bash deploy/install-deps.sh
bash deploy/build.sh build
exec bash deploy/demo.sh build/gatekeeperd
