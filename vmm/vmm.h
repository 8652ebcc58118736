/* SPDX-License-Identifier: MIT */
/* Temporary umbrella over the core's headers, for code not yet converted to include what it uses.
 * New code includes the headers it needs (vmm/vm.h, vmm/pci.h, ...). */
#ifndef VMM_VMM_H
#define VMM_VMM_H

#include "vmm/log.h"
#include "vmm/kvm.h"
#include "vmm/kvm_seam.h"
#include "vmm/bus.h"
#include "vmm/mem.h"
#include "vmm/config.h"
#include "vmm/console.h"
#include "vmm/uart.h"
#include "vmm/pvpanic.h"
#include "vmm/term.h"
#include "vmm/pci.h"
#include "vmm/msix.h"
#include "vmm/irq.h"
#include "vmm/vcpu.h"
#include "vmm/vm.h"
#include "vmm/run.h"

#endif
