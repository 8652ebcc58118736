#!/usr/bin/env bash
# Reads the x86 lab's boot logs (run-x86.sh) and prints TAP for scripts/check.sh: each boot
# ended with the guest's poweroff (status 0), the guest had its 2 vCPUs, and the PV features and
# APIC mode it saw in CPUID are the ones vmm's policy printed. What the emulated host cannot show
# (AVIC, x2AVIC, IPIv, VMX) is a skip with the reason the evidence line gives. Then: a 4 GiB guest
# sees its RAM past the PCI hole, the virtio-blk pattern test, virtio-net's pings both ways, and
# an igb VF's pings and MSI-X.
# Usage: check-x86.sh DIR   (LAB_HW=1: the logs come from make check-hw on a real x86 host)
set -uo pipefail
dir=$1
n=0 pass=0 fail=0 skip=0
ok() { n=$((n + 1)); pass=$((pass + 1)); echo "ok $n $1"; }
bad() { n=$((n + 1)); fail=$((fail + 1)); echo "not ok $n $1"; echo "# $2"; }
skp() { n=$((n + 1)); skip=$((skip + 1)); echo "ok $n $1 # SKIP $2"; }
check() { if eval "$2"; then ok "$1"; else bad "$1" "${3:-$2}"; fi; }

echo "TAP version 13"
for b in default xapic nohlt split; do
	log=$dir/boot-$b.log
	if [ ! -f "$log" ]; then
		bad "boot_$b" "no $log: the boot did not run"
		continue
	fi
	policy=$(grep -m1 '^vmm: x86 pv:' "$log")
	seen=$(grep -m1 '^vmm-guest: x86 cpuid 0x40000000' "$log")
	x2=$(grep -m1 '^vmm-guest: x86 cpuid 1 ' "$log")
	echo "# $b: $policy"
	echo "# $b: $(grep -m1 '^vmm: x86 pv-ipi:' "$log")"
	echo "# $b: $seen"
	check "boot_${b}_powers_off" "grep -q '^LAB-END boot-$b rc=0' '$log'" "vmm's exit status was not 0: $(grep '^LAB-END' "$log")"
	check "boot_${b}_two_vcpus" "grep -q '2 CPUs online' '$log'"
	p_eax=$(echo "$policy" | sed -n 's/.*eax=\(0x[0-9a-f]*\).*/\1/p')
	p_edx=$(echo "$policy" | sed -n 's/.*edx=\(0x[0-9a-f]*\).*/\1/p')
	g_eax=$(echo "$seen" | sed -n 's/.*eax=\(0x[0-9a-f]*\).*/\1/p')
	g_edx=$(echo "$seen" | sed -n 's/.*edx=\(0x[0-9a-f]*\).*/\1/p')
	check "boot_${b}_guest_sees_the_policy" "[ -n '$p_eax' ] && [ '$p_eax' = '$g_eax' ] && [ '$p_edx' = '$g_edx' ]" \
		"policy eax=$p_eax edx=$p_edx, guest eax=$g_eax edx=$g_edx"
	want=1
	echo "$policy" | grep -q 'xAPIC)' && want=0
	check "boot_${b}_guest_apic_mode" "echo '$x2' | grep -q 'x2apic=$want'" "policy '$policy', guest '$x2'"
