#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
# run_vm_test.sh BUILD_DIR: dpverbs on a NIC bound to vfio-pci, in a virtual machine.
#
# QEMU (TCG) boots Debian's kernel (linux-image-amd64, fetched with apt-get download and kept
# in BUILD_DIR/vm) on a q35 machine with an Intel IOMMU (interrupt remapping on, as VFIO
# requires) and a virtio-net NIC that goes through it (iommu_platform=on). The guest runs the
# host's own files (the root filesystem, read-only over 9p), so the binaries of BUILD_DIR run
# in it: guest.sh binds the NIC to vfio-pci and runs the wire test programs on it. The NIC's
# host side is a tap with vnet_hdr, in a network namespace of this run: the guest's TSO and
# checksum offloads reach the host kernel as GSO super-frames with partial checksums, so
# frames are captured one hop later, on a veth whose other end has no offloads (tc mirred
# moves frames between the tap and that veth, both ways). check_wire.py compares each
# capture with the program's expectation, and with what the same program writes on net_pcap.
# Exit 77 (skipped) without root, QEMU or /dev/net/tun.
#
# run_vm_test.sh BUILD_DIR mq: another boot, the NIC a multi-queue virtio-net (4 queue pairs
# over a multi-queue tap, RSS offered): the host sends frames of 64 UDP flows into the tap;
# test_rx_queues in the guest checks each arrives exactly once, at its QP, in its flow's order,
# on several of the port's queues — once on the device's queues, once spread again in software
# (rx_spread = 2).
set -u
build=$(cd "$1" && pwd)
mode=${2:-wire}
here=$(cd "$(dirname "$0")" && pwd)
wire=$here/../wire
[ "$(id -u)" = 0 ] || { echo "SKIP: the VM test needs root (tap, netns)"; exit 77; }
command -v qemu-system-x86_64 > /dev/null ||
	{ echo "SKIP: no qemu-system-x86_64 (apt-get install qemu-system-x86)"; exit 77; }
[ -c /dev/net/tun ] || { echo "SKIP: no /dev/net/tun"; exit 77; }
for t in depmod cpio dpkg-deb ethtool tc tshark; do
	command -v $t > /dev/null ||
		{ echo "FAIL: $t is missing (apt-get install kmod cpio ethtool iproute2 tshark)"; exit 1; }
done

