#!/usr/bin/env bash
# make check-hw: the boot, virtio, VFIO and A/B lab tests run directly on a KVM host (arm64 or
# x86_64) instead of inside the emulated lab (on x86_64: the x86 lab's boots, virtio-blk and VF
# checks, the VF only when VMM_HW_PF and VMM_HW_VF name one). Says first what the host offers (KVM, GICv4/4.1 and
# vLPI injection, AVIC, APICv/IPIv, IOMMU, SR-IOV NICs and their PF link) and skips with the reason
# whatever it lacks. Ends with "N passed, N failed, N skipped".
# Exit status: 0 all ran passed, 1 a failure, 4 (kselftest's skip) nothing could run here.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
KSFT_SKIP=4
arch=$(uname -m | sed s/aarch64/arm64/)
res=build/check-hw
pass=0 fail=0 skip=0

note() { echo "check-hw: $*"; }
feature() { printf 'check-hw: %-24s %s\n' "$1" "$2"; }
skip_all() { note "SKIP: $*"; echo "0 passed, 0 failed, 1 skipped"; exit $KSFT_SKIP; }

note "host $(uname -n): $arch, Linux $(uname -r)"
[ -e /dev/kvm ] || skip_all "no /dev/kvm on this machine (no KVM: not a KVM host, or the kvm module is not loaded); make check runs the tests in the emulated lab instead"
[ -r /dev/kvm ] && [ -w /dev/kvm ] ||
	skip_all "/dev/kvm exists but $(id -un) cannot open it read-write: add the user to group $(stat -c %G /dev/kvm) or run as root"

# What the host offers. dmesg may need root; what cannot be read is said so, never guessed.
klog=$(dmesg 2>/dev/null || true)
[ -n "$klog" ] || note "(dmesg unreadable as $(id -un): GIC/AVIC lines below may say unknown)"
yesno() { if [ "$1" = 1 ]; then echo "yes${2:+ ($2)}"; else echo "no${3:+ ($3)}"; fi; }
param() { cat "/sys/module/$1/parameters/$2" 2>/dev/null | tr -d '\n'; }
if [ "$arch" = arm64 ]; then
	gicv4=0 gicv41=0 vlpi=0
	grep -q 'GICv4' <<<"$klog" && gicv4=1
	grep -qE 'GICv4\.1|RVPEID' <<<"$klog" && gicv41=1
	grep -q 'kvm \[[0-9]*\]: GICv4 support enabled' <<<"$klog" && vlpi=1
	feature "GICv4 ITS" "$(yesno $gicv4 '' 'direct vLPI injection impossible: VFIO MSIs are software-injected')"
	feature "GICv4.1" "$(yesno $gicv41 'vSGIs' 'no direct vSGI injection')"
	feature "vLPI injection in KVM" "$(yesno $vlpi 'kvm-arm.vgic_v4_enable=1' 'boot the host with kvm-arm.vgic_v4_enable=1')"
else
	avic=$(param kvm_amd avic) apicv=$(param kvm_intel enable_apicv) ipiv=$(param kvm_intel enable_ipiv)
	feature "AVIC (AMD)" "$(yesno "$([ "$avic" = Y ] || [ "$avic" = 1 ] && echo 1)" '' "${avic:-kvm_amd not loaded}")"
	feature "APICv (Intel)" "$(yesno "$([ "$apicv" = Y ] && echo 1)" '' "${apicv:-kvm_intel not loaded}")"
	feature "IPIv (Intel)" "$(yesno "$([ "$ipiv" = Y ] && echo 1)" '' "${ipiv:-kvm_intel not loaded or too old}")"
