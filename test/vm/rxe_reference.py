#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""rxe_reference.py OUT_DIR GUEST_MAC WIRE.pcap TAP.pcap SCENARIO.json...: the reference frames
of the soft-RoCE VM test (run_rxe_test.sh reference). From the capture on the host's veth
(WIRE) it takes the RoCEv2 frames rxe sent (source GUEST_MAC, UDP 4791) to the QPN of each
scenario's peer (roce_peer.py's --json, with "name" added), in capture order, and writes
  OUT_DIR/rxe_frames.pcap  those frames (classic pcap, Ethernet)
  OUT_DIR/rxe_frames.txt   what tshark decodes in each, '|'-separated under a header line of
                           field names, plus two columns of ours: rxe.qpn (the QPN of the rxe
                           QP that sent it, from the pingpong exchange) and scenario
which test_roce_rxe (test/unit) reads. Each frame must also be on the tap (TAP, where the guest's
NIC hands frames to the host) byte for byte: the host changed nothing of what rxe sent.
Exit 0, or 1 with the reason (a scenario without frames, a frame the tap did not see)."""
import json
import os
import subprocess
import sys

from scapy.all import rdpcap, wrpcap, Ether

# the fields test_roce_rxe compares with dpverbs' parser
FIELDS = ['frame.len', 'eth.src', 'eth.dst', 'ip.src', 'ip.dst', 'ip.id', 'ip.ttl', 'ip.dsfield',
          'ip.flags.df', 'ipv6.src', 'ipv6.dst', 'ipv6.tclass', 'ipv6.flow', 'ipv6.hlim',
          'udp.srcport', 'udp.dstport', 'udp.length', 'udp.checksum',
          'infiniband.bth.opcode', 'infiniband.bth.se', 'infiniband.bth.m',
          'infiniband.bth.padcnt', 'infiniband.bth.tver', 'infiniband.bth.p_key',
          'infiniband.bth.destqp', 'infiniband.bth.a', 'infiniband.bth.psn',
          'infiniband.deth.q_key', 'infiniband.deth.srcqp', 'infiniband.reth.va',
          'infiniband.reth.r_key', 'infiniband.reth.dmalen', 'infiniband.aeth.syndrome',
          'infiniband.aeth.msn', 'infiniband.immdt', 'infiniband.invariant.crc', 'data.len']


def roce_dqpn(raw):
    """Destination QPN of a RoCEv2 frame (no VLAN), or None."""
    et = int.from_bytes(raw[12:14], 'big')
    if et == 0x0800 and len(raw) > 34 and raw[23] == 17:
        l4 = 14 + (raw[14] & 15) * 4
    elif et == 0x86DD and len(raw) > 54 and raw[20] == 17:
        l4 = 54
    else:
        return None
    if len(raw) < l4 + 20 or int.from_bytes(raw[l4 + 2:l4 + 4], 'big') != 4791:
        return None
    return int.from_bytes(raw[l4 + 12:l4 + 16], 'big') & 0xFFFFFF


def main():
    out, mac, wire, tap = sys.argv[1:5]
    scen = [json.load(open(p)) for p in sys.argv[5:]]
    by_qpn = {s['peer']['qpn']: s for s in scen}
    frames, cols = [], []
    for p in rdpcap(wire):
        raw = bytes(p)
        q = roce_dqpn(raw)
        if raw[6:12].hex(':') != mac or q not in by_qpn:
            continue
        frames.append(raw)
        cols.append((by_qpn[q]['rxe']['qpn'], by_qpn[q]['name']))
    rc = 0
    for s in scen:
        n = sum(c[1] == s['name'] for c in cols)
        print(f"{s['name']}: {n} frames from rxe's QPN {s['rxe']['qpn']:#x} "
              f"to the peer's {s['peer']['qpn']:#x}")
        if n == 0:
            print(f"FAIL: no frame of rxe in {s['name']}")
            rc = 1
    seen = [bytes(p) for p in rdpcap(tap)]
    missing = sum(f not in seen for f in frames)
    print(f"{len(frames) - missing} of the {len(frames)} frames byte for byte on the tap too")
    if missing:
        print("FAIL: the host changed frames of rxe between the tap and the veth")
        rc = 1
    pcap = os.path.join(out, 'rxe_frames.pcap')
    wrpcap(pcap, [Ether(f) for f in frames])
    cmd = ['tshark', '-r', pcap, '-d', 'udp.port==4791,infiniband', '-T', 'fields',
           '-E', 'separator=|', '-E', 'occurrence=f']
    for f in FIELDS:
        cmd += ['-e', f]
    rows = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.splitlines()
    if len(rows) != len(frames):
        print(f"FAIL: tshark decoded {len(rows)} rows of {len(frames)} frames")
        rc = 1
    with open(os.path.join(out, 'rxe_frames.txt'), 'w') as f:
        f.write('|'.join(FIELDS + ['rxe.qpn', 'scenario']) + '\n')
        for r, (qpn, name) in zip(rows, cols):
            f.write(f'{r}|{qpn:#x}|{name}\n')
    return rc


if __name__ == '__main__':
    sys.exit(main())
