#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_telemetry.sh PROGRAM: run test_telemetry (a direct QP that sent 10 frames, a service-mode
# QP that sent 5) and read dpverbs' telemetry endpoints with DPDK's own dpdk-telemetry.py from
# outside the process; the values must be the program's.
set -u
prog=$1
dir=$(mktemp -d)
trap 'touch "$dir/go"; wait; rm -rf "$dir"' EXIT
DPV_TEST_INFO=$dir/info DPV_TEST_GO=$dir/go \
DPV_EAL_ARGS="--vdev=net_null0 -l 0,1 --log-level=lib.eal:error --log-level=lib.telemetry:error" \
	"$prog" > "$dir/prog.out" 2>&1 &
ppid=$!
for i in $(seq 300); do [ -s "$dir/info" ] && break; sleep 0.05; done
if [ ! -s "$dir/info" ]; then
	echo "the program did not get ready"; cat "$dir/prog.out"; exit 1
fi
read -r prefix qd qs < "$dir/info"
printf '/dpverbs/qp\n/dpverbs/qp,%s\n/dpverbs/qp,%s\n/dpverbs/cq\n/dpverbs/cq,0\n/dpverbs/cq,1\n/dpverbs/ports\n/dpverbs/lcores\n' \
	"$qd" "$qs" | dpdk-telemetry.py -f "$prefix" > "$dir/replies" 2> "$dir/tel.err"
touch "$dir/go"
wait $ppid
prc=$?
cat "$dir/prog.out"
python3 - "$dir/replies" "$qd" "$qs" <<'PY' || exit 1
import json, sys
replies, qd, qs = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
docs = [json.loads(l) for l in open(replies) if l.strip().startswith("{")]
r = {}
for d in docs:
    for k, v in d.items():
        r.setdefault(k, []).append(v)
fails = 0
def check(cond, what):
    global fails
    print(("ok   " if cond else "FAIL ") + what)
    fails += not cond
qps = r.get("/dpverbs/qp", [])
check(len(qps) == 3 and sorted(qps[0]) == sorted([qd, qs]), "/dpverbs/qp lists both QPs: %s" % qps[:1])
d, s = (qps[1], qps[2]) if len(qps) == 3 else ({}, {})
check(d.get("state") == "RTS" and d.get("progress") == "direct" and d.get("service_lcore") == -1,
      "direct QP: RTS, direct, no lcore: %s" % d)
check(d.get("posted") == 10 and d.get("completed") == 10 and d.get("frames") == 10 and
      d.get("sq_outstanding") == 0 and d.get("sq_size") == 16, "direct QP counters")
check(s.get("progress") == "service" and s.get("service_lcore") == 1 and s.get("posted") == 5 and
      s.get("completed") == 5 and s.get("frames") == 5, "service QP: lcore 1, 5 sent: %s" % s)
cqs = r.get("/dpverbs/cq", [])
check(len(cqs) == 3 and sorted(cqs[0]) == [0, 1], "/dpverbs/cq lists CQs 0 and 1")
c0, c1 = (cqs[1], cqs[2]) if len(cqs) == 3 else ({}, {})
check(c0.get("cqe") == 64 and c0.get("completions") == 10 and c0.get("entries") == 0 and
      c1.get("cqe") == 32 and c1.get("completions") == 5, "CQ sizes and completions: %s %s" % (c0, c1))
ports = r.get("/dpverbs/ports", [{}])[0]
p = ports.get("dpv_net_null0", {})
check(p.get("tx_frames") == 15 and p.get("service_lcore") == 1 and p.get("service_qps") == 1,
      "/dpverbs/ports: 15 frames, lcore 1: %s" % p)
l = r.get("/dpverbs/lcores", [{}])[0].get("1", {})
check(l.get("running") == 1 and l.get("ports") == 1 and l.get("rounds", 0) > 0,
      "/dpverbs/lcores: lcore 1 runs one port: %s" % l)
sys.exit(1 if fails else 0)
PY
exit $prc
