#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# dpverbs on a fresh Debian 12 machine: install what is missing, build, prepare hugepages, then
#   ./dpv.sh run  [raw_txgen options]   the main job: frames through a RAW_PACKET QP to a pcap
#   ./dpv.sh test [meson test options]  the test suite; ends with "N passed, N failed"
#                                       (then the VM test, suite vm; DPV_VM=0 skips it)
#   ./dpv.sh packages                   the Debian packages it installs (run, test, VM)
set -euo pipefail
cd "$(dirname "$0")"
BUILD=${DPV_BUILD_DIR:-build}

# clang and libclang-rt-14-dev: the sanitized build is clang's, for libFuzzer (-fsanitize=fuzzer
# is in libclang-rt-14-dev on Debian 12); llvm-14: llvm-symbolizer-14, which clang's ASan
# runtime runs to name functions (test/lsan.supp matches by name); libtsan2: gcc's
# ThreadSanitizer runtime; python3 (the test scripts, scapy's), iproute2 (ip, tc: the veth,
# tap and netns tests), procps (sysctl). The test "packages" (test/conformance/
# check_packages.py) checks that every command of the scripts comes from a package these bring
# or from Debian's essential set.
PACKAGES="gcc meson ninja-build pkg-config libdpdk-dev dpdk libnuma-dev libibverbs-dev
          libpcap-dev tshark binutils python3 python3-scapy dpdk-dev gnuplot-nox clang
          libclang-rt-14-dev llvm-14 libtsan2 ibverbs-utils perftest iproute2 procps"
# for ./dpv.sh test: the VM tests (test/vm): QEMU, what builds the guest's initramfs from
# Debian's kernel, and rxe's user-space provider (librxe) for the soft-RoCE guest; the
# benchmarks' valgrind (callgrind) and perf (suite bench: meson test --suite bench)
TEST_PACKAGES="valgrind linux-perf"
VM_PACKAGES="qemu-system-x86 cpio kmod ethtool ibverbs-providers"
[ "${1:-run}" = test ] && PACKAGES="$PACKAGES $TEST_PACKAGES"
[ "${1:-run}" = test ] && [ "${DPV_VM:-1}" = 1 ] && PACKAGES="$PACKAGES $VM_PACKAGES"

