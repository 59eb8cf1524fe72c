#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run_rxe_test.sh BUILD_DIR reference|interop: RoCEv2 between Linux soft-RoCE and the host.
#
# QEMU (TCG) boots Debian's kernel (vm_kernel.sh) with the host's root filesystem over 9p, as
# run_vm_test.sh does, but the guest (guest_rxe.sh) keeps its virtio-net NIC: it gets
# 10.98.0.2/24 and fd98::2/64 and an rdma_rxe device, rxe0, whose GID table is then
#   0 fe80::ff:fe00:2 (the MAC's EUI-64), 1 ::ffff:10.98.0.2, 2 fd98::2   (all RoCE v2).
# The NIC's host side is a tap in a network namespace of this run; tc mirred joins it to a
# veth pair ($va, $vb) whose far end $vb has the host's addresses 10.98.0.1 and fd98::1 (the
# kernel answers ARP/ND and carries the pingpongs' TCP exchange) and is where the host's RoCE
# peer sends and receives, and where tshark captures (the tap is captured too).
#
# reference: rdma-core's ibv_ud_pingpong / ibv_rc_pingpong -n 1 on rxe0 against roce_peer.py,
#   which answers with frames of dpverbs' codec. Passes when every pingpong completes (rxe
#   accepted our frames) and rxe's own frames pass test_roce_rxe (dpverbs' parser and tshark
#   agree on every field, the ICRC holds, dpverbs builds the same bytes). DPV_RXE_SAVE=DIR
#   copies the reference (rxe_frames.pcap, .txt) there: test/wire/rxe/ holds one such copy.
#   Then rxe resolves dpverbs' addresses: dpv_hold (a service lcore, the program asleep)
#   answers the ARP and ND of its kernel while roce_peer.py speaks RoCE from them.
# interop: the unmodified ibv_ud_pingpong on dpverbs (compat/dpv-run, net_af_packet on $vb,
#   the port's addresses 10.98.0.3 and fd98::3 from the configuration) against rxe's, both
#   ways and over IPv6 GIDs (exit codes, "N iters in", and -c: no "invalid data", which is
#   the first payload byte only), then data_peer's UD SENDs the same three ways: every byte,
#   byte_len, source QPN and GRH checked by the side that receives (dpv_step). ud_probe
#   first, before the VM boots: a dpverbs that creates no UD QP fails the test (it was a
#   skip, which hid a regression).
# Exit 77 (skipped) without root, QEMU or /dev/net/tun (./dpv.sh test counts that as a failure
# unless DPV_VM=0). DPV_TEST_KEEP=DIR keeps the run's files.
set -u
build=$(cd "$1" && pwd)
mode=${2:-reference}
here=$(cd "$(dirname "$0")" && pwd)
case $mode in reference|interop|rc|bench) ;; *) echo "usage: $0 BUILD reference|interop|rc|bench"; exit 2 ;; esac
[ "$(id -u)" = 0 ] || { echo "SKIP: the VM test needs root (tap, netns)"; exit 77; }
command -v qemu-system-x86_64 > /dev/null ||
	{ echo "SKIP: no qemu-system-x86_64 (apt-get install qemu-system-x86)"; exit 77; }
[ -c /dev/net/tun ] || { echo "SKIP: no /dev/net/tun"; exit 77; }
tools="depmod cpio dpkg-deb tc tshark ss ibv_ud_pingpong ibv_rc_pingpong rdma"
[ "$mode" = bench ] && tools="$tools ib_write_bw ib_send_bw dpdk-hugepages.py"
[ "$mode" = rc ] && tools="$tools ibv_uc_pingpong ibv_srq_pingpong ib_write_bw ib_read_bw ib_send_bw ib_atomic_bw ib_write_lat"
for t in $tools; do
	command -v $t > /dev/null || { echo "FAIL: $t is missing (apt-get install kmod cpio" \
		"iproute2 tshark ibverbs-utils)"; exit 1; }
done
for t in mw_peer data_peer; do
	[ "$mode" = rc ] || [ "$mode" = interop ] || break
	[ -x "$build/test/vm/$t" ] || { echo "FAIL: $build/test/vm/$t is not built"; exit 1; }
done
[ -e /usr/lib/x86_64-linux-gnu/libibverbs/librxe-rdmav34.so ] ||
	{ echo "FAIL: rxe's provider is missing (apt-get install ibverbs-providers)"; exit 1; }

# The dpverbs port of the interop steps: net_af_packet on $vb, and its RoCE addresses (the
# port_addr key of the configuration, doc/roce-addressing.md "Addressing"): GIDs 1 and 2, as rxe0's.
DPV_PORT=net_af_packet0
DPV_ADDR4=10.98.0.3
DPV_ADDR6=fd98::3
DPV_ITERS=20                  # pingpong exchanges per interop step
DPV_SIZE=512

