/* crm_emu_dnn_desc.c -- cuDNN descriptors of the emulated device: plain structs
 * (server/emu/crm_emu_dnn.h) with the functions shared with the shim. */
#include "server/emu/crm_emu_dnn.h"

#include "common/crm_dnn_desc_api.c.inc"
#include "common/crm_dnn_lrn_api.c.inc"
#include "common/crm_dnn_reduce_api.c.inc"
#include "common/crm_dnn_st_api.c.inc"
