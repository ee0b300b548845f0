/* crm_emu_window.h -- the fixed virtual window holding emulated device memory.
 *
 * The emulated device (libcudarem-emu.so) places every device allocation inside
 * [CRM_EMU_WINDOW_BASE, CRM_EMU_WINDOW_BASE + CRM_EMU_WINDOW_SIZE) of the server
 * process. The client shim reserves the same range PROT_NONE, so a device pointer
 * handed to a client is never a valid client host pointer.
 *
 * A client that pools several servers (client/crm_pool.h) needs their device
 * addresses disjoint: it gives each session an address slot, and the emulated
 * device of that session places its window at slot * CRM_EMU_WINDOW_SIZE above the
 * base (CUDAREM_EMU_SLOT, read at the first allocation). Slot 0 is the default.
 */
#ifndef CRM_EMU_WINDOW_H
#define CRM_EMU_WINDOW_H

#include <stdint.h>

#define CRM_EMU_WINDOW_BASE ((uintptr_t)0x200000000000ULL) /* 32 TiB */
#define CRM_EMU_WINDOW_SIZE ((uintptr_t)0x10000000000ULL)  /* 1 TiB */

#define CRM_EMU_SLOTS 16u                                          /* 16 TiB in all */
#define CRM_EMU_SPAN ((uintptr_t)CRM_EMU_SLOTS * CRM_EMU_WINDOW_SIZE)

/* First address of the window in address slot `slot` (< CRM_EMU_SLOTS). */
static inline uintptr_t crm_emu_slot_base(unsigned slot)
{
    return CRM_EMU_WINDOW_BASE + (uintptr_t)slot * CRM_EMU_WINDOW_SIZE;
}

/* Returns 1 when address p lies inside the window of any slot. */
static inline int crm_emu_in_window(const void *p)
{
    uintptr_t a = (uintptr_t)p;
    return a >= CRM_EMU_WINDOW_BASE && a - CRM_EMU_WINDOW_BASE < CRM_EMU_SPAN;
}

#endif