done
# The forced knobs of the xapic boot: PV_SEND_IPI (11) and PV_TLB_FLUSH (9) off, REALTIME on.
x=$(grep -m1 '^vmm-guest: x86 cpuid 0x40000000' "$dir/boot-xapic.log" 2>/dev/null | sed -n 's/.*eax=\(0x[0-9a-f]*\) edx=\(0x[0-9a-f]*\).*/\1 \2/p')
check "boot_xapic_forced_knobs" "[ -n '$x' ] && (( ($(echo ${x:-0 0} | cut -d' ' -f1) & 0xa00) == 0 && $(echo ${x:-0 0} | cut -d' ' -f2) == 1 ))" "guest saw eax/edx $x"
# --no-hlt-exit: PV_UNHALT (7) hidden, as KVM would mask it.
x=$(grep -m1 '^vmm-guest: x86 cpuid 0x40000000' "$dir/boot-nohlt.log" 2>/dev/null | sed -n 's/.*eax=\(0x[0-9a-f]*\).*/\1/p')
check "boot_nohlt_pv_unhalt_hidden" "[ -n '$x' ] && (( (${x:-0} & 0x80) == 0 )) && grep -q 'pv-unhalt=off' '$dir/boot-nohlt.log'" "guest saw eax $x"
# --irqchip split: vmm's IOAPIC (no PIC, no PIT) delivered the console's interrupts as MSIs.
io=$(grep -m1 '^vmm: ioapic (userspace, split irqchip):' "$dir/boot-split.log" 2>/dev/null)
echo "# split: $io"
check "boot_split_userspace_ioapic_delivers" "grep -q '^vmm: x86 irqchip: split' '$dir/boot-split.log' && [ \"\$(echo '$io' | sed -n 's/.*: \([0-9]*\) interrupts sent.*/\1/p')\" -gt 0 ]" "no IOAPIC deliveries: '$io'"
# The edu's INTx through VFIO, 200 level-triggered rounds per irqchip: each needs the line re-armed
# after the guest's EOI (in-kernel: KVM's resamplefd; split: vmm's KVM_EXIT_IOAPIC_EOI handler).
for c in kernel split; do
	log=$dir/edu-$c.log
	if [ ! -f "$log" ]; then
		bad "edu_$c" "no $log: the boot did not run"
		continue
	fi
	want=200 # init-x86.sh's vmmeduirqs
	got=$(sed -n 's/^GUEST-EDU-N //p' "$log" | head -1)
	irq=$(grep -m1 '^GUEST-IRQ.*uio' "$log")
	seen=$(echo "$irq" | awk '{ s = 0; for (i = 3; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s }')
	echo "# edu $c: $(grep -m1 '^GUEST-EDU-EVENTS' "$log"); /proc/interrupts: ${irq#GUEST-IRQ }"
	echo "# edu $c: $(grep -m1 "^vmm: vfio .*INTx on GSI" "$log")"
	check "edu_${c}_powers_off" "grep -q '^LAB-END edu-$c rc=0' '$log'" "vmm's exit status was not 0: $(grep '^LAB-END' "$log")"
	check "edu_${c}_id_through_the_bar" "grep -q '^GUEST-EDU-ID 0x010000ed' '$log'" "$(grep -m3 '^GUEST-EDU' "$log")"
	check "edu_${c}_every_intx_round_arrives" "[ -n '$want' ] && [ '${got:-0}' = '$want' ] && [ '${seen:-0}' -ge '$want' ]" \
		"asked $want, uio saw ${got:-none}, /proc/interrupts ${seen:-none}: $(grep -m2 'GUEST-EDU-TIMEOUT\|GUEST-EDU-ERROR' "$log")"
done
io=$(grep -m1 '^vmm: ioapic (userspace, split irqchip):' "$dir/edu-split.log" 2>/dev/null)
echo "# edu split: $io"
res=$(echo "$io" | sed -n 's/.* \([0-9]*\) resamples.*/\1/p')
check "edu_split_eoi_exits_unmask_vfio" "[ '${res:-0}' -ge '${want:-1}' ]" "the IOAPIC signalled ${res:-no} resamplefds: '$io'"
ev=$(grep -m1 '^vmm: x86 pv-ipi:' "$dir/boot-default.log" 2>/dev/null)
if [ -n "${LAB_HW:-}" ]; then # make check-hw on a real host: no lab expectations about AVIC/IPIv
	skp host_ipi_acceleration "a real host: its AVIC/IPIv are in check-hw's feature lines and vmm's evidence (${ev#vmm: x86 pv-ipi: }); the policy the guest saw is checked above"