cache=$build/vm
dir=$(mktemp -d /tmp/dpvvm.XXXXXX)
pfx=${DPV_NET_PREFIX:-dpvv}   # the run's interface and namespace names begin with this
ns=${pfx}m$$
tap=${pfx}t$$
va=${pfx}a$$            # the tap's frames leave here, segmented and checksummed ...
vb=${pfx}b$$            # ... and are captured here
bdf=0000:00:03.0
guest_mac=02:00:00:00:00:02
qpid= tpid= tpid2=
# the host segments a TSO frame into a burst that outruns the kernel's input backlog (1000
# frames by default): widen it for the run, and put it back after
backlog=$(sysctl -n net.core.netdev_max_backlog)
sysctl -qw net.core.netdev_max_backlog=100000
cleanup() {
	for p in $tpid $tpid2 $qpid; do kill "$p" 2>/dev/null; done
	[ -n "$qpid" ] && wait "$qpid" 2>/dev/null
	ip netns del "$ns" 2>/dev/null
	sysctl -qw net.core.netdev_max_backlog="$backlog"
	[ -n "${DPV_TEST_KEEP:-}" ] && cp -r "$dir" "$DPV_TEST_KEEP"
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# ---- the guest kernel: Debian's, its modules pruned to what the VMs load (vm_kernel.sh) ----
. "$here/vm_kernel.sh"
. "$here/vm_host.sh"

# ---- the NIC's host side ----
network() {
	ip netns add "$ns" || return 1
	vm_tap_veth "$tap" "$va" "$vb" && vm_mirror "$tap" "$va" "$vb" || return 1
	# a veth drops frames longer than its peer's MTU + 18; the guest sends longer ones (QinQ,
	# and the 9000-byte segments of TSO WRs whose mss exceeds the MTU, as a NIC would)
	ip -n "$ns" link set "$vb" mtu 65000
	ip -n "$ns" addr add 10.98.0.1/24 dev "$vb"
	ip -n "$ns" neigh add 10.98.0.2 lladdr $guest_mac dev "$vb"
}

netdev="tap,id=net0,ifname=$tap,script=no,downscript=no,vhost=off,vnet_hdr=on"
nic="virtio-net-pci,netdev=net0,mac=$guest_mac,disable-legacy=on,iommu_platform=on,addr=0x3"
boot() {
	printf '%s\n' "$@" > "$dir/steps"
	vm_qemu guest.sh "intel_iommu=on dpv_bdf=$bdf" -M q35,kernel-irqchip=split -cpu max \
		-smp 2 -m 2048 -device intel-iommu,intremap=on,aw-bits=48 \
		-netdev "$netdev" -device "$nic"
}

# Capture on $vb (and, if $2 is set, on the tap) while the guest runs step $1.
capture_step() {
	local name=$1 d=$dir/$1 own last size i
	mkdir -p "$d"
	# tshark starts slowly on a busy host: start it while the guest starts its program, which
	# waits 20 s at most for "go" once it has said "ready"
	own=$(ip netns exec "$ns" cat /sys/class/net/"$vb"/address)
	ip netns exec "$ns" tshark -i "$vb" -p -B 64 -f "not ether src $own" -w "$d/wire.pcap" \
		> "$d/tshark.out" 2>&1 &
	tpid=$!
	ip netns exec "$ns" tshark -i "$tap" -p -B 64 -w "$d/tap.pcap" > "$d/tshark_tap.out" 2>&1 &
	tpid2=$!
	await "$d/ready" 300 || { echo "FAIL: $name never opened its device"; return 1; }
	for i in $(seq 300); do
		grep -q "Capturing on" "$d/tshark.out" 2>/dev/null &&
			grep -q "Capturing on" "$d/tshark_tap.out" 2>/dev/null && break
		sleep 0.05
	done
	grep -q "Capturing on" "$d/tshark.out" || echo "$name: the capture is late to start"
	touch "$d/go"
	await "$d/done" 600 || { echo "FAIL: $name did not finish sending"; return 1; }
	# until the capture has not grown for 2 s (a busy host makes dumpcap lag)
	last=-1 same=0
	for i in $(seq 240); do
		size=$(stat -c %s "$d/wire.pcap" 2>/dev/null || echo 0)
		if [ "$size" = "$last" ]; then
			same=$((same + 1))
			[ $same -ge 4 ] && break
		else
			same=0
		fi
		last=$size
		sleep 0.5
	done
	kill -INT "$tpid" "$tpid2" 2>/dev/null
	wait "$tpid" "$tpid2" 2>/dev/null
	tpid= tpid2=
}

# What the host sends the guest in the vfio step: a datagram through a UDP socket, two frames
# through a packet socket (one with a wrong UDP checksum) to port 7777, one to port 7778.
send_to_guest() {
	ip netns exec "$ns" /usr/bin/python3 - "$vb" $guest_mac <<'PY'
import socket, sys
from scapy.all import IP, UDP, Ether, Raw, sendp
ifname, mac = sys.argv[1], sys.argv[2]
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"vfio rx: socket", ("10.98.0.2", 7777))
s.sendto(b"vfio rx: other port", ("10.98.0.2", 7778))
l2 = Ether(src=open("/sys/class/net/%s/address" % ifname).read().strip(), dst=mac)
ip = IP(src="10.98.0.1", dst="10.98.0.2")
sendp([l2 / ip / UDP(sport=4242, dport=7777) / Raw(b"vfio rx: scapy"),
       l2 / ip / UDP(sport=4242, dport=7777, chksum=0x1234) / Raw(b"badsum!")],
      iface=ifname, verbose=False)
PY
}

# The guest's frames against its expectation, and against the same program on net_pcap.
check_step() {
	local name=$1 prog=$2 d=$dir/$1 rc=0
	await "$d/rc" 300 || { echo "FAIL: $name did not end"; return 1; }
	echo "---- $name in the guest (exit $(cat "$d/rc"))"
	grep -v -e '^EAL: ' -e '^TELEMETRY' "$d/out"
	[ "$(cat "$d/rc")" = 0 ] || rc=1
	/usr/bin/python3 "$wire/check_wire.py" "$d/wire.pcap" "$d/expected.txt" ||
		{ rc=1; tail -3 "$d/tshark.out"; }
	[ -n "$prog" ] || return $rc
	mkdir -p "$d/pcap"
	DPV_EAL_ARGS="--vdev=net_pcap0,tx_pcap=$d/pcap/wire.pcap --log-level=lib.eal:error --log-level=lib.telemetry:error" \
		"$prog" "$d/pcap/expected.txt" > "$d/pcap/out" 2>&1 || { cat "$d/pcap/out"; rc=1; }
	if cmp -s "$d/expected.txt" "$d/pcap/expected.txt"; then
		echo "$name: the same WRs on net_pcap:"
		/usr/bin/python3 "$wire/check_wire.py" --same "$d/wire.pcap" "$d/pcap/wire.pcap" || rc=1
	else
		echo "FAIL: $name expects other frames on net_pcap than on vfio"
		rc=1
	fi
	return $rc
}

# ---- the multi-queue run ----
# The frames of test_rx_queues (frame_of: UDP from port 1000 + flow to 9000 + flow % 4, tagged
# with flow and sequence), to the guest's MAC, out of the tap, 16 at a time every 10 ms: the
# TCG guest drops what it cannot keep up with.
send_flows() {
	ip netns exec "$ns" /usr/bin/python3 - "$tap" <<'PY'
import socket, sys, time
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
s.bind((sys.argv[1], 0))
hdr = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0, 0x45, 0, 0, 46, 0, 0, 0x40, 0, 64, 17,
             0, 0, 10, 9, 0, 1, 10, 9, 0, 2, 0, 0, 0, 0, 0, 26, 0, 0])
