#!/bin/sh
# rdma-core's ibv_xsrq_pingpong, Debian's binary unmodified, between two dpverbs processes
# through dpv-run, set up as test_rc_pingpong.sh: each owns one end of a veth pair of this
# run's own (net_af_packet) with an IPv4 address from its configuration. Each side opens an
# XRC domain (on /tmp/xrc_domain, O_CREAT), an XRC SRQ on it (ibv_create_srq_ex,
# ibv_get_srq_num), an XRC_RECV QP on the domain and an XRC_SEND QP; they exchange QPNs, PSNs,
# SRQ numbers and GIDs over TCP on 127.0.0.1 and ping-pong 4096-byte SENDs whose
# remote_srqn names the peer's SRQ, over the veth pair with a RoCE v2 GID (-g 1), polling and
# sleeping on events (-e). The capture on the veth (dumpcap, read by tshark) shows the XRC opcodes and, four
# bytes after the BTH, the XRCETH naming the receiver's SRQ number.
set -u
run=$1
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
command -v ibv_xsrq_pingpong > /dev/null || { echo "ibv_xsrq_pingpong missing (ibverbs-utils)"; exit 77; }
a=dpvxa$$; b=dpvxb$$
dir=$(mktemp -d)
srv=; cap=
had_domain=false; [ -e /tmp/xrc_domain ] && had_domain=true   # the tool's domain file
cleanup() {
	$had_domain || rm -f /tmp/xrc_domain
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	[ -n "$cap" ] && kill "$cap" 2>/dev/null
	wait 2>/dev/null
	ip link del "$a" 2>/dev/null
	rm -rf "$dir"
}
trap cleanup EXIT
"$(dirname "$0")/../veth_pair.sh" "$a" "$b" || exit 1
for i in "$a" "$b"; do
	sysctl -qw net.ipv6.conf."$i".disable_ipv6=1
	ip link set "$i" up
done
printf 'port_addr = net_af_packet0 10.80.0.1\n' > "$dir/a.conf"
printf 'port_addr = net_af_packet0 10.80.0.2\n' > "$dir/b.conf"
quiet='--log-level=lib.eal:warning --log-level=lib.telemetry:warning --log-level=pmd.net.af_packet:error'
port=$((20000 + ($$ + 7000) % 10000))
k=0
for mode in poll events; do
	extra=; [ $mode = events ] && extra=-e
	args="-d dpv_net_af_packet0 -g 1 -s 4096 -n 20 -p $((port + k)) $extra"
	k=$((k + 1))
	if [ $mode = poll ] && command -v dumpcap > /dev/null && command -v tshark > /dev/null; then
		# what the client's end sees (dumpcap: tshark's capture engine, without its CPU
		# cost while the pingpong runs; an XRC sender retries for only 7 x 67 ms)
		dumpcap -q -i "$b" -w "$dir/cap.pcap" -f 'udp port 4791' 2> /dev/null &
		cap=$!
		sleep 2
	fi
	DPV_CONFIG=$dir/a.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$a $quiet" \
		timeout 100 "$run" stdbuf -oL ibv_xsrq_pingpong $args > "$dir/server$mode" 2>&1 &
	srv=$!
	sleep 2
	DPV_CONFIG=$dir/b.conf DPV_EAL_ARGS="--vdev=net_af_packet0,iface=$b $quiet" \
		timeout 100 "$run" stdbuf -oL ibv_xsrq_pingpong $args 127.0.0.1 > "$dir/client$mode" 2>&1
	crc=$?
	wait "$srv"
	src=$?
	srv=
	if [ -n "$cap" ]; then
		sleep 1
		kill "$cap"; wait "$cap" 2>/dev/null; cap=
	fi
	check "$mode: client exits 0" "[ $crc -eq 0 ]"
	check "$mode: server exits 0" "[ $src -eq 0 ]"
	check "$mode: client: success" "grep -q '^success' '$dir/client$mode'"
	check "$mode: server: success" "grep -q '^success' '$dir/server$mode'"
	check "$mode: IPv4 GIDs on both sides" \
		"grep -q 'local:.*GID ::ffff:10.80.0.2' '$dir/client$mode' && grep -q 'remote:.*GID ::ffff:10.80.0.1' '$dir/client$mode'"
done
if [ -f "$dir/cap.pcap" ]; then
	# the client's SRQ number, as it printed it (hex); every XRC SEND the server sent names it
	srqn=$(sed -n 's/.*local:.*SRQN \([0-9a-f]*\),.*/\1/p' "$dir/clientpoll")
	tshark -r "$dir/cap.pcap" -T fields -e udp.payload 2> /dev/null > "$dir/payloads"
	# BTH opcode: byte 0; XRCETH: bytes 12-15 (reserved byte, then the 24-bit SRQ number)
	sends=$(grep -c '^a[0-4]' "$dir/payloads")
	named=$(grep '^a[0-4]' "$dir/payloads" | cut -c27-32 | grep -c "^$srqn$")
	acks=$(grep -c '^b1' "$dir/payloads")
	check "capture: XRC SENDs from the server (opcodes 0xA0-0xA4): $sends" "[ $sends -ge 20 ]"
	check "capture: each names the client's SRQ $srqn in its XRCETH ($named of $sends)" \
		"[ $named -eq $sends ]"
	check "capture: XRC ACKs (0xB1) from the client's XRC_RECV QP: $acks" "[ $acks -ge 1 ]"
fi
[ $fail -eq 0 ] || for mode in poll events; do
	echo "--- server $mode"; cat "$dir/server$mode"; echo "--- client $mode"; cat "$dir/client$mode"
done
echo "xsrq_pingpong: $pass checks passed, $fail failed"
[ $fail -eq 0 ]
