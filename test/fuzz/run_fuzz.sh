#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# run_fuzz.sh HARNESS SEED_DIR true|false: with libFuzzer (true), fuzz for DPV_FUZZ_SECONDS
# (default 60) starting from a scratch copy of the seed corpus; a crashing input is kept next to
# the harness as crash-<sha1>. Without (false), replay the seed corpus once.
set -u
exe=$1 seeds=$2 libfuzzer=$3
if [ "$libfuzzer" != true ]; then
	exec "$exe" "$seeds"
fi
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus"
# -error_exitcode: libFuzzer's default for a finding is 77, which meson counts as a skip
TMPDIR=$work "$exe" -max_total_time="${DPV_FUZZ_SECONDS:-60}" -timeout=30 -rss_limit_mb=4096 \
	-error_exitcode=1 -timeout_exitcode=1 \
	-print_final_stats=1 -artifact_prefix="$(dirname "$exe")/" "$work/corpus" "$seeds" &
pid=$!
wait $pid
rc=$?
# a harness that aborted on a finding had no exit handler to remove DPDK's runtime directory
rm -rf "/var/run/dpdk/dpv-$pid"
exit $rc
