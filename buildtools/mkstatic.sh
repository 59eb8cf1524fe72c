#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# mkstatic.sh OUT CORE.a DPDK.a... : one relocatable object of dpverbs and its DPDK archives,
# with only ibv_*, _ibv_* (what verbs.h's inline functions call) and dpv_* left global, packed as a static library.
set -e
out=$1; shift
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
ld -r -o "$tmp/dpverbs.o" --whole-archive "$@" --no-whole-archive
objcopy -w --keep-global-symbol='ibv_*' --keep-global-symbol='_ibv_*' --keep-global-symbol='dpv_*' "$tmp/dpverbs.o"
rm -f "$out"
ar rcs "$out" "$tmp/dpverbs.o"
