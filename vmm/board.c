// SPDX-License-Identifier: MIT
/*
 * The generic board lifecycle, the same for every architecture, in the order KVM wants:
 *   VM (arch's type) -> RAM -> arch vm_init (irqchip) -> console, pvpanic, UART -> vCPUs (arch
 *   vcpu_init) -> arch irqchip_init -> routing table, PCI host, virtio devices -> kernel and
 *   initrd mapped (board_load.c), arch load (placement, FDT, boot registers) -> device workers ->
 *   run -> summary.
 * PCI devices come after irqchip_init: their MSI routes and irqfds need the initialised irqchip.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/hot.h"
#include "vfio/vfio.h"
#include "virtio/virtio.h"
#include "vmm/board.h"
#include "vmm/boot_quiet.h"
#include "core/host_mem.h"
#include "core/irq.h"
#include "core/kvm.h"
#include "core/log.h"
#include "core/mem.h"
#include "vmm/run.h"
#include "vmm/vcpu_state.h"
#include "core/vcpu.h"

static void board_line(struct board *b, uint32_t line, bool level)
{
	const struct arch_ops *arch = b->machine.arch;

	if (arch->set_line)
		arch->set_line(&b->machine, line, level);
	else
		irq_line(&b->vm, arch->line_irq(line), level);
}

VMM_HOT static void uart_irq(void *opaque, bool level)
{
	struct board *b = opaque;

	board_line(b, b->machine.arch->layout->uart_line, level);
}

VMM_HOT static void board_intx(void *opaque, unsigned int slot, bool level)
{
	struct board *b = opaque;

	board_line(b, b->machine.arch->layout->intx_line_base + slot, level);
}

/* The routing table starts with identity irqchip routes for the board's lines: line n is GSI n. */
VMM_HOT static int board_intx_gsi(void *opaque, unsigned int slot)
{
	struct board *b = opaque;

	return b->machine.arch->layout->intx_line_base + slot;
}

/* What every board checks; the arch checks its own memory map in vm_init. */
static int check_limits(struct board *b, const struct vm_config *c)
{
	int max = kvm_check_ext(b->vm.fd, KVM_CAP_MAX_VCPUS);
	long host_cpus = sysconf(_SC_NPROCESSORS_ONLN);
	uint64_t host_mem = (uint64_t)sysconf(_SC_PHYS_PAGES) * sysconf(_SC_PAGESIZE);

	if (max > 0 && c->nr_cpus > (unsigned int)max) {
		pr_err("-c %u: KVM on this host allows at most %d vCPUs per VM", c->nr_cpus, max);
		return -EINVAL;
	}
	if (c->nr_cpus > b->machine.arch->max_vcpus) {
		pr_err("-c %u: %s", c->nr_cpus, b->machine.arch->max_vcpus_why);
		return -EINVAL;
	}
	if (host_cpus > 0 && c->nr_cpus > (unsigned long)host_cpus)
		pr_warn("-c %u is more vCPUs than the host's %ld online CPUs: latency figures will suffer",
			c->nr_cpus, host_cpus);
	if (host_mem && c->mem_size > host_mem) {
		pr_err("-m %lluM is more than the host's %llu MiB of RAM",
		       (unsigned long long)(c->mem_size >> 20), (unsigned long long)(host_mem >> 20));
		return -EINVAL;
	}
	return 0;
}

/* Guest RAM as the arch lays it out: one memslot per range. */
static int board_ram(struct board *b, const struct vm_config *c)
{
	const struct arch_ops *arch = b->machine.arch;
	struct ram_range ram[ARCH_RAM_RANGES] = { { arch->layout->ram_base, c->mem_size } };
	int n = arch->ram_plan ? arch->ram_plan(c->mem_size, ram) : 1;

	for (int i = 0, r; i < n; i++)
		if ((r = vm_mem_add(&b->vm, ram[i].gpa, ram[i].size)) < 0)
			return r;
	return n < 0 ? n : 0;
}

static int board_add(struct board *b, struct virtio_dev *d)
{
	if (!d) /* its create function said why */
		return -ENODEV;
	b->vdev[b->nr_vdev++] = d;
	return 0;
}

VMM_HOT static void board_console_write(void *opaque, const uint8_t *buf, size_t len)
{
	console_out_write(opaque, buf, len);
}

/* Linux's hvc0 starts printing when virtio-console probes, and the log from before is not replayed
 * there (the driver registers the console before its port can write: a verbose lab boot shows 1.8k
 * of its 17.4k bytes): a guest that ended with nothing on hvc0 died earlier, or lacks the driver. */
