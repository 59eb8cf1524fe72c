# SPDX-License-Identifier: BSD-3-Clause
# vm_kernel.sh, sourced by the VM tests (run_vm_test.sh, run_rxe_test.sh): the guest kernel.
#
# kernel CACHE_DIR: Debian's kernel (linux-image-amd64's current package, fetched with
# apt-get download) and its modules, pruned to what the guests load, plus an initramfs of the
# host's dash, kmod, mount and switch_root with test/vm/init. Kept in CACHE_DIR/<package>
# and made again when the package or the module list below changes. Sets KDIR and KVER.
# Needs $here (test/vm). Returns non-zero and says why when it cannot.

# What the guests load: virtio and 9p (init), VFIO (guest.sh), the virtio NIC, soft-RoCE and
# its user verbs, and the "crc32" hash rxe asks the crypto API for (guest_rxe.sh; the
# kernel would ask modprobe for it, which cannot find these modules), with their dependencies.
VM_MODULES="virtio_pci 9pnet_virtio 9p vfio-pci vfio_iommu_type1 virtio_net rdma_rxe ib_uverbs crc32_generic veth sch_prio sch_netem cls_u32 sch_ingress act_mirred ifb"

kernel() {
	local cache=$1 pkg kdir kver tmp m
	local depends="apt-cache depends linux-image-amd64"
	pkg=$($depends 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	[ -n "$pkg" ] || pkg=$(ls "$cache" 2>/dev/null | grep '^linux-image-' | grep -v '\.tmp$' | tail -1)
	if [ -z "$pkg" ]; then                # no package lists yet (a fresh container)
		apt-get update -qq > /dev/null 2>&1
		pkg=$($depends 2>/dev/null | awk '/Depends: linux-image-[0-9]/ {print $2; exit}')
	fi
	[ -n "$pkg" ] || { echo "FAIL: apt-cache knows no linux-image-amd64"; return 1; }
	kdir=$cache/$pkg
	# one tree serves both guests; an older tree with fewer modules is made again
	if [ ! -e "$kdir/ready" ] || [ "$(cat "$kdir/modules" 2>/dev/null)" != "$VM_MODULES" ]; then
		echo "vm: fetching $pkg (apt-get download) into $cache"
		rm -rf "$cache"/linux-image-*         # older kernels
		tmp=$kdir.tmp
		rm -rf "$tmp"
		mkdir -p "$tmp/deb" && chmod 777 "$tmp/deb"
		(cd "$tmp/deb" && apt-get download -q "$pkg" > ../download.log 2>&1) ||
			{ cat "$tmp/download.log"; return 1; }
		dpkg-deb -x "$tmp"/deb/*.deb "$tmp/full" || return 1
		kver=$(ls "$tmp/full/lib/modules")
		depmod -b "$tmp/full" "$kver" || return 1
		mkdir -p "$kdir/root/lib/modules/$kver"
		cp "$tmp/full/boot/vmlinuz-$kver" "$kdir/vmlinuz"
		for m in $VM_MODULES; do
			grep -E "/$m\.ko:" "$tmp/full/lib/modules/$kver/modules.dep" ||
				echo "vm: $pkg has no module $m" >&2
		done | tr -d ':' | tr ' ' '\n' | sort -u | while read -r m; do
			mkdir -p "$kdir/root/lib/modules/$kver/$(dirname "$m")"
			cp "$tmp/full/lib/modules/$kver/$m" "$kdir/root/lib/modules/$kver/$m"
		done
		depmod -b "$kdir/root" "$kver" 2> /dev/null || return 1
		echo "$kver" > "$kdir/kver"
		initramfs "$kdir" "$kver" || return 1
		rm -rf "$tmp"
		echo "$VM_MODULES" > "$kdir/modules"
		touch "$kdir/ready"
	fi
	KDIR=$kdir
	KVER=$(cat "$kdir/kver")
}

# An initramfs of the host's dash, kmod, mount and switch_root (with their libraries), the
# kernel's modules and test/vm/init.
initramfs() {
	local kdir=$1 root=$1/initramfs b l
	rm -rf "$root"
	mkdir -p "$root/bin" "$root/proc" "$root/dev" "$root/mods"
	for b in /bin/dash /usr/bin/kmod /bin/mount /bin/umount /usr/sbin/switch_root /bin/mkdir \
		 /bin/sleep; do
		cp "$b" "$root/bin/" || return 1
		for l in $(ldd "$b" | grep -o '/[^ ]*'); do
			mkdir -p "$root$(dirname "$l")"
			cp -L "$l" "$root$l"
		done
	done
	mv "$root/bin/dash" "$root/bin/sh"
	ln -s kmod "$root/bin/modprobe"
	cp -r "$kdir/root/lib" "$root/mods/"
	cp "$here/init" "$root/init"
	(cd "$root" && find . | cpio -o -H newc --quiet | gzip -1) > "$kdir/initrd.gz"
	rm -rf "$root"
}