# The rc steps: NAME, the guest's role, what both must report (dpv_step's CHECK), the tool and
# its arguments, the same on both sides (the guest's add -d rxe0, the client's the server's
# address). dpverbs is the other role; the loss_ steps run under netem in the guest
# (guest_loss.sh: the host's kernel has no netem, nor tc's gact): LOSS of the RoCE frames
# both ways, the TCP exchange and ARP/ND untouched; their perftest steps keep 16 WRs in flight
# (-t 16), not 128: the guest's NIC, behind a tap QEMU reads only as fast as TCG empties the
# virtio ring, drops what a whole window sent at once brings beyond that, on top of netem.
# No pingpong under loss: ibv_rc_pingpong has no barrier after its last message, so when the
# ACK of the last SEND is lost its peer has already destroyed its QP and the sender ends in
# RETRY_EXC_ERR (seen: rxe printed "300 iters", dpverbs sent its last SEND 8 times to a QP
# that was gone); perftest's bandwidth tests exchange over TCP after every completion. READ and the
# atomics take -o 16: perftest makes each side's initiator depth (max_rd_atomic) the other's
# max_qp_rd_atom, rxe's 128, which dpverbs (16, as ConnectX) refuses in RTR -> RTS, as rxe
# refuses more than its own (doc/compat.md). The other perftest steps take -u 18 (a ~1 s ACK
# timeout, as compat_rc_perftest): a passive side's keeper may answer tens of ms late on a
# loaded machine, and a retry fails the step (retries_check).
rc_steps=(
	"rc_pp_server server pp:20 ibv_rc_pingpong -g 1 -s 2500 -n 20 -c"
	"rc_pp_client client pp:20 ibv_rc_pingpong -g 1 -s 2500 -n 20 -c"
	"rc_pp_ipv6 server pp:20 ibv_rc_pingpong -g 2 -s 4096 -n 20 -c"
	"uc_pp_server server pp:20 ibv_uc_pingpong -g 1 -s 2500 -n 20 -c"
	"uc_pp_client client pp:20 ibv_uc_pingpong -g 1 -s 2500 -n 20 -c"
	"srq_pp_server server pp:20 ibv_srq_pingpong -g 1 -s 2500 -n 20 -c"
	"srq_pp_client client pp:20 ibv_srq_pingpong -g 1 -s 2500 -n 20 -c"
	"data_rc_send server ok:data_peer $build/test/vm/data_peer -g 1 -t rc -o send -s 2500 -n 20"
	"data_rc_ipv6 client ok:data_peer $build/test/vm/data_peer -g 2 -t rc -o send -s 4096 -n 20"
	"data_uc_send client ok:data_peer $build/test/vm/data_peer -g 1 -t uc -o send -s 2500 -n 20"
	"data_srq_send server ok:data_peer $build/test/vm/data_peer -g 1 -t srq -o send -s 2500 -n 20"
	"data_rc_write client ok:data_peer $build/test/vm/data_peer -g 1 -t rc -o write -s 8192 -n 20"
	"data_uc_write server ok:data_peer $build/test/vm/data_peer -g 1 -t uc -o write -s 4096 -n 20"
	"data_rc_read server ok:data_peer $build/test/vm/data_peer -g 1 -t rc -o read -s 8192 -n 20"
	"data_rc_fa client ok:data_peer $build/test/vm/data_peer -g 1 -t rc -o fa -n 20"
	"data_rc_cs server ok:data_peer $build/test/vm/data_peer -g 1 -t rc -o cs -n 20"
	"mw_rxe_owner server ok:mw_peer $build/test/vm/mw_peer -g 1 -o server"
	"mw_dpv_owner server ok:mw_peer $build/test/vm/mw_peer -g 1 -o client"
	"write_bw_dpv server pt:200 ib_write_bw -x 1 -u 18 -s 8192 -n 200"
	"write_bw_rxe client pt:200 ib_write_bw -x 1 -u 18 -s 8192 -n 200"
	"read_bw_dpv server pt:200 ib_read_bw -x 1 -u 18 -o 16 -s 8192 -n 200"
	"read_bw_rxe client pt:200 ib_read_bw -x 1 -u 18 -o 16 -s 8192 -n 200"
	"send_bw_dpv server pt:200 ib_send_bw -x 1 -u 18 -s 8192 -n 200"
	"send_bw_rxe client pt:200 ib_send_bw -x 1 -u 18 -s 8192 -n 200"
	"atomic_fa_dpv server pt:200 ib_atomic_bw -x 1 -u 18 -o 16 -A FETCH_AND_ADD -n 200"
	"atomic_cs_rxe client pt:200 ib_atomic_bw -x 1 -u 18 -o 16 -A CMP_AND_SWAP -n 200"
	"atomic_cs_dpv server pt:200 ib_atomic_bw -x 1 -u 18 -o 16 -A CMP_AND_SWAP -n 200"
	"atomic_fa_rxe client pt:200 ib_atomic_bw -x 1 -u 18 -o 16 -A FETCH_AND_ADD -n 200"
	"write_lat_dpv server pt:200 ib_write_lat -x 1 -u 18 -s 64 -n 200"
	"write_lat_rxe client pt:200 ib_write_lat -x 1 -u 18 -s 64 -n 200"
	"loss_write_dpv server pt:500 ib_write_bw -x 1 -t 16 -s 4096 -n 500"
	"loss_write_rxe client pt:500 ib_write_bw -x 1 -t 16 -s 4096 -n 500"
	"loss_send_dpv server pt:500 ib_send_bw -x 1 -t 16 -s 4096 -n 500"
	"loss_send_rxe client pt:500 ib_send_bw -x 1 -t 16 -s 4096 -n 500"
)
# The mw_ steps: mw_peer (test/vm/mw_peer.c, our own program: no rdma-core tool binds memory
# windows), the same binary on rxe and on dpverbs: the owner binds a type 2 window
# (IBV_WR_BIND_MW), the user READs and WRITEs through it, invalidates it with SEND_WITH_INV
# (the owner's receive completion: IBV_WC_WITH_INV and the key) and WRITEs through the dead key
# (REM_ACCESS_ERR, the owner's bytes unchanged). rxe owns in mw_rxe_owner, dpverbs in
# mw_dpv_owner. The data_ steps: data_peer (test/vm/data_peer.c), the same binary on both
# sides, each operation both ways (the client acts, then the server): the bytes of RC, UC and
# SRQ SENDs, RC and UC WRITEs, READs, and the atomics' returned and final values, checked by
# the side they reach; the pingpong and perftest steps check no payload of their own (the
# pingpongs' -c: the first byte of each page), these are their oracle. Every step but the
# loss_ ones must also leave rxe0's duplicate_request, rcvd_seq_err, retry_exceeded_err and
# completer_retry_err where they were, and dpverbs' RC engine must have retransmitted
# nothing (no timeout, sequence NAK or duplicate either): a retry would hide a frame the
# other side rejected (retries_check). DPV_RXE_ONLY=REGEX runs only the rc steps whose names
# match (a developer's shortcut: one boot, fewer steps).
LOSS=5%                       # netem's loss of RoCE frames, both ways, in the loss_ steps

