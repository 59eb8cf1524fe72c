# SPDX-License-Identifier: BSD-3-Clause
# Shared by the dpv-testpmd tests: counting checks (test/lib/check.sh), running the CLI on a
# command file.
# Sourced with $tpmd (the program) and $dir (a scratch directory) set.
. "$(dirname "$0")/../lib/check.sh"
unset DPV_EAL_ARGS
QUIET="--log-level=lib.eal:error --log-level=lib.telemetry:error --log-level=pmd.net.tap:error"

# run NAME EAL-ARGS -- APP-ARGS: commands from stdin into $dir/NAME.cmd, output in
# $dir/NAME.out, exit status in $rc
run() {
	name=$1; shift
	cat > "$dir/$name.cmd"
	eal=
	while [ "$1" != -- ]; do eal="$eal $1"; shift; done
	shift
	# shellcheck disable=SC2086
	"$tpmd" $eal $QUIET -- --cmdline-file="$dir/$name.cmd" "$@" > "$dir/$name.out" 2>&1
	rc=$?
}

# in_pcap COUNT LAYERS: $dir/in.pcap, COUNT frames from 02:00:00:00:00:aa to ..:bb, frame i
# Ether() / LAYERS (a Python expression of i in scapy's names)
in_pcap() {
	/usr/bin/python3 - "$dir/in.pcap" "$1" "$2" <<'PY' 2>/dev/null
import sys
from scapy.all import Ether, IP, UDP, Raw, wrpcap
wrpcap(sys.argv[1], [Ether(src='02:00:00:00:00:aa', dst='02:00:00:00:00:bb') /
                     eval('(' + sys.argv[3] + ')', globals(), {'i': i}) for i in range(int(sys.argv[2]))])
PY
}

# pcap_ports NAME: EAL arguments of two net_pcap ports, port 0 reading $dir/in.pcap, port 1
# writing what it sends to $dir/NAME.pcap
pcap_ports() {
	echo "--vdev=net_pcap0,rx_pcap=$dir/in.pcap,tx_pcap=/dev/null --vdev=net_pcap1,tx_pcap=$dir/$1.pcap"
}

# the output of one command of a run: the lines after "FILE> CMD" up to the next command
out_of() {
	awk -v c="$2" '/\.cmd> / { i = index($0, ".cmd> "); f = !d && substr($0, i + 6) == c;
				    d = d || f; next } f' "$dir/$1.out"
}

# tshark fields of a capture, one frame a line, tab-separated
fields() {
	f=$1; shift
	args=
	for e in "$@"; do args="$args -e $e"; done
	# shellcheck disable=SC2086
	tshark -r "$f" -o ip.check_checksum:TRUE -o tcp.check_checksum:TRUE \
		-o udp.check_checksum:TRUE -T fields -E occurrence=f $args 2>/dev/null
}
