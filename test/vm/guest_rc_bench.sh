#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# guest_rc_bench.sh BUILD SIZE ITERS ROUNDS [TOOLS]: one step of run_rxe_test.sh's bench mode, run
# inside the soft-RoCE guest (guest_rxe.sh has rxe0 up on its NIC): perftest's ib_write_bw and
# ib_send_bw of SIZE-byte messages, ITERS each, between two processes of this guest, on
#   rxe  - the kernel's rdma_rxe: both ends on rxe0, the client calling the guest's own
#          address (rxe loops a packet to its own GID back inside the driver: no netdev);
#   rxev - rxe like dpverbs: rxe_v0 and rxe_v1 on the two ends of a second veth pair (rv0
#          10.76.0.1, rv1 10.76.0.2, both in the guest's one network namespace: rxe 6.1 works
#          in init_net only), every packet through the guest kernel's UDP/IP and veth paths.
#          Two addresses of one host would be delivered through lo, where rxe has no device:
#          policy routing (table 176, rules for locally sent packets to each address, the
#          local table moved after them) sends each out of the other end's veth, with static
#          neighbours, accept_local and no reverse-path filter. Said and left out when the
#          setup fails.
#   dpv  - dpverbs (BUILD/compat/dpv-run): one process on each end of a veth pair of the
#          guest (net_af_packet), addresses 10.77.0.1 and 10.77.0.2, hugepages of the guest.
#          ib_send_bw: both sides poll their CQs (direct progress), the server on lcore 0, the
#          client on lcore 1. ib_write_bw: the server polls nothing (it waits in read()), so
#          its responder runs on a service lcore (progress = 1, lcore 1; its main thread,
#          asleep, on 0), the client on lcore 0: left to the library's keeper thread, whose
#          50 us naps are milliseconds under TCG, the target would be the bottleneck
#          (doc/roce-rc.md, "A passive target").
# and bench-rc (test/bench/bench_rc.c: one process, two RC QPs of one device, the second at the
# device's own GID; RDMA WRITE and SEND, 25 x ITERS messages, lists of 16, 128 outstanding:
# runs of a second or more, so that TCG's translation of a fresh process's code and the
# machine's noise weigh less), the same binary on both: tools loop_write and loop_send, on
#   rxe  - rxe0: rxe's loopback inside the driver (the kernel's requester, responder and
#          completer tasks, no netdev);
#   dpv  - dpverbs through dpv-run on a net_ring0 port (10.77.0.9): its loopback ring, every
#          packet still built, parsed and checked, no kernel on the way; since 2026-12-02
#          without an ICRC (nothing can corrupt a looped frame: doc/roce.md, "Loopback").
# ROUNDS rounds, rxe, rxev and dpv alternating within each. One line per run on stdout:
#   RESULT tool size impl round BW_MBps Mpps exit_server exit_client
# (the client's BW average and message rate; "- -" when it printed no result line).
# Never fails on a number; exits 1 when the setup fails.
# TOOLS: "loop,perftest" (the default), or one of them.
build=$1 size=$2 iters=$3 rounds=$4 tools=${5:-loop,perftest}
tmp=/tmp/rcbench.$$
mkdir -p "$tmp"

setup() {
	[ -e /sys/class/net/dv0 ] && return 0
	modprobe -d "$dpv_mods" -S "$dpv_kver" veth || return 1
	ip link add dv0 type veth peer name dv1 || return 1
	for i in dv0 dv1; do
		sysctl -qw net.ipv6.conf.$i.disable_ipv6=1
		ip link set $i up
	done
	mkdir -p /dev/hugepages
	grep -q hugetlbfs /proc/mounts || mount -t hugetlbfs nodev /dev/hugepages
	echo 256 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages
	grep HugePages_Free /proc/meminfo
}

