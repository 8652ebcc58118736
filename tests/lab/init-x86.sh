#!/bin/busybox sh
# /init of the x86 lab host (run-x86.sh): loads kvm_amd (QEMU's -cpu max emulates SVM with NPT),
# then boots Debian's amd64 kernel with vmm's built-in guest under each irqchip mode given by
# lab.irqchips=a,b, or gives a shell (lab.mode=shell).
/bin/busybox --install -s /bin
ln -sf /bin/busybox /sbin/modprobe 2>/dev/null
export PATH=/bin:/sbin:/lab
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tmpfs tmp /tmp
mkdir -p /dev/pts && mount -t devpts -o ptmxmode=0666 devpts /dev/pts
modprobe kvm_amd 2>/tmp/modprobe.log || echo "LAB-INFO modprobe kvm_amd failed: $(cat /tmp/modprobe.log)"

mode=test irqchips=kernel params=
for a in $(cat /proc/cmdline); do
	case $a in
	lab.mode=*) mode=${a#lab.mode=} ;;
	lab.irqchips=*) irqchips=$(echo "${a#lab.irqchips=}" | tr ',' ' ') ;;
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
for chip in $irqchips; do
	echo "LAB-BEGIN boot-$chip"
	/lab/vmm run -c 2 -m 512M --irqchip "$chip" \
		-p "console=ttyS0 panic=-1 vmm.probe=timer:interval_us=1000,count=200" </dev/null 2>&1
	echo "LAB-END boot-$chip rc=$?"
done
echo "LAB-DONE"
poweroff -f
