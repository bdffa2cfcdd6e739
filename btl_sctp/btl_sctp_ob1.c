/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * Recognising ob1's header in a fragment the BTL is about to send
 * (layout: btl_sctp_ob1.h). A header counts as ob1's only if the BTL tag
 * is one of ob1's, hdr_type repeats it, hdr_flags has no unknown bit, and
 * the fragment is at least as long as that header type; anything else is
 * BSCTP_OB1_NONE. No byte past len is read.
 */
#include "btl_sctp_ob1.h"

#include <arpa/inet.h>
#include <string.h>

static uint16_t get16(const uint8_t *p, size_t off, int nbo)
{
    uint16_t v;
    memcpy(&v, p + off, sizeof(v));
    return nbo ? ntohs(v) : v;
}

static int32_t get32(const uint8_t *p, size_t off, int nbo)
{
    uint32_t v;
    memcpy(&v, p + off, sizeof(v));
    return (int32_t) (nbo ? ntohl(v) : v);
}

static uint64_t get64(const uint8_t *p, size_t off)
{
    uint64_t v;   /* pointers: never converted by ob1, so taken as they are */
    memcpy(&v, p + off, sizeof(v));
    return v;
}

/* Least length of each header type (its fixed part). */
static size_t min_len(uint8_t type)
{
    switch (type) {
    case BSCTP_OB1_MATCH:
        return BSCTP_OB1_MATCH_LEN;
    case BSCTP_OB1_RNDV:
        return sizeof(bsctp_ob1_rndv_t);
    case BSCTP_OB1_RGET:
        return sizeof(bsctp_ob1_rget_t);
    case BSCTP_OB1_FRAG:
        return sizeof(bsctp_ob1_frag_t);
    case BSCTP_OB1_ACK:
        return sizeof(bsctp_ob1_ack_t);
    case BSCTP_OB1_PUT:
        return sizeof(bsctp_ob1_rdma_t);
    case BSCTP_OB1_FIN:
        return sizeof(bsctp_ob1_fin_t);
    case BSCTP_OB1_NACK:
    case BSCTP_OB1_GET:
        return 2;   /* not sent by ob1 4.1 over a send-only BTL; layout not relied on */
    default:
        return 0;
    }
}

enum bsctp_ob1_kind bsctp_ob1_parse(uint8_t btl_tag, const void *data, size_t len,
                                  bsctp_ob1_info_t *out)
{
    const uint8_t *p = data;
    memset(out, 0, sizeof(*out));
    size_t need = min_len(btl_tag);
    if (need == 0 || data == NULL || len < need) {
        return BSCTP_OB1_NONE;
    }
    if (p[0] != btl_tag || (p[1] & ~BSCTP_OB1_FLAGS_KNOWN) != 0) {
        return BSCTP_OB1_NONE;
    }
    int nbo = (p[1] & BSCTP_OB1_FLAG_NBO) != 0;
    out->type = p[0];
    out->flags = p[1];
    switch (btl_tag) {
    case BSCTP_OB1_MATCH:
    case BSCTP_OB1_RNDV:
    case BSCTP_OB1_RGET:
        out->ctx = get16(p, BSCTP_OB1_OFF_CTX, nbo);
        out->src = get32(p, BSCTP_OB1_OFF_SRC, nbo);
        out->tag = get32(p, BSCTP_OB1_OFF_TAG, nbo);
        out->seq = get16(p, BSCTP_OB1_OFF_SEQ, nbo);
        return BSCTP_OB1_ENVELOPE;
    case BSCTP_OB1_FRAG:
        out->key = get64(p, BSCTP_OB1_OFF_FRAG_DST_REQ);
        break;
    case BSCTP_OB1_ACK:
        out->key = get64(p, BSCTP_OB1_OFF_ACK_DST_REQ);
        break;
    case BSCTP_OB1_PUT:
        out->key = get64(p, BSCTP_OB1_OFF_PUT_REQ);
        break;
    case BSCTP_OB1_FIN:
        out->key = get64(p, BSCTP_OB1_OFF_FIN_FRAG);
        break;
    default:
        break;
    }
    return BSCTP_OB1_OTHER;
}
