/*
 * btl esp: a reliable streaming protocol over unreliable datagrams.
 * Component and module types; see docs/architecture.md for the layers
 * (wire / proto / btl) this directory will grow into.
 */
#ifndef MCA_BTL_ESP_H
#define MCA_BTL_ESP_H

#include <opal_config.h>
#include <opal/mca/btl/btl.h>

#include "esp_btl_base.h"
#include "esp_ifsel.h"
#include "esp_mca.h"

/* Datagram backends the wire layer can use (btl_esp_wire). */
enum mca_btl_esp_wire { ESP_WIRE_UDP = 0, ESP_WIRE_OFI = 1, ESP_WIRE_ETH = 2 };

typedef struct mca_btl_esp_module {
    esp_btl_module_t base;               /* endpoints, lock, error callback */
    esp_if_t iface;                      /* the local address this module sends from */
} mca_btl_esp_module_t;

typedef struct mca_btl_esp_component {
    mca_btl_base_component_3_0_0_t super;

    /* MCA parameters (btl_esp_component.c) */
    esp_mca_ifaces_t ifaces;     /* if_include/if_exclude and what they selected */
    char *wire_name;
    enum mca_btl_esp_wire wire;
} mca_btl_esp_component_t;

OPAL_MODULE_DECLSPEC extern mca_btl_esp_component_t mca_btl_esp_component;

/* Template every module starts from; holds the btl_esp_* base parameters. */
extern mca_btl_esp_module_t mca_btl_esp_module_template;

int mca_btl_esp_module_init(mca_btl_esp_module_t *module, const esp_if_t *iface);

#endif
