#!/bin/busybox sh
# /init of the lab's test guest (booted by vmm inside the lab host). Runs the step named by
# vmmtest= on the kernel command line between GUEST-BEGIN/GUEST-END markers, then powers off.
/bin/busybox --install -s /bin
ln -sf /bin/busybox /sbin/modprobe
export PATH=/bin:/sbin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
t=none
pings=200
netpings=0 # the net step's counted pings: only when vmmpings= asks for them
edu_irqs=20
edu_toggles=1000
benchreps=8
benchms=500
plain=0 # vmmplain=1: print none of vmm's own markers (vmm-boot-end), as a user's guest would not
for a in $(cat /proc/cmdline); do
	case $a in
	vmmtest=*) t=${a#vmmtest=} ;;
	vmmpings=*) pings=${a#vmmpings=} netpings=${a#vmmpings=} ;;
	vmmeduirqs=*) edu_irqs=${a#vmmeduirqs=} ;;
	vmmtoggles=*) edu_toggles=${a#vmmtoggles=} ;;
	vmmbenchreps=*) benchreps=${a#vmmbenchreps=} ;;
	vmmbenchms=*) benchms=${a#vmmbenchms=} ;;
	vmmplain=*) plain=${a#vmmplain=} ;;
	esac
done

pci_list() {
	for d in /sys/bus/pci/devices/*; do
		echo "GUEST-PCI $(basename $d) $(cat $d/vendor) $(cat $d/device) $(cat $d/class)"
	done
}

# Each device's config size as Linux sized it (4096 only for PCIe devices, and only with extended
# config access: MMCONFIG/ECAM) and the dword at 0x100, the first extended capability's header.
pci_cfg() {
	for d in /sys/bus/pci/devices/*; do
		echo "GUEST-PCICFG $(basename $d) $(cat $d/vendor):$(cat $d/device) size=$(wc -c <$d/config) ext0=0x$(dd if=$d/config bs=4 skip=64 count=1 2>/dev/null | od -A n -t x4 | tr -d ' ')"
	done
	dmesg | grep -iE "mmconfig|ecam|mcfg|PCI: Using" | sed 's/^/GUEST-PCIKMSG /'
}

irqs() {
	grep -iE "virtio|msi" /proc/interrupts | sed 's/^/GUEST-IRQ /'
}

pattern() { # N MiB of a recognisable pattern on stdout
	i=0
	while [ $i -lt $((16 * $1)) ]; do
		yes "vmm-pattern-$i" | head -c 65536
		i=$((i + 1))
	done
}

# The boot-end marker (vmm gives start-up's memory back on it; not with vmmplain=1, where vmm must
# see the guest's first quiet second instead), then idle for a few seconds (the steady state:
# whatever vmm's threads touch while the guest idles has faulted back) before the bench reads smaps
# on GUEST-HOLD; then idle until vmm is stopped.
hold_idle() {
	[ $plain = 1 ] || echo "vmm-boot-end"
	# a plain guest's vmm waits for its first idle second, after the pings' and the links' last
	# traffic: the steady state is read later
	if [ $plain = 1 ]; then sleep 6; else sleep 3; fi
	echo "GUEST-HOLD"
	sleep 600
}

echo "GUEST-BEGIN $t"
case $t in
blkwrite)
	modprobe virtio_blk
	pci_list
	sleep 0.5
	cat /sys/block/vda/size | sed 's/^/GUEST-SECTORS /'
	cat /sys/block/vda/ro | sed 's/^/GUEST-RO /'
	pattern 4 >/dev/vda && sync && echo "GUEST-WROTE"
	irqs
	;;
blkread)
	modprobe virtio_blk
	sleep 0.5
	cat /sys/block/vda/ro | sed 's/^/GUEST-RO /'
	a=$(pattern 4 | md5sum | cut -d' ' -f1)
	b=$(head -c 4194304 /dev/vda | md5sum | cut -d' ' -f1)
	[ "$a" = "$b" ] && echo "GUEST-READBACK match" || echo "GUEST-READBACK differs ($a vs $b)"
	if echo overwrite | dd of=/dev/vda bs=512 count=1 conv=fsync 2>/dev/null; then
		echo "GUEST-RO-WRITE-ACCEPTED"
	else
		echo "GUEST-RO-WRITE-REFUSED"
	fi
	# Past the guest's own check: clear the block layer's read-only flag and write with O_DIRECT,
	# so the request reaches vmm, which must answer IOERR.
	blockdev --setrw /dev/vda 2>/dev/null
	echo "GUEST-SETRW ro=$(blockdev --getro /dev/vda)"
	if dd if=/dev/zero of=/dev/vda bs=4096 count=1 oflag=direct 2>/tmp/dd.err; then
		echo "GUEST-RO-DIRECT-WRITE-ACCEPTED"
	else
		echo "GUEST-RO-DIRECT-WRITE-REFUSED $(tr '\n' ' ' </tmp/dd.err)"
	fi
	dmesg | grep -iE "I/O error|critical.*error|read-only" | tail -3 | sed 's/^/GUEST-KMSG /'
	# four readers at once with O_DIRECT: requests really in flight together
	for k in 0 1 2 3; do
		dd if=/dev/vda of=/dev/null bs=64k count=32 skip=$((k * 32)) iflag=direct 2>/dev/null &
	done
	wait
	echo 3 >/proc/sys/vm/drop_caches
	t0=$(cut -d' ' -f1 /proc/uptime)
	dd if=/dev/vda of=/dev/null bs=1M 2>/dev/null
	t1=$(cut -d' ' -f1 /proc/uptime)
	mib=$(($(cat /sys/block/vda/size) / 2048))
	echo "GUEST-READ-RATE $mib MiB in $(awk "BEGIN{printf \"%.2f s, %.1f MiB/s\", $t1-$t0, $mib/($t1-$t0+0.001)}")"
	irqs
	;;
net)
	modprobe virtio_net
	sleep 0.5
	dev=eth0
	for i in $(seq 1 50); do [ -d /sys/class/net/$dev ] && break; sleep 0.1; done
	echo 0 >/proc/sys/net/ipv6/conf/$dev/accept_dad
	ip link set $dev up
	ip -6 addr add fe80::2/64 dev $dev
	cat /sys/class/net/$dev/address | sed 's/^/GUEST-MAC /'
	ok=0
	for i in $(seq 1 40); do
		if ping -6 -c 1 -W 1 fe80::1%$dev >/dev/null 2>&1; then ok=1; break; fi
		sleep 0.5
	done
	echo "GUEST-PING6 $ok"
	if [ $ok = 1 ] && [ $netpings -gt 0 ]; then
		n=$(ping -6 -c $netpings -i 0.02 -W 2 fe80::1%$dev 2>&1 | sed -n 's/.* \([0-9]*\) packets received.*/\1/p')
		echo "GUEST-PINGS ${n:-0}"
	fi
	sleep 3 # the host, pinging since our address came up, gets its answers meanwhile
	irqs
	;;
fakepanic) # userspace text that looks like the kernel's panic banner: not a crash
	echo "Kernel panic - not syncing: only text printed by a userspace process"
	;;
chatty) # more console output than a reader that stops early will take
	i=0
	while [ $i -lt 1000 ]; do echo "GUEST-CHATTY line $i of 1000"; i=$((i + 1)); done
	;;
