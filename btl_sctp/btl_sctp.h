/*
 * btl sctp: MPI over SCTP on the userspace stack usrsctp.
 * Component and module types; see docs/architecture.md for the layers
 * (stack / association / streams / btl) this directory will grow into.
 */
#ifndef MCA_BTL_SCTP_H
#define MCA_BTL_SCTP_H

#include <opal_config.h>
#include <opal/mca/btl/btl.h>

#include "esp_btl_base.h"
#include "esp_ifsel.h"
#include "esp_mca.h"

/* How usrsctp is driven (btl_sctp_mode). */
enum mca_btl_sctp_mode {
    SCTP_MODE_CONN = 0, /* AF_CONN, no stack threads, one path per association */
    SCTP_MODE_INET = 1  /* threaded stack over UDP encapsulation: multihoming, CMT */
};

/* Socket style (btl_sctp_style). */
enum mca_btl_sctp_style {
    SCTP_STYLE_ONE_TO_ONE = 0,  /* a socket per peer, a module per NIC */
    SCTP_STYLE_ONE_TO_MANY = 1  /* one socket and one module for all peers */
};

typedef struct mca_btl_sctp_module {
    esp_btl_module_t base;      /* endpoints, lock, error callback */
    esp_if_t *ifaces;           /* one (one-to-one) or all (one-to-many) local addresses */
    size_t num_ifaces;
} mca_btl_sctp_module_t;

typedef struct mca_btl_sctp_component {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters (btl_sctp_component.c) */
    esp_mca_ifaces_t ifaces;     /* if_include/if_exclude and what they selected */
    char *mode_name;
    char *style_name;
    enum mca_btl_sctp_mode mode;
    enum mca_btl_sctp_style style;
} mca_btl_sctp_component_t;

OPAL_MODULE_DECLSPEC extern mca_btl_sctp_component_t mca_btl_sctp_component;

/* Template every module starts from; holds the btl_sctp_* base parameters. */
extern mca_btl_sctp_module_t mca_btl_sctp_module_template;

int mca_btl_sctp_module_init(mca_btl_sctp_module_t *module, esp_if_t *ifaces, size_t count);

#endif
