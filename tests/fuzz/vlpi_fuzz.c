// SPDX-License-Identifier: MIT
/* The vLPI report's inputs: debugfs vgic-state, vgic-its-state and /proc/interrupts text. The
 * first byte picks the parser; what it returns is then looked up as the report does. */
#include "arm64/gic/vlpi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *text = (const char *)data + 1;
	size_t len = size - 1;

	if (size < 1)
		return 0;
	switch (data[0] % 3) {
	case 0: {
		struct vgic_state st;

		if (vgic_state_parse(text, len, &st) == 0)
			vgic_state_free(&st);
		break;
	}
	case 1: {
		struct its_state st;

		if (its_state_parse(text, len, &st) == 0) {
			for (size_t i = 0; i < st.nr; i++)
				its_state_find(&st, st.ite[i].devid, st.ite[i].event);
			its_state_find(&st, 0x10, 0);
			its_state_free(&st);
		}
		break;
	}
	case 2: {
		struct proc_interrupts pi;

		if (proc_interrupts_parse(text, len, &pi) == 0) {
			for (int v = -1; v < 4; v++) {
				proc_interrupts_vfio(&pi, "0000:00:13.0", IRQ_LINE_VFIO_MSIX, v);
				proc_interrupts_vfio(&pi, "0000:00:13.0", IRQ_LINE_VFIO_MSI, v);
			}
			proc_interrupts_vfio(&pi, "0000:00:13.0", IRQ_LINE_VFIO_INTX, 0);
			proc_interrupts_free(&pi);
		}
		break;
	}
	}
	return 0;
}
