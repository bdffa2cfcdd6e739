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
-- datagram is recognised by its header, not its port: version 2, type 1..6,
-- no unknown flag bits, flag CRC only with more than 128 payload bytes, and
-- 32 + extension + CRC extension + len equal to the datagram's length
-- exactly; a HELLO/HELLO_ACK also has no payload, seq 0 and a non-zero
-- token in its body, and a HELLO has header token 0. Anything else is left
-- to the other UDP dissectors. The tests esp_hdr_parse makes beyond these
-- (tags, chunk bounds, reserved fields) show as expert errors on a datagram
-- still dissected as btlesp; so does a head CRC that does not match.
--
-- State (first pass only, pinfo.visited false): tokens and ranks learned
-- from HELLO/HELLO_ACK, which pair a connection's two tokens; the highest
-- ack each end has sent. A data segment whose seq is below the highest ack
-- the receiver had sent its sender is flagged "already acknowledged".

local p_esp = Proto("btlesp", "Open MPI BTL esp")

local T_HELLO, T_HELLO_ACK, T_FRAG, T_CHUNK, T_PUT, T_ACK = 1, 2, 3, 4, 5, 6
local type_names = {
    [T_HELLO] = "HELLO", [T_HELLO_ACK] = "HELLO_ACK", [T_FRAG] = "FRAG",
    [T_CHUNK] = "CHUNK", [T_PUT] = "PUT", [T_ACK] = "ACK",
}
local F_CRC, F_TXS, F_TXF, F_RETX, F_ACKNOW, F_DUP, F_SACKB, F_LOSS =
    0x01, 0x02, 0x04, 0x08, 0x10, 0x20, 0x40, 0x80
local F_KNOWN = 0xff
local flag_names = {
    {F_CRC, "CRC"}, {F_TXS, "TXS"}, {F_TXF, "TXF"}, {F_RETX, "RETX"},
    {F_ACKNOW, "ACKNOW"}, {F_DUP, "DUP"}, {F_SACKB, "SACKB"}, {F_LOSS, "LOSS"},
}
local HDR_LEN, EXT_LEN, HELLO_LEN, CRC_EXT_LEN, HEAD_PAYLOAD = 32, 16, 48, 8, 128
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

-- CRC-32C (Castagnoli, reflected 0x82F63B78), as common/ebtl_crc32c.c
local crc_table = {}
for i = 0, 255 do
    local c = i
    for _ = 1, 8 do
        if band(c, 1) ~= 0 then c = bxor(rshift(c, 1), 0x82F63B78) else c = rshift(c, 1) end
    end
    crc_table[i] = c
end
local function crc32c_update(crc, bytes, from, to) -- crc: the inverted running value
    for i = from, to - 1 do
        crc = bxor(crc_table[band(bxor(crc, bytes:get_index(i)), 0xff)], rshift(crc, 8))
    end
    return crc
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
        frame = {},     -- "frame:datagram" -> { acked = bool, src = rank, dst = rank }
    }
end
reset()
function p_esp.init() reset() end

local function ext_len(ty)
    if ty == T_CHUNK or ty == T_PUT then return EXT_LEN end
    if ty == T_HELLO or ty == T_HELLO_ACK then return HELLO_LEN end
    return 0
end

-- The size of the esp datagram at off, n bytes before the end of the UDP
-- payload, when its header passes esp_hdr_parse's structural checks; nil
-- otherwise (or when the capture does not hold its header).
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