# The bench steps (guest_rc_bench.sh, all inside the guest): message size and iterations
# (DPV_BENCH_SIZES="SIZE:ITERS ..." for a shorter run)
bench_sizes=${DPV_BENCH_SIZES:-"64:4000 4096:2000 65536:200"}
BENCH_ROUNDS=${DPV_BENCH_ROUNDS:-3}
# which rows: "loop,perftest" (both), "loop" (bench-rc only: minutes, not most of an hour)
BENCH_TOOLS=${DPV_BENCH_RC_TOOLS:-loop,perftest}

if [ "$mode" = interop ]; then
	probe=$(DPV_EAL_ARGS="--vdev=net_null0 --log-level=lib.eal:error --log-level=lib.telemetry:error" \
		"$build/test/vm/ud_probe" 2>&1)
	# dpverbs has UD: a build without it (EOPNOTSUPP, exit 77) fails as any other answer
	[ $? = 0 ] || { echo "FAIL: $probe"; exit 1; }
	echo "interop: $probe"
fi

dir=$(mktemp -d /tmp/dpvrxe.XXXXXX)
ns=dpvrx$$
tap=dpvrt$$
va=dpvra$$
vb=dpvrb$$
guest_mac=02:00:00:00:00:02
qpid= tpid= tpid2= ppid= hpid=
cleanup() {
	for p in $ppid $hpid $tpid $tpid2 $qpid; do kill "$p" 2>/dev/null; done
	[ -n "$qpid" ] && wait "$qpid" 2>/dev/null
	sleep 0.5
	for p in $ppid $hpid; do dpdk_dir_rm "$p"; done
	ip netns del "$ns" 2>/dev/null
	[ -n "${DPV_TEST_KEEP:-}" ] && cp -r "$dir" "$DPV_TEST_KEEP"
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# (in the foreground only: a function in the background is a subshell whose pid is not the
# program's; background programs are started with "ip netns exec", which execs them)
in_ns() { ip netns exec "$ns" "$@"; }

. "$here/vm_kernel.sh"
. "$here/vm_host.sh"

network() {
	ip netns add "$ns" || return 1
	# IPv6 on $vb only (no router solicitations or MLD from the rest), without DAD: its
	# fe80:: address is usable at once
	vm_tap_veth "$tap" "$va" "$vb" || return 1
	in_ns sysctl -qw net.ipv6.conf."$vb".disable_ipv6=0 net.ipv6.conf."$vb".accept_dad=0
	# no offloads where the frames leave: the kernel finishes the guest's TCP checksums
	vm_mirror "$tap" "$va" "$vb" || return 1
	ip -n "$ns" addr add 10.98.0.1/24 dev "$vb" &&
		ip -n "$ns" -6 addr add fd98::1/64 dev "$vb" nodad || return 1
	vb_mac=$(in_ns cat /sys/class/net/"$vb"/address)
	vb_ll=$(ip -n "$ns" -6 -br addr show dev "$vb" scope link | grep -o 'fe80::[0-9a-f:]*')
	[ -n "$vb_ll" ] || { echo "no link-local address on $vb"; return 1; }
}

boot() {
	local qemu_mem=1024
	[ "$mode" = bench ] && qemu_mem=2048      # hugepages for two dpverbs processes
	printf '%s\n' "$@" > "$dir/steps"
	vm_qemu guest_rxe.sh "dpv_mac=$guest_mac dpv_ip4=10.98.0.2/24 dpv_ip6=fd98::2/64" \
		-M q35 -cpu max -smp 2 -m $qemu_mem \
		-netdev tap,id=net0,ifname="$tap",script=no,downscript=no,vhost=off,vnet_hdr=on \
		-device virtio-net-pci,netdev=net0,mac=$guest_mac,disable-legacy=on,addr=0x3
}

# Until something listens on TCP port 18515 in the namespace (at most $2 s) or process $1 ends.
await_listen() {
	local i
	for i in $(seq $(($2 * 10))); do
		in_ns ss -Hltn 'sport = :18515' | grep -q . && return 0
		kill -0 "$1" 2>/dev/null || return 1
		sleep 0.1
	done
	return 1
}

# tshark on $vb and on the tap for the whole run (RoCE, ARP/ND and the exchange: no filter)
capture_start() {
	ip netns exec "$ns" tshark -i "$vb" -p -B 64 -w "$dir/wire.pcapng" > "$dir/tshark.out" 2>&1 &
	tpid=$!
	ip netns exec "$ns" tshark -i "$tap" -p -B 64 -w "$dir/tap.pcapng" \
		> "$dir/tshark_tap.out" 2>&1 &
	tpid2=$!
	local i
	for i in $(seq 300); do
		grep -q "Capturing on" "$dir/tshark.out" 2>/dev/null &&
			grep -q "Capturing on" "$dir/tshark_tap.out" 2>/dev/null && return 0
		sleep 0.1
	done
	echo "the capture is late to start"
}

capture_stop() {
	sleep 1
	kill -INT "$tpid" "$tpid2" 2>/dev/null
	wait "$tpid" "$tpid2" 2>/dev/null
	tpid= tpid2=
}

# The end of guest step $1 (its exit code in $dir/$1/rc): at most $2 s, and at most 20 s after
# the host's side (process $3) ended; then the guest's program is closed (killed).
guest_end() {
	local d=$dir/$1 i grace=0
	for i in $(seq $(($2 * 10))); do
		[ -e "$d/rc" ] && return 0
		kill -0 "$qpid" 2>/dev/null || return 1
		if ! kill -0 "$3" 2>/dev/null; then
			grace=$((grace + 1))
			[ $grace -gt 200 ] && break
		fi
		sleep 0.1
	done
	touch "$d/close"
	await "$d/rc" 20
	echo "$1: the guest's program did not end (closed)"
	return 1
}

# ---- reference steps: rxe against roce_peer.py ----

# peer_step NAME ROLE TRANSPORT QPN GID SIZE: the guest's step NAME (in the steps file) against
# roce_peer.py; passes when both complete and the guest's pingpong did its one exchange.
peer_step() {
	local name=$1 role=$2 transport=$3 qpn=$4 gid=$5 size=$6 d=$dir/$1 tcp prc=0 rc=0
	mkdir -p "$d"
	tcp=10.98.0.1
	[ "$role" = client ] && tcp=10.98.0.2
	if [ "$role" = server ]; then           # ours listens before the guest calls
		ip netns exec "$ns" /usr/bin/python3 "$here/roce_peer.py" --role server --transport "$transport" \
			--ifname "$vb" --tcp "$tcp" --gid "$gid" --guest-mac $guest_mac --qpn "$qpn" \
			--size "$size" --frame-tool "$build/test/vm/roce_frame" --timeout 120 \
			--json "$d/peer.json" > "$d/peer.out" 2>&1 &
		ppid=$!
		await_listen $ppid 30 || echo "$name: the peer does not listen"
		touch "$d/go"
	else                                    # the guest listens before ours calls
		touch "$d/go"
		await "$d/ready" 120 || echo "$name: the guest's server did not start"
		ip netns exec "$ns" /usr/bin/python3 "$here/roce_peer.py" --role client --transport "$transport" \
			--ifname "$vb" --tcp "$tcp" --gid "$gid" --guest-mac $guest_mac --qpn "$qpn" \
			--size "$size" --frame-tool "$build/test/vm/roce_frame" --timeout 120 \
			--json "$d/peer.json" > "$d/peer.out" 2>&1 &
		ppid=$!
	fi
	guest_end "$name" 150 $ppid || rc=1
	for i in $(seq 50); do kill -0 $ppid 2>/dev/null || break; sleep 0.1; done
	kill $ppid 2>/dev/null
	wait $ppid || prc=$?
	ppid=
	echo "---- $name: rxe's pingpong (exit $(cat "$d/rc" 2>/dev/null)), roce_peer.py $role $transport (exit $prc)"
	sed 's/^/  guest: /' "$d/out"
	sed 's/^/  /' "$d/peer.out"
	[ "$(cat "$d/rc" 2>/dev/null)" = 0 ] || rc=1
	[ $prc = 0 ] || rc=1
	grep -q '^1 iters in' "$d/out" || rc=1
	if [ -e "$d/peer.json" ]; then
		/usr/bin/python3 -c "import json,sys; d=json.load(open(sys.argv[1])); d['name']=sys.argv[2]; json.dump(d, open(sys.argv[1],'w'))" "$d/peer.json" "$name"
	else
		rc=1
	fi
	[ $rc = 0 ] && echo "$name: passed" || echo "FAIL: $name"
	return $rc
}

# hold_start / hold_stop: dpverbs on $vb with the addresses 10.98.0.3 and fd98::3 and a service
# lcore, its program asleep (dpv_hold): rxe's kernel resolves those addresses through dpverbs'
# ARP/ND answers (the pingpongs' AH creation gives up after 1 s without one), while
# roce_peer.py, on the same veth, speaks RoCE for them.
hold_start() {
	printf 'port_addr = %s %s %s\nprogress = 1\n' $DPV_PORT $DPV_ADDR4 $DPV_ADDR6 > "$dir/hold.conf"
	ip netns exec "$ns" env DPV_CONFIG="$dir/hold.conf" \
		DPV_EAL_ARGS="--vdev=$DPV_PORT,iface=$vb,qdisc_bypass=0 -l 0,1 --log-level=lib.eal:warning --log-level=lib.telemetry:error" \
		"$build/test/vm/dpv_hold" 300 > "$dir/hold.out" 2>&1 &
	hpid=$!
	local i
	for i in $(seq 300); do
		grep -q holding "$dir/hold.out" && { grep '^dpv_hold' "$dir/hold.out"; return 0; }
		kill -0 $hpid 2>/dev/null || break
		sleep 0.1
	done
	echo "FAIL: dpv_hold did not start"
	cat "$dir/hold.out"
	return 1
}

hold_stop() {
	kill $hpid 2>/dev/null
	wait $hpid 2>/dev/null
	dpdk_dir_rm $hpid
	hpid=
}

# What rxe sent, against dpverbs' codec and tshark.
check_reference() {
	local names=("$@") jsons=() n rc=0
	for n in "${names[@]}"; do
		[ -e "$dir/$n/peer.json" ] && jsons+=("$dir/$n/peer.json")
	done
	mkdir -p "$dir/reference"
	echo "---- rxe's frames"
	/usr/bin/python3 "$here/rxe_reference.py" "$dir/reference" $guest_mac \
		"$dir/wire.pcapng" "$dir/tap.pcapng" "${jsons[@]}" || rc=1
	"$build/test/test_roce_rxe" "$dir/reference/rxe_frames.pcap" \
		"$dir/reference/rxe_frames.txt" || rc=1
	if [ -n "${DPV_RXE_SAVE:-}" ]; then
		cp "$dir/reference/rxe_frames.pcap" "$dir/reference/rxe_frames.txt" "$DPV_RXE_SAVE/" &&
			echo "reference saved in $DPV_RXE_SAVE"
	fi
	return $rc
}

# ---- interop steps: the unmodified pingpong on dpverbs against rxe's ----
#
# Progress: when rxe's pingpong is the server, it creates its address handle (so the guest's
# kernel resolves dpverbs' address, and gives up after 1 s) while dpverbs' pingpong, the
# client, waits in read() for the server's half of the exchange and polls nothing: the
# library's keeper thread answers ARP/ND for a port nobody polls (doc/roce-addressing.md, "Neighbours").
# Every step runs with the default configuration (direct progress), as a user would.

# dpv_step NAME ROLE PROGRESS CHECK TOOL ARGS...: the guest's step NAME against dpv-run TOOL
# ARGS as ROLE (the client adds the guest's address), with the port progressed by the
# application (direct) or a service lcore (service). CHECK is what both must report besides
# exiting 0: "pp:N", both pingpongs print "N iters in"; "pt:N", perftest's client prints
# its result line of N iterations (the passive side of a bandwidth test reports none).
dpv_step() {
	local name=$1 role=$2 progress=$3 check=$4 tool=$5 d=$dir/$1 hrc rc args cli attempt=1
	shift 5
	mkdir -p "$d"
	args=("$@")
	[ "$role" = client ] && args+=(10.98.0.2)
	while :; do
		hrc=0 rc=0
		if [ "$role" = server ]; then
			dpv_run "$d" "$progress" "$tool" "${args[@]}" &
			ppid=$!
			await_listen $ppid 60 || echo "$name: dpverbs' $tool does not listen"
			touch "$d/go"
		else
			touch "$d/go"
			await "$d/ready" 120 || echo "$name: the guest's server did not start"
			dpv_run "$d" "$progress" "$tool" "${args[@]}" &
			ppid=$!
		fi
		guest_end "$name" 240 $ppid || rc=1
		for i in $(seq 100); do kill -0 $ppid 2>/dev/null || break; sleep 0.1; done
		kill $ppid 2>/dev/null
		wait $ppid || hrc=$?
		dpdk_dir_rm $ppid
		ppid=
		echo "---- $name: rxe's $tool (exit $(cat "$d/rc" 2>/dev/null)), dpverbs' $role, $progress progress (exit $hrc)"
		sed 's/^/  guest: /' "$d/out"
		grep -v -e '^EAL: ' -e '^TELEMETRY' "$d/host.out" | sed 's/^/  dpverbs: /'
		[ "$(cat "$d/rc" 2>/dev/null)" = 0 ] || rc=1
		[ $hrc = 0 ] || rc=1
		case $check in
		pp:*)
			grep -q "^${check#pp:} iters in" "$d/out" || rc=1
			grep -q "^${check#pp:} iters in" "$d/host.out" || rc=1
			# -c: the server checks the first byte of each page of what it received
			! grep -q 'invalid data' "$d/out" "$d/host.out" ||
				{ echo "$name: the pingpong's -c found invalid data"; rc=1; } ;;
		ok:*)
			grep -q "^${check#ok:}: passed" "$d/out" ||
				{ echo "$name: rxe's side did not pass"; rc=1; }
			grep -q "^${check#ok:}: passed" "$d/host.out" ||
				{ echo "$name: dpverbs' side did not pass"; rc=1; } ;;
		pt:*)
			cli=$d/host.out
			[ "$role" = server ] && cli=$d/out
			grep -qE "^ *[0-9]+ +${check#pt:} +[0-9]" "$cli" ||
				{ echo "$name: no result line of ${check#pt:} iterations from the client"; rc=1; } ;;
		esac
		case $name in loss_*) ;; *) retries_check "$name" "$tool" "${args[@]}" || rc=1 ;; esac
		[ "${check%%:*}" = pt ] || break
		# perftest times its report by sampling the TSC against gettimeofday(); in the TCG
		# guest of a loaded host that sometimes fails ("Correlation coefficient r^2: ... <
		# 0.9", "Can't produce a report", exit 1, and the peer's final exchange fails): not
		# the RDMA transfer's failure. Such a step (kind client+/server+ in the guest) is
		# run again, twice at most; every other outcome stands.
		if [ $rc != 0 ] && [ $attempt -lt 3 ] && grep -q "Can't produce a report" "$d/out"; then
			echo "$name: rxe's perftest could not time its report (TCG): again"
			mv "$d/out" "$d/out.$attempt"
			mv "$d/host.out" "$d/host.out.$attempt"
			rm -f "$d/rc" "$d/ready" "$d/go" "$d/close"
			echo again > "$d/ack.tmp" && mv "$d/ack.tmp" "$d/ack"
			attempt=$((attempt + 1))
			continue
		fi
		echo done > "$d/ack.tmp" && mv "$d/ack.tmp" "$d/ack"
		break
	done
	[ $rc = 0 ] && echo "$name: passed" || echo "FAIL: $name"
	return $rc
}

