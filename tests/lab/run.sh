#!/usr/bin/env bash
# Boots the emulated arm64 KVM host (QEMU TCG, EL2, GICv4 ITS, SMMUv3, igb) and runs the lab tests
# in it, or gives a shell. Each test's output lands in OUT/NAME.log; the console in OUT/console.log.
# With --bench it runs make bench's /lab/bench instead: its table on stdout, its JSON in OUT/bench.json.
# --prepare only fetches the lab's kernel and builds its initramfs: runs that then share them (one
# OUT each, check.sh's concurrent GICv4 and GICv3 passes) never build them at the same time.
# Usage: run.sh [--gic 3|4] [--shell|--demo|--bench|--prepare] [--tests a,b] [--args NAME=a,b] [--out DIR]
#               [--timeout SECONDS] [--kernel-args "A B"]   (--args passes harness arguments to one
#               test, e.g. -t,NAME; --kernel-args adds to the lab host's kernel command line, e.g.
#               kvm-arm.wfi_trap_policy=trap)
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
cache=${VMM_CACHE:-$top/.cache}
gic=4 mode=test tests= timeout=900 out= targs= kargs=

while [ $# -gt 0 ]; do
	case $1 in
	--gic) gic=$2; shift ;;
	--shell) mode=shell ;;
	--demo) mode=demo ;;
	--bench) mode=bench ;;
	--prepare) mode=prepare ;;
	--tests) tests=$2; shift ;;
	--args) targs="$targs lab.args.$2"; shift ;;
	--out) out=$2; shift ;;
	--timeout) timeout=$2; shift ;;
	--kernel-args) kargs="$kargs $2"; shift ;;
	*) echo "run.sh: unknown option $1" >&2; exit 2 ;;
	esac
	shift
done
case $gic in 3|4) ;; *) echo "run.sh: --gic takes 3 or 4" >&2; exit 2 ;; esac
out=${out:-$top/build/lab/gic$gic}
mkdir -p "$out" "$top/build/lab"