static void board_console_hint(struct board *b, const struct vm_config *c, int code)
{
	uint64_t bytes;

	if (c->console != CONSOLE_VIRTIO || code == VM_EXIT_ERROR || code >= 128)
		return;
	pthread_mutex_lock(&b->out.lock);
	bytes = b->out.bytes;
	pthread_mutex_unlock(&b->out.lock);
	if (!bytes)
		pr_warn("the guest wrote nothing to its console (hvc0, virtio-console): a kernel that stops "
			"before its virtio drivers start, or one without CONFIG_VIRTIO_CONSOLE=y, shows its "
			"messages only on the 16550: run again with --console serial");
}

static int board_devices(struct board *b, const struct vm_config *c)
{
	const struct board_layout *l = b->machine.arch->layout;
	int r = b->machine.arch->routing_init ? b->machine.arch->routing_init(&b->machine)
				      : irq_routing_init_chip(&b->vm, l->nr_irqchip_gsis, l->irqchip);

	if (r < 0 || (r = pci_host_init(&b->pci, &b->vm, &l->pci)) < 0)
		return r;
	b->pci.set_intx = board_intx;
	b->pci.intx_gsi = board_intx_gsi;
	b->pci.intx_opaque = b;
	/* the probe's port: beside the console on its virtio-console, else on a device of its own */
	const struct virtio_console_port ports[] = {
		{ .console = true, .write = board_console_write, .opaque = &b->out },
		{ .name = PROBE_PORT_NAME, .write = probe_rx_port, .opaque = &b->probe },
	};

	if (c->console == CONSOLE_VIRTIO) {
		b->vconsole = b->probe_on ? virtio_console_create_ports(&b->vm, &b->pci, ports, 2, true)
					  : virtio_console_create(&b->vm, &b->pci, &b->out);
		if ((r = board_add(b, b->vconsole)) < 0)
			return r;
	} else if (b->probe_on &&
		   (r = board_add(b, virtio_console_create_ports(&b->vm, &b->pci, &ports[1], 1, true))) < 0) {
		return r;
	}
	for (unsigned int i = 0; i < c->nr_disks; i++)
		if ((r = board_add(b, virtio_blk_create(&b->vm, &b->pci, c->disk[i].path, c->disk[i].ro,
								   c->nr_cpus))) < 0)
			return r;
	for (unsigned int i = 0; i < c->nr_nets; i++) {
		struct virtio_net_opts o = {
			.tap = c->net[i].tap, .vhost = c->net[i].vhost,
			.vhost_dev = c->net[i].vhost_dev[0] ? c->net[i].vhost_dev : NULL,
		};

		memcpy(o.mac, c->net[i].mac, 6);
		if ((r = board_add(b, virtio_net_create(&b->vm, &b->pci, &o))) < 0)
			return r;
	}
	if (c->nr_vfio) {
		b->vfio_c = calloc(1, sizeof(*b->vfio_c));
		if (!b->vfio_c)
			return -ENOMEM;
		bool token = false;

		for (unsigned int i = 0; i < c->nr_vfio; i++)
			token |= c->vfio[i].token[0] != 0;
		if ((r = vfio_open(b->vfio_c, &b->vm, c->vfio_backend, token, NULL)) < 0) {
			free(b->vfio_c);
			b->vfio_c = NULL;
			return r;
		}
	}
	for (unsigned int i = 0; i < c->nr_vfio; i++) {
		const struct vfio_pci_opts o = { c->vfio[i].bdf, c->vfio[i].token[0] ? c->vfio[i].token : NULL,
						 c->vfio[i].slot, b->machine.arch };

		b->vfio[b->nr_vfio] = vfio_pci_create(b->vfio_c, &b->pci, &o);
		if (!b->vfio[b->nr_vfio])
			return -ENODEV; /* it said why; the device was reset and given back */
		b->nr_vfio++;
	}
	return 0;
}

unsigned int board_vfio_live(struct board *b)
{
	unsigned int live = 0;

	for (int i = 0; i < b->nr_vfio; i++)
		live += vfio_pci_live_vectors(b->vfio[i]);
	return live;
}

/* Passed-through devices: their lines of the exit summary, with the vLPI report, while the VM (and
 * its debugfs directory) still exists. */
