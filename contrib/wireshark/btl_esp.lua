-- Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
-- SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
--
-- contrib/wireshark/btl_esp.lua - a Wireshark/tshark (4.0) dissector for the
-- esp BTL's wire protocol, version 2 (docs/wire-protocol.md; the layout is
-- btl_esp/esp_hdr.h's). Protocol "btlesp" ("esp" is IPsec's).
--
--   tshark -X lua_script:contrib/wireshark/btl_esp.lua -r FILE -Y btlesp
--   wireshark -X lua_script:contrib/wireshark/btl_esp.lua FILE
--   or copy it into ~/.local/lib/wireshark/plugins/
--
-- A heuristic dissector on UDP: esp's ports are chosen at run time, so a
-- datagram is recognised by its header, not its port.
--
-- A full datagram (type 1..6, 32-byte header): version 2, no unknown flag
-- bits, flag CRC only with more than 128 payload bytes, and 32 + extension
-- + CRC extension + len equal to the datagram's length exactly; a
-- HELLO/HELLO_ACK also has no payload, seq 0 and a non-zero token in its
-- body, and a HELLO has header token 0.
--
-- A compact piece (type 7 CCHUNK, 8 CPUT, 20-byte header) has no length
-- field to check, and its conn (the low half of the receiver's token) is
-- the receiver's small number for the sender, not a random value. It is
-- taken for esp only when it is version 2, type 7/8 and:
--   - after the first datagram of a GSO super-datagram (below) that is
--     esp's, its conn is the low half of that first datagram's token (its
--     conn, if compact): one send, one receiver; or
--   - alone in its UDP payload, its conn is the low half of a token learned
--     earlier in the capture (the src_token of a HELLO/HELLO_ACK, or the
--     token field of a full datagram whose head CRC checked out), and it
--     passes esp_hdr_parse's checks (flags CRC, TXS, TXF, RETX, ACKNOW
--     only; a CCHUNK's slot byte 0; a CPUT's slot 1..16, bits 5-6 clear;
--     more than 128 payload bytes) or its CRC checks out with such a token;
--     or
--   - first in a GSO super-datagram: it passes those checks, and so does
--     every datagram after it, at each multiple of its size (found by
--     looking for the next header), with the same conn (the same token's
--     low half on a full one); and its conn is a learned token's, or at
--     least two datagrams follow it.
-- So a capture that starts after a connection's HELLOs shows its compact
-- pieces once a full datagram to the same receiver has shown its token.
-- Anything else is left to the other UDP dissectors. The tests
-- esp_hdr_parse makes beyond these (tags and slots, chunk bounds, reserved
-- fields) show as expert errors on a datagram still dissected as btlesp; so
-- does a head CRC that does not match.
--
-- A compact piece's CRC starts from the high half of the receiver's token
-- (then the header with crc 0, then the payload: all of it with flag CRC,
-- else its first 128 bytes): it is checked with each learned token whose
-- low half is the piece's conn (the one last seen on full datagrams to the
-- same address and port first), and shown unverified when none is known.
--
-- State (first pass only, pinfo.visited false): tokens and ranks learned
-- from HELLO/HELLO_ACK, which pair a connection's two tokens; tokens seen
-- on full datagrams; the highest ack each end has sent. A data segment
-- (FRAG, CHUNK, PUT, CCHUNK, CPUT) whose seq is below the highest ack the
-- receiver had sent its sender is flagged "already acknowledged"; a
-- compact piece carries no ack, and finds its connection through the token
-- its conn and CRC name.

local p_esp = Proto("btlesp", "Open MPI BTL esp")

local T_HELLO, T_HELLO_ACK, T_FRAG, T_CHUNK, T_PUT, T_ACK, T_CCHUNK, T_CPUT = 1, 2, 3, 4, 5, 6, 7, 8
local type_names = {
    [T_HELLO] = "HELLO", [T_HELLO_ACK] = "HELLO_ACK", [T_FRAG] = "FRAG",
    [T_CHUNK] = "CHUNK", [T_PUT] = "PUT", [T_ACK] = "ACK",
    [T_CCHUNK] = "CCHUNK", [T_CPUT] = "CPUT",
}
local F_CRC, F_TXS, F_TXF, F_RETX, F_ACKNOW, F_DUP, F_SACKB, F_LOSS =
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80
local F_KNOWN = 0xff
local F_COMPACT_KNOWN = F_CRC + F_TXS + F_TXF + F_RETX + F_ACKNOW
local flag_names = {
    {F_CRC, "CRC"}, {F_TXS, "TXS"}, {F_TXF, "TXF"}, {F_RETX, "RETX"},
    {F_ACKNOW, "ACKNOW"}, {F_DUP, "DUP"}, {F_SACKB, "SACKB"}, {F_LOSS, "LOSS"},
}
local HDR_LEN, EXT_LEN, HELLO_LEN, CRC_EXT_LEN, HEAD_PAYLOAD = 32, 16, 48, 8, 128
local COMPACT_LEN, PUT_SLOTS, SLOT_NUM, SLOT_GEN = 20, 16, 0x1f, 0x80
local SACK_BLOCK_LEN, SACK_BLOCKS_MAX = 8, 12