command -v qemu-system-aarch64 >/dev/null || { echo "run.sh: qemu-system-aarch64 missing: make deps" >&2; exit 1; }
pkg=$cache/lab/arm64/pkg
# Asking apt for the newest kernel costs seconds: only when nothing is unpacked yet (or asked to).
[ -f "$pkg/.stamp" ] && [ -z "${VMM_LAB_REFRESH:-}" ] || "$top/scripts/fetch.sh" lab-arm64
kernel=$(ls "$pkg"/boot/vmlinuz-* | head -1)
initrd=$top/build/lab/initramfs.cpio.gz
inputs=("$top/build/arm64/vmm" "$top"/build/arm64/tests/lab/*_test "$top"/build/arm64/tests/lab/guest-* "$top/tests/lab/init.sh"
	"$top/build/arm64/tests/lab/bench" "$top/build/arm64/tests/lab/poweroff.img"
	"$top/tests/lab/modules.list" "$top/tests/lab/mkinitramfs.sh" "$pkg/.stamp"
	"$top/tests/lab/guest-init.sh" "$top/tests/lab/guest-modules.list")
stale=0
[ -f "$initrd" ] || stale=1
for f in "${inputs[@]}"; do [ "$f" -nt "$initrd" ] && stale=1; done
if [ $stale -eq 1 ]; then
	t0=$(date +%s.%N)
	"$top/tests/lab/mkinitramfs.sh" "$initrd"
	echo "lab: initramfs built in $(awk -v a="$t0" -v b="$(date +%s.%N)" "BEGIN{printf \"%.1f\", b-a}") s ($(du -h "$initrd" | cut -f1))"
fi

[ "$mode" = prepare ] && exit 0

# make bench alone carries its peers, QEMU/KVM (64 MiB) and kvmtool (3 MiB): appended to the tests'
# initramfs as a second archive, so the tests' own does not grow and switching modes rebuilds neither.
if [ "$mode" = bench ]; then
	[ -f "$cache/lab/arm64/qemu/.stamp" ] && [ -z "${VMM_LAB_REFRESH:-}" ] || "$top/scripts/fetch.sh" lab-qemu-arm64 ||
		echo "lab: fetching QEMU failed: the bench runs without its QEMU peer" >&2
	[ -f "$cache/lab/arm64/kvmtool/.stamp" ] && [ -z "${VMM_LAB_REFRESH:-}" ] || "$top/scripts/fetch.sh" lab-kvmtool-arm64 ||
		echo "lab: fetching or building kvmtool failed: the bench runs without its kvmtool peer" >&2
	extra=$top/build/lab/bench-extra.cpio
	if [ ! -f "$extra" ] || [ "$top/tests/lab/mkinitramfs.sh" -nt "$extra" ] ||
		[ "$cache/lab/arm64/qemu/.stamp" -nt "$extra" ] || [ "$cache/lab/arm64/kvmtool/.stamp" -nt "$extra" ] ||
		[ "$top/build/arm64/guest/initramfs.cpio.gz" -nt "$extra" ]; then
		"$top/tests/lab/mkinitramfs.sh" --bench-extra "$extra"
	fi
	# the kernel takes an uncompressed archive only at a 4-byte offset (zeros between are skipped)
	pad=$(( (4 - $(stat -c %s "$initrd") % 4) % 4 ))
	{ cat "$initrd"; head -c "$pad" /dev/zero; cat "$extra"; } >"$top/build/lab/initramfs-bench.cpio"
	initrd=$top/build/lab/initramfs-bench.cpio
fi

# Two disks of the lab host's own, so vmm's disks are block-backed (O_DIRECT, AIO really in
# flight) rather than tmpfs: vda carries a file system (/disk), vdb is used raw as a block device.
# In OUT: each run has its own.
for d in a b; do
	rm -f "$out/hostdisk-$d.img"
	truncate -s 128M "$out/hostdisk-$d.img"
done

append="console=ttyAMA0 panic=-1 kvm-arm.vgic_v4_enable=1 lab.mode=$mode"
[ -n "$tests" ] && append="$append lab.tests=$tests"
append="$append$targs$kargs"
qemu=(qemu-system-aarch64
	-M "virt,virtualization=on,gic-version=$gic,iommu=smmuv3,highmem=off"
	-accel tcg,thread=multi -cpu max,pauth-impdef=on -smp 2 -m 2G
	-nographic -no-reboot -nic none
	-kernel "$kernel" -initrd "$initrd" -append "$append"
	-device igb,bus=pcie.0,addr=0x3,mac=52:54:00:12:34:56 -device edu,bus=pcie.0,addr=0x5
	-drive "file=$out/hostdisk-a.img,if=none,id=hda,format=raw,cache=unsafe"
	-device virtio-blk-pci,drive=hda,bus=pcie.0,addr=0x6
	-drive "file=$out/hostdisk-b.img,if=none,id=hdb,format=raw,cache=unsafe"
	-device virtio-blk-pci,drive=hdb,bus=pcie.0,addr=0x7)

if [ "$mode" = shell ]; then
	exec "${qemu[@]}"
fi
if [ "$mode" = demo ]; then
	# The host's own boot log is noise here: show from /init on.
	timeout --foreground -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tr -d '\r' | sed -u -n '/^LAB-UP/,$p'
	exit 0
fi

t0=$(date +%s.%N)
set +e
timeout --foreground -k 10 "$timeout" "${qemu[@]}" </dev/null 2>&1 | tr -d '\r' >"$out/console.log"
set -e
t1=$(date +%s.%N)

if [ "$mode" = bench ]; then
	# the last complete JSON block: the bench writes one after each section
	awk '/^BENCH-JSON-BEGIN/ { buf = ""; on = 1; next } /^BENCH-JSON-END/ { last = buf; on = 0; next }
		on { buf = buf $0 "\n" } END { printf "%s", last }' "$out/console.log" >"$out/bench.json"
	sed -n '/^LAB-UP/,$p' "$out/console.log" | sed '/^BENCH-JSON-BEGIN/,/^BENCH-JSON-END/d' | grep -v '^LAB-DONE'
	echo "lab: bench took $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.0f", b-a}') s in all"
	grep -q '^LAB-BENCH-RC 0' "$out/console.log" && [ -s "$out/bench.json" ] && exit 0
	echo "lab: the bench did not finish (timeout ${timeout}s?): $out/bench.json has the sections done;" \
		"console in $out/console.log" >&2
	exit 1
fi

# Split the console into one log per test.
awk -v out="$out" '
	/^LAB-BEGIN / { name = $2; file = out "/" name ".log"; printf "" > file; next }
	/^LAB-END / { if (file) { print $0 >> file; close(file) }; file = ""; next }
	file { print >> file }
' "$out/console.log"
up=$(sed -n 's/^LAB-UP uptime=\([0-9.]*\).*/\1/p' "$out/console.log")
echo "lab gic$gic: host up at ${up:-?} s (guest uptime), whole run $(awk -v a="$t0" -v b="$t1" 'BEGIN{printf "%.1f", b-a}') s"
grep '^LAB-INFO' "$out/console.log" | sed "s/^LAB-INFO /lab gic$gic: /" || true
if ! grep -q '^LAB-DONE' "$out/console.log"; then
	echo "lab gic$gic: the host did not finish (timeout ${timeout}s or crash); last console lines:" >&2
	tail -n 30 "$out/console.log" >&2
	exit 1
fi
