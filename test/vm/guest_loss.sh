#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# guest_loss.sh on LOSS | off: a step of run_rxe_test.sh's rc mode, run inside the soft-RoCE
# guest (guest_rxe.sh): netem loss of the RoCE frames (UDP port 4791, IPv4 and IPv6) on the
# guest's NIC, both ways (the host's kernel has no netem). Out: a prio qdisc on the NIC sends
# only those frames to its band 3, a netem with LOSS. In: the NIC's ingress redirected (tc
# mirred) to ifb0, which has the same prio + netem, and hands the survivors back to the stack.
# off prints what each netem dropped ("dropped N to the host|guest") and removes the qdiscs.
# Kernel command line (guest_rxe.sh's environment): dpv_mods, dpv_kver, dpv_mac.
set -u
ifc=
for i in /sys/class/net/*; do
	[ "$(cat "$i/address")" = "$dpv_mac" ] && ifc=${i##*/}
done
[ -n "$ifc" ] || { echo "guest_loss: no interface with MAC $dpv_mac"; exit 1; }

# prio + netem + the two filters on $1
lossy() {
	tc qdisc add dev "$1" root handle 1: prio &&
	tc qdisc add dev "$1" parent 1:3 handle 30: netem loss "$2" &&
	tc filter add dev "$1" parent 1: protocol ip prio 1 u32 \
		match ip protocol 17 0xff match ip dport 4791 0xffff flowid 1:3 &&
	tc filter add dev "$1" parent 1: protocol ipv6 prio 2 u32 \
		match ip6 protocol 17 0xff match ip6 dport 4791 0xffff flowid 1:3
}

dropped() {
	tc -s qdisc show dev "$1" | sed -n '/^qdisc netem 30:/,/dropped/p' |
		grep -o 'dropped [0-9]*' | head -1 | grep -o '[0-9]*'
}

case $1 in
on)
	# one exec (each is slow under TCG over 9p); tc below says what is missing
	modprobe -a -d "$dpv_mods" -S "$dpv_kver" sch_prio sch_netem cls_u32 sch_ingress \
		act_mirred ifb
	[ -e /sys/class/net/ifb0 ] || ip link add ifb0 type ifb || exit 1
	ip link set ifb0 up || exit 1
	lossy "$ifc" "$2" && lossy ifb0 "$2" &&
	tc qdisc add dev "$ifc" ingress &&
	tc filter add dev "$ifc" parent ffff: protocol all u32 match u32 0 0 \
		action mirred egress redirect dev ifb0 || exit 1
	echo "guest_loss: $2 of the RoCE frames lost both ways on $ifc"
	;;
off)
	out=$(dropped "$ifc") in=$(dropped ifb0)
	echo "dropped ${out:-0} to the host"
	echo "dropped ${in:-0} to the guest"
	tc qdisc del dev "$ifc" ingress
	tc qdisc del dev "$ifc" root
	tc qdisc del dev ifb0 root
	;;
*)
	echo "usage: $0 on LOSS | off"; exit 2 ;;
esac
