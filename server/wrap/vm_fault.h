/* vm_fault.h - whose fault a libvirt error is: the host's own or the
 * guest's and its kernel's (vm_fault.c holds the table). Part of the vm
 * wrapper: vm.c asks it of each error that stops a guest from starting. */
#ifndef KC_VM_FAULT_H
#define KC_VM_FAULT_H

#include <stdbool.h>

/*
 * vm_fault_is_host - whether a libvirt error (virError's code, domain and
 * message; message may be NULL) is the host's own fault rather than the
 * guest's: a failed system call on the host (a console's lock file, a pty,
 * a path the daemon may not write), its storage pool or volume gone, its
 * lock manager, security driver or cgroups, its daemon timing out, a lost
 * connection. A run that fails so is 'infra' and runs again, and the host
 * is charged (lab.h), not the kernel. The table, with where each entry
 * comes from in libvirt, is vm_fault.c. vm_fault_last_is_host() asks it of
 * this thread's last libvirt error.
 */
bool vm_fault_is_host(int code, int domain, const char *message);
bool vm_fault_last_is_host(void);

#endif
