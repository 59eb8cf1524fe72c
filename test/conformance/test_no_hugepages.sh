#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_no_hugepages.sh PROGRAM: PROGRAM (a conformance test on net_null) on a machine without
# hugepages, and on one whose hugepages are all taken: it must pass, and dpverbs must say it
# runs with --no-huge and how to fix that. Each case runs in a private mount namespace (root)
# where /sys/kernel/mm/hugepages is an empty tmpfs, or one that reports 0 free pages, and no
# hugetlbfs is mounted; the machine itself is not touched.
set -u
prog=$1
fail=0
[ "$(id -u)" = 0 ] || { echo "needs root (unshare -m)"; exit 77; }
unshare -m --propagation private sh -c 'mount -t tmpfs dpv-probe /sys/kernel/mm/hugepages' ||
	{ echo "cannot mount in a private mount namespace here"; exit 77; }
for case in none none_free; do
	out=$(unshare -m --propagation private sh -c '
		set -e
		for m in $(awk "\$3 == \"hugetlbfs\" {print \$2}" /proc/mounts); do umount -l "$m"; done
		mount -t tmpfs dpv-nohuge /sys/kernel/mm/hugepages
		if [ "$1" = none_free ]; then
			d=/sys/kernel/mm/hugepages/hugepages-2048kB
			mkdir "$d"; echo 512 > "$d/nr_hugepages"; echo 0 > "$d/free_hugepages"
		fi
		exec "$2"' sh "$case" "$prog" 2>&1)
	rc=$?
	if [ $rc != 0 ]; then
		echo "FAIL $case: exit $rc"; echo "$out"; fail=1
	elif ! echo "$out" | grep -q "no free hugepages: running with --no-huge.*Fix: "; then
		echo "FAIL $case: no message about --no-huge"; echo "$out"; fail=1
	else
		echo "ok $case: $(echo "$out" | grep -o 'no free hugepages: running with --no-huge')"
	fi
done
exit $fail