# retries_check NAME TOOL ARGS...: step NAME ran without a retry that could hide a rejected
# frame. From dpverbs to rxe: rxe0's duplicate_request, out_of_seq_request (a gap: a frame
# of ours rxe never took, a bad ICRC say), rcvd_seq_err and retry_exceeded_err unchanged (the guest's hw_counters before and after the step), and dpverbs' RC engine (its
# debug line for every QP the tool destroyed: at least one unless the tool is a UD one)
# retransmitted nothing, had no timeout, sequence NAK or implied NAK, dropped nothing. From
# rxe to dpverbs: rxe0's completer_retry_err unchanged and no duplicate at dpverbs; except for
# the pingpongs, whose ACK timeout is fixed at 67 ms: rxe retries a request whose ACK comes
# late (dpverbs' keeper answers while the program waits in its TCP handshake, later still on a
# loaded machine: doc/roce-addressing.md, "Neighbours"), which is said, not failed. Every other tool here
# waits ~1 s (data_peer's timeout 18, perftest's -u 18).
retries_check() {
	local d=$dir/$1 c a b rc=0 lines late=0 dups
	for c in duplicate_request out_of_seq_request rcvd_seq_err retry_exceeded_err \
		completer_retry_err; do
		a=$(sed -n "s/^$c //p" "$d/counters0.txt" 2>/dev/null)
		b=$(sed -n "s/^$c //p" "$d/counters.txt" 2>/dev/null)
		[ -n "$a" ] && [ "$a" = "$b" ] && continue
		if [ $c = completer_retry_err ] && [ -n "$a" ] && [ -n "$b" ]; then
			late=$((b - a))
		else
			echo "$1: rxe0's $c went from '$a' to '$b'"; rc=1
		fi
	done
	lines=$(grep -c 'packets sent, .* retransmitted' "$d/host.out")
	case " $* " in *ibv_ud_pingpong*|*" -t ud "*) ;; *)
		[ "$lines" -gt 0 ] || { echo "$1: no counters of dpverbs' RC engine (a QP not destroyed?)"; rc=1; } ;;
	esac
	grep -o 'QP [0-9]*: [0-9]* packets sent, .* retransmitted.*' "$d/host.out" |
		grep -v ' 0 retransmitted, 0 timeouts, sequence NAKs 0 sent 0 received, .* 0 implied NAKs, [0-9]* duplicates, 0 dropped,' |
		sed "s/^/$1: dpverbs retried or dropped: /" | grep . && rc=1
	dups=$(grep -o '[0-9]* duplicates' "$d/host.out" | awk '{n += $1} END {print n + 0}')
	if [ $late != 0 ] || [ "$dups" != 0 ]; then
		case " $* " in
		*_pingpong*) echo "$1: note: rxe retried $late times, dpverbs received $dups duplicates (an ACK late: allowed for the pingpongs' 67 ms)" ;;
		*) echo "$1: rxe retried $late times, dpverbs received $dups duplicates"; rc=1 ;;
		esac
	fi
	return $rc
}

