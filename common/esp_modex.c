/* Modex address records: encode for publication, decode untrusted bytes. */
#include "esp_modex.h"

#include <arpa/inet.h>
#include <string.h>

size_t esp_modex_size(size_t count)
{
    return sizeof(esp_modex_wire_header_t) + count * sizeof(esp_modex_wire_addr_t);
}

static uint64_t hton64(uint64_t v)
{
    return ((uint64_t) htonl((uint32_t) v) << 32) | htonl((uint32_t) (v >> 32));
}

size_t esp_modex_encode(enum esp_modex_kind kind, uint64_t epoch, const esp_modex_addr_t *addrs,
                        size_t count, void *buf, size_t buflen)
{
    if (count == 0 || count > ESP_MODEX_MAX_ADDRS || buflen < esp_modex_size(count)) {
        return 0;
    }
    esp_modex_wire_header_t h = {
        .magic = htonl(ESP_MODEX_MAGIC),
        .version = ESP_MODEX_VERSION,
        .kind = (uint8_t) kind,
        .count = htons((uint16_t) count),
        .epoch = hton64(epoch),
    };
    unsigned char *p = buf;
    memcpy(p, &h, sizeof(h));
    p += sizeof(h);
    for (size_t i = 0; i < count; i++) {
        esp_modex_wire_addr_t w = {
            .family = addrs[i].family,
            .prefixlen = addrs[i].prefixlen,
            .port = htons(addrs[i].port),
            .mtu = htonl(addrs[i].mtu),
            .net_id = htons(addrs[i].net_id),
            .port2 = htons(addrs[i].port2),
        };
        memcpy(w.addr, addrs[i].addr, sizeof(w.addr));
        memcpy(p, &w, sizeof(w));
        p += sizeof(w);
    }
    return esp_modex_size(count);
}

int esp_modex_decode(enum esp_modex_kind kind, const void *buf, size_t buflen,
                     esp_modex_addr_t *addrs, size_t max, uint64_t *epoch)
{
    esp_modex_wire_header_t h;
    if (buf == NULL || buflen < sizeof(h)) {
        return -1;
    }
    memcpy(&h, buf, sizeof(h));
    size_t count = ntohs(h.count);
    if (ntohl(h.magic) != ESP_MODEX_MAGIC || h.version != ESP_MODEX_VERSION || h.kind != kind
        || count == 0 || count > ESP_MODEX_MAX_ADDRS || count > max
        || buflen != esp_modex_size(count)) {
        return -1;
    }
    const unsigned char *p = (const unsigned char *) buf + sizeof(h);
    for (size_t i = 0; i < count; i++, p += sizeof(esp_modex_wire_addr_t)) {
        esp_modex_wire_addr_t w;
        memcpy(&w, p, sizeof(w));
        unsigned maxlen = w.family == 4 ? 32 : 128;
        if ((w.family != 4 && w.family != 6) || w.prefixlen > maxlen || w.port == 0) {
            return -1;
        }
        addrs[i] = (esp_modex_addr_t) {
            .family = w.family,
            .prefixlen = w.prefixlen,
            .port = ntohs(w.port),
            .mtu = ntohl(w.mtu),
            .net_id = ntohs(w.net_id),
            .port2 = ntohs(w.port2),
        };
        memcpy(addrs[i].addr, w.addr, sizeof(w.addr));
    }
    *epoch = hton64(h.epoch);
    return (int) count;
}
