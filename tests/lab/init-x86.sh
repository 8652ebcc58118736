#!/bin/busybox sh
# /init of the x86 lab host (run-x86.sh): loads kvm_amd (QEMU's -cpu max emulates SVM with NPT),
# then boots Debian's amd64 kernel with vmm's built-in guest on 2 vCPUs five times (default,
# xAPIC with knobs forced, HLT kept in the guest, the split irqchip, 4 GiB of RAM), the test guest
# with QEMU's edu passed through under each irqchip (its INTx), with a virtio-blk disk (write, then
# read-only), with virtio-net on a tap (pings both ways) and with an igb VF, one more built-in
# boot driving poll-control through vmm ctl, and the x86 KVM-API tests (kvm_x86_test);
# check-x86.sh compares what the guest saw with the policy vmm printed and checks the interrupts,
# the disk, the pings and the rest. lab.mode=shell gives a shell instead.
# make check-hw runs the same on a real x86 KVM host with LAB_HW=1 (scripts/check-hw.sh): nothing
# mounted, loaded or powered off; /lab is the staged tree, LAB_KERNEL the test guest's kernel,
# LAB_DISK its disk, LAB_PF/LAB_VF the VF to pass through (none: the VF checks are skipped).
if [ -z "${LAB_HW:-}" ]; then
/bin/busybox --install -s /bin
ln -sf /bin/busybox /sbin/modprobe 2>/dev/null
export PATH=/bin:/sbin:/lab
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t tracefs nodev /sys/kernel/tracing 2>/dev/null # vmm run --attribute's tracepoints
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mkdir -p /dev/pts && mount -t devpts -o ptmxmode=0666 devpts /dev/pts
modprobe kvm_amd 2>/tmp/modprobe.log || echo "LAB-INFO modprobe kvm_amd failed: $(cat /tmp/modprobe.log)"
# The emulated host's khugepaged was seen spinning on a CPU for minutes (soft lockups "CPU#1
# stuck for 153s! [khugepaged]" under TCG, the console silent, RCU stalls on CPU 1 in CI's run):
# it sleeps a day between scans here. Huge pages still come at fault time (guest RAM is
# MADV_HUGEPAGE); only collapsing later is off. A lab-host setting, not vmm's.
k=/sys/kernel/mm/transparent_hugepage/khugepaged/scan_sleep_millisecs
[ -w $k ] && echo 86400000 >$k && echo "LAB-INFO khugepaged: scans once a day (scan_sleep_millisecs $(cat $k))"
fi

mode=test
[ -n "${LAB_HW:-}" ] && mode=hw
for a in $(cat /proc/cmdline); do
	case $a in
	lab.mode=*) mode=${a#lab.mode=} ;;
	lab.args.bench=*) bargs=$(echo "${a#lab.args.bench=}" | tr ',' ' ') ;;
	lab.done=*) finished=",${a#lab.done=}," ;;
	lab.panic_in=*) panic_in=${a#lab.panic_in=} ;;
	esac
done
# todo NAME: whether the test NAME (its LAB-END marker's name) still has to run. run-x86.sh runs a
# lab host that died (the emulated host's own failures, docs/lab.md) again with lab.done= naming
# the tests the earlier runs finished, so the next run starts where the host died; a test of
# several parts (blk, net, vf) is named by its last part and runs whole again.
todo() {
	case ${finished:-} in *",$1,"*)
		echo "LAB-INFO $1: finished in an earlier run of the lab host, not run again"
		return 1 ;;
	esac
}
echo "LAB-UP uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"
[ -c /dev/kvm ] && echo "LAB-INFO /dev/kvm present" || echo "LAB-INFO /dev/kvm MISSING"
dmesg | grep -iE "kvm|svm|avic" | sed 's/^/LAB-INFO dmesg: /'
if [ "$mode" = shell ]; then
	echo "lab shell: /lab/vmm; 'poweroff -f' leaves"
	setsid cttyhack sh
	poweroff -f
fi
[ "$mode" = hw ] || echo 1 >/proc/sys/kernel/printk
if [ "$mode" = bench ]; then # make bench (run-x86.sh --bench): /lab/bench's table and JSON
	# the disk and the NIC (memory, blk, net): the lab host's vda, a tap and /dev/vhost-net
	modprobe tun; modprobe virtio_blk; modprobe vhost_net
	# shellcheck disable=SC2086 # words
	/lab/bench ${bargs:---quick --only startup+memory+blk} 2>&1
	echo "LAB-BENCH-RC $?"
	echo "LAB-DONE"
	poweroff -f
fi
# vmm caps: KVM's capabilities and KVM_GET_SUPPORTED_CPUID, which check-x86.sh holds the guests'
# own CPUID against
if todo caps; then
	echo "LAB-BEGIN caps"
	/lab/vmm caps 2>&1
	echo "LAB-END caps rc=$?"
