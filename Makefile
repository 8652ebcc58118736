# vmm: a small userspace VMM on /dev/kvm.
#   make                 vmm for this machine (build/$(ARCH)/vmm)
#   make ARCH=arm64      static aarch64 vmm and test binaries (aarch64-linux-gnu-gcc)
#   make SANITIZE=1      unit tests with ASan + UBSan
#   make deps            install build/test dependencies from Debian packages (fresh bookworm)
#   make check           unit tests, then the lab tests inside the emulated arm64 host
#   make demo            boot a Linux guest with vmm inside the emulated arm64 host
#   make lab-shell       an interactive shell inside the emulated arm64 host
HOST_ARCH := $(shell uname -m | sed -e s/aarch64/arm64/)
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
B := build/$(ARCH)$(if $(filter 1,$(SANITIZE)),-san)
UAPI := $(CACHE)/uapi/usr/include
UAPI_STAMP := $(CACHE)/uapi/.stamp
KSFT := build/kselftest
KSFT_STAMP := $(KSFT)/kselftest_harness.h

# UAPI >= 6.12 comes first so it wins over the toolchain's older linux-libc-dev.
CPPFLAGS := -I. -I$(UAPI) -I$(UAPI)/$(TRIPLET) $(LIB_CPPFLAGS) -D_GNU_SOURCE
CFLAGS := -std=gnu11 -O2 -g -Wall -Wextra -Werror -MMD -MP
LDFLAGS := $(LIB_LDFLAGS) -pthread
LDLIBS := -lfdt -lz -laio -lseccomp -lm
ifeq ($(SANITIZE),1)
SAN_FLAGS := -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
CFLAGS += $(SAN_FLAGS)
LDFLAGS += $(SAN_FLAGS)
endif

CORE_SRCS := vmm/log.c vmm/kvm.c vmm/kvm_seam.c vmm/bus.c vmm/mem.c vmm/vm.c vmm/vcpu.c vmm/config.c vmm/uart.c \
	vmm/ctl.c vmm/ctl_proto.c vmm/ctl_cmd.c vmm/sandbox.c vmm/term.c vmm/run.c vmm/console_out.c vmm/console_in.c vmm/irq.c vmm/pci.c vmm/msix.c vmm/pvpanic.c vmm/board.c \
	virtio/virtq.c virtio/pci.c virtio/console.c virtio/blk.c virtio/net.c \
	vfio/backend.c vfio/container.c vfio/iommufd.c vfio/pci.c vfio/config.c vfio/irq.c vfio/vf.c vfio/vf_netlink.c vfio/vf_cmd.c \
	vfio/vlpi.c vfio/vlpi_parse.c halt_poll/kvm_stats.c halt_poll/snapshot.c halt_poll/abstats.c halt_poll/run_stats.c halt_poll/ab.c \
	guest/probe_proto.c guest/probe_decode.c
# arm64 image parsing and the FDT need no KVM: built everywhere so unit tests (and ASan) reach them.
ARM64_PORTABLE_SRCS := arm64/kernel.c arm64/fdt.c
# The one place the architecture is chosen: its sources, whose arch.c defines arch_native() (the
# table of arch operations, vmm/arch.h). An architecture that boots no guests yet gets arch_none.
ARCH_SRCS_arm64 := arm64/arch.c arm64/vcpu_init.c vgic/vgic.c its/its.c
ARCH_SRCS_x86_64 := vmm/arch_none.c
LIB_SRCS := $(CORE_SRCS) $(ARM64_PORTABLE_SRCS) $(ARCH_SRCS_$(ARCH))
LIB_OBJS := $(LIB_SRCS:%.c=$(B)/obj/%.o)

