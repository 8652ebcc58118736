// SPDX-License-Identifier: MIT
/* kvm_error.h: the words for a KVM internal-error exit. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/hot.h"
#include "core/kvm_error.h"

/* Appends to buf at *at, never past len; *at stops at len - 1 when it is full. */
VMM_HOT static void put(char *buf, size_t len, size_t *at, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*at + 1 >= len)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *at, len - *at, fmt, ap);
	va_end(ap);
	if (n > 0)
		*at = *at + (size_t)n < len ? *at + (size_t)n : len - 1;
}

static const char *suberror_words(uint32_t s)
{
	switch (s) {
	case KVM_INTERNAL_ERROR_EMULATION: return "an instruction KVM had to emulate and could not";
	case KVM_INTERNAL_ERROR_SIMUL_EX: return "an exception while delivering another";
	case KVM_INTERNAL_ERROR_DELIVERY_EV: return "an event KVM could not deliver";
	case KVM_INTERNAL_ERROR_UNEXPECTED_EXIT_REASON: return "an exit KVM did not expect from the hardware";
	default: return "a suberror this vmm does not know";
	}
}

VMM_HOT uint32_t kvm_internal_error_describe(const struct kvm_run *run, int id, const struct kvm_error_pc *pc,
				     const char *note, char *buf, size_t len)
{
	uint32_t sub = run->internal.suberror;
	size_t at = 0;

	if (!len)
		return sub;
	buf[0] = 0;
	if (sub == KVM_INTERNAL_ERROR_EMULATION) {
		put(buf, len, &at, "vCPU %d: KVM could not run the guest: emulation failure "
		    "(KVM_INTERNAL_ERROR_EMULATION)", id);
		if (pc && pc->name)
			put(buf, len, &at, " at %s 0x%llx", pc->name, (unsigned long long)pc->value);
		if (run->emulation_failure.flags & KVM_INTERNAL_ERROR_EMULATION_FLAG_INSTRUCTION_BYTES) {
			size_t n = run->emulation_failure.insn_size;

			if (n > sizeof(run->emulation_failure.insn_bytes))
				n = sizeof(run->emulation_failure.insn_bytes);
			put(buf, len, &at, ", instruction bytes");
			for (size_t i = 0; i < n; i++)
				put(buf, len, &at, " %02x", run->emulation_failure.insn_bytes[i]);
			if (!n)
				put(buf, len, &at, " (none fetched)");
		} else {
			put(buf, len, &at, " (KVM reported no instruction bytes)");
		}
	} else {
		uint32_t nd = run->internal.ndata;

		if (nd > sizeof(run->internal.data) / sizeof(run->internal.data[0]))
			nd = sizeof(run->internal.data) / sizeof(run->internal.data[0]);
		put(buf, len, &at, "vCPU %d: KVM could not run the guest: internal error, suberror %u (%s)", id,
		    sub, suberror_words(sub));
		if (pc && pc->name)
			put(buf, len, &at, " at %s 0x%llx", pc->name, (unsigned long long)pc->value);
		for (uint32_t i = 0; i < nd; i++)
			put(buf, len, &at, "%s0x%llx", i ? " " : ", data ", (unsigned long long)run->internal.data[i]);
	}
	if (note)
		put(buf, len, &at, "; %s", note);
	return sub;
}

void kvm_shutdown_describe(int id, const struct kvm_error_pc *pc, char *buf, size_t len)
{
	size_t at = 0;

	if (!len)
		return;
	buf[0] = 0;
	put(buf, len, &at, "vCPU %d: the guest triple-faulted (KVM_EXIT_SHUTDOWN)", id);
	if (pc && pc->reset)
		put(buf, len, &at, "; where is lost: KVM re-initialised the vCPU before reporting it "
				   "(its registers read back as the reset state, as kvm_amd leaves them)");
	else if (pc && pc->name)
		put(buf, len, &at, " at %s 0x%llx", pc->name, (unsigned long long)pc->value);
	put(buf, len, &at, "; a PC resets on that, so vmm stops it as a reset");
}