# dpv_run DIR direct|service TOOL ARGS...: TOOL on dpverbs, in the namespace, on $vb (exec'd
# all the way, ip netns exec, env and dpv-run included: in the background, $! is the
# program's pid, which names its DPDK runtime directory; guest_end bounds its time).
dpv_run() {
	local d=$1 conf=$dir/dpverbs.conf lcores=
	[ "$2" = service ] && conf=$dir/dpverbs_service.conf lcores="-l 0,1"
	shift 2
	exec ip netns exec "$ns" env DPV_CONFIG="$conf" \
		DPV_EAL_ARGS="--vdev=$DPV_PORT,iface=$vb,qdisc_bypass=0 $lcores --log-level=lib.eal:warning --log-level=lib.dpverbs.verbs:debug" \
		"$build/compat/dpv-run" "$@" < /dev/null > "$d/host.out" 2>&1
}

# A dpverbs process that was killed leaves /var/run/dpdk/dpv-PID (its file prefix) behind.
dpdk_dir_rm() {
	[ -n "$1" ] && ! kill -0 "$1" 2>/dev/null && rm -rf "/var/run/dpdk/dpv-$1"
}

# dpverbs' port as the unmodified ibv_devinfo sees it: GIDs 1 and 2 must be its two addresses
# (RoCE v2), as rxe0's are the guest's; a GID 0 of another type than rxe's is said.
dpv_gids() {
	local out=$dir/dpv_devinfo.txt rc=0
	in_ns env DPV_CONFIG="$dir/dpverbs.conf" \
		DPV_EAL_ARGS="--vdev=$DPV_PORT,iface=$vb,qdisc_bypass=0 --log-level=lib.eal:warning" \
		timeout 60 "$build/compat/dpv-run" ibv_devinfo -v > "$out" 2>&1
	echo "---- dpverbs' port: $(grep -E 'hca_id|active_mtu' "$out" | tr -s '\t\n ' ' ')"
	grep 'GID\[' "$out"
	grep -q "GID\[ *1\]:[[:space:]]*::ffff:$DPV_ADDR4, RoCE v2" "$out" &&
		grep -q "GID\[ *2\]:[[:space:]]*$DPV_ADDR6, RoCE v2" "$out" ||
		{ echo "FAIL: dpverbs' GIDs 1 and 2 are not ::ffff:$DPV_ADDR4 and $DPV_ADDR6 (RoCE v2)"
		  grep -v 'GID\[' "$out" | tail -5; rc=1; }
	[ "$(grep -o 'GID\[ *0\].*, RoCE v[12]' "$out" | grep -o 'RoCE v[12]')" = \
	  "$(grep -o 'GID\[ *0\].*, RoCE v[12]' "$dir/devinfo.txt" | grep -o 'RoCE v[12]')" ] ||
		echo "note: dpverbs' GID 0 is not of the type of rxe0's (RoCE v2)"
	return $rc
}

