#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# PID 1 of the VM of run_vm_test.sh, run from the host's root filesystem (read-only over 9p):
# load VFIO from the Debian kernel's modules, bind the virtio-net NIC to vfio-pci with DPDK's
# dpdk-devbind.py, reserve hugepages, then run each step of $dpv_out/steps ("name program")
# with the NIC as the only DPDK device (-a BDF, IOVA as VA). A step's output, expectation file
# and exit code go to $dpv_out/NAME/, shared with the host, which captures what the NIC sends.
# Kernel command line: dpv_out, dpv_mods, dpv_kver, dpv_bdf, dpv_guest (this script).
# mounts, /tmp, $dpv_out; finish (guest_lib.sh, next to this script: no exec to find it)
. "${dpv_guest%/*}/guest_lib.sh"

setup() {
	echo "guest: kernel $(uname -r), $(nproc) CPUs, IOMMU groups: $(ls /sys/kernel/iommu_groups | wc -l)"
	modprobe -d "$dpv_mods" -S "$dpv_kver" vfio-pci &&
		modprobe -d "$dpv_mods" -S "$dpv_kver" vfio_iommu_type1 || return 1
	# lspci looks for the modules of the running kernel (not installed here) and says so
	dpdk-devbind.py -b vfio-pci "$dpv_bdf" 2>&1 | grep -v libkmod
	[ -e /sys/bus/pci/drivers/vfio-pci/"$dpv_bdf" ] || return 1
	echo "guest: $dpv_bdf bound to vfio-pci, in IOMMU group $(basename "$(readlink /sys/bus/pci/devices/$dpv_bdf/iommu_group)"): $(ls /dev/vfio | tr '\n' ' ')"
	mkdir -p /dev/hugepages
	dpdk-hugepages.py -p 2M --setup 512M || return 1
	grep -E 'HugePages_(Total|Free)' /proc/meminfo
}

if ! setup > "$dpv_out/setup.log" 2>&1; then
	cat "$dpv_out/setup.log"
	finish 1
fi
cat "$dpv_out/setup.log"
export DPV_TEST_BDF="$dpv_bdf"
export DPV_EAL_ARGS="-a $dpv_bdf --iova-mode=va --log-level=lib.eal:warning --log-level=lib.telemetry:error"
# a step is "name program [argument]": the argument goes before the expectation file
while read -r name prog arg; do
	d=$dpv_out/$name
	mkdir -p "$d"
	echo "guest: running $name"
	DPV_TEST_READY=$d/ready DPV_TEST_GO=$d/go DPV_TEST_DONE=$d/done DPV_TEST_CLOSE=$d/close \
		"$prog" ${arg:+"$arg"} "$d/expected.txt" < /dev/null > "$d/out" 2>&1
	echo $? > "$d/rc.tmp"
	mv "$d/rc.tmp" "$d/rc"
done < "$dpv_out/steps"
finish 0