# tests/unit/arm64_*_test.c cover arm64-only code: built for arm64, run under qemu-user on x86.
UNIT_SRCS := $(if $(filter arm64,$(ARCH)),$(wildcard tests/unit/*_test.c),\
	$(filter-out tests/unit/arm64_%,$(wildcard tests/unit/*_test.c)))
UNIT_BINS := $(UNIT_SRCS:tests/unit/%.c=$(B)/tests/unit/%)
LAB_SRCS := $(wildcard tests/lab/*_test.c)
LAB_BINS := $(if $(filter arm64,$(ARCH)),$(LAB_SRCS:tests/lab/%.c=$(B)/tests/lab/%) $(B)/tests/lab/baremetal.bin \
	$(B)/tests/lab/guest-edu)

.PHONY: all vmm tests unit-tests lab-tests deps check demo lab-shell clean headers-check
all: vmm tests
vmm: $(B)/vmm
tests: unit-tests lab-tests
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

$(B)/libvmm.a: $(LIB_OBJS)
	rm -f $@; $(CROSS)ar rcs $@ $^

# The built-in guest: guest/init.c with the latency probe (guest/probe*.c; the frame encoder is
# the one libvmm decodes with), static, packed as a gzip'd cpio and linked into vmm.
GUEST_OBJS := $(B)/obj/guest/initramfs.o
GUEST_CPIO := $(B)/guest/initramfs.cpio.gz

GUEST_SRCS := guest/init.c guest/probe.c guest/probe_proto.c
$(B)/guest/init: $(GUEST_SRCS) guest/probe.h guest/probe_proto.h | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -I. -static -pthread $(GUEST_SRCS) -o $@

$(GUEST_CPIO): $(B)/guest/init
	rm -rf $(B)/guest/root && mkdir -p $(B)/guest/root/dev $(B)/guest/root/proc $(B)/guest/root/sys
	cp $< $(B)/guest/root/init
	(cd $(B)/guest/root && find . | LC_ALL=C sort | cpio -o -H newc -R 0:0 --quiet) | gzip -9n >$@

$(B)/obj/guest/initramfs.o: guest/initramfs.S $(GUEST_CPIO)
	@mkdir -p $(dir $@)
	$(CC) -c -DGUEST_INITRAMFS='"$(GUEST_CPIO)"' $< -o $@

$(B)/vmm: $(B)/obj/vmm/main.o $(GUEST_OBJS) $(B)/libvmm.a
	$(CC) $(LDFLAGS) $^ $(LDLIBS) -o $@

# Tests: the kselftest harness headers are extracted from linux-source-6.12 into build/, never
# committed; -isystem keeps its macros out of -Wextra's reach.
TEST_CPPFLAGS := $(CPPFLAGS) -isystem $(KSFT)

# Unit tests link the fakes (tests/unit/fake_*.c) that stand in for KVM.
UNIT_FAKES := $(wildcard tests/unit/fake_*.c)
$(B)/tests/unit/%: tests/unit/%.c $(UNIT_FAKES) $(wildcard tests/unit/fake_*.h) $(B)/libvmm.a | $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< $(UNIT_FAKES) $(B)/libvmm.a $(LDLIBS) -o $@

# A lab test may have guest code next to it: tests/lab/NAME_guest.S is linked in when present.
$(B)/tests/lab/%: tests/lab/%.c tests/lab/labutil.c tests/lab/labutil.h $(wildcard tests/lab/*_guest.S) \
		$(B)/libvmm.a | $(KSFT_STAMP)
	@mkdir -p $(dir $@)
	$(CC) $(TEST_CPPFLAGS) $(CFLAGS) $(LDFLAGS) $< tests/lab/labutil.c $(wildcard tests/lab/$*_guest.S) \
		$(B)/libvmm.a $(LDLIBS) -o $@

# Programs for the lab's test guest (tests/lab/mkinitramfs.sh packs them): static, libc only.
$(B)/tests/lab/guest-edu: tests/lab/guest/edu.c | $(DEPS_STAMPS)
	@mkdir -p $(dir $@)
	$(CC) -std=gnu11 -O2 -Wall -Wextra -Werror -static $< -o $@

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

# The test runs the payload: relinking it when the payload changes also refreshes the lab initramfs.
$(B)/tests/lab/baremetal_test: $(B)/tests/lab/baremetal.bin

deps:
	scripts/deps.sh

# Every header compiles on its own: a file includes what it uses, nothing rides on include order.
HEADERS := $(filter-out vmm/vmm.h,$(wildcard vmm/*.h arm64/*.h vgic/*.h its/*.h virtio/*.h halt_poll/*.h vfio/*.h))
headers-check: | $(DEPS_STAMPS)
	@for h in $(HEADERS); do echo '#include "'$$h'"' | \
		$(CC) $(CPPFLAGS) -std=gnu11 -Wall -Wextra -Werror -fsyntax-only -x c - || \
		{ echo "headers-check: $$h does not compile on its own"; exit 1; }; done
	@echo "headers-check: $(words $(HEADERS)) headers compile on their own"

# The lab needs the arm64 build; the unit tests run on this machine (and arm64's under qemu-user).
check:
	$(MAKE) ARCH=$(HOST_ARCH) headers-check
	$(MAKE) ARCH=$(HOST_ARCH) all
	$(MAKE) ARCH=arm64 all
	$(MAKE) ARCH=$(HOST_ARCH) SANITIZE=1 unit-tests
	scripts/check.sh

# The main job: boot a Linux guest with vmm inside the emulated arm64 KVM host, show its console
# and vmm's exit summary.
demo:
	$(MAKE) ARCH=arm64 all
	tests/lab/run.sh --demo

lab-shell:
	$(MAKE) ARCH=arm64 all
	tests/lab/run.sh --shell

clean:
	rm -rf build

-include $(shell find build -name '*.d' 2>/dev/null)
