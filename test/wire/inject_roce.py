#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""inject_roce.py DIR IFACE: wait for DIR/info (written by test_ud_wire: the receiving QP,
its Q_Key, the sending QP, both ports' MACs and addresses), then send RoCEv2 frames made with
scapy out of IFACE (the kernel's end of the veth pair the first port uses, so that they
reach the second port): good UD datagrams (IPv4 with scapy's ICRC, IPv6 with the ICRC of
check_roce_pcap.py) and broken ones — a corrupted ICRC, short, a bad pad, BTH version 1,
unknown opcodes, an RC opcode, a P_Key, IPv4 options, a QPN nobody has, the multicast QPN to
a unicast address, a Q_Key of another QP — plus one to an address that is not the port's
(not RoCE's: not counted). Writes DIR/injected with how many of each kind it sent."""
import os
import socket
import struct
import sys
import time

from scapy.all import IP, IPv6, UDP, Ether, IPOption, Raw, raw
from scapy.contrib.roce import BTH

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'unit'))
from check_roce_pcap import icrc_here  # noqa: E402

SRC_MAC = '02:99:99:99:99:99'      # check_ud_pcap.py tells the injected frames by it


def wait_info(d):
    path = os.path.join(d, 'info')
    for _ in range(600):
        if os.path.exists(path):
            time.sleep(0.1)
            return dict(line.strip().split('=', 1) for line in open(path) if '=' in line)
        time.sleep(0.1)
    sys.exit('no info file from the test program')


def ud_payload(qkey, sqpn, data, pad):
    return struct.pack('>II', qkey, sqpn & 0xFFFFFF) + data + b'\0' * pad


def v4(info, bth, payload, dst=None, options=None):
    ip = IP(src=info['ip0'], dst=dst or info['ip1'], flags='DF', ttl=64)
    if options:
        ip.options = options
    return (Ether(src=SRC_MAC, dst=info['mac1']) / ip / UDP(sport=0xC0DE, dport=4791, chksum=0)
            / bth / Raw(payload))


def v6(info, bth, payload):
    """scapy has no IPv6 ICRC: built with a zero one, then ours put in."""
    bth.icrc = 0
    p = (Ether(src=SRC_MAC, dst=info['mac1']) / IPv6(src=info['ip6_0'], dst=info['ip6_1'],
                                                     hlim=64)
         / UDP(sport=0xC0DE, dport=4791, chksum=0) / bth / Raw(payload))
    f = bytearray(raw(p))
    l3 = f[14:-4]
    f[-4:] = struct.pack('<I', icrc_here(bytes(l3), True))
    return bytes(f)


def main():
    d, iface = sys.argv[1], sys.argv[2]
    info = wait_info(d)
    qpn, qkey, sqpn = int(info['qpn']), int(info['qkey']), int(info['src_qpn'])
    n = {'good': 0, 'bad_icrc': 0, 'malformed': 0, 'no_qp': 0, 'bad_qkey': 0}
    frames = []

    def add(kind, f):
        frames.append(raw(f) if not isinstance(f, bytes) else f)
        if kind:
            n[kind] += 1

    def good(i):
        return ud_payload(qkey, sqpn, b'good' + struct.pack('>I', i), 0)

    add('good', v4(info, BTH(opcode=0x64, dqpn=qpn, psn=1), good(1)))
    add('good', v6(info, BTH(opcode=0x64, dqpn=qpn, psn=2), good(2)))
    # the ICRC of a good frame with one bit flipped, IPv4 and IPv6
    f = bytearray(raw(v4(info, BTH(opcode=0x64, dqpn=qpn, psn=3), good(3))))
    f[-1] ^= 0x01
    add('bad_icrc', bytes(f))
    f = bytearray(v6(info, BTH(opcode=0x64, dqpn=qpn, psn=4), good(4)))
    f[-2] ^= 0x80
    add('bad_icrc', bytes(f))
    # a BTH alone (no DETH, no ICRC), consistent IP and UDP lengths
    p = Ether(src=SRC_MAC, dst=info['mac1']) / IP(src=info['ip0'], dst=info['ip1'], flags='DF') / \
        UDP(sport=0xC0DE, dport=4791, chksum=0) / Raw(raw(BTH(opcode=0x64, dqpn=qpn, icrc=0))[:12])
    add('malformed', p)
    # a good frame cut short: the IP length says more than there is
    add('malformed', raw(v4(info, BTH(opcode=0x64, dqpn=qpn, psn=5), good(5)))[:60])
    # a pad count of 3 with 8 data bytes: payload + pad is no whole number of words
    add('malformed', v4(info, BTH(opcode=0x64, dqpn=qpn, padcount=3), ud_payload(
        qkey, sqpn, b'12345678', 3)))
    add('malformed', v4(info, BTH(opcode=0x64, dqpn=qpn, version=1), good(6)))
    add('malformed', v4(info, BTH(opcode=0x18, dqpn=qpn), good(7)))     # reserved
    add('malformed', v4(info, BTH(opcode=0x44, dqpn=qpn), good(8)))     # RD SEND ONLY
    add('malformed', v4(info, BTH(opcode=0x04, dqpn=qpn), b'rc send!'))  # RC, to a UD QP
    add('malformed', v4(info, BTH(opcode=0x64, dqpn=qpn, pkey=0x1234), good(9)))
    add('malformed', v4(info, BTH(opcode=0x64, dqpn=qpn), good(10),
                        options=[IPOption(b'\x01\x01\x01\x01')]))          # IHL 6
    add('no_qp', v4(info, BTH(opcode=0x64, dqpn=0xABCDE), good(11)))
    add('no_qp', v4(info, BTH(opcode=0x64, dqpn=0xFFFFFF), good(12)))   # no such group
    add('bad_qkey', v4(info, BTH(opcode=0x64, dqpn=qpn), ud_payload(qkey ^ 1, sqpn,
                                                                     b'badqkey!', 0)))
    # not to the port's address: not RoCE's, RAW_PACKET's (not counted)
    add(None, v4(info, BTH(opcode=0x64, dqpn=qpn), good(13), dst='10.9.0.77'))
    add('good', v4(info, BTH(opcode=0x65, dqpn=qpn, psn=6), good(14)[:8] + b'\0\0\0\x07' +
                   good(14)[8:]))
    # (with immediate data the payload is still "good" + 4 bytes: the ImmDt is no payload)
    with socket.socket(socket.AF_PACKET, socket.SOCK_RAW) as s:
        s.bind((iface, 0))
        for f in frames:
            s.send(f)
    with open(os.path.join(d, 'injected.tmp'), 'w') as out:
        out.write('good={good} bad_icrc={bad_icrc} malformed={malformed} no_qp={no_qp} '
                  'bad_qkey={bad_qkey}\n'.format(**n))
    os.rename(os.path.join(d, 'injected.tmp'), os.path.join(d, 'injected'))


if __name__ == '__main__':
    main()
