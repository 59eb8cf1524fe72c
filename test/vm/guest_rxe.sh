#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# PID 1 of the soft-RoCE VM of run_rxe_test.sh, run from the host's root filesystem (read-only
# over 9p): the virtio-net NIC stays with the kernel, which gets IPv4 and IPv6 addresses and
# an rdma_rxe device on it (rxe0); then each step of $dpv_out/steps runs an rdma-core program
# on rxe0 against whatever the host puts at the other end of the NIC's tap.
#
# A step is one line "NAME KIND COMMAND...": once the host has created $dpv_out/NAME/go, the
# guest starts COMMAND (output in NAME/out); a "server" step says NAME/ready when the program
# listens on TCP port 18515 (the pingpong exchange), a "client" step at once. The step ends
# when COMMAND exits or the host creates NAME/close (COMMAND is then killed: its exit code is
# that of the kill); its exit code goes to NAME/rc. KIND "server+" or "client+": the host may
# have the step run again (step(), below).
# Kernel command line: dpv_out, dpv_mods, dpv_kver, dpv_guest (this script), dpv_mac (the
# NIC), dpv_ip4, dpv_ip6 (its addresses, with their prefix lengths).
# mounts, /tmp, $dpv_out; finish (guest_lib.sh, next to this script: no exec to find it)
. "${dpv_guest%/*}/guest_lib.sh"

# "[seconds since boot]" (the shell's own read: no exec, which is slow under TCG over 9p)
up() {
	local u
	read -r u _ < /proc/uptime
	echo "[$u]"
}

# Wait (at most $2 tenths of a second) for file $1.
await() {
	i=0
	while [ ! -e "$1" ]; do
		i=$((i + 1))
		[ $i -gt "$2" ] && return 1
		sleep 0.1
	done
}

setup() {
	local m ifc
	echo "$(up) guest: kernel $(uname -r), $(nproc) CPUs"
	for m in virtio_net crc32_generic rdma_rxe ib_uverbs; do
		modprobe -d "$dpv_mods" -S "$dpv_kver" "$m" || return 1
	done
	for ifc in /sys/class/net/*; do
		[ "$(cat "$ifc/address")" = "$dpv_mac" ] && IFC=$(basename "$ifc")
	done
	[ -n "${IFC:-}" ] || { echo "guest: no interface with MAC $dpv_mac"; return 1; }
	ip link set lo up
	# the addresses first: rxe enumerates them when it is added (IPv4 before IPv6)
	ip addr add "$dpv_ip4" dev "$IFC" &&
		ip -6 addr add "$dpv_ip6" dev "$IFC" nodad &&
		ip link set "$IFC" up || return 1
	echo "$(up) guest: modules loaded, $IFC up"
	rdma link add rxe0 type rxe netdev "$IFC" || return 1
	await /sys/class/infiniband/rxe0/ports/1/state 100
	for m in $(seq 100); do
		grep -q ACTIVE /sys/class/infiniband/rxe0/ports/1/state && break
		sleep 0.1
	done
	rdma link show
	ip -br addr show dev "$IFC"
	echo "guest: $IFC mtu $(cat /sys/class/net/"$IFC"/mtu), $(ethtool -k "$IFC" 2>/dev/null |
		grep -E '^(tx-checksumming|tcp-segmentation-offload):' | tr -s ' \n' ' ')"
	ibv_devinfo -v -d rxe0 > "$dpv_out/devinfo.txt" 2>&1 || { cat "$dpv_out/devinfo.txt"; return 1; }
	echo "$(up) guest: ibv_devinfo done"
	# the GID table as sysfs has it: index, GID, type, netdev (empty entries left out)
	gids > "$dpv_out/gids.txt"
	cat "$dpv_out/gids.txt"
}

# The first 16 entries (sysfs has gid_tbl_len = 1024 of them; reading them all takes minutes
# under TCG), with the shell's own read: index, GID, type, netdev.
gids() {
	local p=/sys/class/infiniband/rxe0/ports/1 i g t n
	for i in $(seq 0 15); do
		read -r g < "$p/gids/$i" 2>/dev/null || continue
		[ "$g" = 0000:0000:0000:0000:0000:0000:0000:0000 ] && continue
		read -r t < "$p/gid_attrs/types/$i" 2>/dev/null
		read -r n < "$p/gid_attrs/ndevs/$i" 2>/dev/null
		echo "$i $g $(echo "$t" | tr ' ' _) $n"
	done
}

# rxe0's counters, "NAME VALUE" a line (rxe counts what it drops and retries here); each step
# has them from before it started (counters0.txt) and after it ended (counters.txt).
counters() {
	local f v
	for f in /sys/class/infiniband/rxe0/ports/1/hw_counters/*; do
		read -r v < "$f" && echo "${f##*/} $v"
	done 2>/dev/null
}

# One step (see the top); the guest gives a step 10 minutes at most. A step of kind client+
# or server+ may be run again: once it ended the host answers in NAME/ack, "again" (having
# removed go, ready, close and rc: the step waits for go anew) or "done".
step() {
	local name=$1 kind=$2 d=$dpv_out/$1 pid t rc
	shift 2
	mkdir -p "$d"
	while :; do
		await "$d/go" 3000 || { echo "guest: $name: the host never said go"; echo 124 > "$d/rc"; return; }
		counters > "$d/counters0.txt"
		echo "$(up) guest: running $name: $*"
		"$@" < /dev/null > "$d/out" 2>&1 &
		pid=$!
		case $kind in server*)
			t=0
			while ! ss -Hltn 'sport = :18515' | grep -q . && kill -0 $pid 2>/dev/null; do
				t=$((t + 1))
				[ $t -gt 600 ] && break
				sleep 0.1
			done ;;
		esac
		touch "$d/ready"
		t=0
		while kill -0 $pid 2>/dev/null; do
			t=$((t + 1))
			if [ -e "$d/close" ] || [ $t -gt 6000 ]; then
				kill $pid 2>/dev/null
				break
			fi
			sleep 0.1
		done
		wait $pid
		rc=$?
		counters > "$d/counters.txt"
		echo $rc > "$d/rc.tmp"
		mv "$d/rc.tmp" "$d/rc"
		case $kind in *+) ;; *) return ;; esac
		await "$d/ack" 3000 || return
		read -r t < "$d/ack"
		rm -f "$d/ack"
		[ "$t" = again ] || return
	done
}

if ! setup > "$dpv_out/setup.log" 2>&1; then
	cat "$dpv_out/setup.log"
	finish 1
fi
cat "$dpv_out/setup.log"
touch "$dpv_out/setup.done"
while read -r line; do
	# shellcheck disable=SC2086
	step $line
done < "$dpv_out/steps"
finish 0
