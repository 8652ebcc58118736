#!/bin/bash
# The core never tests the compiler's architecture (core/arch.h): what differs per architecture is
# an arch operation in arm64/ or x86/. Fails, naming each line, when a core folder mentions one of
# the compilers' architecture macros. make headers-check (the first step of make check) runs it.
# Usage: scripts/check-arch-neutral.sh [ROOT]  (default: the checkout this script is in)
set -u
root=${1:-$(dirname "$0")/..}
core="core platform vmm virtio vfio vf halt_poll ab bench"
cd "$root" || exit 2
hits=$(grep -rnE --include='*.c' --include='*.h' --include='*.S' '__(aarch64|x86_64|i386|arm|riscv)__' $core)
if [ -n "$hits" ]; then
	printf '%s\n' "$hits" | sed 's/^/check-arch-neutral: /'
	echo "check-arch-neutral: the core ($core) tests the architecture above; make it an arch operation (core/arch.h)"
	exit 1
fi
echo "check-arch-neutral: $core test no architecture macro"