fi
iommus=$(ls /sys/class/iommu 2>/dev/null | tr '\n' ' ')
feature "IOMMU" "$(yesno "$([ -n "$iommus" ] && echo 1)" "$iommus" 'none registered: no VFIO passthrough')"
feature "iommufd" "$(yesno "$([ -c /dev/iommu ] && echo 1)" '/dev/iommu' 'CONFIG_IOMMUFD off or not loaded')"
nics=0
for d in /sys/bus/pci/devices/*; do
	[ -r "$d/sriov_totalvfs" ] && [ "$(cat "$d/sriov_totalvfs")" -gt 0 ] 2>/dev/null || continue
	case $(cat "$d/class") in 0x02*) ;; *) continue ;; esac
	nics=$((nics + 1))
	for n in "$d"/net/*; do
		[ -e "$n" ] || continue
		feature "SR-IOV NIC ${d##*/}" "$(basename "$n"): $(cat "$d/sriov_numvfs") of $(cat "$d/sriov_totalvfs") VFs, PF link $([ "$(cat "$n/carrier" 2>/dev/null)" = 1 ] && echo up || echo 'down (its VFs stay in reset)')"
	done
done
[ $nics -gt 0 ] || feature "SR-IOV NICs" "none"

if [ "$arch" = x86_64 ]; then
	# The x86 lab's boots, disk and VF checks (tests/lab/init-x86.sh) on this host's own KVM.
	[ -d /sys/module/kvm_pvm ] &&
		skip_all "this /dev/kvm is kvm_pvm: it runs tiny hand-made guests only (a stock Linux kernel stops in its decompressor with an emulation failure, which vmm run reports with the instruction bytes: lab.md), so the boot, virtio and VFIO checks cannot run here; make check runs them in the emulated x86 lab"
	[ -d /sys/module/kvm_amd ] || [ -d /sys/module/kvm_intel ] ||
		skip_all "/dev/kvm is served by neither kvm_amd nor kvm_intel ($(ls -d /sys/module/kvm_* 2>/dev/null | xargs -n1 basename 2>/dev/null | tr '\n' ' ')): vmm boots Linux guests on those only"
	grep -qwE 'svm|vmx' /proc/cpuinfo ||
		skip_all "the CPU shows neither svm nor vmx in /proc/cpuinfo: no hardware virtualization for KVM to use"
	make all >/dev/null || { note "FAIL: make all"; exit 1; }
	[ -f .cache/lab/x86/pkg/.stamp ] || scripts/fetch.sh lab-x86 >/dev/null || { note "FAIL: scripts/fetch.sh lab-x86"; exit 1; }
	stage=$top/build/hw-stage-x86
	tests/lab/run-x86.sh --stage "$stage" || { note "FAIL: staging /lab"; exit 1; }
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	if [ -e /lab ] && [ ! -L /lab ]; then
		note "FAIL: /lab exists and is not a link this script made: move it away"; exit 1
	fi
	$SUDO ln -sfn "$stage" /lab || { note "FAIL: cannot link /lab to $stage"; exit 1; }
	rm -rf "$res"; mkdir -p "$res"
	# the test guest's disk on a real file system (O_DIRECT); its modules are the lab kernel's
	truncate -s 16M "$res/disk.img"
	note "running the x86 lab's checks on this host (tests/lab/init-x86.sh)${VMM_HW_VF:+ with VF $VMM_HW_VF of $VMM_HW_PF}"
	$SUDO env LAB_HW=1 PATH="$PATH" LAB_KERNEL="$(ls "$stage"/boot/vmlinuz-* | head -1)" LAB_DISK="$res/disk.img" \
		LAB_PF="${VMM_HW_PF:-}" LAB_VF="${VMM_HW_VF:-}" sh tests/lab/init-x86.sh >"$res/console.log" 2>&1
	$SUDO rm -f /lab
	awk -v out="$res" '
		/^LAB-BEGIN / { name = $2; file = out "/" name ".log"; printf "" > file; next }
		/^LAB-END / { if (file) { print $0 >> file; close(file) }; file = ""; next }
		file { print >> file }
	' "$res/console.log"
	LAB_HW=1 tests/lab/check-x86.sh "$res" >"$res/check-x86.tap"
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP"*) skip=$((skip + 1)); echo "skip x86: ${line#ok }" ;;
		"ok "*) pass=$((pass + 1)) ;;
		"not ok "*) fail=$((fail + 1)); echo "FAIL x86: ${line#not ok }" ;;
		esac
	done <"$res/check-x86.tap"
	grep -q '^LAB-DONE' "$res/console.log" || { fail=$((fail + 1)); note "FAIL: init-x86.sh did not finish; see $res/console.log"; }
	echo "$pass passed, $fail failed, $skip skipped"
	[ $fail -eq 0 ] || exit 1
	[ $pass -gt 0 ] || exit $KSFT_SKIP
	exit 0