flood) # console output until vmm is stopped
	yes "GUEST-FLOOD vmm console output that nobody reads"
	;;
blkwrite-hold) # blkwrite, then wait for vmm to be stopped by a signal
	modprobe virtio_blk
	modprobe virtio_net
	sleep 0.5
	pattern 4 >/dev/vda && sync && echo "GUEST-WROTE"
	sleep 600
	;;
blkfill) # write past what the host's file system holds: an I/O error, and the guest runs on
	modprobe virtio_blk
	sleep 0.5
	dd if=/dev/zero of=/dev/vda bs=64k count=256 oflag=direct 2>/tmp/dd.err
	echo "GUEST-FILL rc=$? $(tail -1 /tmp/dd.err)"
	echo "GUEST-ALIVE"
	;;
vf|vf-hold) # a passed-through igb VF: igbvf, IPv6 link-local pings to the lab host's PF (fe80::1);
	# vf-hold then stays up and idle (make bench reads vmm's memory with the VF)
	modprobe igbvf
	dev=
	for i in $(seq 1 100); do
		dev=$(ls /sys/class/net | grep -v '^lo$' | head -1)
		[ -n "$dev" ] && break
		sleep 0.1
	done
	echo "GUEST-VF-DEV $dev"
	pci_cfg
	echo 0 >/proc/sys/net/ipv6/conf/$dev/accept_dad
	ip link set $dev up
	ip -6 addr add fe80::2/64 dev $dev
	for i in $(seq 1 100); do
		[ "$(cat /sys/class/net/$dev/carrier 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	ok=0
	for i in $(seq 1 40); do
		if ping -6 -c 1 -W 1 fe80::1%$dev >/dev/null 2>&1; then ok=1; break; fi
		sleep 0.5
	done
	echo "GUEST-PING6 $ok"
	if [ $ok = 1 ]; then
		n=$(ping -6 -c $pings -i 0.02 -W 2 fe80::1%$dev 2>&1 | sed -n 's/.* \([0-9]*\) packets received.*/\1/p')
		# one burst again when a reply was lost: the emulated labs (x86's: one CPU, nested SVM
		# under TCG) drop the odd frame; a second short burst must then get every reply
		if [ "${n:-0}" != "$pings" ]; then
			echo "GUEST-PINGS-FIRST ${n:-0}"
			n=$(ping -6 -c $pings -i 0.02 -W 2 fe80::1%$dev 2>&1 | sed -n 's/.* \([0-9]*\) packets received.*/\1/p')
		fi
		echo "GUEST-PINGS ${n:-0}"
	fi
	grep -E "MSI|igbvf|$dev" /proc/interrupts | sed 's/^/GUEST-IRQ /'
	[ $t = vf-hold ] && hold_idle
	;;
probe) # the built-in guest's latency probe (/bin/vmm-init) on an igb VF: its udp workload goes to
	# vmm's --probe-peer on the lab host's PF, whose address vmm put on the command line
	modprobe igbvf
	dev=
	for i in $(seq 1 100); do
		dev=$(ls /sys/class/net | grep -v '^lo$' | head -1)
		[ -n "$dev" ] && break
		sleep 0.1
	done
	echo "GUEST-VF-DEV $dev"
	pci_cfg
	echo 0 >/proc/sys/net/ipv6/conf/$dev/accept_dad
	ip link set $dev up
	for i in $(seq 1 100); do
		[ "$(cat /sys/class/net/$dev/carrier 2>/dev/null)" = 1 ] && break
		sleep 0.1
	done
	peer=$(sed -n 's/.*vmm\.probe_peer=\([^ ]*\).*/\1/p' /proc/cmdline)
	ok=0
	for i in $(seq 1 40); do
		if ping -6 -c 1 -W 1 "$peer%$dev" >/dev/null 2>&1; then ok=1; break; fi
		sleep 0.5
	done
	echo "GUEST-PEER $peer"
	echo "GUEST-PING6 $ok"
	echo "GUEST-END $t"
	exec /bin/vmm-init # runs vmm.probe= from the command line, then powers off
	;;