-- The esp datagrams in a UDP payload: their sizes, or nil when it is not
-- esp. Normally one, whose size is the payload's. A capture on the sending
-- host (lo, or a NIC doing UDP segmentation) shows a UDP GSO send as one
-- super-datagram: datagrams of one size, the last one shorter or the same,
-- back to back. Such a payload is esp only when its first two headers are
-- esp's and every header the capture holds fits that pattern.
local function split(tvb)
    local n = tvb:reported_length_remaining()
    local first = pdu_size(tvb, 0, n)
    if first == nil then return nil end
    if first == n then return { first } end
    local sizes, off = { first }, first
    while off < n do
        local want = math.min(first, n - off)
        if tvb:len() >= off + HDR_LEN then
            local sz = pdu_size(tvb, off, n - off)
            if sz ~= want then return nil end
        elseif #sizes < 2 then
            return nil
        end
        sizes[#sizes + 1] = want
        off = off + want
    end
    return sizes
end

local function hex(tvb, off, n) return tostring(tvb(off, n):bytes()) end

-- First pass: learn tokens and acks, judge this frame; later passes reuse it.
local function track(tvb, pinfo, key, ty, flags, seq, ack)
    local rec = st.frame[key]
    if rec ~= nil then return rec end
    rec = {}
    if pinfo.visited then return rec end -- state only from the first pass
    local token = hex(tvb, 8, 8)
    local cap = tvb:len()
    if (ty == T_HELLO or ty == T_HELLO_ACK) and cap >= HDR_LEN + HELLO_LEN then
        local src_token = hex(tvb, 64, 8)
        st.rank_of[src_token] = tvb(44, 4):uint()
        if ty == T_HELLO_ACK then
            st.partner[token] = src_token
            st.partner[src_token] = token
        end
    end
    local addr_key = tostring(pinfo.src) .. ":" .. pinfo.src_port .. ">" .. tostring(pinfo.dst) .. ":" .. pinfo.dst_port
    local back_key = tostring(pinfo.dst) .. ":" .. pinfo.dst_port .. ">" .. tostring(pinfo.src) .. ":" .. pinfo.src_port
    if ty == T_FRAG or ty == T_CHUNK or ty == T_PUT then
        -- acks for data to `token` travel on datagrams to its partner
        local mate = st.partner[token]
        local granted = mate and st.high_ack[mate] or st.conv_ack[back_key]
        rec.acked = granted ~= nil and seq_lt(seq, granted)
    end
    if ty ~= T_HELLO and ty ~= T_HELLO_ACK then
        local h = st.high_ack[token]
        if h == nil or seq_lt(h, ack) then st.high_ack[token] = ack end
        h = st.conv_ack[addr_key]
        if h == nil or seq_lt(h, ack) then st.conv_ack[addr_key] = ack end
    end
    rec.dst = st.rank_of[token]
    local mate = st.partner[token]
    rec.src = mate and st.rank_of[mate]
    if ty == T_HELLO or ty == T_HELLO_ACK then rec.src = st.rank_of[hex(tvb, 64, 8)] end
    st.frame[key] = rec
    return rec
end

-- One esp datagram (tvb: what the capture holds of it); returns its Info text.
local function dissect(tvb, pinfo, tree, key)
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
    local ft = t:add(f.flags, tvb(2, 1))
    local set = {}
    for _, fl in ipairs(flag_names) do
        if band(flags, fl[1]) ~= 0 then set[#set + 1] = fl[2] end
    end
    if #set > 0 then ft:append_text(" (" .. table.concat(set, ", ") .. ")") end
    ft:add(f.flag_crc, tvb(2, 1))
    ft:add(f.flag_txs, tvb(2, 1))
    ft:add(f.flag_txf, tvb(2, 1))
    ft:add(f.flag_retx, tvb(2, 1))
    ft:add(f.flag_acknow, tvb(2, 1))
    ft:add(f.flag_dup, tvb(2, 1))
    ft:add(f.flag_sackb, tvb(2, 1))
    ft:add(f.flag_loss, tvb(2, 1))
    t:add(f.tag, tvb(3, 1))
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
    if cap >= head then
        local b = tvb(0, head):bytes()
        local c = crc32c_update(0xffffffff, b, 0, 4)
        for _ = 1, 4 do c = bxor(crc_table[band(c, 0xff)], rshift(c, 8)) end -- the crc field as 0
        c = bnot(crc32c_update(c, b, 8, head))
        local good = c == tvb(4, 4):uint()
        crc_item:append_text(good and " [correct]" or string.format(" [incorrect, should be 0x%08x]", c))
        crc_item:add(f.crc_good, good):set_generated()
        if not good then crc_item:add_proto_expert_info(e.bad_crc) end
    else
        crc_item:append_text(" [unverified: the capture is shorter than the head]")
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
    if (ty ~= T_FRAG and ty ~= T_CHUNK and tag ~= 0) or
       (ty ~= T_ACK and band(flags, F_DUP + F_SACKB + F_LOSS) ~= 0) then
        malformed[#malformed + 1] = "a tag or flag DUP/SACKB/LOSS on the wrong type"
    end
    for _, m in ipairs(malformed) do t:add_proto_expert_info(e.malformed, m) end

    local rec = track(tvb, pinfo, key, ty, flags, seq, ack)
    if rec.src ~= nil then t:add(f.src_rank_g, rec.src):set_generated() end
    if rec.dst ~= nil then t:add(f.dst_rank_g, rec.dst):set_generated() end
    if band(flags, F_RETX) ~= 0 then t:add_proto_expert_info(e.retx) end
    if ty == T_ACK and band(flags, F_DUP) ~= 0 then
        t:add_proto_expert_info(e.dup, "Duplicate report: segment " .. seq .. " arrived again")
    end
    if rec.acked then t:add_proto_expert_info(e.acked) end

    -- Info: "CHUNK seq=123 ack=45 len=1400 [RETX]"
    local info = type_names[ty]
    if ty == T_FRAG or ty == T_CHUNK or ty == T_PUT then
        info = string.format("%s seq=%u ack=%u len=%u", info, seq, ack, len)
    elseif ty == T_ACK then
        info = string.format("%s ack=%u sack=0x%08x wnd=%u", info, ack, sack, wnd)
        if band(flags, F_DUP) ~= 0 then info = info .. " dup=" .. seq end
        if band(flags, F_SACKB) ~= 0 then info = info .. " blocks=" .. math.floor(len / SACK_BLOCK_LEN) end
    elseif cap >= HDR_LEN + HELLO_LEN then
        info = string.format("%s rank=%u isn=%u", info, tvb(44, 4):uint(), tvb(72, 4):uint())
    end
    local shown = {}
    for _, fl in ipairs(flag_names) do
        if band(flags, fl[1]) ~= 0 and fl[1] ~= F_DUP and fl[1] ~= F_SACKB then shown[#shown + 1] = fl[2] end
    end
    if #shown > 0 then info = info .. " [" .. table.concat(shown, " ") .. "]" end
    return info
end

local function dissect_all(tvb, pinfo, tree, sizes)
    pinfo.cols.protocol = "BTLESP"
    local infos, off = {}, 0
    if #sizes > 1 then
        local g = tree:add(f.gso, #sizes)
        g:set_generated()
        g:append_text(string.format(" datagrams of %d bytes (a UDP GSO send, captured before segmentation)", sizes[1]))
    end
    for i, sz in ipairs(sizes) do
        local have = math.min(sz, tvb:len() - off)
        if have < HDR_LEN then
            infos[#infos + 1] = string.format("(%d more not captured)", #sizes - i + 1)
            break
        end
        infos[#infos + 1] = dissect(tvb:range(off, have):tvb(), pinfo, tree, pinfo.number .. ":" .. i)
        off = off + sz
    end
    pinfo.cols.info = table.concat(infos, ", ")
    return tvb:reported_length_remaining()
end

function p_esp.dissector(tvb, pinfo, tree)
    local sizes = split(tvb)
    if sizes == nil then return 0 end
    return dissect_all(tvb, pinfo, tree, sizes)
end

local function heuristic(tvb, pinfo, tree)
    local sizes = split(tvb)
    if sizes == nil then return false end
    dissect_all(tvb, pinfo, tree, sizes)
    return true
end

p_esp:register_heuristic("udp", heuristic)