# The like-for-like rxe pair (rxev, above); the GID index of each end's IPv4 address in
# $rxev_gid0/$rxev_gid1
rxev_gid() {
	for g in /sys/class/infiniband/$1/ports/1/gids/*; do
		case $(cat "$g" 2>/dev/null) in *ffff:$2) echo "${g##*/}"; return 0 ;; esac
	done
	return 1
}
setup_rxev() {
	ip link add rv0 type veth peer name rv1 || return 1
	sysctl -qw net.ipv4.conf.all.rp_filter=0 net.ipv4.conf.all.accept_local=1
	for i in rv0 rv1; do
		sysctl -qw net.ipv6.conf.$i.disable_ipv6=1 net.ipv4.conf.$i.rp_filter=0 \
			net.ipv4.conf.$i.accept_local=1
		ip link set $i up || return 1
	done
	ip addr add 10.76.0.1/32 dev rv0 && ip addr add 10.76.0.2/32 dev rv1 || return 1
	ip neigh replace 10.76.0.2 lladdr "$(cat /sys/class/net/rv1/address)" dev rv0 nud permanent &&
	ip neigh replace 10.76.0.1 lladdr "$(cat /sys/class/net/rv0/address)" dev rv1 nud permanent &&
	ip route add 10.76.0.2 dev rv0 table 176 && ip route add 10.76.0.1 dev rv1 table 176 &&
	ip rule add pref 10 iif lo to 10.76.0.2 lookup 176 &&
	ip rule add pref 11 iif lo to 10.76.0.1 lookup 176 &&
	ip rule add pref 100 lookup local && ip rule del pref 0 lookup local || return 1
	rdma link add rxe_v0 type rxe netdev rv0 && rdma link add rxe_v1 type rxe netdev rv1 || return 1
	t=0
	until rxev_gid0=$(rxev_gid rxe_v0 0a4c:0001) && rxev_gid1=$(rxev_gid rxe_v1 0a4c:0002); do
		t=$((t + 1))
		[ $t -gt 50 ] && return 1
		sleep 0.1
	done
	echo "rxev: rxe_v0 GID $rxev_gid0 (10.76.0.1 on rv0), rxe_v1 GID $rxev_gid1 (10.76.0.2 on rv1)"
}
cleanup_rxev() {
	rdma link del rxe_v0 2>/dev/null
	rdma link del rxe_v1 2>/dev/null
	ip rule add pref 0 lookup local 2>/dev/null
	ip rule del pref 100 lookup local 2>/dev/null
	ip rule del pref 10 2>/dev/null
	ip rule del pref 11 2>/dev/null
	ip route flush table 176 2>/dev/null
	ip link del rv0 2>/dev/null
}

# Until something listens on TCP port $1 (at most 60 s) or process $2 ends.
listening() {
	t=0
	while ! ss -Hltn "sport = :$1" | grep -q .; do
		kill -0 "$2" 2>/dev/null || return 1
		t=$((t + 1))
		[ $t -gt 600 ] && return 1
		sleep 0.1
	done
}

port=20000
# one TOOL IMPL ROUND: a run, again (3 tries in all) while perftest cannot time its report
# ("Can't produce a report": its TSC-vs-gettimeofday fit fails under TCG on a loaded host).
one() {
	try=1
	while :; do
		run1 "$@"
		grep -q "Can't produce a report" "$tmp/cli" "$tmp/srv" && [ $try -lt 3 ] || break
		try=$((try + 1))
	done
	if [ -n "$line" ]; then
		# (perftest's stderr may run into its last column: the number alone)
		set -- $line
		echo "RESULT $tool $size $impl $round $(echo "$4" | grep -o '^[0-9.]*') $(echo "$5" | grep -o '^[0-9.]*') $src $crc"
	else
		echo "RESULT $tool $size $impl $round - - $src $crc"
		sed "s/^/  $impl client: /" "$tmp/cli"
		sed "s/^/  $impl server: /" "$tmp/srv"
	fi
}