fi
# lab_run NAME COMMAND...: one test boot between LAB-BEGIN and LAB-END. A guest now and then
# triple-faults in this emulated host, at any point of its boot (nested SVM under TCG, whose own
# kernel was found with a corrupted stack in the same runs; QEMU's guests do it there too,
# docs/lab.md), and vmm stops it as a reset (exit 2), saying where it was is lost (kvm_amd
# re-initialises the vCPU before reporting the shutdown). Only that boot runs once more, said as
# LAB-INFO; its first try stays in console.log (each LAB-BEGIN starts the test's log afresh). Any
# other failure stands.
lab_run() {
	local name=$1 try rc
	shift
	for try in 1 2; do
		echo "LAB-BEGIN $name"
		# run-x86.sh's LAB_X86_PANIC_IN: this host dies here, as the emulated host does on its own
		[ "$name" = "${panic_in:-}" ] && echo c >/proc/sysrq-trigger
		{ "$@" </dev/null; echo $? >/tmp/lab_run.rc; } 2>&1 | tee /tmp/lab_run.out
		rc=$(cat /tmp/lab_run.rc)
		echo "LAB-END $name rc=$rc"
		[ "$try" = 1 ] && [ "$rc" = 2 ] &&
			grep -q 'triple-faulted (KVM_EXIT_SHUTDOWN); where is lost' /tmp/lab_run.out || break
		echo "LAB-INFO $name: $(grep -m1 -o 'vCPU [0-9]*: the guest triple-faulted' /tmp/lab_run.out) (the emulated host's fault): once more"
	done
}
# boot NAME VMM-OPTIONS...: one boot of the built-in guest, its output between LAB- markers.
boot() {
	local name=$1
	shift
	todo "boot-$name" || return 0
	lab_run "boot-$name" /lab/vmm run -c 2 -m 512M "$@" \
		-p "console=ttyS0 panic=-1 quiet vmm.probe=timer:interval_us=1000,count=100"
}
boot default --irqchip kernel
boot xapic --apic xapic --pv pv-ipi=off,hint-dedicated=on,pv-tlb-flush=off
boot nohlt --no-hlt-exit --pv poll-control=off
boot split --irqchip split
# RAM above 4 GiB: 3 GiB below the PCI hole, 1 GiB from 4 GiB (the guest prints MemTotal)
boot mem4g -m 4G
# --attribute: the timer's samples split into stages from KVM's tracepoints (x86's order: the
# interrupt that sends a running vCPU out is handled after its exit); halt polling off. One vCPU
# on this one-CPU host, as a latency run would be: two vCPU threads sharing the CPU preempt each
# other, and a third of the samples came out ambiguous (out of the guest before the target, woken
# earlier by the other's IPI) in one run of three; 200 samples as the two vCPUs gave.
if todo boot-attr; then
	export VMM_ATTRIBUTE_CAPTURE=/tmp/attr.cap
	lab_run boot-attr /lab/vmm run -c 1 -m 512M --irqchip kernel --halt-poll-ns 0 --attribute \
		-p "console=ttyS0 panic=-1 quiet vmm.probe=timer:interval_us=1000,count=200"
	unset VMM_ATTRIBUTE_CAPTURE
	# what the join had, for a run whose classes lack a stage: the timer function it looked
	# for, the hrtimers that fired (function address, as the capture's signed decimal), the
	# samples' classes
	if [ -s /tmp/attr.cap ]; then
		echo "LAB-INFO attr-capture: $(awk '$1 == "bgfn" { printf "bgfn %s; ", $2 }
			$1 == "event" && $5 == 10 { h[$6]++ } $1 == "sample" { c[$6]++ }
			END { printf "hrtimer entries by function:"; for (f in h) printf " %s x%d", f, h[f]
			      printf "; samples by class:"; for (k in c) printf " %s x%d", k, c[k] }' /tmp/attr.cap)"
	fi