fi
grep -q 'GICv3\|GICv4' <<<"$klog$(cat /proc/interrupts 2>/dev/null)" ||
	note "(no GICv3 seen in dmesg or /proc/interrupts: vmm needs a GICv3 host; the tests will say if not)"

# The lab's /lab tree, staged from this build, at /lab where the tests look for it.
make ARCH=arm64 all >/dev/null || { note "FAIL: make ARCH=arm64 all"; exit 1; }
[ -f .cache/lab/arm64/pkg/.stamp ] || scripts/fetch.sh lab-arm64 >/dev/null || { note "FAIL: scripts/fetch.sh lab-arm64"; exit 1; }
stage=$top/build/hw-stage
tests/lab/mkinitramfs.sh --stage "$stage" || { note "FAIL: staging /lab"; exit 1; }
SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
if [ -e /lab ] && [ ! -L /lab ]; then
	note "FAIL: /lab exists and is not a link this script made: move it away"; exit 1
fi
$SUDO ln -sfn "$stage" /lab || { note "FAIL: cannot link /lab to $stage"; exit 1; }
# The test guest carries the lab kernel's modules: boot that kernel, not the host's.
export VMM_LAB_KERNEL; VMM_LAB_KERNEL=$(ls "$top"/.cache/lab/arm64/pkg/boot/vmlinuz-* | head -1)

rm -rf "$res"; mkdir -p "$res"
tally() { # NAME LOG
	local line
	if ! grep -q '^# Totals:' "$2"; then
		echo "FAIL $1: no TAP totals (crashed?); see $2"; fail=$((fail + 1)); return
	fi
	while IFS= read -r line; do
		case $line in
		"ok "*"# SKIP"*) skip=$((skip + 1)); echo "skip $1: ${line#ok }" ;;
		"ok "*) pass=$((pass + 1)) ;;
		*) fail=$((fail + 1)); echo "FAIL $1: ${line#not ok }" ;;
		esac
	done < <(grep -E '^(not )?ok [0-9]+ ' "$2")
}
run() { # NAME [ARGS...]
	local n=$1; shift
	note "running $n $*"
	$SUDO env VMM_LAB_KERNEL="$VMM_LAB_KERNEL" /lab/tests/"$n" "$@" >"$res/$n.log" 2>&1
	tally "$n" "$res/$n.log"
}
run boot_test
run virtio_test
run halt_poll_test # vmm ab, the control socket, stats
run probe_test
# The VFIO tests drive the lab's own devices (an igb PF at 0000:00:03.0, QEMU's edu at
# 0000:00:05.0); on a real host they run only where those addresses hold them.
if [ -z "$iommus" ]; then
	skip=$((skip + 1)); note "skip vfio_test, vf_test: no IOMMU on this host"
elif [ "$(cat /sys/bus/pci/devices/0000:00:03.0/vendor 2>/dev/null):$(cat /sys/bus/pci/devices/0000:00:03.0/device 2>/dev/null)" != 0x8086:0x10c9 ]; then
	skip=$((skip + 1)); note "skip vfio_test, vf_test: they drive an igb PF at 0000:00:03.0 (the lab's); this host has $nics SR-IOV NIC(s) elsewhere"
else
	run vf_test
	run vfio_test
fi
$SUDO rm -f /lab
echo "$pass passed, $fail failed, $skip skipped"
[ $fail -eq 0 ] || exit 1
[ $pass -gt 0 ] || exit $KSFT_SKIP