local f = p_esp.fields
f.version = ProtoField.uint8("btlesp.version", "Version", base.DEC)
f.type = ProtoField.uint8("btlesp.type", "Type", base.DEC, type_names)
f.flags = ProtoField.uint8("btlesp.flags", "Flags", base.HEX)
f.flag_crc = ProtoField.bool("btlesp.flags.crc", "CRC extension", 8, nil, F_CRC)
f.flag_txs = ProtoField.bool("btlesp.flags.txs", "TXS (burst starts)", 8, nil, F_TXS)
f.flag_txf = ProtoField.bool("btlesp.flags.txf", "TXF (burst ends)", 8, nil, F_TXF)
f.flag_retx = ProtoField.bool("btlesp.flags.retx", "RETX (retransmission)", 8, nil, F_RETX)
f.flag_acknow = ProtoField.bool("btlesp.flags.acknow", "ACKNOW (acknowledge at once)", 8, nil, F_ACKNOW)
f.flag_dup = ProtoField.bool("btlesp.flags.dup", "DUP (duplicate report)", 8, nil, F_DUP)
f.flag_sackb = ProtoField.bool("btlesp.flags.sackb", "SACKB (SACK blocks)", 8, nil, F_SACKB)
f.flag_loss = ProtoField.bool("btlesp.flags.loss", "LOSS (the receiver's kernel dropped datagrams)", 8, nil, F_LOSS)
f.tag = ProtoField.uint8("btlesp.tag", "BTL tag", base.DEC)
f.crc = ProtoField.uint32("btlesp.crc", "Head CRC-32C", base.HEX)
f.crc_good = ProtoField.bool("btlesp.crc.good", "Head CRC good")
f.token = ProtoField.uint64("btlesp.token", "Token (receiver's)", base.HEX)
f.seq = ProtoField.uint32("btlesp.seq", "Sequence number", base.DEC)
f.ack = ProtoField.uint32("btlesp.ack", "Acknowledgement (all below received)", base.DEC)
f.sack = ProtoField.uint32("btlesp.sack", "SACK bits (bit i: ack+1+i received)", base.HEX)
f.wnd = ProtoField.uint16("btlesp.wnd", "Window (KiB beyond ack; 65535: 64 MiB or more)", base.DEC)
f.len = ProtoField.uint16("btlesp.len", "Payload length", base.DEC)
-- CHUNK
f.frag_id = ProtoField.uint32("btlesp.chunk.frag_id", "Fragment id", base.DEC)
f.frag_len = ProtoField.uint32("btlesp.chunk.frag_len", "Fragment length", base.DEC)
f.offset = ProtoField.uint32("btlesp.chunk.offset", "Offset", base.DEC)
f.reserved = ProtoField.uint32("btlesp.chunk.reserved", "Reserved", base.HEX)
-- PUT
f.put_key = ProtoField.uint64("btlesp.put.key", "Registration key", base.HEX)
f.put_addr = ProtoField.uint64("btlesp.put.addr", "Target address", base.HEX)
-- a PUT's slot (the tag of a PUT's first piece, the slot byte of a CPUT)
f.slot = ProtoField.uint8("btlesp.slot", "Slot", base.HEX)
f.slot_num = ProtoField.uint8("btlesp.slot.num", "Slot number", base.DEC, nil, SLOT_NUM)
f.slot_gen = ProtoField.uint8("btlesp.slot.gen", "Generation", base.DEC, nil, SLOT_GEN)
-- compact pieces (CCHUNK, CPUT)
f.conn = ProtoField.uint32("btlesp.conn", "Connection (low half of the receiver's token)", base.HEX)
f.c_offset = ProtoField.uint32("btlesp.offset", "Offset", base.DEC)
f.c_token = ProtoField.uint64("btlesp.conn.token", "Receiver's token (learned)", base.HEX)
-- HELLO / HELLO_ACK body
f.job_key = ProtoField.uint64("btlesp.hello.job_key", "Job key", base.HEX)
f.src_id = ProtoField.uint64("btlesp.hello.src_id", "Sender identity", base.HEX)
f.src_job = ProtoField.uint32("btlesp.hello.jobid", "Job id", base.HEX)
f.src_rank = ProtoField.uint32("btlesp.hello.rank", "Rank", base.DEC)
f.src_epoch = ProtoField.uint64("btlesp.hello.src_epoch", "Sender epoch", base.HEX)
f.dst_epoch = ProtoField.uint64("btlesp.hello.dst_epoch", "Receiver epoch (as the sender believes)", base.HEX)
f.src_token = ProtoField.uint64("btlesp.hello.src_token", "Sender token", base.HEX)
f.isn = ProtoField.uint32("btlesp.hello.isn", "First sequence number", base.DEC)
f.options = ProtoField.uint32("btlesp.hello.options", "Options", base.HEX)
f.opt_crc = ProtoField.bool("btlesp.hello.options.crc", "Checksum every payload byte", 32, nil, 0x1)
f.opt_loss = ProtoField.bool("btlesp.hello.options.loss", "Understands flag LOSS", 32, nil, 0x2)
f.opt_compact = ProtoField.bool("btlesp.hello.options.compact", "Accepts compact pieces (CCHUNK, CPUT)", 32, nil, 0x4)
-- CRC extension
f.payload_crc = ProtoField.uint32("btlesp.crcext.crc", "Payload CRC-32C (bytes 128..len)", base.HEX)
f.crcext_pad = ProtoField.uint32("btlesp.crcext.pad", "Padding", base.HEX)
-- SACK blocks
f.sack_block = ProtoField.bytes("btlesp.sack_block", "SACK block")
f.sack_start = ProtoField.uint32("btlesp.sack_block.start", "Start", base.DEC)
f.sack_end = ProtoField.uint32("btlesp.sack_block.end", "End (exclusive)", base.DEC)
-- payload and what the dissector worked out
f.payload = ProtoField.bytes("btlesp.payload", "Payload")
f.payload_len = ProtoField.uint32("btlesp.payload_len", "Payload length", base.DEC)
f.gso = ProtoField.uint32("btlesp.gso_datagrams", "GSO super-datagram:", base.DEC)
f.src_rank_g = ProtoField.uint32("btlesp.src_rank", "Sender's rank (from the HELLOs)", base.DEC)
f.dst_rank_g = ProtoField.uint32("btlesp.dst_rank", "Receiver's rank (from the HELLOs)", base.DEC)

