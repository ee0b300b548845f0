/* crm_emu_window.h -- the fixed virtual window holding emulated device memory.
 *
 * The emulated device (libcudarem-emu.so) places every device allocation inside
 * [CRM_EMU_WINDOW_BASE, CRM_EMU_WINDOW_BASE + CRM_EMU_WINDOW_SIZE) of the server
 * process. The client shim reserves the same range PROT_NONE, so a device pointer
 * handed to a client is never a valid client host pointer.
 */
#ifndef CRM_EMU_WINDOW_H
#define CRM_EMU_WINDOW_H

#include <stdint.h>

#define CRM_EMU_WINDOW_BASE ((uintptr_t)0x200000000000ULL) /* 32 TiB */
#define CRM_EMU_WINDOW_SIZE ((uintptr_t)0x10000000000ULL)  /* 1 TiB */

/* Returns 1 when address p lies inside the emulated device window. */
static inline int crm_emu_in_window(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return a >= CRM_EMU_WINDOW_BASE && a - CRM_EMU_WINDOW_BASE < CRM_EMU_WINDOW_SIZE;
}

#endif