fi
# The per-vCPU polling switch through the control socket while the guest runs its probe. With
# KVM_HINTS_REALTIME the guest's cpuidle-haltpoll takes over and writes MSR_KVM_POLL_CONTROL=0.
if todo boot-pollctl; then
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
fi
# vmm ab with the per-vCPU polling switch as its knob, in one VM (the guest leaves the MSR alone
# without KVM_HINTS_REALTIME): under pc0 KVM never polls, so its epochs count no successful poll.
if todo ab-pollctl; then
	echo "LAB-BEGIN ab-pollctl"
	abpc() {
		/lab/vmm ab --arm pc0:'--poll-control 0' --arm pc1:'--poll-control 1' --epochs 3 --warmup 1 \
			--epoch-ms 400 --json /tmp/abpc.json -- -c 2 -m 512M --halt-poll-ns 500000 \
			-p "console=ttyS0 panic=-1 quiet vmm.probe=timer:interval_us=1000,count=4000" </dev/null 2>&1
	}
	abpc >/tmp/abpc.log
	rc=$?
	# once more when this one-CPU host stalled the whole VM (the guest and the control socket
	# silent for 60 s, seen once in ~20 runs): said, and the second run decides
	if [ $rc != 0 ] && grep -q "did not answer within" /tmp/abpc.log; then
		echo "LAB-RETRY ab-pollctl rc=$rc: $(grep -m1 'did not answer within' /tmp/abpc.log)"
		abpc >/tmp/abpc.log
		rc=$?
	fi
	cat /tmp/abpc.log
	echo "ab json: $(wc -c </tmp/abpc.json 2>/dev/null || echo none) bytes"
	echo "LAB-END ab-pollctl rc=$rc"
fi
# the KVM-API tests with a tiny guest (tests/kvm/x86) on this host's nested-SVM /dev/kvm
if todo kvm_x86_test; then
	echo "LAB-BEGIN kvm_x86_test"
	/lab/kvm_x86_test </dev/null 2>&1
	echo "LAB-END kvm_x86_test rc=$?"
fi

# tguest NAME STEP [PARAMS] -- VMM-OPTIONS...: the test guest (guest-init.sh) runs STEP.
kernel=${LAB_KERNEL:-$(ls /boot/vmlinuz-* | head -1)}
disk=${LAB_DISK:-/dev/vda}
tguest() {
	local name=$1 step=$2 params=$3
	shift 4
	lab_run "$name" /lab/vmm run -c 2 -m 512M -k "$kernel" -i /lab/guest.cpio.gz "$@" \
		-p "console=ttyS0 panic=-1 quiet vmmtest=$step $params"
}
pattern() { # N MiB of guest-init.sh's pattern
	i=0
	while [ $i -lt $((16 * $1)) ]; do
		yes "vmm-pattern-$i" | head -c 65536
		i=$((i + 1))
	done
}

# QEMU's edu passed through on vfio-pci (sysfs: vmm vf bind takes VFs only), booted with the test
# guest under each irqchip: its INTx is level-triggered, so every one of the rounds below needs
# the line re-armed after the guest's EOI (in-kernel: KVM's resamplefd; split: vmm's EOI exit).
edu=
for d in /sys/bus/pci/devices/*; do
	[ "$(cat $d/vendor):$(cat $d/device)" = 0x1234:0x11e8 ] && edu=${d##*/}
done
if [ -n "$edu" ] && { todo edu-kernel || todo edu-split; } >/dev/null; then
	modprobe vfio_pci 2>/dev/null; modprobe vfio_iommu_type1 2>/dev/null
	echo vfio-pci >/sys/bus/pci/devices/$edu/driver_override
	echo $edu >/sys/bus/pci/devices/$edu/driver/unbind 2>/dev/null
	echo $edu >/sys/bus/pci/drivers_probe
	echo "LAB-INFO edu $edu driver $(basename $(readlink /sys/bus/pci/devices/$edu/driver) 2>/dev/null) group $(basename $(readlink /sys/bus/pci/devices/$edu/iommu_group) 2>/dev/null)"
	for chip in kernel split; do
		todo edu-$chip || continue
		tguest edu-$chip edu vmmeduirqs=200 -- --irqchip $chip --timeout 300 --vfio "$edu"
	done
elif [ -z "$edu" ]; then
	echo "LAB-SKIP no edu device (QEMU's -device edu): the INTx passthrough checks do not run"
else # both finished in earlier runs: said
	todo edu-kernel; todo edu-split
fi

# virtio-blk on the host's own disk (O_DIRECT): the guest writes the pattern, the disk must hold
# it; then read-only, the guest reads it back and cannot write.
if todo blk-read; then
	if [ "$mode" != hw ]; then
		modprobe virtio_blk
		for i in $(seq 1 50); do [ -b /dev/vda ] && break; sleep 0.1; done
	fi
	tguest blk-write blkwrite "" -- -d "$disk"
	[ "$mode" = hw ] || echo 3 >/proc/sys/vm/drop_caches
	a=$(pattern 4 | md5sum | cut -d' ' -f1)
	b=$(head -c 4194304 "$disk" | md5sum | cut -d' ' -f1)
	echo "LAB-BEGIN blk-host"
	[ "$a" = "$b" ] && echo "LAB-BLK-HOST match" || echo "LAB-BLK-HOST differs ($a vs $b)"
	echo "LAB-END blk-host"
	tguest blk-read blkread "" -- -d "$disk,ro"
fi