# guest_cmd NAME: the guest's step NAME, a command of the guest's own (guest_loss.sh): started,
# awaited (2 minutes at most), its output shown; fails unless it exits 0.
guest_cmd() {
	local d=$dir/$1
	mkdir -p "$d"
	touch "$d/go"
	guest_end "$1" 120 $$
	sed "s/^/  guest: /" "$d/out"
	[ "$(cat "$d/rc" 2>/dev/null)" = 0 ] || { echo "FAIL: $1 (exit $(cat "$d/rc" 2>/dev/null))"; return 1; }
}

# loss_check: what the guest's netem dropped each way while the loss_ steps ran (loss_off's
# output); none either way is a failure: the loss was not applied.
loss_check() {
	local to n rc=0
	for to in host guest; do
		n=$(grep -o "dropped [0-9]* to the $to" "$dir/loss_off/out" | grep -o '[0-9]*')
		echo "netem dropped ${n:-no} RoCE frames to the $to in the loss_ steps"
		[ "${n:-0}" -gt 0 ] || { echo "FAIL: netem dropped nothing to the $to"; rc=1; }
	done
	return $rc
}

# bench_report FILE: the medians of guest_rc_bench.sh's RESULT lines per tool, size and
# implementation, and dpverbs' over rxe's: over rxe's loopback (rxe) and over rxe on a veth
# pair (rxev, when the guest could set it up). A failed run (an exit code or no result line) is
# said and left out; fails when a case has no good run of one side, never on a figure.
bench_report() {
	/usr/bin/python3 - "$1" <<-'PY'
	import sys, statistics
	runs, bad = {}, 0
	for line in open(sys.argv[1]):
	    f = line.split()
	    if len(f) != 9:
	        continue
	    _, tool, size, impl, rnd, bw, mpps, src, crc = f
	    try:
	        float(bw), float(mpps)
	    except ValueError:
	        bw = '-'
	    if bw == '-' or src != '0' or crc != '0':
	        bad += 1
	        print(f"failed: {tool} {size} B {impl} round {rnd} (exit {src}/{crc})")
	        runs.setdefault((tool, int(size)), {}).setdefault(impl, [])
	        continue
	    runs.setdefault((tool, int(size)), {}).setdefault(impl, []).append((float(bw), float(mpps)))
	print(f"{'tool':12} {'size':>6} {'rxe MB/s':>9} {'rxe Mpps':>9} {'rxev MB/s':>9} {'rxev Mpps':>9} "
	      f"{'dpv MB/s':>9} {'dpv Mpps':>9} {'dpv/rxe':>8} {'dpv/rxev':>8}  runs rxe/rxev/dpv")
	for (tool, size), d in sorted(runs.items()):
	    med = {k: (statistics.median(b for b, _ in v), statistics.median(m for _, m in v))
	           for k, v in d.items() if v}
	    rb, rm = med.get('rxe', (0, 0))
	    vb, vm = med.get('rxev', (0, 0))
	    db, dm = med.get('dpv', (0, 0))
	    ratio = f"{db / rb:.2f}" if rb > 0 else "-"
	    ratiov = f"{db / vb:.2f}" if vb > 0 else "-"
	    print(f"{tool:12} {size:>6} {rb:>9.2f} {rm:>9.5f} {vb:>9.2f} {vm:>9.5f} {db:>9.2f} {dm:>9.5f} "
	          f"{ratio:>8} {ratiov:>8}  "
	          f"{len(d.get('rxe', []))}/{len(d.get('rxev', []))}/{len(d.get('dpv', []))}")
	# a failed run is said; a case with no run at all of one side fails the benchmark
	empty = [k for k, d in runs.items() for i in ('rxe', 'dpv') if not d.get(i)]
	sys.exit(1 if empty else 0)
	PY
}