edu) # QEMU's edu passed through: its ID through the BAR, then INTx events on /dev/uioN (/bin/edu)
	modprobe uio_pci_generic
	pci_list
	edu $edu_irqs
	echo "GUEST-EDU-RC $?"
	grep -E "uio|edu" /proc/interrupts | sed 's/^/GUEST-IRQ /'
	;;
edutoggle) # the edu's BAR0 read on one vCPU while the other toggles its memory decode (/bin/edutoggle)
	edutoggle $edu_toggles
	echo "GUEST-EDUTOGGLE-RC $?"
	;;
hold) # up and idle until vmm is stopped (make bench reads vmm's memory meanwhile)
	hold_idle
	;;
hold-devices) # hold with the disk's and the NIC's drivers bound and used once: a few direct reads,
	# the link up (the kernel's own IPv6 chatter goes out on it), then idle as hold (no line before
	# hold_idle's may contain GUEST-HOLD: the bench reads smaps on it)
	modprobe virtio_blk
	modprobe virtio_net
	for i in $(seq 1 50); do [ -b /dev/vda ] && [ -d /sys/class/net/eth0 ] && break; sleep 0.1; done
	dd if=/dev/vda of=/dev/null bs=4096 count=16 iflag=direct 2>/dev/null
	echo "GUEST-DEVICES-DISK $?"
	ip link set eth0 up
	ping -6 -c 2 -W 1 ff02::1%eth0 >/dev/null 2>&1
	echo "GUEST-DEVICES-NIC $(cat /sys/class/net/eth0/statistics/tx_packets 2>/dev/null)"
	hold_idle
	;;
