/*
 * Copyright (c) 2026 The ompi-esp-sctp authors. All rights reserved.
 * SPDX-License-Identifier: BSD-3-Clause (see LICENSE)
 */
/*
 * sctp fragment descriptors handed to and from ob1. The payload room
 * follows the descriptor, with the 8-byte message header just before it
 * (the list's header room), so a fragment goes to usrsctp_sendv as one
 * buffer without a copy. A large contiguous payload stays in the user's
 * buffer instead, as a second segment (ob1 counts the bytes a send
 * delivered from the segments): the fragment is then two pieces of one
 * SCTP message. The lists and alloc/free/prepare_src are common/ebtl_frag's.
 */
#ifndef MCA_BTL_SCTP_FRAG_H
#define MCA_BTL_SCTP_FRAG_H

#include <opal_config.h>

#include <stdint.h>

#include "btl_sctp_hdr.h"
#include "ebtl_frag.h"

typedef struct mca_btl_sctp_frag {
    ebtl_frag_t super;            /* super.held: waiting in the module's pending list */
    uint8_t tag;
    uint16_t sid;                 /* the SCTP stream it goes on (chosen once, at send) */
} mca_btl_sctp_frag_t;

#endif