# ---- the run ----
kernel "$build/vm" || exit 1
network || { echo "FAIL: cannot set up the tap and veths"; exit 1; }
capture_start
start=$(date +%s)
if [ "$mode" = reference ]; then
	# rxe sends first (UD over IPv4, 5 bytes: a pad of 3; UD from the link-local GID 0; RC
	# SEND FIRST/MIDDLE/LAST of 2501 bytes in 1024-byte packets), or we do (UD over IPv6,
	# 1024 bytes: the whole MTU); then rxe resolving dpverbs' addresses: ARP and ND answered
	# by dpverbs (dpv_hold) while roce_peer.py speaks RoCE from those addresses
	boot "ud_ipv4 client ibv_ud_pingpong -d rxe0 -g 1 -s 5 -n 1 10.98.0.1" \
	     "ud_ipv6 server ibv_ud_pingpong -d rxe0 -g 2 -s 1024 -n 1" \
	     "ud_link_local client ibv_ud_pingpong -d rxe0 -g 0 -s 64 -n 1 10.98.0.1" \
	     "rc_ipv4 client ibv_rc_pingpong -d rxe0 -g 1 -s 2501 -n 1 10.98.0.1" \
	     "arp_ipv4 server ibv_ud_pingpong -d rxe0 -g 1 -s 16 -n 1" \
	     "nd_ipv6 server ibv_ud_pingpong -d rxe0 -g 2 -s 16 -n 1"
	steps=(ud_ipv4 ud_ipv6 ud_link_local rc_ipv4 arp_ipv4 nd_ipv6)
elif [ "$mode" = interop ]; then
	cat > "$dir/dpverbs.conf" <<-EOF
	# the port's RoCEv2 addresses: GID 1 and GID 2, as rxe0's in the guest
	port_addr = $DPV_PORT $DPV_ADDR4 $DPV_ADDR6
	EOF
	{ cat "$dir/dpverbs.conf"; echo "progress = 1"; } > "$dir/dpverbs_service.conf"
	dp="$build/test/vm/data_peer -d rxe0 -t ud -o send -s $DPV_SIZE -n $DPV_ITERS"
	boot "dpv_ud_server server ibv_ud_pingpong -d rxe0 -g 1 -s $DPV_SIZE -n $DPV_ITERS -c" \
	     "dpv_ud_client client ibv_ud_pingpong -d rxe0 -g 1 -s $DPV_SIZE -n $DPV_ITERS -c 10.98.0.1" \
	     "dpv_ud_ipv6 server ibv_ud_pingpong -d rxe0 -g 2 -s $DPV_SIZE -n $DPV_ITERS -c" \
	     "data_ud_server server $dp -g 1" \
	     "data_ud_client client $dp -g 1 10.98.0.1" \
	     "data_ud_ipv6 server $dp -g 2"
	steps=(dpv_ud_server dpv_ud_client dpv_ud_ipv6 data_ud_server data_ud_client data_ud_ipv6)
elif [ "$mode" = rc ]; then
	cat > "$dir/dpverbs.conf" <<-EOF
	# the port's RoCEv2 addresses: GID 1 and GID 2, as rxe0's in the guest
	port_addr = $DPV_PORT $DPV_ADDR4 $DPV_ADDR6
	EOF
	if [ -n "${DPV_RXE_ONLY:-}" ]; then
		all=("${rc_steps[@]}") rc_steps=()
		for st in "${all[@]}"; do
			[[ ${st%% *} =~ $DPV_RXE_ONLY ]] && rc_steps+=("$st")
		done
		echo "DPV_RXE_ONLY=$DPV_RXE_ONLY: ${#rc_steps[@]} of ${#all[@]} steps"
	fi
	guest_steps=() steps=()
	for st in "${rc_steps[@]}"; do
		read -r n role check tool args <<< "$st"
		a="$n $role$(case $check in pt:*) echo +;; esac) $tool -d rxe0 $args"
		[ "$role" = client ] && a="$a 10.98.0.1"
		case $n in loss_*) [ -z "${loss:-}" ] && guest_steps+=("loss_on client sh $here/guest_loss.sh on $LOSS")
				   loss=1 ;; esac
		guest_steps+=("$a")
		steps+=("$n")
	done
	[ -n "${loss:-}" ] && guest_steps+=("loss_off client sh $here/guest_loss.sh off")
	boot "${guest_steps[@]}"
