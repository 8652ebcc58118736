// SPDX-License-Identifier: MIT
/* The arch table for a build whose architecture boots no guests yet (x86_64 until x86/ lands):
 * vmm caps works, vmm run says what is missing. */
#include <stddef.h>

#include "vmm/arch.h"

const struct arch_ops *arch_native(void)
{
	return NULL;
}
