#!/usr/bin/env bash
# The x86 lab host (lab.md): QEMU TCG q35 with -cpu max (nested SVM, kvm_amd), Debian's amd64
# 6.12 kernel and busybox, vmm built for x86_64 and linked statically. Runs init-x86.sh's boots
# (console in OUT/console.log, one log per boot) or gives a shell.
# Usage: run-x86.sh [--shell] [--out DIR] [--timeout SECONDS]
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VMM_CACHE:-$top/.cache}
mode=test timeout=900 out=$top/build/lab/x86
while [ $# -gt 0 ]; do
	case $1 in
	--shell) mode=shell ;;
	--out) out=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	*) echo "run-x86.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
command -v qemu-system-x86_64 >/dev/null || { echo "run-x86.sh: qemu-system-x86_64 missing: make deps" >&2; exit 1; }
pkg=$cache/lab/x86/pkg
[ -f "$pkg/.stamp" ] || "$top/scripts/fetch.sh" lab-x86
b=$top/build/x86_64
[ -f "$b/libvmm.a" ] && [ -f "$b/obj/vmm/main.o" ] || { echo "run-x86.sh: run make first" >&2; exit 1; }
mkdir -p "$out"
kernel=$(ls "$pkg"/boot/vmlinuz-* | head -1)
kver=$(ls "$pkg/lib/modules" | head -1)
root=$(mktemp -d)
trap 'rm -rf "$root"' EXIT
mkdir -p "$root"/{bin,sbin,dev,proc,sys,tmp,run,etc,lab,boot,lib/modules/$kver}
cp "$pkg/bin/busybox" "$root/bin/busybox"
cp "$top/tests/lab/init-x86.sh" "$root/init"
# static: the lab host has no libfdt or libaio
gcc -static -pthread "$b/obj/vmm/main.o" "$b/obj/guest/initramfs.o" "$b/libvmm.a" -lfdt -lz -laio -lseccomp -lm \
	-o "$root/lab/vmm"
cp "$kernel" "$root/boot/"
# the x86 KVM-API tests (tests/kvm/x86), static already
kvmtest=$b/tests/kvm/x86/kvm_x86_test
[ -f "$kvmtest" ] || { echo "run-x86.sh: $kvmtest missing: run make first" >&2; exit 1; }
cp "$kvmtest" "$root/lab/"
mdir=$pkg/lib/modules/$kver
declare -A seen=()
add_mod() {
	local name=${1//-/_} f d
	[ -n "${seen[$name]:-}" ] && return 0
	seen[$name]=1
	f=$(find "$mdir/kernel" -name "$(echo "$1" | sed 's/[-_]/[-_]/g').ko*" | head -1)
	[ -n "$f" ] || { echo "run-x86.sh: module $1 not in the kernel package" >&2; exit 1; }
	local rel=${f#"$mdir"/}
	mkdir -p "$root/lib/modules/$kver/$(dirname "$rel")"
	case $f in
	*.xz) xz -dc "$f" >"$root/lib/modules/$kver/${rel%.xz}" ;;
	*) cp "$f" "$root/lib/modules/$kver/$rel" ;;
	esac
	for d in $(/sbin/modinfo -F depends "$f" | tr ',' ' '); do add_mod "$d"; done
}
add_mod kvm_amd
cp "$mdir"/modules.{order,builtin,builtin.modinfo} "$root/lib/modules/$kver/" 2>/dev/null || true
/sbin/depmod -b "$root" "$kver"
initrd=$out/initramfs.cpio.gz
(cd "$root" && find . -print0 | cpio --null -o -H newc --quiet | gzip -1) >"$initrd"

qemu=(qemu-system-x86_64 -M q35 -accel tcg,thread=multi -cpu max -smp 2 -m 2G -nographic -no-reboot
	-nic none -kernel "$kernel" -initrd "$initrd"
	-append "console=ttyS0 panic=-1 lab.mode=$mode")
[ "$mode" = shell ] && exec "${qemu[@]}"
t0=$(date +%s)
# QEMU's multi-threaded TCG has been seen to abort on its own (an iotlb_to_section assertion in
# system/physmem.c) on a loaded machine: such a run, and only such a run, is retried once.
for attempt in 1 2; do
	set +e
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tr -d '\r' >"$out/console.log"
	set -e
	grep -q '^LAB-DONE' "$out/console.log" && break
	grep -q '^qemu-system-x86_64: .*Assertion' "$out/console.log" || break
	echo "lab x86: QEMU aborted ($(grep -m1 '^qemu-system-x86_64: ' "$out/console.log")); retrying once"
done
awk -v out="$out" '
	/^LAB-BEGIN / { name = $2; file = out "/" name ".log"; printf "" > file; next }
	/^LAB-END / { if (file) { print $0 >> file; close(file) }; file = ""; next }
	file { print >> file }
' "$out/console.log"
echo "lab x86: whole run $(($(date +%s) - t0)) s"
grep '^LAB-INFO' "$out/console.log" | sed "s/^LAB-INFO /lab x86: /" || true
grep -q '^LAB-DONE' "$out/console.log" || { echo "lab x86: the host did not finish; last lines:" >&2; tail -n 30 "$out/console.log" >&2; exit 1; }