install_missing() {
	local missing=()
	for p in $PACKAGES; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
			missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	if [ "$(id -u)" != 0 ]; then
		echo "missing packages: ${missing[*]}; run as root or: sudo apt-get install ${missing[*]}" >&2
		exit 1
	fi
	echo "installing: ${missing[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq
	apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# Quiet when it works, the whole output when it does not.
quiet() {
	local log
	log=$(mktemp)
	if ! "$@" > "$log" 2>&1; then
		cat "$log" >&2
		rm -f "$log"
		echo "failed: $*" >&2
		return 1
	fi
	rm -f "$log"
}

build() {
	[ -f "$BUILD/build.ninja" ] || quiet meson setup "$BUILD" --buildtype=debugoptimized
	quiet meson compile -C "$BUILD"
}

# Reserve 2 MiB hugepages with DPDK's own tool when root and none are reserved; without them
# dpverbs runs with --no-huge and says so. Pages someone else uses are left alone.
hugepages() {
	local total
	total=$(awk '/HugePages_Total/ {print $2}' /proc/meminfo)
	[ "$(id -u)" = 0 ] || return 0
	if [ "${total:-0}" = 0 ]; then
		mkdir -p /dev/hugepages
		dpdk-hugepages.py -p 2M --setup 1G 2>/dev/null ||
			echo "note: could not reserve hugepages; dpverbs will run with --no-huge"
	elif ! grep -q hugetlbfs /proc/mounts; then
		mkdir -p /dev/hugepages
		dpdk-hugepages.py -m 2>/dev/null || true
	fi
}

# The same suites again in a build with AddressSanitizer and UBSan (DPV_SANITIZE=0 skips it),
# compiled by clang so that the fuzz suite fuzzes with libFuzzer there (doc/reliability.md).
sanitized() {
	[ "${DPV_SANITIZE:-1}" = 1 ] || return 0
	# a build-asan that an older dpv.sh set up with gcc is set up again with clang
	if [ -f "$BUILD-asan/build.ninja" ] &&
		! grep -q "host machine: clang" "$BUILD-asan/meson-logs/meson-log.txt" 2>/dev/null; then
		rm -rf "$BUILD-asan"
	fi
	[ -f "$BUILD-asan/build.ninja" ] ||
		CC=clang quiet meson setup "$BUILD-asan" --buildtype=debug \
			-Db_sanitize=address,undefined -Db_lundef=false
	quiet meson compile -C "$BUILD-asan"
	# LeakSanitizer matches test/lsan.supp by function name, which only the symbolizer gives:
	# Debian's ASan runtime runs llvm-symbolizer-14 (llvm-14); without it the leaks the file
	# suppresses are reported ("invalid path to external symbolizer")
	local symbolizer
	symbolizer=$(command -v llvm-symbolizer-14) ||
		{ echo "llvm-symbolizer-14 is missing (apt-get install llvm-14)" >&2; return 1; }
	ASAN_SYMBOLIZER_PATH=$symbolizer LSAN_OPTIONS=suppressions=$PWD/test/lsan.supp \
		UBSAN_OPTIONS=halt_on_error=1 \
		meson test -C "$BUILD-asan" --print-errorlogs --no-suite bench --no-suite loss "$@"
}

# The tests with threads again under ThreadSanitizer (only their programs are built there).
# rc (its QPs' engines run from the CQ's thread, the progress thread and the timers) joined once the
# RETRY_EXC_ERR it once ended in under TSan's slowdown was explained: a poller descheduled
# while it held the receive queue (754d099, doc/roce-rc.md "Timers").
TSAN_TESTS="concurrency completions service service_help roce_addr ud rc rx_concurrency rx_queues rx_spread wake_loop"
tsan() {
	[ "${DPV_SANITIZE:-1}" = 1 ] && [ $# = 0 ] || return 0
	[ -f "$BUILD-tsan/build.ninja" ] ||
		quiet meson setup "$BUILD-tsan" --buildtype=debug -Db_sanitize=thread -Db_lundef=false
	# shellcheck disable=SC2086
	# (rx_spread is test_rx_queues too)
	quiet ninja -C "$BUILD-tsan" $(printf 'test/test_%s ' $TSAN_TESTS | sed 's/rx_spread/rx_queues/')
	# shellcheck disable=SC2086
	TSAN_OPTIONS="halt_on_error=1 suppressions=$PWD/test/tsan.supp" \
		meson test -C "$BUILD-tsan" --no-rebuild --print-errorlogs $TSAN_TESTS
}

# The VM tests: a guest whose virtio NIC is bound to vfio-pci runs the wire tests (doc/vfio.md),
# a guest running Linux soft-RoCE talks RoCEv2 with the host (doc/roce.md, "Interop with rxe");
# a few minutes, in build/ only. Their log is vm.json beside testlog.json.
# A VM test that skips (no root, QEMU or /dev/net/tun) fails the run: the set-up installs QEMU
# and the tests run as root, so a skip hides a broken machine or test; DPV_VM=0 leaves them out.
vm() {
	[ "${DPV_VM:-1}" = 1 ] || return 0
	local rc=0 skipped
	meson test -C "$BUILD" --print-errorlogs --suite vm --logbase vm || rc=$?
	skipped=$(python3 -c 'import json, sys
print(sum(json.loads(l)["result"] == "SKIP" for l in open(sys.argv[1]) if l.strip()))' \
		"$BUILD/meson-logs/vm.json" 2>/dev/null || echo 0)
	[ "$skipped" = 0 ] || { echo "FAIL: $skipped VM tests skipped (DPV_VM=0 leaves them out)"; rc=1; }
	return $rc
}

# meson's own logs, counted: one line "N passed, N failed" (skipped ones said apart; a skipped
# VM test counts as failed).
summary() {
	python3 - "$@" <<'PY'
import json, os, sys
res = {}
for log in sys.argv[1:]:
    if not os.path.exists(log):
        continue
    for line in open(log):
        line = line.strip()
        if line:
            r = json.loads(line)["result"]
            if r == "SKIP" and log.endswith("/vm.json"):
                r = "SKIP (VM)"            # a failure: vm() says why
            res[r] = res.get(r, 0) + 1
passed = res.get("OK", 0) + res.get("EXPECTEDFAIL", 0)
failed = sum(v for k, v in res.items() if k not in ("OK", "EXPECTEDFAIL", "SKIP"))
skipped = res.get("SKIP", 0)
print(f"{passed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
PY
}

cmd=${1:-run}
shift || true
if [ "$cmd" = packages ]; then            # what the set-up installs for run and test, VM included
	# shellcheck disable=SC2086
	printf '%s\n' $PACKAGES $TEST_PACKAGES $VM_PACKAGES
	exit 0
fi
install_missing
build
hugepages
case "$cmd" in
run)
	exec "$BUILD/examples/raw_txgen/raw_txgen" -c -o "$BUILD/raw_txgen.pcap" "$@"
	;;
test)
	rc=0
	rm -f "$BUILD-asan/meson-logs/testlog.json" "$BUILD-tsan/meson-logs/testlog.json" \
		"$BUILD/meson-logs/vm.json"
	meson test -C "$BUILD" --print-errorlogs --no-suite bench "$@" || rc=$?
	sanitized "$@" || rc=$?
	tsan "$@" || rc=$?
	[ $# -gt 0 ] || vm || rc=$?
	summary "$BUILD/meson-logs/testlog.json" "$BUILD-asan/meson-logs/testlog.json" \
		"$BUILD-tsan/meson-logs/testlog.json" "$BUILD/meson-logs/vm.json"
	exit $rc
	;;
*)
	echo "usage: $0 run|test|packages" >&2
	exit 2
	;;
esac
