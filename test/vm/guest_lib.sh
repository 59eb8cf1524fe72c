# SPDX-License-Identifier: BSD-3-Clause
# The start and the end of a VM guest (guest.sh, guest_rxe.sh), sourced as PID 1 from the
# host's root filesystem (read-only over 9p): the kernel's file systems, a writable /tmp and
# /run, $dpv_out (the host's directory of this run, over 9p) mounted; finish ends the guest.
# Kernel command line: dpv_out, dpv_mods, dpv_guest.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs dev /dev
# A writable /tmp; the tmpfs must not hide a source or build tree that lives under the host's
# /tmp (a CI clone may): their top directories are bound back from the host's /tmp.
keep=
for p in "$dpv_guest" "$dpv_mods"; do
	case "$p" in /tmp/?*) t=${p#/tmp/}; keep="$keep ${t%%/*}" ;; esac
done
[ -n "$keep" ] && mount --bind /tmp /mnt
mount -t tmpfs tmp /tmp
for t in $keep; do
	mkdir -p "/tmp/$t" && mount --bind "/mnt/$t" "/tmp/$t"
done
mount -t tmpfs run /run
mkdir -p "$dpv_out"
mount -t 9p -o trans=virtio,version=9p2000.L,msize=512000 dpvout "$dpv_out"

# finish RC: RC to $dpv_out/guest.rc for the host, then power off.
finish() {
	echo "$1" > "$dpv_out/guest.rc"
	sync                       # the host reads it after the power-off
	echo o > /proc/sysrq-trigger
	while :; do :; done        # the power-off takes the 9p root away: no more execs
}