local e = {
    retx = ProtoExpert.new("btlesp.retx.expert", "Retransmission (flag RETX)",
                           expert.group.SEQUENCE, expert.severity.NOTE),
    dup = ProtoExpert.new("btlesp.dup.expert", "Duplicate report: the segment seq arrived again",
                          expert.group.SEQUENCE, expert.severity.NOTE),
    acked = ProtoExpert.new("btlesp.acked.expert", "already acknowledged (spurious retransmission?)",
                            expert.group.SEQUENCE, expert.severity.WARN),
    bad_crc = ProtoExpert.new("btlesp.crc.bad", "Head CRC-32C does not match (esp drops it: corrupt)",
                              expert.group.CHECKSUM, expert.severity.ERROR),
    malformed = ProtoExpert.new("btlesp.malformed", "esp would drop this datagram as malformed",
                                expert.group.MALFORMED, expert.severity.ERROR),
}
p_esp.experts = { e.retx, e.dup, e.acked, e.bad_crc, e.malformed }

local band, bxor, rshift, bnot = bit32.band, bit32.bxor, bit32.rshift, bit32.bnot
local sbyte = string.byte

-- CRC-32C (Castagnoli, reflected 0x82F63B78), as common/ebtl_crc32c.c;
-- slicing by 8 over Lua strings (a compact piece with flag CRC is checked
-- whole: tens of KiB on lo).
local T = {}
for k = 0, 7 do T[k] = {} end
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if band(c, 1) ~= 0 then c = bxor(rshift(c, 1), 0x82F63B78) else c = rshift(c, 1) end
    end
    T[0][i] = c
end
for k = 1, 7 do
    for i = 0, 255 do
        local c = T[k - 1][i]
        T[k][i] = bxor(rshift(c, 8), T[0][band(c, 0xff)])
    end
end
local T0, T1, T2, T3, T4, T5, T6, T7 = T[0], T[1], T[2], T[3], T[4], T[5], T[6], T[7]

-- Continue the running (inverted) CRC over bytes i..j (1-based, inclusive) of s.
local function crc32c_update(crc, s, i, j)
    local k = i
    while k + 7 <= j do
        local b0, b1, b2, b3, b4, b5, b6, b7 = sbyte(s, k, k + 7)
        local w = bxor(crc, b0 + b1 * 256 + b2 * 65536 + b3 * 16777216)
        local a0 = w % 256
        w = (w - a0) / 256
        local a1 = w % 256
        w = (w - a1) / 256
        local a2 = w % 256
        local a3 = (w - a2) / 256
        crc = bxor(T7[a0], T6[a1], T5[a2], T4[a3], T3[b4], T2[b5], T1[b6], T0[b7])
        k = k + 8
    end
    while k <= j do
        crc = bxor(T0[band(bxor(crc, sbyte(s, k)), 0xff)], rshift(crc, 8))
        k = k + 1
    end
    return crc
end
local ZERO4 = "\0\0\0\0"

-- The head CRC of the full datagram at raw[off..]: header (crc field as
-- 0), extension, CRC extension, first 128 payload bytes: head bytes.
local function full_crc(raw, off, head)
    local c = crc32c_update(0xffffffff, raw, off + 1, off + 4)
    c = crc32c_update(c, ZERO4, 1, 4)
    return bnot(crc32c_update(c, raw, off + 9, off + head))
end

-- Wrap-safe sequence comparison: a < b.
local function seq_lt(a, b)
    return (a - b) % 4294967296 >= 2147483648
end

