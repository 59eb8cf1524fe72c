#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""roce_peer.py: a minimal RoCEv2 peer of ibv_ud_pingpong / ibv_rc_pingpong for the soft-RoCE
VM test (run_rxe_test.sh), on the host end of the guest's NIC. It speaks the pingpongs' TCP
exchange (port 18515: "LID:QPN:PSN:GID", 52 bytes with the NUL; the GID as 32 hex digits in
wire order; then the client's "done") and answers rxe's frames with frames dpverbs' codec
builds (the roce_frame tool), so rxe judges them: the guest's pingpong with -n 1 exits 0 only
if rxe took our frames (ICRC, headers, PSNs) and completed its own.

  server: the guest is the client; rxe sends first
    ud: its UD SEND to our QPN -> our UD SEND back
    rc: its SEND (FIRST..LAST or ONLY) -> an ACK of each packet asking for one, then our SEND
        ONLY (AckReq) -> rxe's ACK of it
  client: the guest is the server: ud only; our UD SEND -> its UD SEND back

The kernel's UDP port 4791 is held by a socket of ours meanwhile, so that the host sends no
ICMP port-unreachable for rxe's frames. Prints what it saw and did; writes the exchange to
--json (rxe's QPN, PSN, GID). Exit 0 when the exchange completed, 1 otherwise."""
import argparse
import ipaddress
import json
import select
import socket
import struct
import subprocess
import sys
import time

ETH_P_ALL = 3
PACKET_OUTGOING = 4
QKEY = 0x11111111           # the pingpongs' Q_Key
OP_NAMES = {0x00: 'SEND_FIRST', 0x01: 'SEND_MIDDLE', 0x02: 'SEND_LAST', 0x04: 'SEND_ONLY',
            0x11: 'ACK', 0x64: 'UD_SEND_ONLY', 0x65: 'UD_SEND_ONLY_IMM'}


def log(*a):
    print('peer:', *a, flush=True)


def wire_gid(gid):
    return ipaddress.IPv6Address(gid).packed.hex()


def exchange_msg(qpn, psn, gid):
    return ('%04x:%06x:%06x:%s' % (0, qpn, psn, wire_gid(gid))).encode() + b'\0'


def parse_msg(m):
    lid, qpn, psn, gid = m.rstrip(b'\0').decode().split(':')
    g = ipaddress.IPv6Address(bytes.fromhex(gid))
    return {'lid': int(lid, 16), 'qpn': int(qpn, 16), 'psn': int(psn, 16),
            'gid': str(g.ipv4_mapped or g)}


def recv_exact(c, n, deadline):
    m = b''
    while len(m) < n:
        c.settimeout(max(0.1, deadline - time.time()))
        d = c.recv(n - len(m))
        if not d:
            break
        m += d
    return m


def tcp_exchange(a, ours, deadline):
    """The pingpongs' exchange, as the server (we listen) or the client (we connect)."""
    if a.role == 'server':
        fam = socket.AF_INET6 if ':' in a.tcp else socket.AF_INET
        s = socket.socket(fam, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        s.bind((a.tcp, 18515))
        s.listen(1)
        s.settimeout(max(1, deadline - time.time()))
        c, _ = s.accept()
        s.close()
        theirs = recv_exact(c, 52, deadline)
        c.sendall(ours)
        recv_exact(c, 5, deadline)                     # "done"
    else:
        c = None
        while c is None:
            try:
                c = socket.create_connection((a.tcp, 18515), timeout=5)
            except OSError:
                if time.time() > deadline:
                    raise
                time.sleep(0.5)
        c.sendall(ours)
        theirs = recv_exact(c, 52, deadline)
        c.sendall(b'done\0')
    c.close()
    if len(theirs) != 52:
        raise RuntimeError(f'the exchange gave {len(theirs)} bytes, not 52')
    return parse_msg(theirs)


def roce_of(f):
    """(ip version, BTH and DETH fields) of a RoCEv2 frame without VLAN, else None."""
    et = struct.unpack_from('>H', f, 12)[0]
    if et == 0x0800 and len(f) >= 34 and f[23] == 17:
        l4, ver = 14 + (f[14] & 15) * 4, 4
    elif et == 0x86DD and len(f) >= 54 and f[20] == 17:
        l4, ver = 54, 6
    else:
        return None
    if len(f) < l4 + 8 + 12 or struct.unpack_from('>H', f, l4 + 2)[0] != 4791:
        return None
    b = l4 + 8
    r = {'ver': ver, 'smac': f[6:12].hex(':'), 'opcode': f[b], 'pad': (f[b + 1] >> 4) & 3,
         'dqpn': struct.unpack_from('>I', f, b + 4)[0] & 0xFFFFFF,
         'ackreq': f[b + 8] >> 7, 'psn': struct.unpack_from('>I', f, b + 8)[0] & 0xFFFFFF,
         'len': len(f)}
    if r['opcode'] in (0x64, 0x65) and len(f) >= b + 20:
        r['sqpn'] = struct.unpack_from('>I', f, b + 16)[0] & 0xFFFFFF
    if r['opcode'] == 0x11 and len(f) >= b + 16:
        r['syndrome'] = f[b + 12]
    return r


class Peer:
    def __init__(self, a, mac):
        self.a, self.mac, self.ipid = a, mac, 0
        self.raw = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(ETH_P_ALL))
        self.raw.bind((a.ifname, 0))
        # hold UDP 4791: no ICMP port-unreachable answers from the host's kernel
        self.sinks = []
        for fam, addr in ((socket.AF_INET, '0.0.0.0'), (socket.AF_INET6, '::')):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            try:
                s.bind((addr, 4791))
                self.sinks.append(s)
            except OSError as e:
                log(f'cannot hold UDP 4791 on {addr}: {e}')

    def build(self, dmac, dgid, **fields):
        """A frame from roce_frame (dpverbs' codec) to the guest."""
        self.ipid = (self.ipid + 1) & 0xFFFF
        args = [self.a.frame_tool, f'smac={self.mac}', f'dmac={dmac}', f'sgid={self.a.gid}',
                f'dgid={dgid}', 'hop=64', f'ipid={self.ipid}']
        args += [f'{k}={v}' for k, v in fields.items()]
        out = subprocess.run(args, capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(out.stderr.strip())
        return bytes.fromhex(out.stdout.strip())

    def send(self, dmac, dgid, frame=None, **fields):
        """Send @frame (built before: an RC peer must answer within rxe's retransmission
        timeout, 67 ms for the pingpong's timeout 14), or one built now from @fields."""
        self.raw.send(frame or self.build(dmac, dgid, **fields))
        log(f"sent {OP_NAMES.get(fields['opcode'], fields['opcode'])} psn {fields['psn']:#x}"
            f" to QPN {fields['dqpn']:#x}")

    def frames(self, until):
        """rxe's RoCE frames to our QPN, as they come, until the deadline."""
        while time.time() < until:
            r, _, _ = select.select([self.raw], [], [], min(0.2, max(0, until - time.time())))
            if not r:
                yield None
                continue
            f, addr = self.raw.recvfrom(65535)
            if addr[2] == PACKET_OUTGOING:
                continue
            p = roce_of(f)
            if p is None or p['dqpn'] != self.a.qpn:
                continue
            log(f"got {OP_NAMES.get(p['opcode'], hex(p['opcode']))} psn {p['psn']:#x}"
                f" ackreq {p['ackreq']} ({p['len']} bytes, IPv{p['ver']})")
            yield p


def run_ud(peer, a, rem, deadline):
    """Ours after theirs (server) or ours first, again each second until theirs (client)."""
    dmac = a.guest_mac
    ours = dict(opcode=0x64, dqpn=rem['qpn'], psn=a.psn, qkey=QKEY, sqpn=a.qpn,
                sport=f'qpn:{a.qpn}', len=a.size)
    got = sent = 0
    last = 0
    for p in peer.frames(deadline):
        if p is not None and p['opcode'] == 0x64:
            got += 1
        if a.role == 'client' and not got and time.time() - last > 1:
            peer.send(dmac, rem['gid'], **ours)
            sent, last = sent + 1, time.time()
        if a.role == 'server' and got and not sent:
            peer.send(dmac, rem['gid'], **ours)
            sent = 1
        if got and sent:
            return True
    return False


def run_rc(peer, a, rem, deadline):
    """Acknowledge rxe's message, send ours (AckReq), until rxe has acknowledged it."""
    conn = f'conn:{a.qpn}:{rem["qpn"]}'
    ours = dict(opcode=0x04, dqpn=rem['qpn'], psn=a.psn, ackreq=1, sport=conn, len=16)
    acks = {}

    def ack(psn, msn):
        """The ACK of @psn (with MSN @msn), from the frames built ahead when it is there."""
        f = dict(opcode=0x11, dqpn=rem['qpn'], psn=psn, syndrome=0x1F, msn=msn, sport=conn)
        if (psn, msn) not in acks:
            acks[psn, msn] = peer.build(a.guest_mac, rem['gid'], **f)
        peer.send(a.guest_mac, rem['gid'], frame=acks[psn, msn], **f)

    # ahead of rxe's first packet: the ACKs of a message of up to 8 packets, and our SEND
    for k in range(8):
        psn = (rem['psn'] + k) & 0xFFFFFF
        acks[psn, 1] = peer.build(a.guest_mac, rem['gid'], opcode=0x11, dqpn=rem['qpn'],
                                  psn=psn, syndrome=0x1F, msn=1, sport=conn)
    send = peer.build(a.guest_mac, rem['gid'], **ours)
    msn = 0
    acked = False
    sent_at = 0
    for p in peer.frames(deadline):
        if p is not None and p['opcode'] <= 0x05:
            if p['opcode'] in (0x02, 0x03, 0x04, 0x05):      # a message's last packet
                msn = max(msn, 1)
            if p['ackreq']:
                ack(p['psn'], msn)
        if p is not None and p['opcode'] == 0x11 and p['psn'] == a.psn:
            acked = True
        if msn and not acked and time.time() - sent_at > 1:
            peer.send(a.guest_mac, rem['gid'], frame=send, **ours)
            sent_at = time.time()
        if acked:
            # a while more: rxe may still retransmit what it asked an ACK for
            for p in peer.frames(time.time() + 1):
                if p is not None and p['opcode'] <= 0x05 and p['ackreq']:
                    ack(p['psn'], msn)
            return True
    return False


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--role', choices=('server', 'client'), required=True)
    ap.add_argument('--transport', choices=('ud', 'rc'), required=True)
    ap.add_argument('--ifname', required=True)
    ap.add_argument('--tcp', required=True, help='address to listen on / the guest to call')
    ap.add_argument('--gid', required=True, help="our GID: an IPv4 or IPv6 address")
    ap.add_argument('--guest-mac', required=True)
    ap.add_argument('--qpn', type=lambda s: int(s, 0), default=0x123)
    ap.add_argument('--psn', type=lambda s: int(s, 0), default=0xabcde)
    ap.add_argument('--size', type=int, default=5, help='UD payload bytes')
    ap.add_argument('--frame-tool', required=True)
    ap.add_argument('--timeout', type=float, default=60)
    ap.add_argument('--json')
    a = ap.parse_args()
    if a.role == 'client' and a.transport != 'ud':
        ap.error('the client role speaks UD only')
    deadline = time.time() + a.timeout
    mac = open(f'/sys/class/net/{a.ifname}/address').read().strip()
    peer = Peer(a, mac)
    gid = str(ipaddress.ip_address(a.gid))
    if ':' not in gid:
        gid = '::ffff:' + gid
    rem = tcp_exchange(a, exchange_msg(a.qpn, a.psn, gid), deadline)
    log(f"exchange done: rxe's QPN {rem['qpn']:#x} PSN {rem['psn']:#x} GID {rem['gid']}")
    if a.json:
        with open(a.json, 'w') as f:
            json.dump({'rxe': rem, 'peer': {'qpn': a.qpn, 'psn': a.psn, 'gid': a.gid}}, f)
    ok = (run_ud if a.transport == 'ud' else run_rc)(peer, a, rem, deadline)
    log('complete' if ok else 'timed out')
    return 0 if ok else 1


if __name__ == '__main__':
    sys.exit(main())
