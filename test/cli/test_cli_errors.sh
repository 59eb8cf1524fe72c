#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# dpv-testpmd's modes and errors: a command file stops at a command it cannot parse or that
# fails, prints that command's help and exits 1; bad EAL or program arguments; --auto-start
# with --duration and --stats-period; the prompt fed through a pipe, with load and tab
# completion; and, while it
# runs, no shared librte_*, libibverbs or libmlx* in the process (DPDK's plugin autoload off).
set -u
tpmd=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"; [ -n "${pid:-}" ] && kill "$pid" 2>/dev/null' EXIT
. "$(dirname "$0")/lib.sh"

run typo --vdev=net_null0 -- <<'EOF2'
show device
shwo device
show device
EOF2
check "an unknown command: exit 1" "[ $rc -eq 1 ]"
check "it is named, with the list of commands" \
	"grep -q \"error: cannot run 'shwo device' (no such command)\" '$dir/typo.out' &&
	 grep -q \"unknown command 'shwo'; the commands are:\" '$dir/typo.out' &&
	 grep -q '^  post send <qp> hex' '$dir/typo.out'"
check "the file stops there, naming the line" \
	"grep -q 'typo.cmd:2: stopped at this line' '$dir/typo.out' && [ \$(grep -c '^1 verbs device' '$dir/typo.out') = 1 ]"
run badarg --vdev=net_null0 -- <<'EOF2'
show port info zero
EOF2
check "bad arguments: exit 1 and the show commands' help" \
	"[ $rc -eq 1 ] && grep -q 'bad arguments' '$dir/badarg.out' &&
	 grep -q '^  show port info|stats|xstats <port>' '$dir/badarg.out' && ! grep -q '^  qp create' '$dir/badarg.out'"
run badval --vdev=net_null0 -- <<'EOF2'
set txpkts 0
EOF2
check "a bad value: exit 1, the message says what is allowed" \
	"[ $rc -eq 1 ] && grep -q 'error: set txpkts takes 1 to 8 lengths of 1..65535 bytes' '$dir/badval.out'"
run signal --vdev=net_null0 -- <<'EOF2'
set fwd txonly
set txflags signaled-every 1000
start
EOF2
check "signaled-every above the SQ refused at start, with the fix" \
	"[ $rc -eq 1 ] && grep -q 'error: signaled-every 1000 is above the SQ depth (512).*signaled-every 512 or less' '$dir/signal.out'"
run post_nothing --vdev=net_null0 -- <<'EOF2'
post send 3 hex 00
EOF2
check "post send to a QP that does not exist: exit 1, says how to make one" \
	"[ $rc -eq 1 ] && grep -q 'error: there is no QP 3: qp create raw <port>' '$dir/post_nothing.out'"

"$tpmd" --vdev=net_null0 --bogus-eal-option $QUIET -- -i > "$dir/eal.out" 2>&1 < /dev/null
check "a bad EAL argument: exit 1 naming dpv_init ($?)" "grep -q 'dpv_init: Invalid argument' '$dir/eal.out'"
"$tpmd" --vdev=net_null0 $QUIET -- > "$dir/nomode.out" 2>&1
check "no mode: exit 2 with the usage ($?)" "[ $? -eq 2 ] && grep -q 'usage:' '$dir/nomode.out'"

"$tpmd" --vdev=net_null0 $QUIET -- --auto-start --duration=3.5 --stats-period=1 \
	--forward-mode=txonly --txpkts=64 --burst=64 > "$dir/auto.out" 2>&1
check "--auto-start --duration: exit 0 ($?)" "[ $? -eq 0 ]"
l=$(grep -c '^port 0: rx 0.000 Mpps, tx [0-9.]* Mpps [0-9.]* Gbit/s | WRs [0-9]* completions [0-9]* errors 0$' "$dir/auto.out")
check "--stats-period 1: a line a second, Mpps, Gbit/s, WRs, completions, errors ($l)" "[ $l -ge 2 ]"
mpps=$(grep -m1 '^port 0: rx' "$dir/auto.out" | sed 's/.*tx \([0-9.]*\) Mpps.*/\1/')
check "net_null sent at more than 0.01 Mpps ($mpps)" "awk 'BEGIN { exit !($mpps > 0.01) }'"
check "then it stopped and printed the totals" "grep -q '^port 0: rx 0, tx WRs [1-9][0-9]*, completions' '$dir/auto.out'"

"$tpmd" --vdev=net_null0 $QUIET -- --auto-start --forward-mode=txonly > "$dir/sig.out" 2>&1 &
pid=$!
for i in $(seq 100); do grep -qs '^forwarding: txonly' "$dir/sig.out" && break; sleep 0.05; done
sleep 0.5
kill -INT $pid
wait $pid
check "--auto-start without --duration: SIGINT stops it, totals printed, exit 0 ($?)" \
	"[ $? -eq 0 ] && grep -q '^signal 2: stopping' '$dir/sig.out' && grep -q '^port 0: rx 0, tx WRs [1-9]' '$dir/sig.out'"
pid=

# the prompt, fed through a pipe
mkfifo "$dir/in"
"$tpmd" --vdev=net_null0 $QUIET -- -i < "$dir/in" > "$dir/i.out" 2>&1 &
pid=$!
exec 3> "$dir/in"
printf 'qp create raw 0\nshow qp 0\n' > "$dir/load.cmd"
echo "load $dir/load.cmd" >&3
for i in $(seq 100); do grep -qs 'state rts' "$dir/i.out" && break; sleep 0.05; done
check "interactive: load ran the file's commands" "grep -q 'QP 0: qp_num 0x[0-9a-f]*, RAW_PACKET on port 0, state rts' '$dir/i.out'"
maps=$(grep -e librte_ -e libibverbs -e libmlx "/proc/$pid/maps" | head -3)
check "no shared librte_*, libibverbs or libmlx* mapped ($maps)" "[ -z '$maps' ]"
check "libdpverbs is mapped" "grep -q libdpverbs '/proc/$pid/maps'"
printf 'show dev\t\n' >&3
for i in $(seq 100); do grep -q '^1 verbs device' "$dir/i.out" && break; sleep 0.05; done
check "interactive: <tab> completes 'show dev' to show device" "grep -q '^1 verbs device(s)' '$dir/i.out'"
echo "help qp" >&3
echo quit >&3
exec 3>&-
wait $pid
check "quit: exit 0 ($?)" "[ $? -eq 0 ]"
pid=
check "help qp: the qp commands" "grep -q 'qp create raw <port> \[sq N\]' '$dir/i.out'"
needed=$(objdump -p "$tpmd" | grep NEEDED | grep -e librte_ -e libibverbs)
check "NEEDED has no librte_* or libibverbs ($needed)" "[ -z '$needed' ]"
rte=$(nm "$tpmd" | grep -w -e 'U rte_.*' -e '[TDB] rte_.*' | head -3)
check "no DPDK symbol defined in or needed by dpv-testpmd but librte_cmdline's ($rte)" "[ -z '$rte' ]"
finish cli_errors