static void board_vfio_summary(struct board *b)
{
	for (int i = 0; i < b->nr_vfio; i++) {
		vfio_pci_summary(b->vfio[i], stderr);
		if (b->vfio[i]->report[0])
			fprintf(stderr, "vmm: %s (while the guest ran)\n", b->vfio[i]->report);
		else
			fprintf(stderr, "vmm: vfio %s: no vLPI report: the guest never had its vectors live for "
				"a second\n", b->vfio[i]->bdf);
	}
}

static int board_build(struct board *b, const struct vm_config *c)
{
	struct machine *m = &b->machine;
	const struct arch_ops *arch = m->arch;
	const struct board_layout *l = arch->layout;
	unsigned long type;
	int r, kfd = kvm_open();

	if (kfd < 0)
		return kfd;
	r = arch->vm_type(kfd, &b->spec, &type);
	close(kfd);
	if (r < 0 || (r = vm_create(&b->vm, type)) < 0)
		return r;
	b->vm.sandbox = c->sandbox; /* vm_create zeroed the VM */
	b->vm.timeout = c->timeout;
	b->vm.machine = m;
	if ((r = check_limits(b, c)) < 0 || (r = board_ram(b, c)) < 0 || (r = arch->vm_init(m, &b->spec)) < 0)
		return r;
	boot_times_mark(&b->times, PHASE_VM_RAM);
	b->stats.vm = &b->vm;
	pthread_mutex_init(&b->irq_lock, NULL);
	r = console_out_init(&b->out, c->console == CONSOLE_NONE ? -1 : STDOUT_FILENO, vm_watch_panic,
			     &b->vm);
	if (r < 0)
		return r;
	if (config_wants_probe(c) || c->probe_out) {
		if ((r = probe_rx_init(&b->probe, c->probe_out)) < 0)
			return r;
		b->probe_on = true;
		/* the probe's lines when the guest has no port: decoded and counted all the same */
		b->out.on_text = probe_rx_console;
		b->out.text_opaque = &b->probe;
	}
	if (l->pvpanic_size) {
		pvpanic_init(&b->pvpanic, &b->vm);
		r = bus_register(&b->vm.mmio, l->pvpanic_base, l->pvpanic_size, pvpanic_mmio, &b->pvpanic,
				 "pvpanic");
		if (r < 0)
			return r;
	}
	/* The UART always exists (earlycon); it owns the terminal unless virtio-console does. */
	uart_init(&b->uart, c->console == CONSOLE_SERIAL ? &b->out : NULL, uart_irq, b);
	r = bus_register(l->uart_pio ? &b->vm.pio : &b->vm.mmio, l->uart_base, l->uart_size, uart_mmio,
			 &b->uart, "uart");
	if (r < 0)
		return r;
	for (unsigned int i = 0; i < c->nr_cpus; i++) {
		struct vcpu *v;

		if ((r = vcpu_create(&b->vm, i, &v)) < 0 || (r = arch->vcpu_init(m, v)) < 0)
			return r;
	}
	boot_times_mark(&b->times, PHASE_VCPUS);
	if ((r = arch->irqchip_init(m)) < 0)
		return r;
	vm_coalesced_init(&b->vm);
	r = uart_fast_init(&b->uart, &b->vm, l->uart_base, l->uart_size,
			   l->uart_pio ? "it is on port I/O, which no memslot can answer"
			   : kvm_check_ext(b->vm.fd, KVM_CAP_READONLY_MEM) ? NULL
			   : "KVM has no read-only memslots (KVM_CAP_READONLY_MEM)",
			   arch->publish_to_guest);
	if (r < 0)
		return r;
	/* the stats of the VM and every vCPU, and the halt-poll ceiling the user asked for */
	b->stats_open = hp_run_open(&b->stats, &b->vm) == 0;
	b->stats.vmm_json = board_vmm_json;
	b->stats.vmm_opaque = b;
	if (c->has_halt_poll_ns && (r = hp_ceiling_set(&b->stats, c->halt_poll_ns)) < 0)
		return r;
	return board_devices(b, c);
}

VMM_HOT static int ctl_set_halt_poll(void *opaque, uint64_t ns)
{
	struct board *b = opaque;

	return hp_ceiling_set(&b->stats, ns);
}

VMM_HOT static uint64_t ctl_get_halt_poll(void *opaque)
{
	struct board *b = opaque;

	return hp_ceiling_get(&b->stats);
}

