# vmm: a small userspace VMM on /dev/kvm.
#   make                 vmm for this machine (build/$(ARCH)/vmm)
#   make ARCH=arm64      static aarch64 vmm and test binaries (aarch64-linux-gnu-gcc)
#   make SANITIZE=1      unit tests with ASan + UBSan (SANITIZE=thread: ThreadSanitizer)
#   make fuzz            each libFuzzer target (tests/fuzz) for FUZZ_SECONDS
#   make deps            install build/test dependencies from Debian packages (fresh bookworm)
#   make check           unit tests, then the lab tests inside the emulated arm64 host
#   make demo            boot a Linux guest with vmm inside the emulated arm64 host
#   make lab-shell       an interactive shell inside the emulated arm64 host
#   make bench           figures (start-up, exits, virtio-blk/net, memory) as a table and build/bench/*.json
#   make check-hw        the boot, virtio, VFIO and A/B tests on this machine's own /dev/kvm
#   make install         vmm, its man pages, bash completion and docs under DESTDIR/PREFIX
#                        (PREFIX=/usr/local); make uninstall removes them
#   make man             the man pages (docs/man/*.scd through scdoc) in build/man
#   make deb             ../vmm_VERSION_amd64.deb and, cross-built, ../vmm_VERSION_arm64.deb; lintian
, := ,# a comma inside $(if ...)
HOST_ARCH := $(shell uname -m | sed -e s/aarch64/arm64/)
# make check's and make deb's builds: every core
JOBS ?= $(shell nproc)
ARCH ?= $(HOST_ARCH)
CACHE ?= .cache
export VMM_CACHE := $(abspath $(CACHE))
SANITIZE ?= 0

ifeq ($(ARCH),arm64)
TRIPLET := aarch64-linux-gnu
CROSS := $(if $(filter arm64,$(HOST_ARCH)),,aarch64-linux-gnu-)
SYSROOT := $(CACHE)/sysroot-arm64
SYSROOT_STAMP := $(SYSROOT)/.stamp
LIB_CPPFLAGS := -isystem $(SYSROOT)/usr/include -isystem $(SYSROOT)/usr/include/$(TRIPLET)
LIB_LDFLAGS := -static -L$(SYSROOT)/usr/lib/$(TRIPLET)
else ifeq ($(ARCH),x86_64)
TRIPLET := x86_64-linux-gnu
CROSS :=
else
$(error ARCH must be x86_64 or arm64, not '$(ARCH)')
endif

CC := $(CROSS)gcc
B := build/$(ARCH)$(if $(filter 1,$(SANITIZE)),-san)$(if $(filter thread,$(SANITIZE)),-tsan)
UAPI := $(CACHE)/uapi/usr/include
UAPI_STAMP := $(CACHE)/uapi/.stamp
KSFT := build/kselftest
KSFT_STAMP := $(KSFT)/kselftest_harness.h

# UAPI >= 6.12 comes first so it wins over the toolchain's older linux-libc-dev.
CPPFLAGS := -I. -I$(UAPI) -I$(UAPI)/$(TRIPLET) $(LIB_CPPFLAGS) -D_GNU_SOURCE
CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -MMD -MP
LDFLAGS := $(LIB_LDFLAGS) -pthread
LDLIBS := -lfdt -lz -laio -lm
# The unit tests compile the seccomp filters again to check the generated ones (sandbox_filters_test).
TEST_LDLIBS := $(LDLIBS) -lseccomp
ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
else ifeq ($(SANITIZE),thread)
SAN_FLAGS := -fsanitize=thread -fno-omit-frame-pointer
# TSan does not model a standalone fence (virtq.c orders the used index before the driver's flag
# with one); the loads and stores around it are atomics TSan does see.
CFLAGS += -Wno-tsan
endif
CFLAGS += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
# What a packager adds on top (debian/rules: dpkg-buildflags' hardening, _FORTIFY_SOURCE, RELRO,
# BIND_NOW, the stack protector); after vmm's own, so they add and never take -Werror away.
EXTRA_CPPFLAGS ?=
EXTRA_CFLAGS ?=
EXTRA_LDFLAGS ?=
CPPFLAGS += $(EXTRA_CPPFLAGS)
CFLAGS += $(EXTRA_CFLAGS)
LDFLAGS += $(EXTRA_LDFLAGS)

