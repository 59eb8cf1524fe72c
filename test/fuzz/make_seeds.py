#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the seed corpus of test/fuzz/ (run from anywhere; the files are committed): inputs
that decode, in each harness, to the cases a fuzzer would take long to find by itself."""
import os
import struct
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))


def u8(v): return struct.pack('<B', v & 0xff)
def u16(v): return struct.pack('<H', v & 0xffff)
def u32(v): return struct.pack('<I', v & 0xffffffff)


# --- fuzz_post_send: see make_wr() and make_sge() for the decoding --------------------------
MR_A_LEN = 32 * 1024 + 123
SEND_FLAGS = {'fence': 1, 'signaled': 2, 'solicited': 4, 'inline': 8, 'ip_csum': 16}


def sge(how=0, off=0, length=0, lkey=None):
    b = u8(how) + u32(off) + (u32(length) if how & 0x80 else u16(length))
    if how & 7 in (6, 7):
        b += u32(lkey or 0)
    return b


def wr(tso=None, v6=False, nxt=0x80, flags=0, sges=(), inline=None, mss=1400, opcode=None):
    kind = (0x01 if tso else 0) | (0x02 if v6 else 0)
    if opcode is not None:
        kind |= 0xc0
    b = u8(kind) + u8(nxt)
    if opcode is not None:
        b += u8(opcode)
    b += u8(flags) + u8(len(sges))
    for k in range(6):
        b += sges[k] if k < len(sges) else sge()
    if flags & SEND_FLAGS['inline']:
        b += (inline or b'').ljust(512, b'\0')
    if tso:
        b += u8(0) + u8(0) + u16(mss - 1)   # no mutation; mss = 1 + u16 % 1500
    return b


def post_send_seeds():
    eth = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 0x88, 0xb5])
    return {
        'send_one': u8(0) + wr(sges=[sge(0, 2048, 100)]),
        'send_udp_csum': u8(0) + wr(flags=SEND_FLAGS['ip_csum'], sges=[sge(0, 0, 42), sge(0, 2048, 300)]),
        'send_tcp6_csum': u8(0) + wr(flags=SEND_FLAGS['ip_csum'], sges=[sge(0, 1024, 1200)]),
        'send_four_sges': u8(0) + wr(sges=[sge(0, 4096, 14), sge(0, 5000, 0), sge(2, 100, 500),
                                           sge(0, 9000, 700)]),
        'send_inline': u8(0) + wr(flags=SEND_FLAGS['inline'], sges=[sge(0, 0, 16), sge(0, 0, 60)],
                                  inline=eth + bytes(range(100))),
        'tso_v4': u8(0) + wr(tso=True, sges=[sge(0, 4096, 3000)]),
        'tso_v6_two_sges': u8(0) + wr(tso=True, v6=True, sges=[sge(0, 100, 2000), sge(2, 0, 1500)], mss=536),
        'tso_inline': u8(0) + wr(tso=True, flags=SEND_FLAGS['inline'], sges=[sge(0, 0, 200)],
                                 inline=bytes(range(200)), mss=64),
        'mr_end_overrun': u8(0) + wr(sges=[sge(0, MR_A_LEN - 50, 100)]),
        'mr_end_exact': u8(0) + wr(sges=[sge(0, 2048, 60), sge(0x41, 100, 0)]),    # the last 100 bytes of A
        'mr_end_plus_one': u8(0) + wr(sges=[sge(0, 2048, 60), sge(0x51, 100, 0)]),
        'zero_based_end_exact': u8(0) + wr(sges=[sge(0, 2048, 60), sge(0x43, 200, 0)]),
        'mr_start_minus_one': u8(0) + wr(sges=[sge(0, 2048, 60), sge(0x15, 0, 40)]),
        'zero_based_overrun': u8(0) + wr(sges=[sge(2, 40 * 1024, 200)]),
        'dead_lkey': u8(0) + wr(sges=[sge(4, 0, 100)]),
        'random_lkey': u8(0) + wr(sges=[sge(6, 65 * 1024, 100, 0x12345)]),
        'chain_bad_middle': u8(2) + wr(sges=[sge(0, 2048, 100)]) + wr(sges=[sge(4, 0, 100)])
                            + wr(sges=[sge(0, 2048, 100)]),
        'chain_cycle': u8(1) + wr(nxt=0x30, sges=[sge(0, 2048, 64)]) + wr(nxt=0x30, sges=[sge(0, 3000, 64)]),
        'chain_eight': u8(7) + b''.join(wr(tso=(i % 3 == 0), sges=[sge(0, 2048 + 100 * i, 60 + i)])
                                        for i in range(8)),
        'bad_opcode': u8(0) + wr(opcode=0x7f, sges=[sge(0, 2048, 100)]),
    }


# --- fuzz_flow_spec: see make_specs() and LLVMFuzzerTestOneInput() ---------------------------
def flow(specs, frame, ftype=0, flags=0):
    """Well-formed specs (mode 2: num_of_specs = their count); shape picks type and flags."""
    # from offset 6 of struct ibv_flow_spec_*: IPV4, IPV4_EXT and IPV6 (k 1-3) have 2 bytes
    # of padding before their val, ETH and TCP/UDP 2 after their mask
    body = b''.join(u8(k) + (bytes(2) + data if k % 6 in (1, 2, 3) else data + bytes(2))
                    for k, data in specs)
    shape = ftype | (4 if flags else 0)
    return u8(shape) + u8(2) + u8(len(specs)) + body + u16(0) + frame


def flow_seeds():
    mac = bytes([2, 0, 0, 0, 0, 0xaa])
    udp4 = (mac + bytes([2, 0, 0, 0, 0, 1, 8, 0, 0x45, 0, 0, 46, 0, 1, 0, 0, 64, 17, 0, 0,
                         10, 0, 0, 1, 10, 0, 0, 2, 0x30, 0x39, 0x13, 0x88, 0, 26, 0, 0]) + bytes(18))
    tcp6 = (mac + bytes([2, 0, 0, 0, 0, 1, 0x86, 0xdd, 0x60, 0, 0, 0, 0, 20, 6, 64]) +
            bytes(15) + b'\1' + bytes(15) + b'\2' + bytes([0x30, 0x39, 0, 80]) + bytes(8) +
            bytes([0x50, 2, 0xff, 0xff, 0, 0, 0, 0]))
    eth_val = mac + bytes(6) + u16(0) + u16(0)
    eth_mask = b'\xff' * 6 + bytes(6) + u16(0) + u16(0)
    eth = eth_val + eth_mask                                     # struct ibv_flow_spec_eth: 8 + 32
    ip4 = u32(0x0100000a) + u32(0x0200000a)
    ip4_ext = ip4 + bytes([17, 0, 0, 0]) + b'\xff' * 8 + bytes([0xff, 0, 0, 0])   # val, mask
    tcp_udp = u16(0x8813) + u16(0) + u16(0xffff) + u16(0)       # dst port 5000 (network order)
    qinq = udp4[:12] + bytes([0x88, 0xa8, 0, 7, 0x81, 0, 0, 5]) + udp4[12:]

    def vlan_eth(tci, tci_mask, etype=None):
        # struct ibv_flow_spec_eth's val and mask: no MACs, the ether type, the VLAN tag
        em = 0xffff if etype is not None else 0
        return (bytes(12) + struct.pack('>HH', etype or 0, tci) + bytes(12) +
                struct.pack('>HH', em, tci_mask))
    ip6 = (bytes(15) + b'\1' + bytes(15) + b'\2' + u32(0) + bytes([6, 0, 0]) + bytes(1) +
           b'\xff' * 32 + u32(0) + bytes([0xff, 0, 0]) + bytes(1))
    return {
        'eth_dmac': flow([(0, eth)], udp4),
        'ipv4': flow([(0, eth), (1, ip4 + b'\xff' * 8)], udp4),
        'ipv4_ext_udp': flow([(0, eth), (2, ip4_ext), (5, tcp_udp)], udp4),
        'ipv6_tcp': flow([(3, ip6), (4, tcp_udp)], tcp6),
        'sniffer': flow([], udp4, ftype=3),
        'all_default': flow([], tcp6, ftype=1),
        'dont_trap': flow([(0, eth)], udp4, flags=1),
        'short_spec': flow([(0x80, u8(12) + eth)], udp4),
        # the reference matcher's cases: a frame to another MAC (last byte), a VLAN mask on an
        # untagged frame, the last of two tags, an IPV4 spec on an IPv6 frame, a layer twice
        # (refused), MC_DEFAULT, a source port
        'eth_dmac_other': flow([(0, eth)], udp4[:5] + b'\xab' + udp4[6:]),
        'vlan_mask_untagged': flow([(0, vlan_eth(0, 0x0fff))], udp4),
        'vlan_last_of_two': flow([(0, vlan_eth(5, 0x0fff, 0x0800))], qinq),
        'ipv4_spec_on_ipv6': flow([(0, vlan_eth(0, 0, 0x86dd)), (1, bytes(16))], tcp6),
        'eth_twice': flow([(0, eth), (0, eth)], udp4),
        'mc_default': flow([], b'\x01\x00\x5e\x00\x00\x01' + udp4[6:], ftype=2),
        'udp_src_port': flow([(5, struct.pack('>HHHH', 0, 12345, 0, 0xffff))], udp4),
    }


# --- fuzz_hdr_parse: frames ------------------------------------------------------------------
def hdr_seeds():
    l2 = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1])
    ip4 = bytes([0x45, 0, 0, 40, 0x12, 0x34, 0x40, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2])
    ip4_opts = bytes([0x46, 0, 0, 44, 0, 0, 0, 0, 64, 6, 0, 0, 10, 0, 0, 1, 10, 0, 0, 2, 1, 1, 1, 0])
    tcp = bytes([0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x18, 0xff, 0xff, 0, 0, 0, 0])
    tcp_opts = bytes([0x30, 0x39, 0, 80, 0, 0, 0, 1, 0, 0, 0, 0, 0x80, 0x99, 0xff, 0xff, 0, 0, 0, 0]) + \
        bytes([2, 4, 5, 0xb4, 1, 1, 4, 2]) + bytes([1] * 4)
    udp = bytes([0x30, 0x39, 0, 53, 0, 8, 0, 0])
    ip6 = bytes([0x60, 0, 0, 0, 0, 20, 6, 64]) + bytes(15) + b'\1' + bytes(15) + b'\2'
    ip6_hbh = bytes([0x60, 0, 0, 0, 0, 28, 0, 64]) + bytes(15) + b'\1' + bytes(15) + b'\2' + \
        bytes([6, 0, 1, 4, 0, 0, 0, 0])
    ip6_frag = bytes([0x60, 0, 0, 0, 0, 28, 44, 64]) + bytes(32) + bytes([6, 0, 0, 1, 0, 0, 0, 1])
    vlan = bytes([0x81, 0, 0, 5])
    qinq = bytes([0x88, 0xa8, 0, 6, 0x81, 0, 0, 5])
    return {
        'ipv4_tcp': l2 + b'\x08\x00' + ip4 + tcp,
        'ipv4_opts_tcp_opts': l2 + b'\x08\x00' + ip4_opts + tcp_opts,
        'ipv4_udp': l2 + b'\x08\x00' + ip4[:9] + b'\x11' + ip4[10:] + udp,
        'ipv4_fragment': l2 + b'\x08\x00' + ip4[:6] + b'\x20\x00' + ip4[8:] + tcp,
        'vlan_ipv6_tcp': l2 + vlan + b'\x86\xdd' + ip6 + tcp,
        'qinq_ipv6_hbh_tcp': l2 + qinq + b'\x86\xdd' + ip6_hbh + tcp,
        'ipv6_fragment': l2 + b'\x86\xdd' + ip6_frag + tcp,
        'not_ip': l2 + b'\x88\xb5' + bytes(50),
        'short': l2[:10],
    }


# --- fuzz_roce_parse: RoCEv2 frames with a right ICRC (IBA A17.3.3, zlib's CRC-32) --------
def roce_frame(transport, v6=False, vlan=False, payload=b''):
    """Ethernet[/VLAN] / IPv4 or IPv6 / UDP 4791 / @transport (BTH and extension headers) /
    payload / pad / ICRC."""
    pad = -len(payload) % 4
    bth = bytearray(transport)
    bth[1] |= pad << 4
    udp_len = 8 + len(bth) + len(payload) + pad + 4
    udp = struct.pack('>HHHH', 0xC123, 4791, udp_len, 0)
    if v6:
        ip = struct.pack('>IHBB', 0x60000000, udp_len, 17, 64) + bytes(15) + b'\1' + bytes(15) + b'\2'
        typ = b'\x86\xdd'
    else:
        ip = bytearray(struct.pack('>BBHHHBBH4s4s', 0x45, 0, 20 + udp_len, 1, 0x4000, 64, 17, 0,
                                   bytes([10, 0, 0, 1]), bytes([10, 0, 0, 2])))
        c = sum(struct.unpack('>10H', ip))
        c = (c & 0xFFFF) + (c >> 16)
        ip[10:12] = struct.pack('>H', ~((c & 0xFFFF) + (c >> 16)) & 0xFFFF)
        ip, typ = bytes(ip), b'\x08\x00'
    body = ip + udp + bytes(bth) + payload + bytes(pad)
    m = bytearray(body[:len(ip) + 8 + 12])
    for i in ((0, 1, 2, 3, 7) if v6 else (1, 8, 10, 11)):
        m[i] = 0xFF if i or not v6 else m[i] | 0x0F
    m[len(ip) + 6:len(ip) + 8] = b'\xff\xff'
    m[len(ip) + 12] = 0xFF
    icrc = zlib.crc32(b'\xff' * 8 + bytes(m) + body[len(m):]) & 0xFFFFFFFF
    l2 = bytes([2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1]) + (b'\x81\x00\x00\x05' if vlan else b'')
    return l2 + typ + body + struct.pack('<I', icrc)


def roce_seeds():
    def bth(op, dqpn=0x12, psn=1):
        return struct.pack('>BBHI I', op, 0, 0xFFFF, dqpn, psn)
    deth = struct.pack('>II', 0x11111111, 0x34)
    reth = struct.pack('>QII', 0x7f0000001000, 0x1234, 64)
    atomic = struct.pack('>QIQQ', 0x7f0000001000, 0x1234, 1, 2)

    def flags(b):
        b = bytearray(b)
        b[1] |= 0xC0                 # SE, MigReq
        b[4] |= 0xC0                 # FECN, BECN
        b[8] |= 0x80                 # AckReq
        return bytes(b)
    return {
        'ud_send_ipv4': roce_frame(bth(0x64) + deth, payload=b'hello'),
        'ud_send_imm_ipv6': roce_frame(bth(0x65) + deth + b'\0\0\0\7', v6=True, payload=b'x' * 13),
        'rc_write_first_vlan': roce_frame(bth(0x06) + reth, vlan=True, payload=bytes(64)),
        'rc_ack': roce_frame(bth(0x11) + struct.pack('>I', 5)),
        'rc_atomic_ack_ipv6': roce_frame(bth(0x12) + struct.pack('>IQ', 5, 99), v6=True),
        'xrc_cmp_swap': roce_frame(bth(0xB3) + struct.pack('>I', 7) + atomic),
        'bad_icrc': roce_frame(bth(0x04), payload=b'abc')[:-1] + b'\0',
        # every BTH flag set (SE, MigReq, FECN, BECN, AckReq) and an IETH
        'rc_send_inv_flags': roce_frame(flags(bth(0x17, dqpn=0x123456, psn=0xABCDEF)) +
                                        struct.pack('>I', 0xCAFE0001), payload=b'inv'),
        'rc_read_resp_first_aeth': roce_frame(bth(0x0D) + struct.pack('>I', 0x1F000007),
                                              payload=bytes(range(256))),
        'xrc_write_only_imm': roce_frame(bth(0xAB) + struct.pack('>I', 0x00ABCDEF) + reth +
                                         b'\1\2\3\4', payload=bytes(64)),
        'ud_send_24bit_qpns': roce_frame(bth(0x64, dqpn=0xFEDCBA) +
                                         struct.pack('>II', 0x80010002, 0xABCDEF), payload=b'q'),
        'uc_send_last_imm_ipv6': roce_frame(bth(0x23) + b'\9\8\7\6', v6=True, payload=b'u'),
    }


# --- fuzz_ud_recv: see LLVMFuzzerTestOneInput() and template() for the decoding -------------
def ud_recv_seeds():
    def inp(ctl, sges=(1600, 0, 0), nsge=1, tclass=0, psn=1, imm=7, payload=b'hello',
            flow=0, mutations=()):
        b = u8(ctl) + u8(nsge - 1) + b''.join(u16(x) for x in sges)
        if not ctl & 1:
            return b + payload                      # a raw frame
        b += u8(tclass) + u32(psn) + u32(imm) + u16(len(payload)) + payload
        if ctl & 2:
            b += u32(flow)                          # IPv6: the flow label, after the payload
        b += u8(len(mutations)) + b''.join(u16(at) + u8(x) for at, x in mutations)
        return b
    T, V6, VLAN, IMM, FIX, QKEY, QPN = 1, 2, 4, 8, 0x20, 0x40, 0x80
    return {
        'ipv4': inp(T),
        'ipv6_flow': inp(T | V6, payload=b'x' * 200, flow=0x12345),
        'vlan_imm_tclass': inp(T | VLAN | IMM, tclass=0xb8, payload=b'y' * 61),
        'three_sges_split_grh': inp(T, sges=(7, 33, 1000), nsge=3, payload=bytes(range(250))),
        'too_small': inp(T, sges=(40, 0, 0), payload=b'z'),
        'empty_payload': inp(T | IMM, payload=b''),
        'wrong_qkey': inp(T | QKEY),
        'wrong_qpn': inp(T | QPN),
        'mutated_fixed': inp(T | FIX, mutations=((40, 0x01), (47, 0x80))),
        'mutated_unfixed': inp(T, mutations=((60, 0x10),)),
        'raw_not_ours': inp(0, payload=roce_frame(struct.pack('>BBHII', 0x64, 0, 0xFFFF, 2, 1) +
                                                  struct.pack('>II', 0x600DF00D, 9), payload=b'r')),
    }


# --- fuzz_rc_engine: see its records (do_post_send, do_post_recv, do_rx) for the decoding ----
def rc_conf(uc=False, mtu_index=2, rd_atomic=2, dest_rd_atomic=2, rnr_forever=True):
    # bit 0 UC, (bits 1-3) % 5 the MTU, bit 4 rnr_retry 7, bits 5-6 max_rd_atomic, 6-7 dest
    conf = int(uc) | mtu_index << 1 | int(rnr_forever) << 4 | (rd_atomic & 1) << 5
    return conf | (dest_rd_atomic & 3) << 6 | (rd_atomic & 2) << 5


KEYS = {'w': 0, 'r': 1, 'a': 2}


def rc_key(name):
    return u8(KEYS[name])


def rc_va(off=64):
    return u8(0) + u16(off)      # region base + off - 64


def rc_send(op, length, key='w', off=64, flags=0, imm=0, cmp=0, swap=0):
    return u8(0) + u8(op) + u8(flags) + u16(length) + rc_key(key) + rc_va(off) + \
        u32(imm) + u32(cmp) + u32(swap)


def rc_recv(length):
    return u8(0x20) + u16(length)


def rc_pkt(opcode, where='req', delta=0, ackreq=True, syndrome=0x1F, key='w', off=64,
           reth_len=0, akey='a', aoff=64, swap=0, cmp=0, orig=0, imm=0, payload=b''):
    mode = 1 | 2 | (8 if ackreq else 0) | {'req': 0, 'resp': 1, 'sent': 2}[where] << 4
    b = u8(0x30) + u8(mode) + u8(opcode) + u8(delta)
    b += u8(syndrome) + u32(0) + rc_key(key) + rc_va(off) + u16(reth_len)
    b += rc_key(akey) + rc_va(aoff) + u32(swap) + u32(cmp) + u32(orig) + u32(imm)
    return b + u16(len(payload)) + payload


def rc_tick(units):
    return u8(0xC0) + u16(units)     # units x 100 ns


def rc_engine_seeds():
    SEND, WRITE, READ, FADD = 2, 0, 4, 6
    rc = u8(rc_conf())
    return {
        'send_acked': rc + rc_recv(2000) + rc_send(SEND, 3000) +
        rc_pkt(0x11, where='sent'),
        'write_read_atomic_in': rc + rc_pkt(0x0A, key='w', reth_len=100, payload=bytes(100)) +
        rc_pkt(0x0C, key='r', reth_len=2500) + rc_pkt(0x14, akey='a', swap=5) +
        rc_pkt(0x14, delta=0xFF, akey='a', swap=5) +          # a copy: from the cache
        rc_pkt(0x0C, delta=0xFE, key='r', reth_len=2500),      # a copy of the READ
        'read_answered': rc + rc_send(READ, 3000, key='r') +
        rc_pkt(0x0D, where='resp', payload=bytes(1024)) +
        rc_pkt(0x0E, where='resp', payload=bytes(1024)) +
        rc_pkt(0x0F, where='resp', payload=bytes(952)),
        'atomic_answered': rc + rc_send(FADD, 8, key='a', cmp=3) +
        rc_pkt(0x12, where='resp', orig=77),
        'send_in_three': rc + rc_recv(3000) + rc_pkt(0x00, payload=bytes(1024)) +
        rc_pkt(0x01, payload=bytes(1024)) + rc_pkt(0x03, payload=bytes(10), imm=9),
        'rnr_then_recv': rc + rc_pkt(0x04, payload=b'abcd') + rc_recv(10) +
        rc_pkt(0x04, payload=b'abcd'),
        'timeouts': rc + rc_send(WRITE, 100) + rc_tick(20000) + rc_tick(20000) +
        rc_tick(20000) + rc_tick(20000),
        'seq_nak': rc + rc_send(SEND, 5000) + rc_pkt(0x11, where='resp', delta=2,
                                                        syndrome=0x60),
        'uc_send_write_imm': u8(rc_conf(uc=True)) + rc_recv(500) + rc_recv(500) +
        rc_pkt(0x24, payload=bytes(300)) + rc_pkt(0x2B, reth_len=8, payload=bytes(8), imm=1),
        # the next three emits: no room (0xEB), a gather list that cannot be read (0xE3)
        'tx_full': rc + bytes([0xEB]) + rc_send(SEND, 2000) + rc_tick(1) + rc_tick(1),
        'gather_fault': rc + rc_send(SEND, 10) + bytes([0xE3]) + rc_send(SEND, 2000) +
        rc_pkt(0x11, where='sent'),
        # a SEND and a WRITE, each followed by its copy (PSN one behind): acknowledged again,
        # never executed again
        'dups_not_again': rc + rc_recv(100) + rc_recv(100) + rc_pkt(0x04, payload=b'abcd') +
        rc_pkt(0x04, delta=0xFF, payload=b'abcd') +
        rc_pkt(0x0A, key='w', reth_len=8, payload=bytes(8)) +
        rc_pkt(0x0A, delta=0xFF, key='w', reth_len=8, payload=bytes(8)),
    }


def main():
    for name, seeds in (('post_send', post_send_seeds()), ('flow_spec', flow_seeds()),
                        ('hdr_parse', hdr_seeds()), ('roce_parse', roce_seeds()),
                        ('ud_recv', ud_recv_seeds()),
                        ('rc_engine', rc_engine_seeds())):
        d = os.path.join(HERE, 'corpus', name)
        os.makedirs(d, exist_ok=True)
        for seed, data in seeds.items():
            with open(os.path.join(d, seed), 'wb') as f:
                f.write(data)


if __name__ == '__main__':
    main()