elif [ "$mode" = bench ]; then
	guest_steps=() steps=()
	for b in $bench_sizes; do
		guest_steps+=("bench_${b%%:*} client sh $here/guest_rc_bench.sh $build ${b%%:*} ${b#*:} $BENCH_ROUNDS $BENCH_TOOLS")
		steps+=("bench_${b%%:*}")
	done
	boot "${guest_steps[@]}"
fi
rc=0
if ! await "$dir/setup.log" 120; then
	echo "FAIL: the guest did not start (QEMU: $(cat "$dir/qemu.log"))"
	cat "$dir/console.log"
	exit 1
fi
# setup.done once rxe0 is up (guest.rc when it could not be)
for i in $(seq 1200); do
	[ -e "$dir/setup.done" ] || [ -e "$dir/guest.rc" ] && break
	kill -0 "$qpid" 2>/dev/null || break
	sleep 0.1
done
echo "---- the guest: setup ($(($(date +%s) - start)) s after boot)"
cat "$dir/setup.log"
if [ ! -e "$dir/setup.done" ]; then
	echo "FAIL: rxe0 did not come up"
	cat "$dir/console.log"
	exit 1
fi
# the GID table as the test relies on it
grep -q '^1 0000:0000:0000:0000:0000:ffff:0a62:0002 RoCE_v2' "$dir/gids.txt" &&
	grep -q '^2 fd98:0000:0000:0000:0000:0000:0000:0002 RoCE_v2' "$dir/gids.txt" ||
	{ echo "FAIL: rxe0's GIDs 1 and 2 are not the guest's IPv4 and IPv6 addresses"; rc=1; }
if [ "$mode" = reference ]; then
	peer_step ud_ipv4 server ud 0x000123 10.98.0.1 5 || rc=1
	peer_step ud_ipv6 client ud 0x000124 fd98::1 1024 || rc=1
	peer_step ud_link_local server ud 0x000125 "$vb_ll" 64 || rc=1
	peer_step rc_ipv4 server rc 0x000456 10.98.0.1 0 || rc=1
	if hold_start; then
		peer_step arp_ipv4 client ud 0x000126 $DPV_ADDR4 16 || rc=1
		peer_step nd_ipv6 client ud 0x000127 $DPV_ADDR6 16 || rc=1
		hold_stop
	else
		rc=1
		mkdir -p "$dir/arp_ipv4" "$dir/nd_ipv6"
		touch "$dir/arp_ipv4/go" "$dir/arp_ipv4/close" "$dir/nd_ipv6/go" "$dir/nd_ipv6/close"
	fi
elif [ "$mode" = interop ]; then
	dpv_gids || rc=1
	ud=(-g 1 -s $DPV_SIZE -n $DPV_ITERS -c)
	dpv_step dpv_ud_server client direct pp:$DPV_ITERS ibv_ud_pingpong "${ud[@]}" || rc=1  # the guest serves
	dpv_step dpv_ud_client server direct pp:$DPV_ITERS ibv_ud_pingpong "${ud[@]}" || rc=1
	ud[1]=2
	dpv_step dpv_ud_ipv6 client direct pp:$DPV_ITERS ibv_ud_pingpong "${ud[@]}" || rc=1
	dp=(-t ud -o send -s $DPV_SIZE -n $DPV_ITERS)
	dpv_step data_ud_server client direct ok:data_peer "$build/test/vm/data_peer" "${dp[@]}" -g 1 || rc=1
	dpv_step data_ud_client server direct ok:data_peer "$build/test/vm/data_peer" "${dp[@]}" -g 1 || rc=1
	dpv_step data_ud_ipv6 client direct ok:data_peer "$build/test/vm/data_peer" "${dp[@]}" -g 2 || rc=1
elif [ "$mode" = rc ]; then
	dpv_gids || rc=1
	for st in "${rc_steps[@]}"; do
		read -r n role check tool args <<< "$st"
		hrole=server
		[ "$role" = server ] && hrole=client
		case $n in loss_*) [ -z "${loss_on:-}" ] && { guest_cmd loss_on || rc=1; }
				   loss_on=1 ;; esac
		# shellcheck disable=SC2086
		dpv_step "$n" $hrole direct "$check" "$tool" $args || rc=1
	done
	[ -n "${loss_on:-}" ] && { guest_cmd loss_off || rc=1; loss_check || rc=1; }
else
	for n in "${steps[@]}"; do
		mkdir -p "$dir/$n"
		touch "$dir/$n/go"
		guest_end "$n" 900 $$ || rc=1
		grep -v '^RESULT' "$dir/$n/out"
		grep '^RESULT' "$dir/$n/out" >> "$dir/bench.txt"
	done
	bench_report "$dir/bench.txt" || rc=1
fi
await "$dir/guest.rc" 60
wait "$qpid" 2>/dev/null
qpid=
capture_stop
echo "vm: $(($(date +%s) - start)) s from boot to power-off"
[ "$(cat "$dir/guest.rc" 2>/dev/null)" = 0 ] ||
	{ echo "FAIL: the guest (guest.rc: '$(cat "$dir/guest.rc" 2>/dev/null)')"; rc=1; }
for s in "${steps[@]}"; do
	[ -e "$dir/$s/counters.txt" ] || continue
	echo "$s: rxe0's counters: $(grep -v ' 0$' "$dir/$s/counters.txt" | tr '\n' ' ')"
done
# the reference: rxe's frames to roce_peer.py's own addresses
[ "$mode" = reference ] && { check_reference ud_ipv4 ud_ipv6 ud_link_local rc_ipv4 || rc=1; }
[ $rc = 0 ] || { echo "---- console"; tail -40 "$dir/console.log"; }
exit $rc
