// SPDX-License-Identifier: MIT
/* vmm's command line. Subcommands in the style of kvmtool's lkvm: "vmm caps" for now. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ab/ab_cmd.h"
#include "bench/bench.h"
#include "halt_poll/halt_poll.h"
#include "vfio/vf_cmd.h"
#include "vmm/ctl_cmd.h"
#include "vmm/arch.h"
#include "vmm/board.h"
#include "vmm/log.h"
#include "vmm/kvm.h"
#include "vmm/config.h"
#include "vmm/vm.h"

#ifndef VMM_VERSION
#define VMM_VERSION "0.1"
#endif

static const struct {
	const char *name;
	long cap;
} caps[] = {
	{ "KVM_CAP_IRQFD", KVM_CAP_IRQFD },
	{ "KVM_CAP_IRQFD_RESAMPLE", KVM_CAP_IRQFD_RESAMPLE },
	{ "KVM_CAP_IOEVENTFD", KVM_CAP_IOEVENTFD },
	{ "KVM_CAP_IRQ_ROUTING", KVM_CAP_IRQ_ROUTING },
	{ "KVM_CAP_SIGNAL_MSI", KVM_CAP_SIGNAL_MSI },
	{ "KVM_CAP_MSI_DEVID", KVM_CAP_MSI_DEVID },
	{ "KVM_CAP_HALT_POLL", KVM_CAP_HALT_POLL },
	{ "KVM_CAP_BINARY_STATS_FD", KVM_CAP_BINARY_STATS_FD },
	{ "KVM_CAP_NR_VCPUS", KVM_CAP_NR_VCPUS },
	{ "KVM_CAP_MAX_VCPUS", KVM_CAP_MAX_VCPUS },
	{ "KVM_CAP_IMMEDIATE_EXIT", KVM_CAP_IMMEDIATE_EXIT },
};

static int cmd_caps(void)
{
	struct vm vm;
	int r = vm_create(&vm, 0);

	if (r < 0)
		return VM_EXIT_ERROR;
	printf("%-28s %6s %6s\n", "capability", "system", "vm");
	for (size_t i = 0; i < sizeof(caps) / sizeof(caps[0]); i++)
		printf("%-28s %6d %6d\n", caps[i].name, kvm_check_ext(vm.kvm_fd, caps[i].cap),
		       kvm_check_ext(vm.fd, caps[i].cap));
	const struct arch_ops *arch = arch_native();

	for (size_t i = 0; arch && i < arch->nr_caps; i++)
		printf("%-28s %6d %6d\n", arch->caps[i].name, kvm_check_ext(vm.kvm_fd, arch->caps[i].cap),
		       kvm_check_ext(vm.fd, arch->caps[i].cap));
	if (arch && arch->caps_print)
		arch->caps_print(vm.kvm_fd, stdout);
	vm_destroy(&vm);
	return 0;
}

/* Before the board starts any thread (virtio workers start before vm_run): the stop signals are
 * blocked in every thread and read by vm_run from a signalfd, so none can kill vmm by its
 * default action with the terminal raw and disks unsynced. SIGPIPE is ignored: a closed stdout
 * is EPIPE, and the console stops writing while the guest runs on. */
static void run_signals(void)
{
	sigset_t stopsigs;

	sigemptyset(&stopsigs);
	sigaddset(&stopsigs, SIGINT);
	sigaddset(&stopsigs, SIGTERM);
	sigaddset(&stopsigs, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &stopsigs, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int cmd_run(int argc, char **argv)
{
	struct vm_config c;
	int r = config_parse_run(&c, argc, argv);

	if (r == 1) {
		config_usage(stdout);
		return 0;
	}
	if (r < 0)
		return VM_EXIT_ERROR;
	const struct arch_ops *arch = arch_native();

	if (!arch) {
		pr_err("vmm run: this build boots no guests on this architecture yet (arm64 only)");
		return VM_EXIT_ERROR;
	}
	run_signals();
	return board_run(arch, &c);
}

static void usage(FILE *f)
{
	fprintf(f, "usage: vmm [--version] [--help] COMMAND [ARGS]\n\n"
		   "commands:\n"
		   "  run     boot a guest (vmm run --help)\n"
		   "  caps    print the KVM capabilities this host offers (system-wide and per VM)\n"
		   "  vf      SR-IOV VFs: list, create, set MACs, bind to vfio-pci (vmm vf --help)\n"
		   "  ctl     talk to a running vmm (vmm run --ctl PATH): halt-poll ceiling, stats\n"
		   "  stat    a running vmm's per-vCPU KVM counters, refreshed (vmm stat --help)\n"
		   "  ab      A/B-test vmm run configurations on the guest latency probe (vmm ab --help)\n"
		   "  bench   make bench's reports: show one, compare two with the A/B statistics\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },
		{ 0 },
	};
	int c;

	while ((c = getopt_long(argc, argv, "+hV", opts, NULL)) != -1) {
		switch (c) {
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("vmm %s\n", VMM_VERSION);
			return 0;
		default:
			usage(stderr);
			return VM_EXIT_ERROR;
		}
	}
	if (optind >= argc) {
		usage(stderr);
		return VM_EXIT_ERROR;
	}
	if (!strcmp(argv[optind], "caps"))
		return cmd_caps();
	if (!strcmp(argv[optind], "vf"))
		return vf_cmd(argc - optind, argv + optind);
	if (!strcmp(argv[optind], "ctl"))
		return ctl_cmd(argc - optind, argv + optind);
	if (!strcmp(argv[optind], "stat"))
		return stat_cmd(argc - optind, argv + optind);
	if (!strcmp(argv[optind], "ab"))
		return ab_cmd(argc - optind, argv + optind);
	if (!strcmp(argv[optind], "bench"))
		return bench_cmd(argc - optind, argv + optind);
	if (!strcmp(argv[optind], "run"))
		return cmd_run(argc - optind, argv + optind);
	pr_err("unknown command '%s' (vmm --help lists the commands)", argv[optind]);
	return VM_EXIT_ERROR;
}
