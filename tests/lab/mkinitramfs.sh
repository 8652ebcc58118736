#!/usr/bin/env bash
# Builds the lab host's initramfs: busybox, the project's arm64 binaries, the kernel modules in
# modules.list (decompressed, with depmod), and tests/lab/init.sh as /init.
# Usage: mkinitramfs.sh OUT.cpio.gz   (inputs: .cache/lab/arm64/pkg, build/arm64)
#        mkinitramfs.sh --stage DIR [--bench]  the lab host's /lab tree alone, into DIR (the hardware
#                                     lane runs the lab tests from it on a real KVM host); --bench
#                                     adds make bench's QEMU peer (below)
#        mkinitramfs.sh --bench-extra OUT.cpio   make bench's additions alone, as an uncompressed
#                                     cpio that run.sh --bench appends to the lab's initramfs (the
#                                     kernel unpacks concatenated archives): QEMU/KVM with its
#                                     libraries (fetch.sh lab-qemu-arm64) in /lab/qemu, kvmtool
#                                     (fetch.sh lab-kvmtool-arm64) in /lab/kvmtool and vmm's
#                                     built-in guest as /lab/builtin-guest.cpio.gz. The tests'
#                                     initramfs does not carry them.
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VMM_CACHE:-$top/.cache}
pkg=$cache/lab/arm64/pkg
qemu=$cache/lab/arm64/qemu
kvmtool=$cache/lab/arm64/kvmtool

# make bench's peers into ROOT/lab: what bench_qemu.c's QEMU and bench_kvmtool.c's kvmtool runs use
# (each section says so when absent).
bench_extra() {
	mkdir -p "$1/lab"
	if [ -f "$qemu/.stamp" ]; then
		cp -a "$qemu" "$1/lab/qemu"
	else
		echo "mkinitramfs: no $qemu (scripts/fetch.sh lab-qemu-arm64): the bench has no QEMU peer" >&2
	fi
	if [ -f "$kvmtool/.stamp" ]; then
		cp -a "$kvmtool" "$1/lab/kvmtool"
	else
		echo "mkinitramfs: no $kvmtool (scripts/fetch.sh lab-kvmtool-arm64): the bench has no kvmtool peer" >&2
	fi
	# the cpio vmm links in as its built-in guest (Makefile: GUEST_CPIO), for QEMU's -initrd
	[ -f "$top/build/arm64/guest/initramfs.cpio.gz" ] &&
		cp "$top/build/arm64/guest/initramfs.cpio.gz" "$1/lab/builtin-guest.cpio.gz"
	return 0
}

if [ "${1:-}" = --bench-extra ]; then
	out=${2:?usage: mkinitramfs.sh --bench-extra OUT.cpio}
	xroot=$(mktemp -d)
	trap 'rm -rf "$xroot"' EXIT
	bench_extra "$xroot"
	(cd "$xroot" && find lab -print0 | cpio --null -o -H newc --quiet) >"$out.tmp"
	mv "$out.tmp" "$out"
	exit 0
fi
stage=
stage_bench=
if [ "${1:-}" = --stage ]; then stage=$2; [ "${3:-}" = --bench ] && stage_bench=1; fi
out=${1:?usage: mkinitramfs.sh OUT.cpio.gz | --stage DIR [--bench] | --bench-extra OUT.cpio}

[ -x "$pkg/bin/busybox" ] || { echo "mkinitramfs: no arm64 busybox; run scripts/fetch.sh lab-arm64" >&2; exit 1; }
[ -x "$top/build/arm64/vmm" ] || { echo "mkinitramfs: no build/arm64/vmm; run make ARCH=arm64" >&2; exit 1; }
kver=$(ls "$pkg/lib/modules" | head -1)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT

mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,etc,lab/tests,lib/modules/$kver}
cp "$pkg/bin/busybox" "$root/bin/busybox"
cp "$top/tests/lab/init.sh" "$root/init"
chmod +x "$root/init"
cp "$top/build/arm64/vmm" "$root/lab/vmm"
# The host's own kernel where vmm looks for it: it is also the default guest kernel.
mkdir -p "$root/boot"
cp "$pkg"/boot/vmlinuz-"$kver" "$root/boot/"
for t in "$top"/build/arm64/tests/lab/*_test; do
	[ -x "$t" ] && cp "$t" "$root/lab/tests/"
done
# make bench's runner (tests/lab/bench.c): not a test, so not in /lab/tests.
[ -x "$top/build/arm64/tests/lab/bench" ] && cp "$top/build/arm64/tests/lab/bench" "$root/lab/bench"
# The bare-metal payload the tests boot with --kernel-format flat (Makefile: tests/lab/baremetal/).
[ -f "$top/build/arm64/tests/lab/baremetal.bin" ] && cp "$top/build/arm64/tests/lab/baremetal.bin" "$root/lab/"
# The bench's Image-format payload that powers off at its first instructions (baremetal/poweroff.S).
[ -f "$top/build/arm64/tests/lab/poweroff.img" ] && cp "$top/build/arm64/tests/lab/poweroff.img" "$root/lab/"

# Modules: resolve dependencies from each module's own modinfo, then let depmod index them.
# add_mods ROOT LIST adds LIST's modules to the tree at ROOT.
mdir=$pkg/lib/modules/$kver
declare -A seen=()
find_mod() { find "$mdir/kernel" -name "$(echo "$1" | sed 's/[-_]/[-_]/g').ko*" | head -1; }
add_mod() {
	local name=${1//-/_} f deps d
	[ -n "${seen[$name]:-}" ] && return 0
	seen[$name]=1
	f=$(find_mod "$1")
	[ -n "$f" ] || { echo "mkinitramfs: module $1 not in the kernel package" >&2; exit 1; }
	local rel=${f#"$mdir"/}
	mkdir -p "$root/lib/modules/$kver/$(dirname "$rel")"
	case $f in
	*.xz) xz -dc "$f" >"$root/lib/modules/$kver/${rel%.xz}" ;;
	*) cp "$f" "$root/lib/modules/$kver/$rel" ;;
	esac
	deps=$(/sbin/modinfo -F depends "$f" | tr ',' ' ')
	for d in $deps; do add_mod "$d"; done
}
add_mods() {
	local list=$2 m
	root=$1
	seen=()
	mkdir -p "$root/lib/modules/$kver"
	while read -r m; do
		m=${m%%#*}; m=$(echo "$m" | xargs)
		[ -n "$m" ] && add_mod "$m"
	done <"$list"
	cp "$mdir"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kver/" 2>/dev/null || true
	/sbin/depmod -b "$root" "$kver"
}
host_root=$root

# The test guest that vmm boots inside the lab: busybox, its own modules, guest-init.sh as /init.
groot=$(mktemp -d)
trap 'rm -rf "$host_root" "$groot"' EXIT
mkdir -p "$groot"/{bin,sbin,dev,proc,sys,tmp}
cp "$pkg/bin/busybox" "$groot/bin/busybox"
cp "$top/tests/lab/guest-init.sh" "$groot/init"
chmod +x "$groot/init"
# The guest's own programs (Makefile: tests/lab/guest/), as /bin/NAME.
for g in "$top"/build/arm64/tests/lab/guest-*; do
	[ -x "$g" ] && cp "$g" "$groot/bin/${g##*/guest-}"
done
# vmm's built-in guest's /init with the latency probe, for steps that run it after their set-up.
[ -x "$top/build/arm64/guest/init" ] && cp "$top/build/arm64/guest/init" "$groot/bin/vmm-init"
add_mods "$groot" "$top/tests/lab/guest-modules.list"
(cd "$groot" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$host_root/lab/guest.cpio.gz"

if [ -n "$stage" ]; then
	[ -z "$stage_bench" ] || bench_extra "$host_root"
	rm -rf "$stage" && mkdir -p "$stage" && cp -a "$host_root/lab/." "$stage/"
	exit 0
fi
add_mods "$host_root" "$top/tests/lab/modules.list"
(cd "$host_root" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$out.tmp"
mv "$out.tmp" "$out"
