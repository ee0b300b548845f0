/* crm_zshape.c -- the choice between a zstd level's parameters and the LEAN set. */
#include <math.h>
#include "protocol/crm_zshape.h"

int crm_zshape_due(crm_zshape *z, uint64_t raw, uint64_t stored)
{
    double ratio = raw > 0 ? (double)stored / (double)raw : 1.0;
    if (z->until_check > 0 && fabs(ratio - z->ratio) <= CRM_ZSHAPE_SHIFT) {
        z->until_check--;
        return 0;
    }
    z->until_check = CRM_ZSHAPE_CHECK - 1;
    return 1;
}

void crm_zshape_payload(crm_zshape *z)
{
    z->until_check = 0;
}

void crm_zshape_checked(crm_zshape *z, uint64_t raw, uint64_t level_bytes, uint64_t lean_bytes)
{
    if (lean_bytes >= level_bytes)
        z->set = CRM_ZSHAPE_LEVEL;
    else if ((double)lean_bytes <= (1.0 - CRM_ZSHAPE_MARGIN) * (double)level_bytes)
        z->set = CRM_ZSHAPE_LEAN;
    uint64_t kept = z->set == CRM_ZSHAPE_LEAN ? lean_bytes : level_bytes;
    z->ratio = raw > 0 ? (double)kept / (double)raw : 1.0;
}