# virtio-net on a tap (vmm creates vmmtap0 in this host; link-local only, nothing leaves): once
# the tap appears the host gives it fe80::1 and pings the guest's fe80::2 until it answers, then
# 20 times; the guest pings fe80::1 20 times (guest-init.sh's net step). /tmp/net.done: vmm has
# exited, so the host stops waiting for a tap or a guest that is gone.
if todo net-host; then
	[ "$mode" = hw ] || modprobe tun
	rm -f /tmp/net.done
	netpeer() {
		local i n
		for i in $(seq 1 3000); do
			[ -d /sys/class/net/vmmtap0 ] && break
			[ -e /tmp/net.done ] && { echo "LAB-NET-HOST no tap"; return; }
			sleep 0.1
		done
		echo 0 >/proc/sys/net/ipv6/conf/vmmtap0/accept_dad
		ip link set vmmtap0 up && ip -6 addr add fe80::1/64 dev vmmtap0 || { echo "LAB-NET-HOST no tap"; return; }
		for i in $(seq 1 240); do
			ping -6 -c 1 -W 1 fe80::2%vmmtap0 >/dev/null 2>&1 && break
			[ -e /tmp/net.done ] && break
			sleep 0.25
		done
		n=$(ping -6 -c 20 -i 0.02 -W 2 fe80::2%vmmtap0 2>&1 | sed -n 's/.* \([0-9]*\) packets received.*/\1/p')
		echo "LAB-NET-HOST-PINGS ${n:-0}"
	}
	netpeer >/tmp/netpeer.log 2>&1 &
	peer=$!
	tguest net net vmmpings=20 -- --net tap=vmmtap0,mac=02:00:00:00:00:02
	touch /tmp/net.done
	wait $peer
	echo "LAB-BEGIN net-host"
	cat /tmp/netpeer.log
	echo "LAB-END net-host"
fi

# An igb VF passed through (Intel IOMMU, MSI-X): igbvf in the guest pings the PF's fe80::1.
if todo vf-host-cfg; then
	pf=0000:00:03.0 vf=0000:00:13.0
	[ "$mode" = hw ] && pf=${LAB_PF:-} vf=${LAB_VF:-}
	echo "LAB-BEGIN vf-setup"
	if [ -z "$pf" ] || [ -z "$vf" ]; then
		echo "LAB-SKIP no VF named: set VMM_HW_PF and VMM_HW_VF (an SR-IOV PF whose link may carry fe80::1, and its VF) to pass one through"
		echo "LAB-END vf-setup rc=skip"
		echo "LAB-DONE"
		exit 0
	fi
	{ [ "$mode" = hw ] || modprobe igb; } && modprobe vfio-pci && modprobe vfio_iommu_type1
	for i in $(seq 1 50); do [ -d /sys/bus/pci/devices/$pf/net ] && break; sleep 0.1; done
	ifc=$(ls /sys/bus/pci/devices/$pf/net 2>/dev/null | head -1)
	echo "PF $pf ${ifc:-no interface} iommu group $(basename "$(readlink /sys/bus/pci/devices/$pf/iommu_group)")"
	rc=1
	if [ -n "$ifc" ] && { [ -e /sys/bus/pci/devices/$vf ] || /lab/vmm vf create $pf 1; }; then
		echo 0 >/proc/sys/net/ipv6/conf/$ifc/accept_dad
		ip link set $ifc up
		ip -6 addr add fe80::1/64 dev $ifc
		for i in $(seq 1 100); do [ "$(cat /sys/class/net/$ifc/operstate)" = up ] && break; sleep 0.1; done
		/lab/vmm vf mac $pf 0 02:00:00:00:00:13 && /lab/vmm vf bind $vf && /lab/vmm vf check $vf
		rc=$?
		echo "VF BAR 0: $(head -1 /sys/bus/pci/devices/$vf/resource)"
	fi
	echo "LAB-END vf-setup rc=$rc"
	tguest vf vf vmmpings=20 -- --vfio $vf
	# What this host reads at 0x100 of the VF (its first extended capability's header), for
	# check-x86.sh to compare with what the guest read through vmm's ECAM.
	echo "LAB-BEGIN vf-host-cfg"
	echo "LAB-VF-HOST-CFG $vf size=$(wc -c </sys/bus/pci/devices/$vf/config) ext0=0x$(dd if=/sys/bus/pci/devices/$vf/config bs=4 skip=64 count=1 2>/dev/null | od -A n -t x4 | tr -d ' ')"
	echo "LAB-END vf-host-cfg"
fi
echo "LAB-DONE"
if [ "$mode" = hw ]; then # a real host's NIC: its address goes, the VF back to igbvf
	ip -6 addr del fe80::1/64 dev $ifc 2>/dev/null
	/lab/vmm vf unbind $vf >/dev/null
	exit 0
fi
poweroff -f
