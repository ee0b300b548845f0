/* crm_managed_fault.h -- the program's touches of managed memory
 * (client/crm_managed.h) arrive as SIGSEGV: this module installs the handler, hands
 * every fault that is not managed memory's to the handler the program (or its
 * runtime: Python's faulthandler, a JVM) installed, before or after us, and owns
 * the address window managed memory is mapped into. */
#ifndef CRM_MANAGED_FAULT_H
#define CRM_MANAGED_FAULT_H

#include <signal.h>
#include <stdint.h>

/* Installs the handler once; 0, or -1 when it cannot be. */
int crm_managed_fault_install(void);
/* The program's sigaction for SIGSEGV once ours is installed: its handler is kept
 * and called for faults that are not ours; *old gets the one it replaces. */
int crm_managed_fault_chain(const struct sigaction *act, struct sigaction *old);
/* 1 once the handler is installed (read it atomically). */
extern int crm_managed_fault_on;
int crm_managed_fault_installed(void);
/* libc's sigaction (its __sigaction), whatever this library exports in its place. */
int crm_managed_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* crm_init.c reserved the device address window at load (1) or could not (0). */
void crm_managed_window_note(int ours);
/* 1 when device addresses can be mapped here. */
int crm_managed_window_ours(void);
/* Gives [base, base + len) back to the reservation (no access, no memory). */
void crm_managed_window_restore(uint64_t base, uint64_t len);

/* In client/crm_managed.c: resolves a fault at addr (write: 1, 0 read, -1 not
 * known). 1 handled, 0 not managed memory, -1 managed but it cannot be served. */
int crm_managed_fault(uint64_t addr, int write);

#endif
