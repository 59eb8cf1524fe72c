# SPDX-License-Identifier: BSD-3-Clause
# Shared by the compat tests, which run unmodified tools through dpv-run: counting checks, a
# scratch directory $dir, one cleanup at exit, and the two-process tests' veth pair (pair_up)
# and server/client launch (run_pair). Sourced with $run (dpv-run) set.
set -u
. "$(dirname "$0")/../lib/net.sh"
. "$(dirname "$0")/../lib/check.sh"
QUIET='--log-level=lib.eal:warning --log-level=lib.telemetry:warning --log-level=pmd.net.af_packet:error'
if [ "$(nproc)" -ge 2 ]; then ccpu=1; else ccpu=0; fi   # a CPU for a client of its own
dir=$(mktemp -d)
a=; b=; srv=; exit_hooks=; pairs=; shown=
PAIR_TIMEOUT=100 PAIR_READY=           # run_pair's; a script may set them after sourcing

# at_exit COMMAND: eval COMMAND at exit, before the server is killed and the pair removed
at_exit() { exit_hooks="$exit_hooks$1
"; }
cleanup() {
	eval "$exit_hooks"
	[ -n "$srv" ] && kill "$srv" 2>/dev/null
	wait 2>/dev/null
	net_cleanup
	rm -rf "$dir"
}
trap cleanup EXIT
trap 'exit 143' TERM INT     # a meson timeout (SIGTERM) still runs cleanup: the veths go

# require PACKAGE TOOL...: skip the test (77) when a tool is not installed
require() {
	_pkg=$1; shift
	for _t; do
		command -v "$_t" > /dev/null || { echo "$_t missing ($_pkg)"; exit 77; }
	done
}

# pair_up PREFIX [NET]: the veth pair PREFIXa<pid> ($a, the server's end) <-> PREFIXb<pid>
# ($b, the client's), up with IPv6 off (veth_pair, test/lib/net.sh); with NET (10.78.0), the
# configurations $dir/a.conf and $dir/b.conf give the ports NET.1 and NET.2. Sets $eal_a and
# $eal_b, each side's net_af_packet port, for a script to add EAL options to.
pair_up() {
	veth_up "$1"
	if [ $# -ge 2 ]; then
		printf 'port_addr = net_af_packet0 %s.1\n' "$2" > "$dir/a.conf"
		printf 'port_addr = net_af_packet0 %s.2\n' "$2" > "$dir/b.conf"
	fi
	eal_a="--vdev=net_af_packet0,iface=$a"
	eal_b="--vdev=net_af_packet0,iface=$b"
}

# side CONF EAL N CMD...: exec (in a subshell) the first N words of CMD through dpv-run under
# the timeout, with DPV_CONFIG=CONF when that file exists
side() {
	_conf=$1 _eal=$2 _n=$3; shift 3
	_k=0
	for _w; do
		shift
		[ $_k -lt "$_n" ] && set -- "$@" "$_w"
		_k=$((_k + 1))
	done
	[ -f "$_conf" ] || _conf=
	exec env ${_conf:+"DPV_CONFIG=$_conf"} DPV_EAL_ARGS="$_eal $QUIET" \
		timeout "$PAIR_TIMEOUT" "$run" "$@"
}

# run_pair NAME SERVER_CMD... -- CLIENT_CMD...: the server through dpv-run on $a (a.conf,
# $eal_a) in the background; the client on $b (b.conf, $eal_b) once the server is ready: after
# 2 s, or with PAIR_READY set, once a line of the server's output matches that pattern (then
# 1 s more: raw Ethernet has no handshake). Each under a timeout of $PAIR_TIMEOUT s (100).
# Leaves the outputs in $out.srv and $out.cli, the exit codes in $src and $crc, and checks
# that both are 0 (showing both outputs when not).
run_pair() {
	_name=$1; shift
	_n=0
	for _w; do
		[ "$_w" = -- ] && break
		_n=$((_n + 1))
	done
	_f=$(printf %s "$_name" | tr -c 'A-Za-z0-9_.-' _)
	out=$dir/$_f
	pairs="$pairs $_f"
	side "$dir/a.conf" "$eal_a" $_n "$@" > "$out.srv" 2>&1 &
	srv=$!
	if [ -n "$PAIR_READY" ]; then
		for _i in $(seq 600); do
			grep -q -- "$PAIR_READY" "$out.srv" 2>/dev/null && break
			kill -0 $srv 2>/dev/null || break
			sleep 0.1
		done
		sleep 1
	else
		sleep 2
	fi
	shift $((_n + 1))
	(side "$dir/b.conf" "$eal_b" $# "$@") > "$out.cli" 2>&1
	crc=$?
	wait $srv
	src=$?
	srv=
	check "$_name: client exits 0 (rc $crc)" "[ $crc -eq 0 ]"
	check "$_name: server exits 0 (rc $src)" "[ $src -eq 0 ]"
	[ $crc -eq 0 ] && [ $src -eq 0 ] || { show "$_f"; shown="$shown $_f"; }
}

# pingpong_gids TOOL SIZE NET: ibv_rc_pingpong or ibv_ud_pingpong (TOOL) on the pair that
# pair_up PREFIX NET made, -s SIZE -n 50 with -c on both sides, once with GID index 0 and
# once with 1. Checked for each: both exit 0 (run_pair), the server's -c found no invalid
# data, 50 iterations on both sides; then link-local GIDs (index 0) and NET.2/NET.1 (index 1)
# on both sides.
pingpong_gids() {
	_port=$((20000 + $$ % 10000))
	for g in 0 1; do
		args="-d dpv_net_af_packet0 -g $g -s $2 -n 50 -p $((_port + g))"
		run_pair "-g $g" "$1" $args -c -- "$1" $args -c 127.0.0.1
		check "-g $g: the server's -c: no invalid data" "! grep -q 'invalid data' '$out.srv'"
		check "-g $g: client: 50 iterations" "grep -q '^50 iters in' '$out.cli'"
		check "-g $g: server: 50 iterations" "grep -q '^50 iters in' '$out.srv'"
	done
	check "-g 0: link-local GIDs on both sides" \
		"grep -q 'local address:.*GID fe80::' '$dir/-g_0.cli' && grep -q 'remote address:.*GID fe80::' '$dir/-g_0.cli'"
	check "-g 1: IPv4 GIDs on both sides" \
		"grep -q 'local address:.*GID ::ffff:$3.2' '$dir/-g_1.cli' && grep -q 'remote address:.*GID ::ffff:$3.1' '$dir/-g_1.cli'"
}

# perftest_up PORT_BASE: both sides of pair_up's veth with 8192 af_packet frames (a frame lost
# in a short ring would stall an unreliable test), in memory; $port a base for perftest_one
perftest_up() {
	eal_a="$eal_a,framecnt=8192 -l 0 --in-memory"
	eal_b="$eal_b,framecnt=8192 -l $ccpu --in-memory"
	port=$(($1 + $$ % 10000))
}

# perftest_one NAME TOOL N ARGS...: perftest's TOOL with ARGS on both sides of the pair (GID
# index 1, the next $port); checked: the client's result line counts N iterations; that line
# and its heading printed, prefixed with NAME
perftest_one() {
	pt_name=$1; pt_tool=$2; pt_n=$3; shift 3
	port=$((port + 1))
	pt_args="-d dpv_net_af_packet0 -x 1 -p $port $*"
	# shellcheck disable=SC2086
	run_pair "$pt_name" "$pt_tool" $pt_args -- "$pt_tool" $pt_args 127.0.0.1
	check "$pt_name: the client's result line" "grep -qE '^ *[0-9]+ +$pt_n ' '$out.cli'"
	grep -a -E -B1 '^ *[0-9]+ +[0-9]+ ' "$out.cli" | sed "s/^/$pt_name: /"
}

show() {
	echo "--- $1 server:"; cat -v "$dir/$1.srv"
	echo "--- $1 client:"; cat -v "$dir/$1.cli"
}

# finish NAME: the counts; on a failed check, the outputs of every pair not shown yet
finish() {
	if [ $fail -ne 0 ]; then
		for _p in $pairs; do
			case " $shown " in *" $_p "*) ;; *) show "$_p" ;; esac
		done
	fi
	echo "$1: $pass checks passed, $fail failed"
	[ $fail -eq 0 ]
}
