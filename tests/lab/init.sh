#!/bin/busybox sh
# /init of the lab host. Kernel command line: lab.mode=test|shell|demo|bench, lab.tests=a,b (default: all).
/bin/busybox --install -s /bin
ln -sf /bin/busybox /sbin/modprobe 2>/dev/null
export PATH=/bin:/sbin:/lab
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mkdir -p /dev/pts && mount -t devpts -o ptmxmode=0666 devpts /dev/pts
mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null # vmm run --attribute's tracepoint formats

modprobe tun 2>/dev/null # virtio-net's tap backend
modprobe vhost_net 2>/dev/null # and its in-kernel data path (/dev/vhost-net)
# The host's own disks (run.sh): /disk is a block-backed file system for vmm's disk images, and
# /dev/vdb a raw block device vmm can take as a disk.
modprobe virtio_blk 2>/dev/null
modprobe crc32c_generic 2>/dev/null
modprobe ext4 2>/dev/null
mkdir -p /disk
if [ -b /dev/vda ] && mke2fs -F /dev/vda >/tmp/mke2fs.log 2>&1 && mount -t ext4 /dev/vda /disk; then
	echo "LAB-INFO /disk is ext2 on /dev/vda"
else
	echo "LAB-INFO /disk is NOT block-backed (no /dev/vda, or mke2fs/mount failed: $(tail -1 /tmp/mke2fs.log 2>/dev/null))"
fi

mode=test
tests=
for a in $(cat /proc/cmdline); do
	case $a in
	lab.mode=*) mode=${a#lab.mode=} ;;
	lab.tests=*) tests=$(echo "${a#lab.tests=}" | tr ',' ' ') ;;
	lab.args.*) # lab.args.NAME=a,b: harness arguments for test NAME (e.g. -t,some_test)
		kv=${a#lab.args.}
		eval "args_${kv%%=*}=\"$(echo "${kv#*=}" | tr ',' ' ')\"" ;;
	esac
done

echo "LAB-UP uptime=$(cut -d' ' -f1 /proc/uptime) kernel=$(uname -r)"
[ -c /dev/kvm ] && echo "LAB-INFO /dev/kvm present" || echo "LAB-INFO /dev/kvm MISSING"
dmesg | grep -E "kvm \[[0-9]+\]: (GICv4|IPA|VHE|disabling)|ITS: Enabling GICv4" | sed 's/^/LAB-INFO /'

if [ "$mode" = demo ]; then
	echo "== an igb VF passed through: vmm vf prepares it, the guest's igbvf pings the host's PF"
	modprobe igb; modprobe vfio-pci; modprobe vfio_iommu_type1
	for i in $(seq 1 50); do [ -d /sys/bus/pci/devices/0000:00:03.0/net ] && break; sleep 0.1; done
	pf=$(ls /sys/bus/pci/devices/0000:00:03.0/net | head -1)
	# creating VFs resets the igb: bring its link up after, and wait for it (a VF of a PF whose
	# link is down never leaves reset)
	/lab/vmm vf create 0000:00:03.0 1
	ip link set "$pf" up && echo 0 >/proc/sys/net/ipv6/conf/"$pf"/accept_dad &&
		ip -6 addr add fe80::1/64 dev "$pf"
	for i in $(seq 1 100); do [ "$(cat /sys/class/net/$pf/carrier 2>/dev/null)" = 1 ] && break; sleep 0.1; done
	/lab/vmm vf mac 0000:00:03.0 0 02:00:00:00:00:13 && /lab/vmm vf bind 0000:00:13.0 && /lab/vmm vf list
	echo "== vmm run --vfio 0000:00:13.0 (the lab's test guest with igbvf)"
	/lab/vmm run -k /boot/vmlinuz-$(uname -r) -i /lab/guest.cpio.gz -m 512M -c 2 --console virtio \
		-p "console=hvc0 panic=-1 quiet vmmtest=vf vmmpings=100" --vfio 0000:00:13.0 </dev/null
	echo "== vmm exited with status $?"
	# last, so the demo ends with the per-vCPU halt histograms and the probe's summary
	echo "== vmm run -c 2 -m 512M: Debian's arm64 kernel with vmm's built-in guest, inside the lab host;"
	echo "== the guest's latency probe measures timer wake-ups and cross-vCPU ping-pong, vmm then"
	echo "== prints its exit summary with the per-vCPU halt-polling histograms (nested: not hardware figures)"
	/lab/vmm run -c 2 -m 512M --halt-poll-ns 200000 \
		-p "console=ttyS0 earlycon panic=-1 quiet vmm.probe=timer:interval_us=1000,count=300;pingpong:count=300" \
		</dev/null >/tmp/demo.out 2>&1
	st=$?
	grep -v '^VMM-PROBE ' /tmp/demo.out # the probe's frames are for machines; its summary lines stay
	echo "== vmm exited with status $st"
	poweroff -f
fi
if [ "$mode" = bench ]; then # make bench: /lab/bench's table and JSON on the console
	echo 1 >/proc/sys/kernel/printk
	eval "/lab/bench ${args_bench:-}" 2>&1
	echo "LAB-BENCH-RC $?"
	echo "LAB-DONE"
	poweroff -f
fi
if [ "$mode" = shell ]; then
	echo "lab shell: /lab/vmm, /lab/tests/*; 'poweroff -f' leaves"
	setsid cttyhack sh
	poweroff -f
fi

# Keep kernel messages off the console while tests print their results.
echo 1 >/proc/sys/kernel/printk
[ -n "$tests" ] || tests=$(cd /lab/tests && ls)
for t in $tests; do
	echo "LAB-BEGIN $t"
	start=$(cut -d' ' -f1 /proc/uptime)
	eval "targs=\${args_$t:-}"
	/lab/tests/$t $targs 2>&1
	rc=$?
	echo "LAB-END $t rc=$rc start=$start end=$(cut -d' ' -f1 /proc/uptime)"
done
echo "LAB-DMESG-BEGIN"
dmesg | tail -n 40
echo "LAB-DMESG-END"
echo "LAB-DONE"
poweroff -f