VMM_HOT_VF static int ctl_write_state(void *opaque, FILE *f)
{
	struct board *b = opaque;

	fprintf(f, ",\"arch\":\"%s\",\"vcpus\":%d,\"vfio\":[", b->machine.arch->name, b->vm.nr_vcpus);
	for (int i = 0; i < b->nr_vfio; i++) { /* the per-vector vLPI report, as of now */
		if (i)
			fputc(',', f);
		vfio_pci_vlpi_json(b->vfio[i], board_vfio_live(b), f);
	}
	/* the host CPU the vCPU threads burned so far: what halt polling costs (vmm ab reads it) */
	if (b->stats_open) {
		fputs("],\"governor\":", f);
		hp_run_governor(&b->stats, f, true);
		fputs(",\"vcpu_cpu_ns\":[", f);
	} else {
		fputs("],\"vcpu_cpu_ns\":[", f);
	}
	for (int i = 0; i < b->vm.nr_vcpus; i++)
		fprintf(f, "%s%lld", i ? "," : "", (long long)vcpu_cpu_ns(b->vm.vcpus[i]));
	fputc(']', f);
	board_peer_json(b, f);
	return 0;
}

VMM_HOT static int ctl_set_poll_control(void *opaque, int vcpu, int on, char *err, size_t len)
{
	return board_poll_control(opaque, vcpu, on, err, len);
}

VMM_HOT static void ctl_write_poll_control(void *opaque, FILE *f)
{
	board_poll_control_json(opaque, f);
}

VMM_HOT static int ctl_write_stats(void *opaque, FILE *f)
{
	struct board *b = opaque;
	char *buf = NULL;
	size_t len = 0;
	FILE *m = b->stats_open ? open_memstream(&buf, &len) : NULL;

	if (!m)
		return b->stats_open ? -ENOMEM : -ENODATA;
	int e = hp_run_write_json(&b->stats, m, "now");

	fclose(m);
	/* KVM's stats, with vmm's own interrupt table added to the object */
	while (len && (buf[len - 1] == '\n' || buf[len - 1] == '}'))
		if (buf[--len] == '}')
			break;
	if (e == 0 && buf) {
		fwrite(buf, 1, len, f);
		fputs(",\"vmm\":{\"interrupts\":", f);
		board_irq_json(b, f);
		vcpu_state_json(b, f);
		fputs("}}", f);
	}
	free(buf);
	return e;
}

/* Any thread: the guest's boot has ended (its console's marker, or the probe's clock line). */
VMM_HOT_IDLE static void board_boot_end(void *opaque)
{
	struct board *b = opaque;

	if (b->stats_live)
		hp_run_mark_boot_end(&b->stats);
	if (!atomic_exchange(&b->release_due, true))
		vm_defer(&b->vm);
}

/* The main thread's deferred work: the stats' boot-end snapshot; once, start-up's memory given
 * back (the guest's steady state faults back in what it uses). */
VMM_HOT_IDLE static void board_deferred(void *opaque)
{
	struct board *b = opaque;

	if (b->stats_live)
		hp_run_deferred(&b->stats);
	board_unmap_files(b);
	if (atomic_load(&b->release_due))
		board_release(b, "boot-end marker");
}

/* Any thread: the probe's first COUNTER frame: --attribute collects from now */
static void board_probe_counter(void *opaque)
{
	struct board *b = opaque;

	attribute_go(&b->attr);
}

/* --attribute: the collector's thread, before the vCPUs (main's allowlist has no clone). 0, or -1
 * after a message. */
static int board_attribute(struct board *b, const struct vm_config *c)
{
	if (!c->attribute)
		return 0;
	if (!b->probe_on) {
		pr_err("--attribute splits the latency probe's samples into stages: give the probe its "
		       "workloads with vmm.probe=... in -p (vmm run --help; docs/running.md)");
		return -1;
	}
	struct attribute_opts o = { .json_path = c->attribute_json, .peer = b->peer.open ? &b->peer : NULL };

	for (int i = 0; i < b->nr_vfio && o.nr_vfio < ATTRIBUTE_VFIO_MAX; i++)
		o.vfio_bdf[o.nr_vfio++] = b->vfio[i]->bdf;
	b->probe.on_counter = board_probe_counter;
	b->probe.counter_opaque = b;
	return attribute_start(&b->attr, &b->vm, &b->machine, c->sandbox, &o) < 0 ? -1 : 0;
}

/* Everything that runs beside the vCPUs, started: the devices' workers, the control socket, the
 * probe's peer, the stats; and the hooks the running VM calls. 0, or -1 after a message. */
