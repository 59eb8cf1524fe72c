# SPDX-License-Identifier: BSD-3-Clause
# vm_host.sh, sourced by the VM tests (run_vm_test.sh, run_rxe_test.sh) after vm_kernel.sh:
# the host side of a guest. Needs $ns (the run's namespace), $dir (the directory the guest
# shares as $dpv_out), $KDIR and $KVER (vm_kernel.sh); vm_qemu sets $qpid.

# vm_tap_veth TAP VA VB: in $ns, a vnet_hdr tap TAP and a veth pair VA <-> VB; IPv6 off in
# the namespace (all and default: an interface may turn it on again for itself).
vm_tap_veth() {
	ip netns exec "$ns" sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1
	ip -n "$ns" tuntap add dev "$1" mode tap vnet_hdr || return 1
	ip -n "$ns" link add "$2" type veth peer name "$3" || return 1
}

# vm_mirror TAP VA VB: VA without offloads (the kernel segments and checksums what leaves
# there in software), lo, TAP, VA and VB up, and tc mirred moving every frame from TAP out of
# VA and from VA out of TAP: what the guest sends arrives at VB, what VB sends reaches it.
vm_mirror() {
	ip netns exec "$ns" ethtool -K "$2" tx off tso off gso off sg off > /dev/null || return 1
	for i in lo "$1" "$2" "$3"; do ip -n "$ns" link set "$i" up; done
	tc -n "$ns" qdisc add dev "$1" ingress &&
	tc -n "$ns" filter add dev "$1" parent ffff: protocol all u32 match u32 0 0 \
		action mirred egress redirect dev "$2" &&
	tc -n "$ns" qdisc add dev "$2" ingress &&
	tc -n "$ns" filter add dev "$2" parent ffff: protocol all u32 match u32 0 0 \
		action mirred egress redirect dev "$1"
}

# vm_qemu GUEST APPEND QEMU-ARGS...: boot the guest kernel (TCG, in $ns) with test/vm/init
# running GUEST (a script under $here) from the host's root filesystem (read-only over 9p) and
# $dir shared as dpv_out over 9p; APPEND is added to the kernel command line, QEMU-ARGS to
# QEMU's (machine, CPUs, memory, NIC). In the background: $qpid; console in
# $dir/console.log, QEMU's own output in $dir/qemu.log.
vm_qemu() {
	local guest=$1 append=$2
	shift 2
	ip netns exec "$ns" qemu-system-x86_64 -accel tcg "$@" -nodefaults -display none \
		-serial "file:$dir/console.log" -monitor none -no-reboot \
		-kernel "$KDIR/vmlinuz" -initrd "$KDIR/initrd.gz" \
		-append "console=ttyS0 quiet panic=-1 no_timer_check $append dpv_kver=$KVER dpv_guest=$here/$guest dpv_out=$dir dpv_mods=$KDIR/root" \
		-fsdev local,id=root,path=/,security_model=none,readonly=on,multidevs=remap \
		-device virtio-9p-pci,fsdev=root,mount_tag=hostroot,addr=0x4 \
		-fsdev local,id=out,path="$dir",security_model=none \
		-device virtio-9p-pci,fsdev=out,mount_tag=dpvout,addr=0x5 \
		> "$dir/qemu.log" 2>&1 &
	qpid=$!
}

# Wait (at most $2 s) for file $1, while the guest lives; 1 if it did not come.
await() {
	local i
	for i in $(seq $(($2 * 10))); do
		[ -e "$1" ] && return 0
		kill -0 "$qpid" 2>/dev/null || { [ -e "$1" ]; return; }
		sleep 0.1
	done
	return 1
}
