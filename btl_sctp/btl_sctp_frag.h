/* sctp fragment descriptors handed to and from ob1. */
#ifndef MCA_BTL_SCTP_FRAG_H
#define MCA_BTL_SCTP_FRAG_H

#include <opal_config.h>
#include <opal/mca/btl/btl.h>

#include <stdint.h>

typedef struct mca_btl_sctp_frag {
    mca_btl_base_descriptor_t base;
    mca_btl_base_segment_t segment;
    struct mca_btl_base_endpoint_t *endpoint;
    uint16_t stream;       /* SCTP stream chosen from the MPI context/tag */
    size_t capacity;       /* bytes of payload space after the descriptor */
} mca_btl_sctp_frag_t;
OBJ_CLASS_DECLARATION(mca_btl_sctp_frag_t);

#endif