blkbench) # make bench: O_DIRECT IOPS and throughput on the first disk (/bin/blkbench)
	modprobe virtio_blk
	for i in $(seq 1 50); do [ -b /dev/vda ] && break; sleep 0.1; done
	blkbench /dev/vda $benchreps $benchms
	echo "GUEST-BLKBENCH-RC $?"
	irqs
	;;
netbench) # make bench: UDP request/response and TCP bulk to the host's fe80::1 (/bin/netbench)
	modprobe virtio_net
	for i in $(seq 1 50); do [ -d /sys/class/net/eth0 ] && break; sleep 0.1; done
	echo 0 >/proc/sys/net/ipv6/conf/eth0/accept_dad
	ip link set eth0 up
	ip -6 addr add fe80::2/64 dev eth0
	ok=0
	for i in $(seq 1 60); do
		if ping -6 -c 1 -W 1 fe80::1%eth0 >/dev/null 2>&1; then ok=1; break; fi
		sleep 0.5
	done
	echo "GUEST-PING6 $ok"
	[ $ok = 1 ] && netbench fe80::1%eth0 $benchreps $benchms
	echo "GUEST-NETBENCH-RC $?"
	irqs
	;;
serial) # on ttyS0: the 8250 driver's probe, interrupt-driven tty output, then one line echoed
	dmesg | grep -m1 'ttyS0 at MMIO' | sed 's/^/GUEST-8250 /'
	a=$(grep -m1 ttyS /proc/interrupts | awk '{n=0; for (i=2; i<=NF && $i ~ /^[0-9]+$/; i++) n+=$i; print n}')
	# in 10 bursts: a burst the driver is still sending when the next arrives shares its interrupt
	i=0
	while [ $i -lt 50 ]; do
		echo "GUEST-TTY line $i of 50, written through the tty"
		i=$((i + 1))
		[ $((i % 5)) = 0 ] && sleep 0.3
	done
	b=$(grep -m1 ttyS /proc/interrupts | awk '{n=0; for (i=2; i<=NF && $i ~ /^[0-9]+$/; i++) n+=$i; print n}')
	echo "GUEST-TTY-IRQS ${a:-none} ${b:-none}"
	grep ttyS /proc/interrupts | sed 's/^/GUEST-IRQ /'
	echo "GUEST-READY"
	read -r line
	echo "GUEST-ECHO $line"
	;;
sleep) # stay up for 20 s, printing now and then, so the host can read its vgic state meanwhile
	i=0
	while [ $i -lt 20 ]; do echo "GUEST-SLEEP $i"; sleep 1; i=$((i + 1)); done
	irqs
	;;
cpufeat) # what the vCPU features give: cpuinfo's Features, the PMU driver, SVE and counters
	grep -m1 '^Features' /proc/cpuinfo | sed 's/^/GUEST-FEATURES /'
	dmesg | grep -iE "hw perfevents|pmuv3|armv8_pmu" | sed 's/^/GUEST-PMUKMSG /'
	echo "GUEST-SVE-DEFAULT-VL $(cat /proc/sys/abi/sve_default_vector_length 2>/dev/null || echo none)"
	cpufeat
	;;
esac
echo "GUEST-END $t"
poweroff -f