-- Per-capture state, rebuilt on every first pass.
local st
local function reset()
    st = {
        rank_of = {},   -- token hex -> rank (the HELLO's sender chose that token)
        partner = {},   -- token hex -> the other token of the connection
        high_ack = {},  -- token hex -> highest ack on datagrams carrying that token
        conv_ack = {},  -- "src>dst" address/port key -> highest ack (no HELLO seen)
        frame = {},     -- "frame:datagram" -> { acked = bool, src = rank, dst = rank, token = hex }
        by_low = {},    -- low half hex -> { token hex, ... } (learned tokens)
        seed = {},      -- token hex -> running CRC after its high half (a compact piece's start)
        to_addr = {},   -- "dst address:port" -> token hex last seen on a full datagram sent there
        split = {},     -- frame number -> sizes (or false): decisions that used learned tokens
    }
end
reset()
function p_esp.init() reset() end

local function ext_len(ty)
    if ty == T_CHUNK or ty == T_PUT then return EXT_LEN end
    if ty == T_HELLO or ty == T_HELLO_ACK then return HELLO_LEN end
    return 0
end

local function is_compact(ty) return ty == T_CCHUNK or ty == T_CPUT end

-- A PUT's slot byte names a slot: number 1..16, a generation bit, bits 5-6 clear.
local function slot_ok(b)
    local num = band(b, SLOT_NUM)
    return band(b, 0x60) == 0 and num >= 1 and num <= PUT_SLOTS
end

local function hex(tvb, off, n) return tostring(tvb(off, n):bytes()) end

-- Learn a token (hex): its low half names it in compact pieces.
local function learn(token)
    if token == "0000000000000000" or st.seed[token] ~= nil then return end
    local hi = ByteArray.new(token:sub(1, 8)):raw()
    st.seed[token] = crc32c_update(0xffffffff, hi, 1, 4)
    local low = token:sub(9, 16)
    local l = st.by_low[low]
    if l == nil then l = {}; st.by_low[low] = l end
    l[#l + 1] = token
end

-- What esp_hdr_parse would say is wrong with a compact piece of size bytes
-- at off (its header captured): a list of reasons, empty when none.
local function compact_problems(tvb, off, size)
    local p = {}
    local ty, flags, slot = tvb(off + 1, 1):uint(), tvb(off + 2, 1):uint(), tvb(off + 3, 1):uint()
    if band(flags, bnot(F_COMPACT_KNOWN)) ~= 0 then
        p[#p + 1] = string.format("compact piece: flags 0x%02x, not only CRC, TXS, TXF, RETX, ACKNOW", flags)
    end
    if ty == T_CCHUNK and slot ~= 0 then
        p[#p + 1] = string.format("CCHUNK: slot byte 0x%02x, not 0", slot)
    elseif ty == T_CPUT and not slot_ok(slot) then
        p[#p + 1] = string.format("CPUT: slot byte 0x%02x is not a slot 1..16 with a generation bit", slot)
    end
    if size - COMPACT_LEN <= HEAD_PAYLOAD then
        p[#p + 1] = string.format("compact piece: %d payload bytes, not more than %d", size - COMPACT_LEN, HEAD_PAYLOAD)
    end
    return p
end

-- Payload bytes a compact piece's CRC covers.
local function compact_covered(size, flags)
    return band(flags, F_CRC) ~= 0 and size - COMPACT_LEN or math.min(size - COMPACT_LEN, HEAD_PAYLOAD)
end

-- The CRC a compact piece of size bytes at raw[off..] should have for the
-- token whose CRC start is seed (flags: the piece's).
local function compact_crc(raw, off, size, flags, seed)
    local covered = compact_covered(size, flags)
    local c = crc32c_update(seed, raw, off + 1, off + 4)
    c = crc32c_update(c, ZERO4, 1, 4)
    return bnot(crc32c_update(c, raw, off + 9, off + COMPACT_LEN + covered))
end

-- The learned tokens a compact piece may be for, the likeliest first:
-- the one found for it before, the one last seen on full datagrams to its
-- address and port, then the others whose low half is its conn.
local function compact_candidates(conn, prefer, dst_key)
    local all = st.by_low[conn]
    if all == nil then return {} end
    local out, seen = {}, {}
    local function add(t)
        if t ~= nil and not seen[t] and t:sub(9, 16) == conn and st.seed[t] ~= nil then
            seen[t] = true
            out[#out + 1] = t
        end
    end
    add(prefer)
    add(st.to_addr[dst_key])
    for _, t in ipairs(all) do add(t) end
    return out
end

-- The token among cands whose CRC the compact piece at raw[off..] carries, or nil.
local function compact_match(raw, off, size, cands)
    local flags = sbyte(raw, off + 3)
    if #raw < off + COMPACT_LEN + compact_covered(size, flags) then return nil end
    local want = sbyte(raw, off + 5) * 16777216 + sbyte(raw, off + 6) * 65536
                 + sbyte(raw, off + 7) * 256 + sbyte(raw, off + 8)
    for _, t in ipairs(cands) do
        if compact_crc(raw, off, size, flags, st.seed[t]) == want then return t end
    end
    return nil
end

local function addr_key(pinfo, back)
    if back then
        return tostring(pinfo.dst) .. ":" .. pinfo.dst_port .. ">" .. tostring(pinfo.src) .. ":" .. pinfo.src_port
    end
    return tostring(pinfo.src) .. ":" .. pinfo.src_port .. ">" .. tostring(pinfo.dst) .. ":" .. pinfo.dst_port
end
local function dst_key(pinfo) return tostring(pinfo.dst) .. ":" .. pinfo.dst_port end

-- The size of the full esp datagram (type 1..6) at off, n bytes before the
-- end of the UDP payload, when its header passes esp_hdr_parse's
-- structural checks; nil otherwise (or when the capture does not hold its
-- header).
local function pdu_size(tvb, off, n)
    if n < HDR_LEN or tvb:len() < off + HDR_LEN then return nil end
    if tvb(off, 1):uint() ~= 2 then return nil end
    local ty, flags, len = tvb(off + 1, 1):uint(), tvb(off + 2, 1):uint(), tvb(off + 30, 2):uint()
    if ty < T_HELLO or ty > T_ACK or band(flags, bnot(F_KNOWN)) ~= 0 then return nil end
    local crcx = 0
    if band(flags, F_CRC) ~= 0 then
        if len <= HEAD_PAYLOAD then return nil end
        crcx = CRC_EXT_LEN
    end
    local size = HDR_LEN + ext_len(ty) + crcx + len
    if size > n then return nil end
    if ty == T_HELLO or ty == T_HELLO_ACK then
        if len ~= 0 or tvb(off + 16, 4):uint() ~= 0 then return nil end
        if ty == T_HELLO and tostring(tvb(off + 8, 8):bytes()) ~= "0000000000000000" then return nil end
        if tvb:len() >= off + HDR_LEN + HELLO_LEN
           and tostring(tvb(off + 64, 8):bytes()) == "0000000000000000" then
            return nil
        end
    end
    return size
end

-- The datagram at off, want bytes long, of a super-datagram whose
-- receiver's token has the low half conn (hex; nil after a HELLO): true
-- when it fits (a full one: its declared size, and with strict set its
-- token; a compact one: its conn, and with strict set esp_hdr_parse's
-- checks); nil when the capture does not hold its header.
local function fits(tvb, off, want, conn, strict)
    if tvb:len() < off + 2 then return nil end
    if is_compact(tvb(off + 1, 1):uint()) then
        if tvb:len() < off + COMPACT_LEN then return nil end
        return tvb(off, 1):uint() == 2 and want >= COMPACT_LEN and conn ~= nil
               and hex(tvb, off + 8, 4) == conn and (not strict or #compact_problems(tvb, off, want) == 0)
    end
    if tvb:len() < off + HDR_LEN then return nil end
    local ty = tvb(off + 1, 1):uint()
    return pdu_size(tvb, off, want) == want
           and (not strict or (ty ~= T_HELLO and hex(tvb, off + 12, 4) == conn))
end

-- Sizes of a super-datagram of n bytes cut every seg bytes (the last one
-- the rest), when each datagram the capture holds fits; nil otherwise.
local function cut(tvb, n, seg, conn, strict)
    local sizes, off, seen = {}, 0, 0
    while off < n do
        local want = math.min(seg, n - off)
        local ok = fits(tvb, off, want, conn, strict)
        if ok == false then return nil end
        if ok == nil and seen < 2 then return nil end
        if ok then seen = seen + 1 end
        sizes[#sizes + 1] = want
        off = off + want
    end
    return sizes
end

-- A super-datagram that starts with a compact piece: its size is not
-- declared, so the next header is looked for (version 2, a type, conn
-- where it belongs) and the cut tried there.
local function compact_super(tvb, n, conn)
    local cap = tvb:len()
    if cap < COMPACT_LEN + HEAD_PAYLOAD + 1 + 2 then return nil end
    local raw = tvb:raw(0, cap)
    local connraw = tvb:raw(8, 4)
    local at = COMPACT_LEN + HEAD_PAYLOAD + 2   -- 1-based: the smallest piece ends before it
    while true do
        local p = raw:find("\2", at, true)
        if p == nil or p - 1 >= n then return nil end
        local ty = sbyte(raw, p + 1)
        local s = p - 1
        if ty ~= nil and ty >= T_HELLO and ty <= T_CPUT then
            local where = is_compact(ty) and 8 or 12
            if raw:sub(p + where, p + where + 3) == connraw then
                local sizes = cut(tvb, n, s, conn, true)
                if sizes ~= nil then return sizes end
            end
        end
        at = p + 1
    end
end

-- The esp datagrams in a UDP payload: their sizes, or nil when it is not
-- esp. Normally one, whose size is the payload's. A capture on the sending
-- host (lo, or a NIC doing UDP segmentation) shows a UDP GSO send as one
-- super-datagram: datagrams of one size, the last one shorter or the same,
-- back to back. Such a payload is esp only when its first two headers are
-- esp's and every header the capture holds fits that pattern; compact
-- pieces as the header comment says.
local function split_compact(tvb, pinfo, n)
    if n < COMPACT_LEN or tvb:len() < COMPACT_LEN then return nil end
    local conn = hex(tvb, 8, 4)
    local known = st.by_low[conn] ~= nil
    if #compact_problems(tvb, 0, math.min(n, COMPACT_LEN + HEAD_PAYLOAD + 1)) == 0 then
        local sizes = compact_super(tvb, n, conn)
        if sizes ~= nil and (known or #sizes >= 3) then return sizes end
    end
    if not known then return nil end
    if #compact_problems(tvb, 0, n) == 0 then return { n } end
    -- broken, but made with a learned token: a broken sender's, shown as such
    local raw = tvb:raw(0, tvb:len())
    if compact_match(raw, 0, n, compact_candidates(conn, nil, dst_key(pinfo))) then return { n } end
    return nil
end

local function split(tvb, pinfo)
    local n = tvb:reported_length_remaining()
    if tvb:len() < 2 or tvb(0, 1):uint() ~= 2 then return nil end
    if is_compact(tvb(1, 1):uint()) then
        -- decided once (the first pass: tokens learned so far)
        local d = st.split[pinfo.number]
        if d == nil or not pinfo.visited then
            d = split_compact(tvb, pinfo, n) or false
            st.split[pinfo.number] = d
        end
        return d or nil
    end
    local first = pdu_size(tvb, 0, n)
    if first == nil then return nil end
    if first == n then return { first } end
    local ty = tvb(1, 1):uint()
    return cut(tvb, n, first, ty ~= T_HELLO and hex(tvb, 12, 4) or nil, false)
end

-- First pass: learn tokens and acks, judge this frame; later passes reuse it.
-- token: the receiver's (hex; a compact piece's as found, or nil).
local function track(tvb, pinfo, key, ty, flags, seq, ack, token)
    local rec = st.frame[key]
    if rec ~= nil then return rec end
    rec = {}
    if pinfo.visited then return rec end -- state only from the first pass
    local compact = is_compact(ty)
    local cap = tvb:len()
    if (ty == T_HELLO or ty == T_HELLO_ACK) and cap >= HDR_LEN + HELLO_LEN then
        local src_token = hex(tvb, 64, 8)
        st.rank_of[src_token] = tvb(44, 4):uint()
        learn(src_token)
        if ty == T_HELLO_ACK then
            st.partner[token] = src_token
            st.partner[src_token] = token
        end
    end
    local fwd_key, back_key = addr_key(pinfo, false), addr_key(pinfo, true)
    if ty == T_FRAG or ty == T_CHUNK or ty == T_PUT or compact then
        -- acks for data to `token` travel on datagrams to its partner
        local mate = token and st.partner[token]
        local granted = mate and st.high_ack[mate] or st.conv_ack[back_key]
        rec.acked = granted ~= nil and seq_lt(seq, granted)
    end
    if ty ~= T_HELLO and ty ~= T_HELLO_ACK and not compact then
        local h = st.high_ack[token]
        if h == nil or seq_lt(h, ack) then st.high_ack[token] = ack end
        h = st.conv_ack[fwd_key]
        if h == nil or seq_lt(h, ack) then st.conv_ack[fwd_key] = ack end
    end
    if token ~= nil then
        rec.dst = st.rank_of[token]
        local mate = st.partner[token]
        rec.src = mate and st.rank_of[mate]
    end
    if (ty == T_HELLO or ty == T_HELLO_ACK) and cap >= HDR_LEN + HELLO_LEN then
        rec.src = st.rank_of[hex(tvb, 64, 8)]
    end
    rec.token = compact and token or nil
    st.frame[key] = rec
    return rec
end

local function add_flags(t, tvb, flags, compact)
    local ft = t:add(f.flags, tvb(2, 1))
    local set = {}
    for _, fl in ipairs(flag_names) do
        if band(flags, fl[1]) ~= 0 then set[#set + 1] = fl[2] end
    end
    if #set > 0 then ft:append_text(" (" .. table.concat(set, ", ") .. ")") end
    local fc = ft:add(f.flag_crc, tvb(2, 1))
    if compact then
        fc:append_text(band(flags, F_CRC) ~= 0 and " (compact piece: no extension, its CRC covers the whole payload)"
                       or " (compact piece: its CRC covers the head)")
    end
    ft:add(f.flag_txs, tvb(2, 1))
    ft:add(f.flag_txf, tvb(2, 1))
    ft:add(f.flag_retx, tvb(2, 1))
    ft:add(f.flag_acknow, tvb(2, 1))
    ft:add(f.flag_dup, tvb(2, 1))
    ft:add(f.flag_sackb, tvb(2, 1))
    ft:add(f.flag_loss, tvb(2, 1))
end

local function add_slot(item, tvb)
    local b = tvb(3, 1):uint()
    item:append_text(string.format(" (slot %d, generation %d)", band(b, SLOT_NUM), band(b, SLOT_GEN) ~= 0 and 1 or 0))
    item:add(f.slot_num, tvb(3, 1))
    item:add(f.slot_gen, tvb(3, 1))
end

local function flags_info(info, flags)
    local shown = {}
    for _, fl in ipairs(flag_names) do
        if band(flags, fl[1]) ~= 0 and fl[1] ~= F_DUP and fl[1] ~= F_SACKB then shown[#shown + 1] = fl[2] end
    end
    if #shown > 0 then info = info .. " [" .. table.concat(shown, " ") .. "]" end
    return info
end

local function common_experts(t, rec, flags)
    if rec.src ~= nil then t:add(f.src_rank_g, rec.src):set_generated() end
    if rec.dst ~= nil then t:add(f.dst_rank_g, rec.dst):set_generated() end
    if band(flags, F_RETX) ~= 0 then t:add_proto_expert_info(e.retx) end
end

-- One compact piece (tvb: what the capture holds of it, size: its size;
-- raw, base: the UDP payload as a string and where the piece starts in it).
local function dissect_compact(tvb, pinfo, tree, key, size, raw, base)
    local cap = tvb:len()
    local ty, flags, slot = tvb(1, 1):uint(), tvb(2, 1):uint(), tvb(3, 1):uint()
    local seq, offset = tvb(12, 4):uint(), tvb(16, 4):uint()
    local plen = size - COMPACT_LEN

    local t = tree:add(p_esp, tvb(), "Open MPI BTL esp, " .. type_names[ty])
    t:add(f.version, tvb(0, 1))
    t:add(f.type, tvb(1, 1))
    add_flags(t, tvb, flags, true)
    local si = t:add(f.slot, tvb(3, 1))
    if ty == T_CPUT then add_slot(si, tvb) end
    local crc_item = t:add(f.crc, tvb(4, 4))
    local ci = t:add(f.conn, tvb(8, 4))
    t:add(f.seq, tvb(12, 4))
    t:add(f.c_offset, tvb(16, 4)):append_text(ty == T_CPUT and " (from the slot's first byte)" or " (in the fragment)")

    -- the CRC, with the learned tokens whose low half is conn
    local conn_hex = hex(tvb, 8, 4)
    local prev = st.frame[key]
    local cands = compact_candidates(conn_hex, prev and prev.token, dst_key(pinfo))
    local covered = compact_covered(size, flags)
    local token, why
    if #cands == 0 then
        crc_item:append_text(" [unverified: receiver's token unknown]")
    elseif cap < COMPACT_LEN + covered then
        crc_item:append_text(" [unverified: the capture is shorter than what the CRC covers]")
        token = cands[1]
        why = #cands > 1 and " (the likeliest of several with this low half)" or nil
    else
        token = compact_match(raw, base, size, cands)
        local good = token ~= nil
        if good then
            crc_item:append_text(" [correct]")
            why = " (the CRC matches)"
        else
            token = cands[1]
            local c = compact_crc(raw, base, size, flags, st.seed[token])
            local more = #cands > 1 and string.format("; %d learned tokens have this low half, none matches", #cands) or ""
            crc_item:append_text(string.format(" [incorrect, should be 0x%08x with token 0x%s%s]", c, token:lower(), more))
            if #cands > 1 and st.to_addr[dst_key(pinfo)] ~= token then
                token = nil
            else
                why = #cands > 1 and " (the one last seen on full datagrams to this address; the CRC does not match)"
                      or " (the only one with this low half; the CRC does not match)"
            end
        end
        crc_item:add(f.crc_good, good):set_generated()
        if not good then crc_item:add_proto_expert_info(e.bad_crc) end
    end
    crc_item:append_text(band(flags, F_CRC) ~= 0 and " (token, header, whole payload)" or " (token, header, first 128 payload bytes)")
    if token ~= nil then
        local ti = ci:add(f.c_token, UInt64.fromhex(token))
        ti:set_generated()
        if why ~= nil then ti:append_text(why) end
    end

    if cap > COMPACT_LEN then
        t:add(f.payload, tvb(COMPACT_LEN, math.min(plen, cap - COMPACT_LEN)))
    end
    t:add(f.payload_len, plen):set_generated()
    for _, m in ipairs(compact_problems(tvb, 0, size)) do t:add_proto_expert_info(e.malformed, m) end

    local rec = track(tvb, pinfo, key, ty, flags, seq, 0, token)
    common_experts(t, rec, flags)
    if rec.acked then t:add_proto_expert_info(e.acked) end

    -- Info: "CPUT seq=123 slot=3 off=4356 len=1452 [RETX]"
    local info
    if ty == T_CPUT then
        info = string.format("CPUT seq=%u slot=%u off=%u len=%u", seq, band(slot, SLOT_NUM), offset, plen)
    else
        info = string.format("CCHUNK seq=%u off=%u len=%u", seq, offset, plen)
    end
    return flags_info(info, flags)
end

-- One full esp datagram (tvb: what the capture holds of it); returns its Info text.
local function dissect(tvb, pinfo, tree, key, raw, base)
    local cap = tvb:len()
    local ty, flags, tag = tvb(1, 1):uint(), tvb(2, 1):uint(), tvb(3, 1):uint()
    local seq, ack, sack, wnd, len =
        tvb(16, 4):uint(), tvb(20, 4):uint(), tvb(24, 4):uint(), tvb(28, 2):uint(), tvb(30, 2):uint()
    local xl = ext_len(ty)
    local crcx = band(flags, F_CRC) ~= 0 and CRC_EXT_LEN or 0
    local poff = HDR_LEN + xl + crcx

    local t = tree:add(p_esp, tvb(), "Open MPI BTL esp, " .. type_names[ty])
    local malformed = {}

    t:add(f.version, tvb(0, 1))
    t:add(f.type, tvb(1, 1))
    add_flags(t, tvb, flags)
    if ty == T_PUT and tag ~= 0 then
        -- a PUT's first piece: its tag defines a slot for the CPUTs after it
        local si = t:add(f.slot, tvb(3, 1))
        add_slot(si, tvb)
        si:append_text(": this PUT's first piece defines it")
        if not slot_ok(tag) then
            malformed[#malformed + 1] = string.format("PUT: tag 0x%02x is not a slot 1..16 with a generation bit", tag)
        end
    else
        t:add(f.tag, tvb(3, 1))
    end
    local crc_item = t:add(f.crc, tvb(4, 4))
    t:add(f.token, tvb(8, 8))
    t:add(f.seq, tvb(16, 4))
    t:add(f.ack, tvb(20, 4))
    t:add(f.sack, tvb(24, 4))
    t:add(f.wnd, tvb(28, 2)):append_text(wnd == 0xffff and " KiB (64 MiB or more)" or " KiB")
    t:add(f.len, tvb(30, 2))

    -- extension / body (only what the capture holds)
    if xl > 0 and cap >= HDR_LEN + xl then
        if ty == T_CHUNK then
            local x = t:add(tvb(HDR_LEN, xl), "CHUNK extension")
            x:add(f.frag_id, tvb(32, 4))
            x:add(f.frag_len, tvb(36, 4))
            x:add(f.offset, tvb(40, 4))
            x:add(f.reserved, tvb(44, 4))
            local fl, off = tvb(36, 4):uint(), tvb(40, 4):uint()
            if len == 0 or tvb(44, 4):uint() ~= 0 or off > fl or len > fl - off then
                malformed[#malformed + 1] = "chunk: empty, reserved not 0, or offset + len > frag_len"
            end
        elseif ty == T_PUT then
            local x = t:add(tvb(HDR_LEN, xl), "PUT extension")
            x:add(f.put_key, tvb(32, 8))
            x:add(f.put_addr, tvb(40, 8))
            if len == 0 then malformed[#malformed + 1] = "empty PUT" end
        else
            local x = t:add(tvb(HDR_LEN, xl), "HELLO body")
            x:add(f.job_key, tvb(32, 8))
            local id = x:add(f.src_id, tvb(40, 8))
            id:append_text(string.format(" (job 0x%08x, rank %d)", tvb(40, 4):uint(), tvb(44, 4):uint()))
            id:add(f.src_job, tvb(40, 4))
            id:add(f.src_rank, tvb(44, 4))
            x:add(f.src_epoch, tvb(48, 8))
            x:add(f.dst_epoch, tvb(56, 8))
            x:add(f.src_token, tvb(64, 8))
            x:add(f.isn, tvb(72, 4))
            local o = x:add(f.options, tvb(76, 4))
            o:add(f.opt_crc, tvb(76, 4))
            o:add(f.opt_loss, tvb(76, 4))
            o:add(f.opt_compact, tvb(76, 4))
        end
    end
    if crcx > 0 and cap >= HDR_LEN + xl + crcx then
        local x = t:add(tvb(HDR_LEN + xl, crcx), "CRC extension")
        x:add(f.payload_crc, tvb(HDR_LEN + xl, 4))
        x:add(f.crcext_pad, tvb(HDR_LEN + xl + 4, 4))
        if tvb(HDR_LEN + xl + 4, 4):uint() ~= 0 then malformed[#malformed + 1] = "CRC extension padding not 0" end
    end

    -- head CRC: header, extension, CRC extension, first 128 payload bytes
    local head = poff + math.min(len, HEAD_PAYLOAD)
    local good
    if cap >= head then
        local c = full_crc(raw, base, head)
        good = c == tvb(4, 4):uint()
        crc_item:append_text(good and " [correct]" or string.format(" [incorrect, should be 0x%08x]", c))
        crc_item:add(f.crc_good, good):set_generated()
        if not good then crc_item:add_proto_expert_info(e.bad_crc) end
    else
        crc_item:append_text(" [unverified: the capture is shorter than the head]")
    end
    -- a token that checked out names its connection in compact pieces
    if good and not pinfo.visited and ty ~= T_HELLO then
        local token = hex(tvb, 8, 8)
        learn(token)
        st.to_addr[dst_key(pinfo)] = token
    end

    -- payload
    if ty == T_ACK and band(flags, F_SACKB) ~= 0 then
        local nb = math.floor(len / SACK_BLOCK_LEN)
        for i = 0, nb - 1 do
            local o = poff + i * SACK_BLOCK_LEN
            if cap < o + SACK_BLOCK_LEN then break end
            local s, en = tvb(o, 4):uint(), tvb(o + 4, 4):uint()
            local b = t:add(f.sack_block, tvb(o, SACK_BLOCK_LEN))
            b:set_text(string.format("SACK block %d: %u .. %u", i + 1, s, en))
            b:add(f.sack_start, tvb(o, 4))
            b:add(f.sack_end, tvb(o + 4, 4))
        end
    elseif len > 0 and cap > poff then
        t:add(f.payload, tvb(poff, math.min(len, cap - poff)))
    end
    t:add(f.payload_len, len):set_generated()

    if ty == T_ACK then
        if (seq ~= 0 and band(flags, F_DUP) == 0) or tag ~= 0 or
           (band(flags, F_SACKB) ~= 0 and (len == 0 or len % SACK_BLOCK_LEN ~= 0
                                           or len > SACK_BLOCKS_MAX * SACK_BLOCK_LEN)) or
           (band(flags, F_SACKB) == 0 and len ~= 0) then
            malformed[#malformed + 1] = "ACK: seq without DUP, a tag, or a payload that is not SACK blocks"
        end
    end
    if (ty ~= T_FRAG and ty ~= T_CHUNK and ty ~= T_PUT and tag ~= 0) or
       (ty ~= T_ACK and band(flags, F_DUP + F_SACKB + F_LOSS) ~= 0) then
        malformed[#malformed + 1] = "a tag or flag DUP/SACKB/LOSS on the wrong type"
    end
    for _, m in ipairs(malformed) do t:add_proto_expert_info(e.malformed, m) end

    local rec = track(tvb, pinfo, key, ty, flags, seq, ack, hex(tvb, 8, 8))
    common_experts(t, rec, flags)
    if ty == T_ACK and band(flags, F_DUP) ~= 0 then
        t:add_proto_expert_info(e.dup, "Duplicate report: segment " .. seq .. " arrived again")
    end
    if rec.acked then t:add_proto_expert_info(e.acked) end

    -- Info: "CHUNK seq=123 ack=45 len=1400 [RETX]"
    local info = type_names[ty]
    if ty == T_FRAG or ty == T_CHUNK or ty == T_PUT then
        info = string.format("%s seq=%u ack=%u len=%u", info, seq, ack, len)
        if ty == T_PUT and tag ~= 0 then info = info .. " slot=" .. band(tag, SLOT_NUM) end
    elseif ty == T_ACK then
        info = string.format("%s ack=%u sack=0x%08x wnd=%u", info, ack, sack, wnd)
        if band(flags, F_DUP) ~= 0 then info = info .. " dup=" .. seq end
        if band(flags, F_SACKB) ~= 0 then info = info .. " blocks=" .. math.floor(len / SACK_BLOCK_LEN) end
    elseif cap >= HDR_LEN + HELLO_LEN then
        info = string.format("%s rank=%u isn=%u", info, tvb(44, 4):uint(), tvb(72, 4):uint())
    end
    return flags_info(info, flags)
end

local function dissect_all(tvb, pinfo, tree, sizes)
    pinfo.cols.protocol = "BTLESP"
    local infos, off = {}, 0
    local raw = tvb:raw(0, tvb:len())
    if #sizes > 1 then
        local g = tree:add(f.gso, #sizes)
        g:set_generated()
        g:append_text(string.format(" datagrams of %d bytes (a UDP GSO send, captured before segmentation)", sizes[1]))
    end
    for i, sz in ipairs(sizes) do
        local have = math.min(sz, tvb:len() - off)
        local compact = have >= 2 and is_compact(tvb(off + 1, 1):uint())
        if have < (compact and COMPACT_LEN or HDR_LEN) then
            infos[#infos + 1] = string.format("(%d more not captured)", #sizes - i + 1)
            break
        end
        local sub = tvb:range(off, have):tvb()
        local key = pinfo.number .. ":" .. i
        if compact then
            infos[#infos + 1] = dissect_compact(sub, pinfo, tree, key, sz, raw, off)
        else
            infos[#infos + 1] = dissect(sub, pinfo, tree, key, raw, off)
        end
        off = off + sz
    end
    pinfo.cols.info = table.concat(infos, ", ")
    return tvb:reported_length_remaining()
end

function p_esp.dissector(tvb, pinfo, tree)
    local sizes = split(tvb, pinfo)
    if sizes == nil then return 0 end
    return dissect_all(tvb, pinfo, tree, sizes)
end

local function heuristic(tvb, pinfo, tree)
    local sizes = split(tvb, pinfo)
    if sizes == nil then return false end
    dissect_all(tvb, pinfo, tree, sizes)
    return true
end

p_esp:register_heuristic("udp", heuristic)