run1() {
	tool=$1 impl=$2 round=$3
	port=$((port + 1))
	args="-x 1 -s $size -n $iters -p $port"
	if [ "$impl" = rxe ]; then
		$tool -d rxe0 $args > "$tmp/srv" 2>&1 &
		srv=$!
		listening $port $srv
		timeout 300 $tool -d rxe0 $args 10.98.0.2 > "$tmp/cli" 2>&1
		crc=$?
	elif [ "$impl" = rxev ]; then
		$tool -d rxe_v0 -x $rxev_gid0 -s $size -n $iters -p $port > "$tmp/srv" 2>&1 &
		srv=$!
		listening $port $srv
		timeout 300 $tool -d rxe_v1 -x $rxev_gid1 -s $size -n $iters -p $port 127.0.0.1 \
			> "$tmp/cli" 2>&1
		crc=$?
	else
		sconf=$tmp/a.conf slc=0 clc=1
		[ $tool = ib_write_bw ] && sconf=$tmp/a_service.conf slc=0,1 clc=0
		DPV_CONFIG=$sconf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=dv0,framecnt=8192 -l $slc $eal" \
			"$build/compat/dpv-run" $tool -d dpv_net_af_packet0 $args > "$tmp/srv" 2>&1 &
		srv=$!
		listening $port $srv
		DPV_CONFIG=$tmp/b.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=dv1,framecnt=8192 -l $clc $eal" \
			timeout 300 "$build/compat/dpv-run" $tool -d dpv_net_af_packet0 $args 127.0.0.1 \
			> "$tmp/cli" 2>&1
		crc=$?
	fi
	t=0
	while kill -0 $srv 2>/dev/null && [ $t -lt 300 ]; do t=$((t + 1)); sleep 0.1; done
	kill $srv 2>/dev/null
	wait $srv
	src=$?
	line=$(grep -E "^ *$size +$iters +[0-9]" "$tmp/cli" | head -1)
}

# loop OP IMPL ROUND: one bench-rc run (RESULT: MB/s, and Mpps from its msg/s)
loop() {
	op=$1 impl=$2 round=$3
	bargs="-x 1 -o $op -s $size -n $((iters * 25))"
	if [ "$impl" = rxe ]; then
		timeout 300 "$build/test/bench/bench-rc" -d rxe0 $bargs > "$tmp/cli" 2>&1
	else
		DPV_CONFIG=$tmp/loop.conf DPV_EAL_ARGS="--vdev=net_ring0 -l 0 $eal" \
			timeout 300 "$build/compat/dpv-run" "$build/test/bench/bench-rc" \
			-d dpv_net_ring0 $bargs > "$tmp/cli" 2>&1
	fi
	crc=$?
	line=$(grep "^rc $op $size B:" "$tmp/cli")
	if [ -n "$line" ]; then
		# rc OP SIZE B: N messages in T s: R msg/s, M MB/s (DEV, path MTU P)
		set -- $line
		echo "RESULT loop_$op $size $impl $round ${12} $(echo "${10}" | awk '{ print $1 / 1e6 }') 0 $crc"
	else
		echo "RESULT loop_$op $size $impl $round - - 0 $crc"
		sed "s/^/  $impl: /" "$tmp/cli"
	fi
}

setup || { echo "guest_rc_bench: setup failed"; exit 1; }
rxev=rxev
cleanup_rxev
setup_rxev || { echo "guest_rc_bench: the rxe veth pair (rxev) could not be set up: left out"; rxev=; }
eal="--in-memory --log-level=lib.eal:error --log-level=lib.telemetry:error --log-level=pmd.net.af_packet:error"
printf 'port_addr = net_af_packet0 10.77.0.1\n' > "$tmp/a.conf"
printf 'port_addr = net_af_packet0 10.77.0.1\nprogress = 1\n' > "$tmp/a_service.conf"
printf 'port_addr = net_af_packet0 10.77.0.2\n' > "$tmp/b.conf"
printf 'port_addr = net_ring0 10.77.0.9\n' > "$tmp/loop.conf"
r=1
while [ $r -le "$rounds" ]; do
	case ",$tools," in *,loop,*)
		for op in write send; do
			loop $op rxe $r
			loop $op dpv $r
		done ;;
	esac
	case ",$tools," in *,perftest,*)
		for tool in ib_write_bw ib_send_bw; do
			one $tool rxe $r
			[ -n "$rxev" ] && one $tool rxev $r
			one $tool dpv $r
		done ;;
	esac
	r=$((r + 1))
done
cleanup_rxev
rm -rf "$tmp"