static int board_start(struct board *b, const struct vm_config *c)
{
	for (int i = 0; i < b->nr_vdev; i++)
		if (virtio_start(b->vdev[i]) < 0)
			return -1;
	boot_quiet_init(&b->quiet, BOOT_QUIET_NS, BOOT_QUIET_DEADLINE_NS);
	if (b->machine.arch->vcpu_vlpis) { /* the WFI policy decides whose idle shows as CPU time */
		struct hp_host h;

		hp_host_read(&h);
		b->wfi_policy = h.wfi;
	}
	b->vm.tick = board_tick;
	b->vm.tick_opaque = b;
	if (c->ctl) {
		const struct ctl_ops ops = {
			.set_halt_poll = ctl_set_halt_poll, .get_halt_poll = ctl_get_halt_poll,
			.write_state = ctl_write_state, .write_stats = ctl_write_stats, .opaque = b,
			.sandbox = c->sandbox, .set_poll_control = ctl_set_poll_control,
			.write_poll_control = ctl_write_poll_control,
		};

		const struct ctl_access access = { .group = c->has_ctl_gid, .gid = c->ctl_gid };

		if (ctl_server_start(&b->ctl, c->ctl, &access, &ops) < 0)
			return -1;
	}
	/* --attribute: the peer keeps its answers' times, the udp samples' targets */
	if (b->peer.open && c->attribute && probe_peer_log_answers(&b->peer, ATTRIBUTE_ANSWERS) < 0)
		return -1;
	if (b->peer.open && probe_peer_start(&b->peer, c->sandbox) < 0)
		return -1;
	b->stats_live = b->stats_open && hp_run_start(&b->stats) == 0;
	/* set before any vCPU runs: no lock needed. The hooks only mark the boot's end: they run on
	 * whichever thread wrote or drained the line (the console thread's allowlist reads no stats
	 * fd); the stats' snapshot and the start-up memory's release are the main thread's deferred
	 * work. */
	b->out.on_boot_end = board_boot_end;
	b->out.boot_opaque = b;
	b->probe.on_clock = board_boot_end; /* a guest whose probe talks over its port */
	b->probe.clock_opaque = b;
	b->vm.deferred = board_deferred;
	b->vm.deferred_opaque = b;
	if (b->stats_live && c->stats_interval_ms && hp_run_intervals(&b->stats, c->stats_interval_ms) < 0)
		return -1;
	return board_attribute(b, c);
}

/* The run's reports on stderr, once the VM has stopped with code. */
static void board_summaries(struct board *b, const struct vm_config *c, int code)
{
	board_console_hint(b, c, code);
	uart_summary(&b->uart, stderr);
	if (b->times.on)
		b->times.ns[PHASE_KVM_RUN] = atomic_load(&b->vm.first_run_ns);
	boot_times_mark(&b->times, PHASE_EXIT);
	boot_times_print(&b->times, stderr);
	char alone[160] = "";

	if (b->quiet.exits_only) /* whose idle ran on the CPU */
		snprintf(alone, sizeof(alone), "; %d vCPU%s judged by exits and kicks alone: %s", b->quiet.exits_only,
			 b->quiet.exits_only == 1 ? "" : "s",
			 b->spec.no_hlt_exit ? "HLT stays in the guest (--no-hlt-exit)"
			 : b->wfi_policy == HP_TRAP_NOTRAP ? "WFI not trapped (kvm-arm.wfi_trap_policy=notrap)"
							   : "vLPIs mapped, so KVM may leave WFI untrapped");
	if (b->times.on && b->release_why) /* which of the three ended start-up */
		fprintf(stderr, "vmm: start-up's memory given back at the guest's %s%s\n", b->release_why, alone);
	else if (b->times.on) /* and why not: what kept ending the quiet spells */
		fprintf(stderr, "vmm: start-up's memory kept: the guest was never idle for a second (%lu "
			"spells ended by an exit, a console write or a kick, %lu by its vCPUs computing%s)\n",
			b->quiet.by_activity, b->quiet.by_cpu, alone);
	for (int i = 0; i < b->nr_vdev; i++)
		virtio_summary(b->vdev[i], stderr);
	if (b->probe_on)
		probe_rx_summary(&b->probe, stderr);
	if (b->attr.on) {
		attribute_stop(&b->attr);
		attribute_report_of(&b->attr, &b->probe.lock, b->probe.dec, stderr);
	}
	board_vfio_summary(b);
	if (b->peer.open)
		probe_peer_summary(&b->peer, stderr);
	board_irq_summary(b);
	board_poll_control_summary(b, stderr);
	if (b->stats_open)
		hp_run_summary(&b->stats, stderr, c->stats, c->summary_full);
	vcpu_state_summary(b, stderr);
}