else
if echo "$ev" | grep -q -- '-avic'; then skp avic "the emulated host has no AVIC (QEMU TCG; evidence: ${ev#vmm: x86 pv-ipi: })"; else bad avic "expected the lab to lack AVIC: $ev"; fi
if echo "$ev" | grep -q -- '-x2avic'; then skp x2avic "the emulated host has no x2AVIC (QEMU TCG)"; else bad x2avic "expected the lab to lack x2AVIC: $ev"; fi
skp ipiv "Intel IPIv needs VMX, which QEMU TCG does not emulate (the lab runs kvm_amd)"
skp vmx "QEMU TCG emulates SVM only: kvm_intel, APICv and IPIv need an Intel KVM host"
fi
# -m 4G: RAM past the PCI hole continues at 4 GiB; the guest must see more than 3.5 GiB of it.
# --attribute on x86: the samples joined on one clock (the TSC offset), nothing lost, and most of
# them in a class with its stages (not ambiguous)
log=$dir/boot-attr.log
attr=$(grep -m1 '^vmm: attribution:' "$log" 2>/dev/null)
echo "# attr: ${attr:-no attribution line}"
grep -E '^timer  |^  (host_irq|signal|run_queue|resume|guest|residual|total) |^  why:' "$log" 2>/dev/null | sed 's/^/# attr: /'
joined=$(echo "$attr" | sed -n 's/.* \([0-9]*\) samples joined.*/\1/p')
amb=$(sed -n 's/^timer  ambiguous  n=\([0-9]*\) .*/\1/p' "$log" 2>/dev/null)
check "boot_attr_powers_off" "grep -q '^LAB-END boot-attr rc=0' '$log'" "$(grep '^LAB-END\|error' "$log" 2>/dev/null)"
# (eval'd: the line itself has quotes, so it is expanded there, not pasted in)
check "boot_attr_samples_joined_nothing_lost" "[ \"\${joined:-0}\" -gt 100 ] && echo \"\$attr\" | grep -q ' 0 lost'" "$attr"
check "boot_attr_mostly_not_ambiguous" "[ -n '$joined' ] && [ \$(( ${amb:-0} * 10 )) -lt \$(( ${joined:-0} * 3 )) ]" \
	"ambiguous ${amb:-0} of ${joined:-0}"