n = 0
for seq in range(40):
    for flow in range(64):
        f = bytearray(hdr + bytes(18))
        f[34:36] = (1000 + flow).to_bytes(2, "big")
        f[36:38] = (9000 + flow % 4).to_bytes(2, "big")
        f[42], f[43], f[44] = flow, seq >> 8, seq & 0xff
        for i in range(45, 60):
            f[i] = (flow * 7 + seq + i) & 0xff
        s.send(bytes(f))
        n += 1
        if n % 16 == 0:
            time.sleep(0.01)
print("host: sent %d frames of 64 flows into the tap" % n)
PY
}

mq_run() {
	local step d rc=0
	ip netns add "$ns" || return 1
	ip -n "$ns" tuntap add dev "$tap" mode tap multi_queue vnet_hdr || return 1
	ip -n "$ns" link set "$tap" up
	netdev="$netdev,queues=4"
	nic="$nic,mq=on,vectors=10,rss=on"
	# rxq: the port's 4 queues as the device fills them; rxq_sw: spread again in software
	boot "rxq $build/test/test_rx_queues" "rxq_sw $build/test/test_rx_queues spread"
	if ! await "$dir/setup.log" 120; then
		echo "FAIL: the guest did not start (QEMU: $(cat "$dir/qemu.log"))"
		cat "$dir/console.log"
		return 1
	fi
	for step in rxq rxq_sw; do
		d=$dir/$step
		await "$d/ready" 300 || { echo "FAIL: $step never got its QPs ready"; rc=1; break; }
		touch "$d/go"
		send_flows || rc=1
		await "$d/rc" 300 || { echo "FAIL: $step did not end"; rc=1; break; }
	done
	await "$dir/guest.rc" 60
	echo "---- the guest: setup"
	cat "$dir/setup.log"
	for step in rxq rxq_sw; do
		d=$dir/$step
		echo "---- $step: test_rx_queues in the guest (exit $(cat "$d/rc" 2>/dev/null))"
		grep -v -e '^EAL: ' -e '^TELEMETRY' "$d/out" 2>/dev/null
		[ "$(cat "$d/rc" 2>/dev/null)" = 0 ] || rc=1
	done
	wait "$qpid" 2>/dev/null
	qpid=
	[ $rc = 0 ] || { echo "---- console"; cat "$dir/console.log"; }
	return $rc
}

# ---- the run ----
kernel "$cache" || exit 1
if [ "$mode" = mq ]; then
	start=$(date +%s)
	mq_run
	rc=$?
	echo "vm mq: $(($(date +%s) - start)) s from boot to power-off"
	exit $rc
fi
network || { echo "FAIL: cannot set up the tap and veths"; exit 1; }
start=$(date +%s)
boot "post_send $build/test/test_post_send" "tso $build/test/test_tso" \
     "vfio $build/test/vm/test_vfio"
rc=0
if ! await "$dir/setup.log" 120; then
	echo "FAIL: the guest did not start (QEMU: $(cat "$dir/qemu.log"))"
	cat "$dir/console.log"
	exit 1
fi
for step in post_send tso vfio; do
	capture_step "$step" || { rc=1; break; }
	[ "$step" = vfio ] && send_to_guest
	touch "$dir/$step/close"
	await "$dir/$step/rc" 300
done
await "$dir/guest.rc" 60
echo "---- the guest: setup"
cat "$dir/setup.log"
grc=$(cat "$dir/guest.rc" 2>/dev/null)
[ "$grc" = 0 ] || { echo "FAIL: guest setup (guest.rc: '${grc:-none}')"; cat "$dir/console.log"; rc=1; }
[ $rc = 0 ] && check_step post_send "$build/test/test_post_send" || rc=1
[ $rc = 0 ] && check_step tso "$build/test/test_tso" || rc=1
# the TSO the port did (test_tso checks its counters) crossed the tap as unsegmented frames
if [ $rc = 0 ]; then
	/usr/bin/python3 - "$dir/tso/tap.pcap" <<'PY' || rc=1
import sys
from scapy.all import rdpcap
f = rdpcap(sys.argv[1])
n = sum(len(p) > 1518 for p in f)
print(f"tso: on the vnet_hdr tap {len(f)} frames, {n} of them GSO super-frames")
sys.exit(0 if n > 0 else 1)
PY
fi
[ $rc = 0 ] && check_step vfio "" || rc=1
wait "$qpid" 2>/dev/null
qpid=
echo "vm: $(($(date +%s) - start)) s from boot to power-off"
if [ $rc != 0 ]; then
	for step in post_send tso vfio; do
		[ -e "$dir/$step/out" ] && { echo "---- $step"; cat "$dir/$step/out"; }
	done
	echo "---- console"
	cat "$dir/console.log"
fi
exit $rc
