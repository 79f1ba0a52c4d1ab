#!/usr/bin/env bash
# The whole test suite, as CI runs it (as root, no standard input):
#  1. install the dependencies,
#  2. build with warnings as errors and run every test (unit, fuzz corpora,
#     integration against real dig, dnsmasq and promtool),
#  3. the same again under AddressSanitizer + UndefinedBehaviorSanitizer
#     (but the slowest end-to-end scripts, suite "slow"),
#  4. each fuzz target briefly under libFuzzer (two at a time).
# The closing line gives the counts.
set -euo pipefail
cd "$(dirname "$0")/.."
FUZZ_SECONDS=${FUZZ_SECONDS:-10}

bash deploy/install-deps.sh

status=0
# run_suite DIR "MESON TEST ARGS" [MESON SETUP ARGS...]
run_suite() {
	local dir=$1 targs=$2
	shift 2
	rm -rf "$dir"
	meson setup "$dir" -Dwerror=true -Dtests=enabled "$@" >/dev/null
	ninja -C "$dir"
	# shellcheck disable=SC2086  # targs: words on purpose
	meson test -C "$dir" --print-errorlogs --num-processes 2 $targs ||
		status=1
}

echo "== build with -Werror and test"
run_suite build-test ""
# The slowest end-to-end scripts (suite "slow": gk-run and bwrap at work,
# the daemon exercised by the others too) run in the first pass only.
echo "== build with -Db_sanitize=address,undefined and test (not suite slow)"
run_suite build-asan "--no-suite slow" -Db_sanitize=address,undefined \
	-Db_lundef=false

echo "== fuzz each target for ${FUZZ_SECONDS}s (libFuzzer, two at a time)"
rm -rf build-fuzz
CC=clang meson setup build-fuzz -Dfuzzing=libfuzzer -Dtests=disabled \
	-Db_sanitize=address,undefined -Db_lundef=false >/dev/null
ninja -C build-fuzz
# fuzz_one NAME: fuzz a copy of the target's corpus; exit status as the
# fuzzer's, the log in build-fuzz/NAME.log.
fuzz_one() {
	local name=$1 work rc
	work=$(mktemp -d)
	cp -r "tests/fuzz/$name.in"/. "$work"/
	rc=0
	timeout $((FUZZ_SECONDS + 120)) "build-fuzz/tests/$name" \
		-max_total_time="$FUZZ_SECONDS" -timeout=10 -rss_limit_mb=2048 \
		-artifact_prefix="build-fuzz/$name-" "$work" \
		>"build-fuzz/$name.log" 2>&1 || rc=$?
	rm -rf "$work"
	return $rc
}
targets=()
for corpus in tests/fuzz/*.in; do
	name=$(basename "$corpus" .in)
	[ -x "build-fuzz/tests/$name" ] && targets+=("$name")
done
fuzz_ok=0
fuzz_fail=0
for ((i = 0; i < ${#targets[@]}; i += 2)); do
	pids=()
	for name in "${targets[@]:i:2}"; do
		fuzz_one "$name" &
		pids+=("$!:$name")
	done
	for p in "${pids[@]}"; do
		name=${p#*:}
		if wait "${p%%:*}"; then
			echo "fuzz $name: ok ($(grep -c . "build-fuzz/$name.log") log lines)"
			fuzz_ok=$((fuzz_ok + 1))
		else
			echo "fuzz $name: FAILED, see build-fuzz/$name.log:"
			tail -30 "build-fuzz/$name.log"
			fuzz_fail=$((fuzz_fail + 1))
			status=1
		fi
	done
done

python3 - "$fuzz_ok" "$fuzz_fail" <<'PY'
import json, sys
ok = int(sys.argv[1]); fail = int(sys.argv[2]); skip = 0
for d in ("build-test", "build-asan"):
    try:
        with open(f"{d}/meson-logs/testlog.json") as f:
            for line in f:
                r = json.loads(line).get("result")
                if r in ("OK", "EXPECTEDFAIL"):
                    ok += 1
                elif r == "SKIP":
                    skip += 1
                else:
                    fail += 1
    except FileNotFoundError:
        fail += 1
print(f"{ok} passed, {fail} failed, {skip} skipped")
PY
exit $status