# trace/: per-sample latency attribution from KVM's tracepoints (issue 37), every file of it
TRACE_SRCS := $(sort $(wildcard trace/*.c))
CORE_SRCS := core/log.c core/kvm.c core/kvm_seam.c core/bus.c core/mem.c core/vm.c core/vcpu.c vmm/config.c core/cpu_opts.c platform/uart.c platform/uart_fast.c core/mmio_ring.c \
	core/kvm_error.c vmm/ctl.c vmm/ctl_proto.c cli/ctl_cmd.c core/sandbox.c core/term.c vmm/run.c platform/console_out.c platform/console_in.c vmm/probe_rx.c core/irq.c vmm/irq_report.c core/pci.c core/msix.c core/msi_route.c platform/pvpanic.c vmm/probe_peer.c vmm/board.c vmm/board_load.c vmm/board_report.c vmm/board_poll.c vmm/board_tick.c vmm/boot_quiet.c vmm/attribute.c vmm/vcpu_state.c core/timings.c core/host_mem.c core/json.c core/json_lex.c core/json_write.c \
	virtio/virtq.c virtio/pci.c virtio/console.c virtio/blk.c virtio/net.c virtio/vhost_net.c \
	vfio/backend.c vfio/dma.c vfio/kvm_dev.c vfio/container.c vfio/iommufd.c vfio/pci.c vfio/config.c vfio/irq.c vfio/host_irqs.c vf/vf.c vf/sysfs.c vf/netlink.c vf/cmd.c \
	vfio/msi_report.c core/host_text.c core/proc_interrupts.c halt_poll/kvm_stats.c halt_poll/snapshot.c halt_poll/governor.c halt_poll/run_stats.c \
	ab/abstats.c ab/design.c ab/ab_epochs.c ab/ab_saved.c ab/ab.c ab/ab_one_vm.c ab/ab_report.c ab/ab_judge.c ab/comparison_json.c ab/ab_attrib.c ab/ab_stages.c ab/ab_stages_json.c ab/ab_stages_plot.c ab/ab_stages_saved.c \
	guest/probe_proto.c guest/probe_decode.c bench/report.c bench/parse.c bench/compare.c bench/judge.c $(TRACE_SRCS)
# arm64 image parsing, the FDT and the vLPI report (text from debugfs) need no KVM: built everywhere
# so unit tests (and ASan) and the fuzz targets reach them.
ARM64_PORTABLE_SRCS := arm64/kernel.c arm64/boot_load.c arm64/fdt.c arm64/gic/vlpi.c arm64/gic/vlpi_parse.c arm64/gic/vlpi_msi.c
# Likewise x86's boot protocol, tables and CPUID policy; they take x86's UAPI headers (asm/
# bootparam.h, asm/kvm_para.h) whatever the target, so their asm/ is x86_64's.
X86_PORTABLE_SRCS := x86/bzimage.c x86/boot_load.c x86/boot_params.c x86/mptable.c x86/acpi.c x86/longmode.c x86/pci_cf8.c \
	x86/pv.c x86/pv_host.c x86/ioapic.c x86/ram.c x86/poll_control.c
X86_CPPFLAGS := -I. -I$(UAPI) -I$(UAPI)/x86_64-linux-gnu $(LIB_CPPFLAGS) -D_GNU_SOURCE
$(B)/obj/x86/%.o: CPPFLAGS := $(X86_CPPFLAGS)
# The one place the architecture is chosen: its sources, whose arch.c defines arch_native() (the
# table of arch operations, core/arch.h).
ARCH_SRCS_arm64 := arm64/arch.c arm64/clock.c arm64/vcpu_init.c arm64/cpu_feat.c arm64/gic/vgic.c arm64/gic/its.c
ARCH_SRCS_x86_64 := x86/arch.c
# The seccomp filters, compiled at build time on the build machine for ARCH by buildtools/sandbox_gen.c
# from the lists in core/sandbox_rules.c: vmm loads them with one seccomp(2) call each and does not
# link libseccomp. The lists are not in libvmm: only the unit tests link them, from libvmm_test.a,
# to compile the filters again and check the generated ones (sandbox_filters_test).
HOST_TRIPLET := $(shell uname -m)-linux-gnu
SANDBOX_GEN := build/host/sandbox_gen
SANDBOX_BPF := build/gen/$(ARCH)/sandbox_bpf.c
TEST_LIB := $(B)/libvmm_test.a
LIB_SRCS := $(CORE_SRCS) $(SANDBOX_BPF) $(ARM64_PORTABLE_SRCS) $(X86_PORTABLE_SRCS) $(ARCH_SRCS_$(ARCH))
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/obj/%.o)

# tests/unit/arm64_*_test.c cover arm64-only code: built for arm64, run under qemu-user on x86.
UNIT_SRCS := $(if $(filter arm64,$(ARCH)),$(wildcard tests/unit/*_test.c),\
	$(filter-out tests/unit/arm64_%,$(wildcard tests/unit/*_test.c)))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/unit/%)
LAB_SRCS := $(wildcard tests/lab/*_test.c)
LAB_GUEST_SRCS := $(wildcard tests/lab/guest/*.c)
# x86 KVM-API tests with a tiny built-in guest (tests/kvm/x86): x86_64 builds only, static so the
# x86 lab host runs the same binary.
KVM_X86_BINS := $(if $(filter x86_64,$(ARCH)),$(B)/tests/kvm/x86/kvm_x86_test)
LAB_BINS := $(if $(filter arm64,$(ARCH)),$(LAB_SRCS:tests/lab/%.c=$(B)/tests/lab/%) $(B)/tests/lab/baremetal.bin \
	$(B)/tests/lab/poweroff.img $(LAB_GUEST_SRCS:tests/lab/guest/%.c=$(B)/tests/lab/guest-%) $(B)/tests/lab/bench)

.PHONY: all vmm tests unit-tests lab-tests deps check demo lab-shell clean headers-check bench check-hw
all: vmm tests
vmm: $(B)/vmm
tests: unit-tests lab-tests $(KVM_X86_BINS)
unit-tests: $(UNIT_BINS)
lab-tests: $(LAB_BINS)

$(UAPI_STAMP):
	scripts/fetch.sh uapi
ifdef SYSROOT_STAMP
# Refreshed when fetch.sh's package list changes (a cache unpacked before libseccomp was added).
$(SYSROOT_STAMP): scripts/fetch.sh
	scripts/fetch.sh sysroot && touch $@
endif
$(KSFT_STAMP):
	KSELFTEST_DIR=$(KSFT) scripts/fetch.sh kselftest

DEPS_STAMPS := $(UAPI_STAMP) $(SYSROOT_STAMP)

$(B)/obj/%.o: %.c | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) -c $< -o $@

$(SANDBOX_GEN): buildtools/sandbox_gen.c core/sandbox_rules.c core/sandbox_rules.h core/sandbox_bpf.h core/sandbox.h | $(UAPI_STAMP)
	@mkdir -p $(dir $@)
	gcc -std=gnu11 -O2 -Wall -Wextra -Werror -I. -I$(UAPI) -I$(UAPI)/$(HOST_TRIPLET) -D_GNU_SOURCE \
		buildtools/sandbox_gen.c core/sandbox_rules.c -lseccomp -o $@
$(SANDBOX_BPF): $(SANDBOX_GEN)
	@mkdir -p $(dir $@)
	$(SANDBOX_GEN) $(ARCH) $@.tmp && mv $@.tmp $@

$(B)/libvmm.a: $(LIB_OBJS)
	rm -f $@; $(CROSS)ar rcs $@ $^
$(TEST_LIB): $(B)/obj/core/sandbox_rules.o
	rm -f $@; $(CROSS)ar rcs $@ $^

# The built-in guest: guest/init.c with the latency probe (guest/probe*.c; the frame encoder is
# the one libvmm decodes with), static, packed as a gzip'd cpio and linked into vmm.
GUEST_OBJS := $(B)/obj/guest/initramfs.o
GUEST_CPIO := $(B)/guest/initramfs.cpio.gz

GUEST_SRCS := guest/init.c guest/probe.c guest/probe_spec.c guest/probe_out.c guest/probe_proto.c
$(B)/guest/init: $(GUEST_SRCS) guest/probe.h guest/probe_internal.h guest/probe_proto.h | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -I. -D_GNU_SOURCE -static -pthread $(GUEST_SRCS) -o $@

$(GUEST_CPIO): $(B)/guest/init
	rm -rf $(B)/guest/root && mkdir -p $(B)/guest/root/dev $(B)/guest/root/proc $(B)/guest/root/sys
	cp $< $(B)/guest/root/init
	(cd $(B)/guest/root && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -9n >$@

$(B)/obj/guest/initramfs.o: guest/initramfs.S $(GUEST_CPIO)
	@mkdir -p $(dir $@)
	$(CC) -c -DGUEST_INITRAMFS='"$(GUEST_CPIO)"' $< -o $@

# vmm --version: the version is debian/changelog's (one place to change it), the commit git's
# (VMM_COMMIT=... where the tree is no git checkout). The header is rewritten only when it changes.
VERSION := $(or $(shell head -n1 debian/changelog 2>/dev/null | tr -d '()' | cut -d' ' -f2),0.0)
VMM_COMMIT ?= $(or $(shell git rev-parse --short=12 HEAD 2>/dev/null),unknown)
$(B)/gen/vmm/version.h: FORCE
	@mkdir -p $(dir $@)
	@printf '#define VMM_VERSION "%s"\n#define VMM_COMMIT "%s"\n' '$(VERSION)' '$(VMM_COMMIT)' >$@.tmp
	@cmp -s $@.tmp $@ && rm -f $@.tmp || mv $@.tmp $@
$(B)/obj/cli/main.o: CPPFLAGS += -I$(B)/gen
$(B)/obj/cli/main.o: $(B)/gen/vmm/version.h
.PHONY: FORCE
FORCE:

# The link map says which input section (vmm's function, libc's member) sits at each address:
# scripts/hot-text.sh reads it. In arm64's static build (the lab's, whose memory the bench
# measures) the code the running guest uses is grouped at the start of the text, so that it needs
# few 64 KiB fault-around windows: the functions marked VMM_HOT and VMM_HOT_VF (core/hot.h, each
# in a section of its own), the library members they call and the read-only data both use. A
# first link's map says what they call; hot-text.sh ld writes the linker fragment from it
# (build/arm64/hot_text.ld), and the link fails when none is marked or a marked one is not in the
# hot section (hot-text.sh check). Not in sanitizer builds (their runtime's calls).
HOT_TEXT := $(and $(filter arm64,$(ARCH)),$(filter 0,$(SANITIZE)))
ifneq ($(HOT_TEXT),)
CFLAGS += -ffunction-sections
CPPFLAGS += -DVMM_HOT_TEXT
endif
VMM_INPUTS := $(B)/obj/cli/main.o $(GUEST_OBJS) $(B)/libvmm.a
$(B)/vmm: $(VMM_INPUTS) $(if $(HOT_TEXT),scripts/hot-text.sh)
ifneq ($(HOT_TEXT),)
	$(CC) $(LDFLAGS) $(VMM_INPUTS) $(LDLIBS) -Wl,-Map=$@.first.map -o $@.first && rm -f $@.first
	OBJDUMP=$(CROSS)objdump scripts/hot-text.sh ld $@.first.map $(VMM_INPUTS) >$(B)/hot_text.ld
endif
	$(CC) $(LDFLAGS) $(VMM_INPUTS) $(LDLIBS) $(if $(HOT_TEXT),-Wl$(,)-T$(,)$(B)/hot_text.ld) -Wl,-Map=$@.map -o $@
	$(if $(HOT_TEXT),scripts/hot-text.sh check $@.map || { rm -f $@; exit 1; })

# Tests: the kselftest harness headers are extracted from linux-source-6.12 into build/, never
# committed; -isystem keeps its macros out of -Wextra's reach.
TEST_CPPFLAGS := $(CPPFLAGS) -isystem $(KSFT)

# Unit tests link the fakes (tests/unit/fake_*.c) that stand in for KVM.
UNIT_FAKES := $(wildcard tests/unit/fake_*.c)
$(B)/tests/unit/%: tests/unit/%.c $(UNIT_FAKES) $(wildcard tests/unit/fake_*.h) $(TEST_LIB) $(B)/libvmm.a | $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(UNIT_FAKES) $(TEST_LIB) $(B)/libvmm.a $(TEST_LDLIBS) -o $@
# x86 tests read the zero page through x86's UAPI structs: only the test itself takes x86's asm/.
# The probe's unit test links the guest's own probe code, as the guest builds it.
PROBE_TEST_SRCS := guest/probe.c guest/probe_out.c guest/probe_spec.c
$(B)/tests/unit/probe_test: tests/unit/probe_test.c $(PROBE_TEST_SRCS) guest/probe.h guest/probe_internal.h $(UNIT_FAKES) \
		$(wildcard tests/unit/fake_*.h) $(TEST_LIB) $(B)/libvmm.a | $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(PROBE_TEST_SRCS) $(UNIT_FAKES) $(TEST_LIB) $(B)/libvmm.a $(TEST_LDLIBS) -o $@

$(B)/tests/unit/x86_%: tests/unit/x86_%.c $(UNIT_FAKES) $(wildcard tests/unit/fake_*.h) $(TEST_LIB) $(B)/libvmm.a | $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(X86_CPPFLAGS) -isystem $(KSFT) $(CFLAGS) -c $< -o $@.o
	$(CC) $(TEST_CPPFLAGS) $(CFLAGS) $(LDFLAGS) $@.o $(UNIT_FAKES) $(TEST_LIB) $(B)/libvmm.a $(TEST_LDLIBS) -o $@

# A lab test may have guest code next to it: tests/lab/NAME_guest.S is linked in when present.
$(B)/tests/lab/%: tests/lab/%.c tests/lab/labutil.c tests/lab/labvf.c tests/lab/labutil.h $(wildcard tests/lab/*_guest.S) \
		$(B)/libvmm.a | $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< tests/lab/labutil.c tests/lab/labvf.c $(wildcard tests/lab/$*_guest.S) \
		$(B)/libvmm.a $(LDLIBS) -o $@

# make bench's runner: bench.c (options, sections, ratios) and a file per section group, tests/lab/bench_*.c.
BENCH_SRCS := tests/lab/bench.c $(wildcard tests/lab/bench_*.c)
$(B)/tests/lab/bench: $(BENCH_SRCS) tests/lab/bench_lab.h tests/lab/labutil.c tests/lab/labvf.c tests/lab/labutil.h \
		$(B)/libvmm.a | $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(BENCH_SRCS) tests/lab/labutil.c tests/lab/labvf.c \
		$(B)/libvmm.a $(LDLIBS) -o $@

$(B)/tests/kvm/x86/kvm_x86_test: tests/kvm/x86/kvm_x86_test.c tests/kvm/x86/tvm.c tests/kvm/x86/tvm.h \
		tests/kvm/x86/guest.S tests/kvm/x86/guest.h $(B)/libvmm.a | $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(X86_CPPFLAGS) -isystem $(KSFT) $(CFLAGS) $(LDFLAGS) $(if $(filter 0,$(SANITIZE)),-static) $< \
		tests/kvm/x86/tvm.c tests/kvm/x86/guest.S $(B)/libvmm.a $(LDLIBS) -o $@

# Programs for the lab's test guest (tests/lab/mkinitramfs.sh packs them): static, libc only.
$(B)/tests/lab/guest-%: tests/lab/guest/%.c $(wildcard tests/lab/guest/*.h) | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -D_GNU_SOURCE -static $< -o $@

# The lab's bare-metal payload (vmm run --kernel-format flat): freestanding, no FP/SIMD (the guest
# has not enabled them), no unaligned accesses (MMU off: Device memory), flattened by objcopy.
BAREMETAL_SRCS := tests/lab/baremetal/start.S tests/lab/baremetal/main.c
BAREMETAL_CFLAGS := -std=gnu11 -O2 -Wall -Wextra -Werror -ffreestanding -nostdlib -static -fno-pie \
	-no-pie -mgeneral-regs-only -mstrict-align -fno-stack-protector -fno-asynchronous-unwind-tables \
	-fno-tree-loop-distribute-patterns -I$(UAPI)

$(B)/tests/lab/baremetal.elf: $(BAREMETAL_SRCS) tests/lab/baremetal/baremetal.ld | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(BAREMETAL_CFLAGS) -Wl,-T,tests/lab/baremetal/baremetal.ld -Wl,--build-id=none \
		$(BAREMETAL_SRCS) -o $@

$(B)/tests/lab/baremetal.bin: $(B)/tests/lab/baremetal.elf
	$(CROSS)objcopy -O binary $< $@

# The bench's launch-to-first-instruction payload: an Image header and a PSCI SYSTEM_OFF, no C.
$(B)/tests/lab/poweroff.elf: tests/lab/baremetal/poweroff.S tests/lab/baremetal/baremetal.ld | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) $(BAREMETAL_CFLAGS) -Wl,-T,tests/lab/baremetal/baremetal.ld -Wl,--build-id=none $< -o $@

$(B)/tests/lab/poweroff.img: $(B)/tests/lab/poweroff.elf
	$(CROSS)objcopy -O binary $< $@

# The test runs the payload: relinking it when the payload changes also refreshes the lab initramfs.
$(B)/tests/lab/baremetal_test: $(B)/tests/lab/baremetal.bin

# libFuzzer targets (tests/fuzz/NAME_fuzz.c) with Debian's clang, ASan and UBSan, against their
# own instrumented build of the library and the unit tests' fakes. make fuzz runs each for
# FUZZ_SECONDS (FUZZ_TARGETS=a,b for some); make check runs each for FUZZ_SMOKE_SECONDS.
FUZZ_CC := clang-14
FUZZ_B := build/fuzz
FUZZ_SECONDS ?= 60
FUZZ_SMOKE_SECONDS ?= 20
FUZZ_SAN := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
FUZZ_CFLAGS := -std=gnu11 -O1 -g -Wall -Wextra -Werror -MMD -MP $(FUZZ_SAN)
FUZZ_LIB_OBJS := $(LIB_SRCS:%.c=$(FUZZ_B)/obj/%.o)
FUZZ_HELPERS := tests/fuzz/fuzz_guest.c $(UNIT_FAKES)
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(FUZZ_B)/%,$(wildcard tests/fuzz/*_fuzz.c))

$(FUZZ_B)/obj/%.o: %.c | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer-no-link -c $< -o $@

$(FUZZ_B)/libvmm.a: $(FUZZ_LIB_OBJS)
	rm -f $@; ar rcs $@ $^

$(FUZZ_B)/%_fuzz: tests/fuzz/%_fuzz.c $(FUZZ_HELPERS) tests/fuzz/fuzz.h $(FUZZ_B)/libvmm.a | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(FUZZ_CC) $(CPPFLAGS) $(FUZZ_CFLAGS) -fsanitize=fuzzer $< $(FUZZ_HELPERS) $(FUZZ_B)/libvmm.a \
		-pthread $(LDLIBS) -o $@

# The seed corpora's generator (tests/fuzz/seeds*.c, a file per target family; plain build):
# make fuzz-seeds rewrites them.
$(B)/tests/fuzz/seeds: $(wildcard tests/fuzz/seeds*.c) tests/fuzz/seeds.h $(FUZZ_HELPERS) tests/fuzz/fuzz.h $(B)/libvmm.a
	@mkdir -p $(dir $@)
	$(CC) $(CPPFLAGS) $(CFLAGS) $(LDFLAGS) $(filter %.c,$^) $(B)/libvmm.a $(LDLIBS) -o $@

.PHONY: fuzz-build fuzz fuzz-smoke fuzz-seeds fuzz-seeds-check
fuzz-seeds: $(B)/tests/fuzz/seeds
	$<
fuzz-seeds-check: $(B)/tests/fuzz/seeds
	scripts/check-fuzz-seeds.sh $<
fuzz-build: $(FUZZ_BINS)
fuzz: fuzz-build
	scripts/fuzz.sh $(FUZZ_SECONDS) $(FUZZ_TARGETS)
fuzz-smoke: fuzz-build
	scripts/fuzz.sh $(FUZZ_SMOKE_SECONDS) $(FUZZ_TARGETS)

deps:
	scripts/deps.sh

# Every header compiles on its own: a file includes what it uses, nothing rides on include order.
HEADERS := $(wildcard core/*.h platform/*.h vmm/*.h cli/*.h arm64/*.h x86/*.h arm64/gic/*.h virtio/*.h halt_poll/*.h ab/*.h vfio/*.h vf/*.h bench/*.h)
headers-check: | $(DEPS_STAMPS)
	@for h in $(HEADERS); do echo '#include "'$$h'"' | \
		$(CC) $(CPPFLAGS) -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -x c - || \
		{ echo "headers-check: $$h does not compile on its own"; exit 1; }; done
	@echo "headers-check: $(words $(HEADERS)) headers compile on their own"
	@scripts/check-arch-neutral.sh
	@scripts/check-layers.sh

# The lab needs the arm64 build; the unit tests run on this machine (and arm64's under qemu-user).
# The builds use every core (JOBS): one at a time they were a third of CI's time on two cores.
check:
	$(MAKE) ARCH=$(HOST_ARCH) headers-check
	$(MAKE) -j$(JOBS) ARCH=$(HOST_ARCH) all
	$(MAKE) -j$(JOBS) ARCH=arm64 all
	$(MAKE) -j$(JOBS) ARCH=$(HOST_ARCH) SANITIZE=1 unit-tests
	$(MAKE) -j$(JOBS) ARCH=$(HOST_ARCH) SANITIZE=thread unit-tests
	$(MAKE) -j$(JOBS) ARCH=$(HOST_ARCH) fuzz-build
	scripts/fetch.sh lab-x86 # Debian's amd64 vmlinuz for the bzImage unit test and the x86 lab
	FUZZ_SMOKE_SECONDS=$(FUZZ_SMOKE_SECONDS) scripts/check.sh

# The main job: boot a Linux guest with vmm inside the emulated arm64 KVM host, show its console
# and vmm's exit summary.
demo:
	$(MAKE) ARCH=arm64 all
	tests/lab/run.sh --demo

lab-shell:
	$(MAKE) ARCH=arm64 all
	tests/lab/run.sh --shell

# On an arm64 KVM host directly, else inside the lab (scripts/bench.sh).
bench:
	$(MAKE) ARCH=arm64 all
	$(MAKE) ARCH=$(HOST_ARCH) all
	scripts/bench.sh

# Builds what it needs only when the host has a usable /dev/kvm; else a skip with the reason.
check-hw:
	scripts/check-hw.sh

# Man pages: written in scdoc (docs/man), made into roff at build time, never committed as roff.
MAN_SRCS := $(wildcard docs/man/*.1.scd)
MAN_PAGES := $(MAN_SRCS:docs/man/%.scd=build/man/%)
.PHONY: man install uninstall
man: $(MAN_PAGES)
build/man/%: docs/man/%.scd
	@mkdir -p $(dir $@)
	scdoc <$< >$@

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
MANDIR ?= $(PREFIX)/share/man
DOCDIR ?= $(PREFIX)/share/doc/vmm
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
DOC_FILES := README.md $(wildcard docs/*.md docs/*.png docs/*.svg)
INSTALLED := $(BINDIR)/vmm $(MAN_PAGES:build/man/%=$(MANDIR)/man1/%) $(BASHCOMPDIR)/vmm \
	$(addprefix $(DOCDIR)/,$(notdir $(DOC_FILES)))
install: $(B)/vmm man
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR) $(DESTDIR)$(DOCDIR)
	install -m 755 $(B)/vmm $(DESTDIR)$(BINDIR)/vmm
	install -m 644 $(MAN_PAGES) $(DESTDIR)$(MANDIR)/man1/
	install -m 644 dist/vmm.bash-completion $(DESTDIR)$(BASHCOMPDIR)/vmm
	install -m 644 $(DOC_FILES) $(DESTDIR)$(DOCDIR)/
uninstall:
	rm -f $(addprefix $(DESTDIR),$(INSTALLED))
	-rmdir $(DESTDIR)$(DOCDIR) 2>/dev/null

# The packages (debian/): dpkg-buildpackage puts them beside the tree, as Debian's tools do. The
# arm64 one is a cross build that takes its libraries from the cache's sysroot, not from
# Build-Depends installed for arm64 (-d). lintian must find no error in either.
.PHONY: deb
deb:
	dpkg-buildpackage -us -uc -b -j$(JOBS)
	dpkg-buildpackage -us -uc -b -aarm64 -d -j$(JOBS)
	lintian --fail-on error ../vmm_$(VERSION)_amd64.deb ../vmm_$(VERSION)_arm64.deb

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