/* Whatever board_run got as far as making, undone on every way out; b itself freed. */
static void board_teardown(struct board *b)
{
	board_unmap_files(b); /* a run that stopped before the vCPUs started */
	ctl_server_stop(&b->ctl);
	probe_peer_close(&b->peer);
	if (b->stats_open)
		hp_run_close(&b->stats);
	for (int i = 0; i < b->nr_vdev; i++)
		virtio_stop(b->vdev[i]);
	/* every exit path: the devices go back to the host reset, before their memory goes */
	for (int i = 0; i < b->nr_vfio; i++)
		vfio_pci_destroy(b->vfio[i]);
	if (b->vfio_c) {
		vfio_close(b->vfio_c);
		free(b->vfio_c);
	}
	if (b->machine.arch_priv)
		b->machine.arch->destroy(&b->machine);
	if (b->probe_on) /* the devices' workers, its writers, have stopped */
		probe_rx_destroy(&b->probe);
	console_out_destroy(&b->out);
	attribute_free(&b->attr); /* after the probe's writers, whose first COUNTER frame wakes it */
	vm_destroy(&b->vm);
	uart_destroy(&b->uart); /* its page, once no memslot points at it */
	free(b->params);
	host_mem_zfree(b, sizeof(*b));
}

/* What the arch operations read of the options: the command line (the console's default when the
 * user gave none), the console, the CPU features asked for, x86's options as given. */
static void board_spec(const struct vm_config *c, struct machine_spec *s)
{
	*s = (struct machine_spec){
		.mem_size = c->mem_size, .nr_cpus = c->nr_cpus,
		.cmdline = c->params ? c->params
			 : c->console == CONSOLE_VIRTIO ? CONFIG_DEFAULT_PARAMS_HVC : CONFIG_DEFAULT_PARAMS,
		.serial_console = c->console == CONSOLE_SERIAL, .kernel_format = c->kernel_format,
		.cpu = c->cpu, .x86_given = config_has_x86_opts(c), .pv = c->pv, .irqchip = c->irqchip,
		.apic = c->apic, .no_hlt_exit = c->no_hlt_exit,
	};
}

VMM_HOT int board_run(const struct arch_ops *arch, const struct vm_config *c)
{
	struct board *b = host_mem_zalloc(sizeof(*b));
	int code = VM_EXIT_ERROR;

	if (!b)
		return VM_EXIT_ERROR;
	b->machine = (struct machine){ .vm = &b->vm, .arch = arch, .pci = &b->pci,
				       .pvpanic_reg = PVPANIC_MMIO_SIZE, .times = &b->times };
	board_spec(c, &b->spec);
	b->vm.fd = b->vm.kvm_fd = b->vm.defer_fd = -1;
	b->out.fd = b->out.wake_fd = -1;
	b->ctl.fd = b->ctl.stopfd = -1;
	boot_times_init(&b->times);
	if (sandbox_init(c->sandbox) < 0)
		goto out;
	if (board_build(b, c) < 0)
		goto out;
	/* after the devices: a tap --net opens exists by now */
	if (c->probe_peer[0] && probe_peer_open(&b->peer, c->probe_peer, c->probe_peer_port) < 0)
		goto out;
	boot_times_mark(&b->times, PHASE_DEVICES);
	if (board_load(b, c) < 0)
		goto out;
	if (c->dump_dtb) {
		code = arch->dump_platform(&b->machine, c->dump_dtb) < 0 ? VM_EXIT_ERROR : 0;
		boot_times_print(&b->times, stderr); /* the load's phases without a boot */
		goto out;
	}
	struct console_in_sink sink = { uart_push_input, &b->uart };

	if (c->console == CONSOLE_VIRTIO)
		sink = (struct console_in_sink){ virtio_console_push, b->vconsole->priv };
	if (board_start(b, c) < 0)
		goto out;
	if (!c->kernel && !c->initrd) /* the built-in initramfs is in guest RAM now */
		host_mem_drop_copied(guest_initramfs_start, guest_initramfs_end - guest_initramfs_start);
	boot_times_mark(&b->times, PHASE_RUN);
	vm_defer(&b->vm); /* the main thread's first wake, the vCPUs running: board_unmap_files */
	code = vm_run(&b->vm, c->console == CONSOLE_NONE ? NULL : &sink, &b->out);
	board_summaries(b, c, code);
out:
	board_teardown(b);
	return code;
}
