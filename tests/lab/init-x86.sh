#!/bin/busybox sh
# /init of the x86 lab host (run-x86.sh): loads kvm_amd (QEMU's -cpu max emulates SVM with NPT),
# then boots Debian's amd64 kernel with vmm's built-in guest on 2 vCPUs three times (default,
# xAPIC with knobs forced, HLT kept in the guest); check-x86.sh compares what the guest saw with
# the policy vmm printed; then runs the x86 KVM-API tests (kvm_x86_test). lab.mode=shell gives a
# shell instead.
/bin/busybox --install -s /bin
ln -sf /bin/busybox /sbin/modprobe 2>/dev/null
export PATH=/bin:/sbin:/lab
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mkdir -p /dev/pts && mount -t devpts -o ptmxmode=0666 devpts /dev/pts
modprobe kvm_amd 2>/tmp/modprobe.log || echo "LAB-INFO modprobe kvm_amd failed: $(cat /tmp/modprobe.log)"

mode=test
for a in $(cat /proc/cmdline); do
	case $a in
	lab.mode=*) mode=${a#lab.mode=} ;;
	esac
done
echo "LAB-UP uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"
[ -c /dev/kvm ] && echo "LAB-INFO /dev/kvm present" || echo "LAB-INFO /dev/kvm MISSING"
dmesg | grep -iE "kvm|svm|avic" | sed 's/^/LAB-INFO dmesg: /'
if [ "$mode" = shell ]; then
	echo "lab shell: /lab/vmm; 'poweroff -f' leaves"
	setsid cttyhack sh
	poweroff -f
fi
echo 1 >/proc/sys/kernel/printk
# boot NAME VMM-OPTIONS...: one boot of the built-in guest, its output between LAB- markers.
boot() {
	local name=$1
	shift
	echo "LAB-BEGIN boot-$name"
	/lab/vmm run -c 2 -m 512M "$@" \
		-p "console=ttyS0 panic=-1 quiet vmm.probe=timer:interval_us=1000,count=100" </dev/null 2>&1
	echo "LAB-END boot-$name rc=$?"
}
boot default --irqchip kernel
boot xapic --apic xapic --pv pv-ipi=off,hint-dedicated=on,pv-tlb-flush=off
boot nohlt --no-hlt-exit --pv poll-control=off
# The per-vCPU polling switch through the control socket while the guest runs its probe. With
# KVM_HINTS_REALTIME the guest's cpuidle-haltpoll takes over and writes MSR_KVM_POLL_CONTROL=0.
echo "LAB-BEGIN boot-pollctl"
/lab/vmm run -c 2 -m 512M --pv hint-dedicated=on --ctl /tmp/pc.ctl \
	-p "console=ttyS0 panic=-1 quiet vmm.probe=timer:interval_us=1000,count=2000" </dev/null >/tmp/pc.log 2>&1 &
pid=$!
i=0
while ! grep -q '^vmm-guest: x86 cpuidle' /tmp/pc.log && [ $i -lt 900 ]; do sleep 0.2; i=$((i + 1)); done
echo "pollctl get-after-boot $(/lab/vmm ctl /tmp/pc.ctl get 2>&1 | grep -o '"poll_control":[^]]*]')"
echo "pollctl set-1-0 $(/lab/vmm ctl /tmp/pc.ctl set poll-control 1 0 2>&1)"
echo "pollctl set-1-1 $(/lab/vmm ctl /tmp/pc.ctl set poll-control 1 1 2>&1)"
echo "pollctl get-after-set $(/lab/vmm ctl /tmp/pc.ctl get 2>&1 | grep -o '"poll_control":[^]]*]')"
echo "pollctl set-all-1 $(/lab/vmm ctl /tmp/pc.ctl set poll-control all 1 2>&1)"
echo "pollctl set-9-1 $(/lab/vmm ctl /tmp/pc.ctl set poll-control 9 1 2>&1)"
wait $pid
rc=$?
cat /tmp/pc.log
echo "LAB-END boot-pollctl rc=$rc"
# the KVM-API tests with a tiny guest (tests/kvm/x86) on this host's nested-SVM /dev/kvm
echo "LAB-BEGIN kvm_x86_test"
/lab/kvm_x86_test </dev/null 2>&1
echo "LAB-END kvm_x86_test rc=$?"
echo "LAB-DONE"
poweroff -f
