# SPDX-License-Identifier: BSD-3-Clause
# The network set-up of the test scripts, sourced (". test/lib/net.sh"): veth pairs for two
# processes on net_af_packet, network namespaces with an interface and its addresses, waiting
# for a file or a line, and one net_cleanup that removes every pair and namespace made here.
# A script calls net_cleanup from its own exit trap.

net_links='' net_nss=''
# EAL options that keep a net_af_packet run quiet (as test/lib/dpv_test_fork.h's)
AF_PACKET_QUIET='--log-level=lib.eal:error --log-level=pmd.net.af_packet:error --log-level=lib.telemetry:error'

# veth_pair A B: the veth pair A <-> B, both ends up with IPv6 off (so that the kernel sends
# nothing of its own, router solicitations or ND, into a test's traffic); removed by
# net_cleanup. For two processes that each open one end with DPDK's net_af_packet. That PMD
# joins a PACKET_FANOUT group numbered (pid ^ ifindex) & 0xffff, and groups are per network
# namespace: two processes whose numbers collide cannot both join (the second port fails to
# probe with EINVAL). Consecutive ifindexes (i, i + 1) and pids close together collide often
# (whenever pid1 ^ pid2 == i ^ (i + 1): 1, 3, 7...). So the two ends get ifindexes that
# differ in bit 15 only: then the pids would have to differ in exactly that bit. Ifindexes
# are picked at random above 65536; a taken one is tried again; an ip without "index" (or no
# free index found) gets the kernel's own numbers. Fails (1) when the pair cannot be made.
veth_pair() {
	for _try in 1 2 3 4 5 6 7 8; do
		_base=$(( ( ($(od -An -N4 -tu4 /dev/urandom) % 16000) + 2 ) * 65536 + ($$ % 32768) ))
		ip link add "$1" index "$_base" type veth peer name "$2" index $((_base | 32768)) \
			2>/dev/null && break
		_base=
	done
	[ -n "$_base" ] || ip link add "$1" type veth peer name "$2" || return 1
	net_links="$net_links $1"
	for _i in "$1" "$2"; do
		sysctl -qw net.ipv6.conf."$_i".disable_ipv6=1
		ip link set "$_i" up
	done
	return 0
}

# veth_up PREFIX: the veth pair $a = PREFIXa<pid> <-> $b = PREFIXb<pid> (veth_pair); exits 1,
# saying so, when it cannot be made.
veth_up() {
	a=${1}a$$ b=${1}b$$
	veth_pair "$a" "$b" || { echo "FAIL: veth pair $a $b (root?)"; exit 1; }
}

# veth_add A B: the veth pair A <-> B as the kernel makes it (down, IPv6 on: for an end that
# goes into a namespace as the kernel's); removed by net_cleanup.
veth_add() {
	ip link add "$1" type veth peer name "$2" || return 1
	net_links="$net_links $1"
}

# netns_add NS: the network namespace NS with its loopback up; removed by net_cleanup.
netns_add() {
	ip netns add "$1" || return 1
	net_nss="$net_nss $1"
	ip -n "$1" link set lo up
}

# netns_move NS IF [ADDR/LEN...]: interface IF into namespace NS, up, with the addresses (an
# IPv6 one without duplicate address detection).
netns_move() {
	_ns=$1 _if=$2
	shift 2
	ip link set "$_if" netns "$_ns" || return 1
	ip -n "$_ns" link set "$_if" up
	for _addr; do
		case $_addr in
		*:*) ip -n "$_ns" addr add "$_addr" dev "$_if" nodad ;;
		*) ip -n "$_ns" addr add "$_addr" dev "$_if" ;;
		esac
	done
}

# TAP_QUIET: the same for a net_tap run
TAP_QUIET='--log-level=lib.eal:error --log-level=pmd.net.tap:critical --log-level=lib.telemetry:error'

# prog_start EAL_ARGS PROGRAM ARGS...: PROGRAM in the background (pid $ppid, output in
# $dir/prog.out) with DPV_EAL_ARGS and the handshake files of test_handshake (dpv_test.h) in
# $dir; returns once it says it is ready (at most 10 s).
prog_start() {
	export DPV_TEST_READY="$dir/ready" DPV_TEST_GO="$dir/go" DPV_TEST_DONE="$dir/done" \
		DPV_TEST_CLOSE="$dir/close"
	_eal=$1; shift
	DPV_EAL_ARGS="$_eal" "$@" > "$dir/prog.out" 2>&1 &
	ppid=$!
	wait_file "$dir/ready" 200
}

# wait_file FILE N: until FILE exists, at most N times 0.05 s.
wait_file() {
	for _i in $(seq "$2"); do
		[ -e "$1" ] && return 0
		sleep 0.05
	done
	return 1
}

# wait_line PATTERN FILE N: until a line of FILE matches PATTERN, at most N times 0.1 s (a
# capture's "Capturing on").
wait_line() {
	for _i in $(seq "$3"); do
		grep -q -- "$1" "$2" 2>/dev/null && return 0
		sleep 0.1
	done
	return 1
}

# net_cleanup: remove the veth pairs and namespaces made here (for a script's exit trap).
net_cleanup() {
	for _l in $net_links; do
		ip link del "$_l" 2>/dev/null
	done
	for _n in $net_nss; do
		ip netns del "$_n" 2>/dev/null
	done
	net_links='' net_nss=''
}
