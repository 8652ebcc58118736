/* SPDX-License-Identifier: MIT */
/* The GSI routing table vmm owns and commits whole; irqfds, ioeventfds and lines. */
#ifndef VMM_IRQ_H
#define VMM_IRQ_H

#include <linux/kvm.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

struct vm;

#define IRQ_MAX_ROUTES 1024
#define IRQ_MAX_USER_RESAMPLE 32

/* A resamplefd vmm signals itself (see irq_user_resample). */
struct irq_resample {
	uint32_t gsi;
	int fd;
};

struct irq_routing {
	pthread_mutex_t lock;
	struct kvm_irq_routing_entry e[IRQ_MAX_ROUTES];
	int nr;
	uint32_t next_gsi;
	atomic_uint_fast64_t commits;
	/* x86's split irqchip: KVM takes no resamplefd (its irqfd code allows one with the full
	 * in-kernel irqchip only), so level irqfds keep theirs here and the userspace IOAPIC
	 * signals it when the guest EOIs the line, as KVM's own IOAPIC would */
	bool user_resample;
	struct irq_resample resample[IRQ_MAX_USER_RESAMPLE];
	int nr_resample;
	atomic_uint_fast64_t resample_notifies;
};

/* Starts the table with identity irqchip routes for GSIs [0, n) (on arm64: SPI n = INTID 32 + n). */
int irq_routing_init(struct vm *vm, uint32_t nr_irqchip_gsis);
/* The same with the routes on KVM irqchip id chip (x86: KVM_IRQCHIP_IOAPIC). */
int irq_routing_init_chip(struct vm *vm, uint32_t nr_irqchip_gsis, uint32_t chip);
/* Starts the table empty with GSIs [0, n) kept for routes the board programs itself (x86's
 * userspace IOAPIC: pin n is GSI n, an MSI route while the guest has the pin unmasked). */
int irq_routing_init_reserved(struct vm *vm, uint32_t nr_reserved_gsis);
int irq_gsi_alloc(struct vm *vm);
void irq_msi_entry(const struct vm *vm, struct kvm_irq_routing_entry *e, uint32_t gsi, uint64_t addr,
		   uint32_t data, uint32_t devid);
/* Adds, replaces (e != NULL) or removes (e == NULL) the route of gsi in the table only. */
int irq_table_set(struct irq_routing *rt, uint32_t gsi, const struct kvm_irq_routing_entry *e);
/* irq_table_set(), then commits the whole table with KVM_SET_GSI_ROUTING. */
int irq_route_update(struct vm *vm, uint32_t gsi, const struct kvm_irq_routing_entry *e);
/* resample_fd >= 0: a level irqfd whose resamplefd is signalled when the guest EOIs gsi (by KVM,
 * or with user_resample by irq_resample_notify). */
int irq_irqfd(struct vm *vm, int fd, uint32_t gsi, int resample_fd, bool assign);
/* user_resample: signals the resamplefd registered on gsi, if any (1 if one was signalled). */
int irq_resample_notify(struct vm *vm, uint32_t gsi);
int irq_ioeventfd(struct vm *vm, uint64_t addr, uint32_t len, int fd, bool assign);
/* Drives an interrupt line (KVM_IRQ_LINE's encoding, chosen by the board). */
int irq_line(struct vm *vm, uint32_t irq, bool level);

#endif