# The host_irq stage starts at the LAPIC timer's hrtimer (apic_timer_fn). A guest that did not
# arm it (its tick on another clockevent: the lab has seen wake-ups on a 4 ms grid) gives the join
# nothing to find: a skip with the counts, never a pass. When it fired, a stage must show.
cap=$(grep -m1 '^LAB-INFO attr-capture:' "$dir/console.log" 2>/dev/null)
bgfn=$(echo "$cap" | sed -n 's/.*bgfn \([0-9a-f]*\);.*/\1/p')
fired=0
if [ -n "$bgfn" ]; then
	want=$((16#$bgfn)) # the capture prints the address as a signed 64-bit decimal
	fired=$(echo "$cap" | grep -o -- "$want x[0-9]*" | sed 's/.* x//')
fi
clockev=$(grep -m1 '^vmm-guest: x86 clockevents' "$log" 2>/dev/null)
if [ -n "$cap" ] && [ "${fired:-0}" -eq 0 ]; then
	skp "boot_attr_a_class_with_its_host_stage" "the LAPIC timer's hrtimer never fired in the host (${cap#LAB-INFO }; guest ${clockev#vmm-guest: x86 }): no host_irq stage to find"
else
	check "boot_attr_a_class_with_its_host_stage" "grep -A1 -E '^timer  (blocked|running)' '$log' | grep -q '^  host_irq '" \
		"no blocked or running class with a host_irq stage (${cap:-no capture line}; guest ${clockev:-clockevents unknown})"
fi

log=$dir/boot-mem4g.log
mib=$(sed -n 's/^vmm-guest: \([0-9]*\) MiB of RAM.*/\1/p' "$log" 2>/dev/null | head -1)
echo "# mem4g: the guest saw ${mib:-?} MiB of RAM"
check "boot_mem4g_powers_off" "grep -q '^LAB-END boot-mem4g rc=0' '$log'" "$(grep '^LAB-END\|error' "$log" 2>/dev/null)"
check "boot_mem4g_guest_sees_ram_above_4g" "[ '${mib:-0}' -gt 3584 ]" "MemTotal ${mib:-none} MiB, want > 3584"

# virtio-blk: the pattern written by the guest is on the host's disk, read back read-only.
w=$dir/blk-write.log r=$dir/blk-read.log
grep '^vmm: virtio-blk\|^GUEST-IRQ' "$w" 2>/dev/null | sed 's/^/# blk-write: /'
check "blk_write_powers_off" "grep -q '^LAB-END blk-write rc=0' '$w'" "$(tail -5 "$w" 2>/dev/null)"
check "blk_guest_wrote_the_pattern" "grep -q '^GUEST-WROTE' '$w' && grep -q '^GUEST-SECTORS 32768' '$w' && grep -q '^GUEST-RO 0' '$w'"
check "blk_host_disk_holds_the_pattern" "grep -q '^LAB-BLK-HOST match' '$dir/blk-host.log'" "$(cat "$dir/blk-host.log" 2>/dev/null)"
check "blk_kicks_by_ioeventfd_irqs_by_msix" "grep -q '^vmm: virtio-blk (00:[0-9a-f]*.0): [1-9][0-9]* kicks by ioeventfd, 0 by MMIO exit' '$w' && grep -q 'PCI-MSIX.*virtio0-req' '$w'" \
	"$(grep '^vmm: virtio-blk\|virtio0' "$w" 2>/dev/null)"
check "blk_o_direct" "grep -q '^vmm: virtio-blk (00:[0-9a-f]*.0): [0-9]* requests.*O_DIRECT' '$w'" "$(grep '^vmm: virtio-blk' "$w" 2>/dev/null)"
check "blk_read_only_boot_reads_it_back" "grep -q '^LAB-END blk-read rc=0' '$r' && grep -q '^GUEST-READBACK match' '$r' && grep -q '^GUEST-RO 1' '$r'" "$(grep '^GUEST-\|^LAB-END' "$r" 2>/dev/null)"
check "blk_read_only_refuses_writes" "grep -q '^GUEST-RO-WRITE-REFUSED' '$r' && grep -q '^GUEST-RO-DIRECT-WRITE-REFUSED' '$r'" "$(grep '^GUEST-RO' "$r" 2>/dev/null)"

# virtio-net on a tap: 20 link-local pings each way, frames both ways, kicks all by ioeventfd and
# interrupts all by irqfd (MSI-X), and the guest's receive queue's MSI-X vector fired.
t=$dir/net.log
sum=$(grep -m1 '^vmm: virtio-net (00:[0-9a-f]*.0): [0-9]* kicks' "$t" 2>/dev/null)
frm=$(grep -m1 '^vmm: virtio-net (00:[0-9a-f]*.0): [0-9]* frames' "$t" 2>/dev/null)
echo "# net: $(grep -m1 '^GUEST-PINGS' "$t" 2>/dev/null) (guest), $(grep -m1 '^LAB-NET-HOST' "$dir/net-host.log" 2>/dev/null) (host)"
echo "# net: ${sum#vmm: }"
echo "# net: ${frm#vmm: }"
grep '^GUEST-IRQ.*virtio' "$t" 2>/dev/null | sed 's/^/# net: /'
check "net_powers_off" "grep -q '^LAB-END net rc=0' '$t'" "$(grep '^LAB-END\|error' "$t" 2>/dev/null | head -5 | tr '\n' ' ')"
check "net_guest_mac" "grep -q '^GUEST-MAC 02:00:00:00:00:02$' '$t'" "$(grep '^GUEST-MAC' "$t" 2>/dev/null)"
check "net_guest_pings_host" "grep -q '^GUEST-PING6 1' '$t' && grep -q '^GUEST-PINGS 20$' '$t'" "$(grep '^GUEST-PING' "$t" 2>/dev/null | tr '\n' ' ')"
check "net_host_pings_guest" "grep -q '^LAB-NET-HOST-PINGS 20$' '$dir/net-host.log'" "$(tr '\n' ' ' <"$dir/net-host.log" 2>/dev/null)"
rx=$(echo "$frm" | sed -n 's/.*: \([0-9]*\) frames received, \([0-9]*\) sent.*/\1/p')
tx=$(echo "$frm" | sed -n 's/.*: \([0-9]*\) frames received, \([0-9]*\) sent.*/\2/p')
check "net_frames_both_ways" "[ '${rx:-0}' -ge 20 ] && [ '${tx:-0}' -ge 20 ]" "'$frm'"
# fields: kicks by ioeventfd, by MMIO exit, interrupts by irqfd, of which MSI-X
k=($(echo "$sum" | sed -n 's/.*: \([0-9]*\) kicks by ioeventfd, \([0-9]*\) by MMIO exit, \([0-9]*\) interrupts by irqfd (\([0-9]*\) MSI-X).*/\1 \2 \3 \4/p'))
check "net_kicks_by_ioeventfd" "[ '${k[0]:-0}' -gt 0 ] && [ '${k[1]:-x}' = 0 ]" "'$sum'"
# the guest's /proc/interrupts: its receive queue's vector counted interrupts on some vCPU
inirq=$(grep -m1 '^GUEST-IRQ.*PCI-MSIX.*virtio0-input.0' "$t" 2>/dev/null | awk '{n=0; for (i=3; i<=NF && $i ~ /^[0-9]+$/; i++) n+=$i; print n}')
check "net_irqs_by_irqfd_msix" "[ '${k[2]:-0}' -gt 0 ] && [ '${k[2]:-0}' = '${k[3]:-x}' ] && [ '${inirq:-0}' -gt 0 ]" \
	"'$sum'; $(grep '^GUEST-IRQ.*virtio' "$t" 2>/dev/null | tr -s '\n ' '  ')"

# An igb VF passed through: MSI-X routed (no devid on x86), link-local pings to the PF.
v=$dir/vf.log
grep '^PF ' "$dir/vf-setup.log" 2>/dev/null | sed 's/^/# vf-setup: /'
grep '^vmm: vfio\|^GUEST-PING\|^GUEST-IRQ' "$v" 2>/dev/null | sed 's/^/# vf: /'
why=$(sed -n 's/^LAB-SKIP //p' "$dir/vf-setup.log" 2>/dev/null)
if [ -n "$why" ]; then
	for t in vf_setup vf_guest_powers_off vf_link_local_pings vf_msix_vectors_routed guest_mmconfig_vf_config_is_4096 \
		guest_mmconfig_vf_ext_header_matches_host; do skp $t "$why"; done
else
check "vf_setup" "grep -q '^LAB-END vf-setup rc=0' '$dir/vf-setup.log'" "$(tail -8 "$dir/vf-setup.log" 2>/dev/null)"
check "vf_guest_powers_off" "grep -q '^LAB-END vf rc=0' '$v'" "$(tail -8 "$v" 2>/dev/null)"
check "vf_link_local_pings" "grep -q '^GUEST-PING6 1' '$v' && grep -q '^GUEST-PINGS 20$' '$v'" "$(grep '^GUEST-PING' "$v" 2>/dev/null)"
vec=$(sed -n 's/^vmm: vfio 0000:00:13.0 (00:[0-9a-f]*.0): \([0-9]*\) MSI-X vectors.* \([0-9]*\) MSI-X routes KVM refused/\1 \2/p' "$v" 2>/dev/null)
irqs=$(grep '^GUEST-IRQ.*PCI-MSIX' "$v" 2>/dev/null | grep -v virtio | awk '{n=0; for (i=3; i<=NF && $i ~ /^[0-9]+$/; i++) n+=$i; s+=n} END {print s+0}')
check "vf_msix_vectors_routed" "[ -n '$vec' ] && [ '${vec%% *}' -ge 3 ] && [ '${vec##* }' = 0 ] && [ '$irqs' -gt 20 ]" \
	"vmm's summary: '${vec:-none}' (vectors, refused routes); guest MSI-X interrupts $irqs"
# MMCONFIG: the guest reaches config space past 256 bytes through vmm's ECAM (the ACPI MCFG):
# Linux sizes a PCIe device's config 4096 only then, and the VF's first extended capability
# header (0x100) reads as the lab host reads it (vmm shows AER/DSN/ARI copies; QEMU's igb VF has
# AER at 0x100 and ARI at 0x150). On a real host's VF only the ID and version are compared: vmm
# relinks the chain around the capabilities it hides.
grep '^GUEST-PCICFG\|^GUEST-PCIKMSG' "$v" 2>/dev/null | sed 's/^/# vf: /'
gcfg=$(grep -m1 '^GUEST-PCICFG .* 0x8086:0x10ca ' "$v" 2>/dev/null)
hcfg=$(grep -m1 '^LAB-VF-HOST-CFG' "$dir/vf-host-cfg.log" 2>/dev/null)
echo "# vf-host-cfg: $hcfg"
gext=$(echo "$gcfg" | sed -n 's/.* ext0=\(0x[0-9a-f]*\).*/\1/p')
hext=$(echo "$hcfg" | sed -n 's/.* ext0=\(0x[0-9a-f]*\).*/\1/p')
check "guest_mmconfig_vf_config_is_4096" "echo '$gcfg' | grep -q ' size=4096 '" "guest: '${gcfg:-no GUEST-PCICFG line for the VF}' (256: no extended config access)"
if [ -n "${LAB_HW:-}" ]; then
	check "guest_mmconfig_vf_ext_header_matches_host" "[ -n '$gext' ] && [ -n '$hext' ] && (( ($gext & 0xfffff) == ($hext & 0xfffff) || ($gext & 0xffff) == 0 ))" "guest $gext, host $hext"
else
	check "guest_mmconfig_vf_ext_header_matches_host" "[ -n '$gext' ] && [ '$gext' = '$hext' ] && [ '$gext' != 0x00000000 ] && [ '$gext' != 0xffffffff ]" "guest ${gext:-none}, host ${hext:-none}"
fi
fi
# MSR_KVM_POLL_CONTROL per vCPU (vmm ctl set poll-control): without KVM_HINTS_REALTIME the guest
# idles with its default cpuidle driver and leaves the host's polling on (1, the reset value); with
# it (boot-pollctl, boot-xapic) the guest's haltpoll driver takes over and writes 0 on each vCPU.
# vmm sets vCPU 1 to 0 then 1, all to 1, reads each back through the socket, and refuses vCPU 9;
# the exit summary shows what KVM held at the end. --pv poll-control=off: the switch is refused.
pc=$dir/boot-pollctl.log
sumline() { grep -m1 '^vmm: poll-control' "$1" 2>/dev/null; }
echo "# pollctl: $(grep '^pollctl ' "$pc" 2>/dev/null | tr '\n' ' ')"
echo "# default: $(grep -m1 'cpuidle driver' "$dir/boot-default.log") / $(sumline "$dir/boot-default.log")"
echo "# xapic: $(grep -m1 'cpuidle driver' "$dir/boot-xapic.log") / $(sumline "$dir/boot-xapic.log")"
check "pollctl_default_guest_leaves_host_polling_on" "grep -q 'cpuidle driver=' '$dir/boot-default.log' && ! grep -q 'cpuidle driver=haltpoll' '$dir/boot-default.log' && sumline '$dir/boot-default.log' | grep -q 'vcpu0=1 vcpu1=1'" \
	"default boot: $(grep -m1 'cpuidle driver' "$dir/boot-default.log"); $(sumline "$dir/boot-default.log")"
check "pollctl_realtime_guest_haltpoll_turns_host_polling_off" "grep -q 'cpuidle driver=haltpoll' '$dir/boot-xapic.log' && sumline '$dir/boot-xapic.log' | grep -q 'vcpu0=0 vcpu1=0'" \
	"xapic boot (hint-dedicated=on): $(grep -m1 'cpuidle driver' "$dir/boot-xapic.log"); $(sumline "$dir/boot-xapic.log")"
check "pollctl_powers_off" "grep -q '^LAB-END boot-pollctl rc=0' '$pc'" "$(grep '^LAB-END boot-pollctl' "$pc" 2>/dev/null)"
check "pollctl_guest_turned_it_off_at_boot" "grep -q '^pollctl get-after-boot \"poll_control\":\[0,0\]' '$pc'" "$(grep '^pollctl get-after-boot' "$pc" 2>/dev/null)"
check "pollctl_set_vcpu1_0" "grep -q '^pollctl set-1-0 {\"ok\":true,\"poll_control\":\[0,0\]}' '$pc'" "$(grep '^pollctl set-1-0' "$pc" 2>/dev/null)"
check "pollctl_set_vcpu1_1" "grep -q '^pollctl set-1-1 {\"ok\":true,\"poll_control\":\[0,1\]}' '$pc'" "$(grep '^pollctl set-1-1' "$pc" 2>/dev/null)"
check "pollctl_get_reads_it_back" "grep -q '^pollctl get-after-set \"poll_control\":\[0,1\]' '$pc'" "$(grep '^pollctl get-after-set' "$pc" 2>/dev/null)"
check "pollctl_set_all_1" "grep -q '^pollctl set-all-1 {\"ok\":true,\"poll_control\":\[1,1\]}' '$pc'" "$(grep '^pollctl set-all-1' "$pc" 2>/dev/null)"
check "pollctl_bad_vcpu_refused" "grep -q '^pollctl set-9-1 .*no vCPU 9' '$pc'" "$(grep '^pollctl set-9-1' "$pc" 2>/dev/null)"
check "pollctl_exit_summary_holds_the_last_set" "sumline '$pc' | grep -q 'vcpu0=1 vcpu1=1'" "$(sumline "$pc")"
check "pollctl_refused_without_poll_control_cpuid" "sumline '$dir/boot-nohlt.log' | grep -q 'unavailable: the guest.s CPUID has no POLL_CONTROL'" "$(sumline "$dir/boot-nohlt.log")"
# vmm ab, one VM, the knob MSR_KVM_POLL_CONTROL on every vCPU: pc0's epochs poll never, pc1's do.
ab=$dir/ab-pollctl.log
grep '^LAB-RETRY\|^epoch \|^vmm ab\|^ab json' "$ab" 2>/dev/null | sed 's/^/# ab-pollctl: /'
# fields: epoch N ARM halt polls OK of TRIED successful: under pc0 KVM must not even try; under pc1 it
# tries (whether a poll succeeds depends on the lab host's load: seen 0 of 1-13 per epoch at load 15)
pc0=$(awk '/^epoch / && $3 == "pc0" && !/warm-up/ {s += $8} END {print s + 0}' "$ab" 2>/dev/null)
pc1=$(awk '/^epoch / && $3 == "pc1" && !/warm-up/ {s += $8} END {print s + 0}' "$ab" 2>/dev/null)
pc1ok=$(awk '/^epoch / && $3 == "pc1" && !/warm-up/ {s += $6} END {print s + 0}' "$ab" 2>/dev/null)
n0=$(grep -c '^epoch .* pc0 ' "$ab" 2>/dev/null)
check "ab_pollctl_runs_in_one_vm" "grep -q '^LAB-END ab-pollctl rc=0' '$ab' && grep -q 'in one VM' '$ab' && grep -q '^ab json: [1-9]' '$ab'" "$(grep '^LAB-END\|error\|vmm ab' "$ab" 2>/dev/null | head -5)"
echo "# ab-pollctl: pc0 tried $pc0 polls; pc1 tried $pc1, $pc1ok successful"
check "ab_pollctl_off_arm_never_polls" "[ '${n0:-0}' -ge 2 ] && [ '$pc0' = 0 ]" "pc0: $n0 epochs, $pc0 polls tried"
check "ab_pollctl_on_arm_polls" "[ '$pc1' -gt 0 ]" "pc1: $pc1 polls tried"
# CPUID parity: each feature register the default boot's guest sees (vmm-guest: x86 cpuid-raw)
# against the host's KVM_GET_SUPPORTED_CPUID (vmm caps). Withheld: the host offers, the guest
# lacks; added: the guest has, KVM's list lacks. Bits that mirror guest state, or that vmm's
# policy sets or clears on purpose, are named; any other withheld bit fails.
explain() { # LEAF REG BIT
	case "$1 $2 $3" in
	"0x1.0 ecx 21") echo "x2APIC (cleared only by --apic xapic)" ;;
	"0x1.0 ecx 24") echo "TSC-deadline (vmm advertises it with --irqchip split)" ;;
	"0x1.0 ecx 27") echo "OSXSAVE (mirrors the guest's CR4.OSXSAVE)" ;;
	"0x1.0 ecx 31") echo "hypervisor (vmm sets it: Linux then reads KVM's leaves)" ;;
	"0x1.0 edx 9") echo "APIC (mirrors the guest's APIC_BASE enable)" ;;
	"0x7.0 ecx 4") echo "OSPKE (mirrors the guest's CR4.PKE)" ;;
	esac
}
regs_of() { # LEAF: the registers compared (others hold sizes, IDs or counts that move)
	case $1 in
	0x1.0|0x80000001.0) echo "ecx edx" ;;
	0xd.0) echo "eax edx" ;;
	0xd.1) echo "eax" ;;
	0x80000008.0) echo "ebx" ;;
	*) echo "eax ebx ecx edx" ;;
	esac
}
log=$dir/boot-default.log caps=$dir/caps.log
unexplained=0 compared=0
if [ -f "$caps" ] && grep -q '^vmm-guest: x86 cpuid-raw' "$log" 2>/dev/null; then
	while read -r _ _ _ leaf ga gb gc gd; do
		host=$(grep -m1 "^supported-cpuid $leaf " "$caps")
		read -r _ _ ha hb hc hd <<<"${host:-x x 0 0 0 0}"
		for reg in $(regs_of "$leaf"); do
			case $reg in eax) h=$ha g=$ga ;; ebx) h=$hb g=$gb ;; ecx) h=$hc g=$gc ;; edx) h=$hd g=$gd ;; esac
			compared=$((compared + 1))
			w=$(( h & ~g )) a=$(( g & ~h ))
			for bit in $(seq 0 31); do
				if (( (w >> bit) & 1 )); then
					why=$(explain "$leaf" "$reg" "$bit")
					echo "# CPUID-WITHHELD $leaf $reg bit $bit: ${why:-NOT A DELIBERATE CHOICE}"
					[ -n "$why" ] || unexplained=$((unexplained + 1))
				fi
				if (( (a >> bit) & 1 )); then
					why=$(explain "$leaf" "$reg" "$bit")
					echo "# CPUID-ADDED $leaf $reg bit $bit: ${why:-guest state KVM reflects}"
				fi
			done
		done
		hr=$(echo "$host" | cut -d' ' -f3-)
		echo "# CPUID $leaf host ${hr:-(not offered)} guest $ga $gb $gc $gd"
	done < <(grep "^vmm-guest: x86 cpuid-raw" "$log" | tr -d "\r")
fi
check "cpuid_default_guest_gets_the_hosts_features" "[ $compared -gt 0 ] && [ $unexplained = 0 ]" \
	"$unexplained feature bits withheld without a reason ($compared registers compared; see # CPUID-WITHHELD)"
# The KVM-API tests' cases (kvm_x86_test.log: kselftest TAP) as kvm_x86/CASE, skips with their reason.
log=$dir/kvm_x86_test.log
if [ ! -f "$log" ] || ! grep -q '^# Totals:' "$log"; then
	bad kvm_x86 "no totals in $log: the test did not run or died"
fi
while IFS= read -r line; do
	name=kvm_x86/$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ ([^#]*).*/\2/' | xargs)
	case $line in
	"ok "*"# SKIP"*) skp "$name" "${line##*# SKIP }" ;;
	"ok "*) ok "$name" ;;
	*) bad "$name" "see $log" ;;
	esac
done < <(grep -E '^(not )?ok [0-9]+ ' "$log" 2>/dev/null)
echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:$skip error:0"
