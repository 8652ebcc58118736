#!/usr/bin/env bash
# make check's runner: unit tests (native, sanitized, and arm64 under qemu-user), the lab tests
# inside the emulated arm64 host under GICv3 and then the emulated x86_64 host, while the arm64
# host's GICv4 pass runs alongside from the start.
# Reads each test binary's TAP output and ends with "N passed, N failed". A failure, a binary
# that dies without its totals, or a skip not listed in tests/expected-skips exits non-zero.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
host=$(uname -m | sed s/aarch64/arm64/)
res=build/check
rm -rf "$res"; mkdir -p "$res"
pass=0 fail=0 skip=0
failed=()

allowed_skip() { # NAME -> 0 if listed (first field of a line) in tests/expected-skips; a listed
	# name ending in * covers every test it prefixes
	local pat
	[ -f tests/expected-skips ] || return 1
	while read -r pat; do
		case $pat in ''|'#'*) continue ;; esac
		if [[ $pat == *'*' ]]; then [[ $1 == "${pat%\*}"* ]] && return 0
		elif [ "$pat" = "$1" ]; then return 0; fi
	done < <(awk '{print $1}' tests/expected-skips)
	return 1
}

# tally SUITE LOGFILE [WANT]: count one harness run's TAP lines. WANT is how many tests a filtered
# run (-t NAME...) must execute: a renamed test would otherwise leave its filter matching nothing.
tally() {
	local suite=$1 log=$2 want=${3:-0} line name ran
	if ! grep -q '^# Totals:' "$log"; then
		echo "FAIL $suite: no TAP totals (the binary crashed or was killed); see $log"
		fail=$((fail + 1)); failed+=("$suite"); return
	fi
	ran=$(grep -cE '^(not )?ok [0-9]+ ' "$log")
	if [ "$ran" -lt "$want" ]; then
		echo "FAIL $suite: ran $ran tests but its -t filters name $want (a test renamed?); see $log"
		fail=$((fail + 1)); failed+=("$suite (filter ran $ran of $want tests)")
	fi
	while IFS= read -r line; do
		name=$(echo "$line" | sed -E 's/^(not )?ok [0-9]+ ([^#]*).*/\2/' | xargs)
		if [[ $line == "ok "*"# SKIP"* ]]; then
			if allowed_skip "$suite/$name"; then
				skip=$((skip + 1)); echo "skip $suite/$name: ${line##*# SKIP}"
			else
				fail=$((fail + 1)); failed+=("$suite/$name (unexpected skip)")
				echo "FAIL $suite/$name: skipped but not listed in tests/expected-skips:${line##*# SKIP}"
			fi
		elif [[ $line == "ok "* ]]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); failed+=("$suite/$name"); echo "FAIL $suite/$name (see $log)"
		fi
	done < <(grep -E '^(not )?ok [0-9]+ ' "$log")
}

run_unit() { # LABEL RUNNER BINARY...
	local label=$1 runner=$2; shift 2
	for t in "$@"; do
		local n; n=$(basename "$t")
		$runner "$t" >"$res/$label-$n.log" 2>&1
		tally "$label/$n" "$res/$label-$n.log"
	done
}

# lab_pass GIC OUT [run.sh options]: one arm64 lab pass and its time.
lab_pass() {
	local gic=$1 out=$2 t0 st=0; shift 2
	t0=$(date +%s)
	rm -f "$out"/*.log
	# The limit is for a host that stopped, not a slow one: 1800 s killed a GICv4 pass in CI that was
	# still passing (in its last suite), and the pass now shares the machine with the rest of check.
	tests/lab/run.sh --gic "$gic" --timeout 3600 --out "$out" "$@" || st=$?
	echo "lab gic$gic: $(($(date +%s) - t0)) s including set-up"
	return $st
}

# The GICv4 lab pass, the longest part of make check (nearly all of it Linux guests booting under
# nested TCG), runs in the background from here while the unit tests, the GICv3 pass and the x86
# lab run in the foreground: a lab host keeps about 1.4 of the 2 cores busy (a guest's boot runs
# on one vCPU), so the two streams share the machine instead of taking turns.
lab_all=$(cd build/arm64/tests/lab && ls *_test | tr '\n' ' ')
gic4_bg= lab_ready=0
# A check stopped early (Ctrl-C, a kill) takes the background pass's lab host down with it: the
# pass runs in a process group of its own (set -m), which the trap signals as a whole.
trap '[ -z "$gic4_bg" ] || kill -TERM -- "-$gic4_bg" 2>/dev/null; exit 130' INT TERM
if tests/lab/run.sh --prepare >"$res/lab-prepare.log" 2>&1; then
	set -m
	lab_pass 4 build/lab/gic4 --tests "$(echo $lab_all | tr ' ' ',')" >"$res/lab-gic4.out" 2>&1 &
	gic4_bg=$! lab_ready=1
	set +m
	echo "== lab tests (arm64 host, gic-version=4): started in the background (its output follows the x86 lab)"
else
	cat "$res/lab-prepare.log"
	echo "FAIL lab: fetching the lab's kernel or building its initramfs failed"
	fail=$((fail + 1)); failed+=("lab (prepare)")
fi

echo "== unit tests ($host)"
# The test binaries of today's sources: a binary left in build/ by a test since split or removed
# is not run.
unit_bins() {
	local src
	for src in tests/unit/*_test.c; do
		src=${src##*/}
		[ -x "$1/${src%.c}" ] && echo "$1/${src%.c}"
	done
}
run_unit "unit-$host" "" $(unit_bins build/"$host"/tests/unit)
echo "== unit tests ($host, ASan+UBSan)"
run_unit "unit-$host-san" "" $(unit_bins build/"$host"-san/tests/unit)
# ThreadSanitizer on the unit tests that start threads (the vCPU kick, the control socket's server,
# MSI-X delivery during route commits, a guest flipping descriptors, virtio workers).
echo "== unit tests ($host, ThreadSanitizer, those that start threads)"
run_unit "unit-$host-tsan" "" $(grep -lE 'pthread_create|virtio_start|ctl_server_start|probe_peer_start' tests/unit/*_test.c |
	sed "s|tests/unit/\(.*\)\.c|build/$host-tsan/tests/unit/\1|")
# The committed seed corpora are the generator's output (a seed changed without make fuzz-seeds).
if make -s fuzz-seeds-check >"$res/fuzz-seeds.log" 2>&1; then
	pass=$((pass + 1)); tail -1 "$res/fuzz-seeds.log"
else
	fail=$((fail + 1)); failed+=("fuzz-seeds-check"); cat "$res/fuzz-seeds.log"
fi
# Each libFuzzer target from its seeds for FUZZ_SMOKE_SECONDS (make fuzz runs them longer).
secs=${FUZZ_SMOKE_SECONDS:-20}
echo "== fuzz smoke (libFuzzer + ASan + UBSan, $secs s per target)"
t0=$(date +%s)
scripts/fuzz.sh "$secs" >"$res/fuzz.log" 2>&1
sed '$d' "$res/fuzz.log"
while read -r name _ _ _ _ result; do
	case $result in
	ok) pass=$((pass + 1)) ;;
	skip*) skip=$((skip + 1)) ;;
	*) fail=$((fail + 1)); failed+=("fuzz/$name") ;;
	esac
done < <(sed -e '1d' -e '$d' "$res/fuzz.log")
if ! tail -1 "$res/fuzz.log" | grep -qE '^[0-9]+ passed, [0-9]+ failed$'; then
	fail=$((fail + 1)); failed+=("fuzz (did not finish; see $res/fuzz.log)")
fi
echo "fuzz smoke: $(($(date +%s) - t0)) s"
if [ "$host" != arm64 ]; then
	echo "== unit tests (arm64 under qemu-user)"
	if command -v qemu-aarch64-static >/dev/null; then
		run_unit "unit-arm64" qemu-aarch64-static $(unit_bins build/arm64/tests/unit)
	else
		echo "FAIL unit-arm64: qemu-aarch64-static missing (make deps installs it)"
		fail=$((fail + 1)); failed+=("unit-arm64")
	fi
fi

# The x86 KVM-API tests (tests/kvm/x86) on this machine's own /dev/kvm: each case skips with the
# reason where there is none, it cannot be opened, or its KVM lacks what the case needs; the x86
# lab runs them all again below.
if [ "$host" = x86_64 ]; then
	echo "== x86 KVM-API tests on this machine's /dev/kvm"
	run_unit "kvm-$host" "" build/x86_64/tests/kvm/x86/kvm_x86_test
fi

# The man pages agree with every command's --help (one line per option missing from a page or a
# --help); a page with an option taken out and a bogus one added must make the check fail, so it
# can. Then the bash completion, and make install / uninstall into a scratch DESTDIR.
echo "== man pages, bash completion, make install"
if scripts/check-man.sh "build/$host/vmm" >"$res/check-man.log" 2>&1; then
	pass=$((pass + 1)); tail -1 "$res/check-man.log"
else
	fail=$((fail + 1)); failed+=("check-man"); cat "$res/check-man.log"
fi
tmpman=$(mktemp -d)
cp docs/man/*.scd "$tmpman"/
sed -i -e '/--dump-dtb/d' -e 's/^\*--timeout\*/*--frobnicate*/' "$tmpman/vmm-run.1.scd"
scripts/check-man.sh "build/$host/vmm" "$tmpman" >"$res/check-man-broken.log" 2>&1
st=$?
if [ $st = 1 ] && grep -q -- "--dump-dtb is in 'vmm run --help' but not" "$res/check-man-broken.log" &&
	grep -q -- "--frobnicate is an option in .* but 'vmm run --help' does not" "$res/check-man-broken.log"; then
	pass=$((pass + 1)); echo "check-man: a drifted page fails it (--dump-dtb missing, --frobnicate extra)"
else
	fail=$((fail + 1)); failed+=("check-man (a drifted page passed)"); cat "$res/check-man-broken.log"
fi
rm -rf "$tmpman"
run_unit "dist" bash tests/dist/completion_test.sh tests/dist/install_test.sh tests/dist/docs_test.sh tests/dist/layers_test.sh

# make check-hw where it cannot run (no /dev/kvm, or not an arm64 host): a skip naming the reason
# (exit 4), never a pass.
if [ "$host" != arm64 ] || [ ! -e /dev/kvm ]; then
	echo "== make check-hw without an arm64 /dev/kvm"
	scripts/check-hw.sh >"$res/check-hw.log" 2>&1
	st=$?
	if [ $st = 4 ] && grep -q '^check-hw: SKIP: ' "$res/check-hw.log"; then
		pass=$((pass + 1)); grep '^check-hw: SKIP: ' "$res/check-hw.log"
	else
		fail=$((fail + 1)); failed+=("check-hw (exit $st, no SKIP line)"); echo "FAIL check-hw: see $res/check-hw.log"
	fi
fi

# Every lab test runs under GICv4 (started above); under GICv3 the ones whose behaviour depends
# on the GIC (the PMU's PPI and vCPU features included): the
# vGIC/vITS core, booting a guest (serial and virtio-pci/ITS MSI-X consoles), a passed-through
# VF (vLPIs under GICv4, software injection under GICv3) and the edu's INTx (a level SPI with a
# resamplefd).
gic3_tests="vgic_wfi_test boot_test vfio_test udp_test"
gic3_args=(--args "boot_test=-t,builtin_guest_two_cpus,-t,virtio_console_over_its_msix,-t,cpu_features_default"
	--args "vfio_test=-t,igb_vf_pings_with_per_vector_vlpi_report,-t,id_and_intx_events_through_uio")
# filters SUITE ARGS...: how many -t names the --args entries give SUITE.
filters() {
	local suite=$1 a; shift
	for a in "$@"; do
		if [[ $a == "$suite="* ]]; then echo "${a#*=}" | tr ',' '\n' | grep -cx -- -t; return 0; fi
	done
	echo 0
}
# lab_tally GIC OK TESTS [--args ...]: a pass's results, once it has ended (OK: run.sh's status).
lab_tally() {
	local gic=$1 ok=$2 sel=$3 out=build/lab/gic$1 want ran=0 n; shift 3
	if [ "$ok" != 0 ]; then
		fail=$((fail + 1)); failed+=("lab-gic$gic (host did not finish)")
	fi
	# The lab must be what it claims: direct vLPI injection on under GICv4, absent under GICv3.
	if [ "$gic" = 4 ]; then want=1; else want=0; fi
	if [ "$(grep -c '^LAB-INFO .*kvm \[[0-9]*\]: GICv4 support enabled' "$out/console.log" 2>/dev/null)" = "$want" ]; then
		pass=$((pass + 1))
	else
		fail=$((fail + 1)); failed+=("lab-gic$gic/host-gicv4-state")
		echo "FAIL lab-gic$gic: KVM's GICv4 state in the host's dmesg is not what gic-version=$gic gives"
	fi
	for n in $sel; do
		if [ -f "$out/$n.log" ]; then
			tally "lab-gic$gic/$n" "$out/$n.log" "$(filters "$n" "$@")"; ran=1
		else
			fail=$((fail + 1)); failed+=("lab-gic$gic/$n (did not run)"); echo "FAIL lab-gic$gic/$n: did not run"
		fi
	done
	[ $ran = 1 ] || echo "lab gic$gic: no lab test ran"
}
if [ $lab_ready = 1 ]; then
	echo "== lab tests (arm64 host, gic-version=3)"
	gic3_ok=0
	lab_pass 3 build/lab/gic3 --tests "$(echo $gic3_tests | tr ' ' ',')" "${gic3_args[@]}" || gic3_ok=$?
	lab_tally 3 "$gic3_ok" "$gic3_tests" "${gic3_args[@]}"
fi

# The x86 lab host (lab.md): Debian's amd64 kernel under nested SVM boots the built-in guest on
# 2 vCPUs five times (both irqchips, 4 GiB), passes the edu's INTx to the test guest, then the
# test guest with a virtio-blk disk, with virtio-net on a tap and with an igb VF; check-x86.sh
# compares what the guest saw in CPUID with vmm's PV policy, counts the IOAPIC's and the edu's
# interrupts, and checks the RAM, disk and pings.
if [ "$host" = x86_64 ]; then
	echo "== lab tests (x86_64 host, nested SVM)"
	t0=$(date +%s)
	x86_ok=0
	# run-x86.sh runs the lab host again from the test it died in when it did not finish (its
	# kernel panicked or stalled, QEMU aborted: nested SVM under TCG), up to five runs, and says so
	tests/lab/run-x86.sh --timeout 1800 --out build/lab/x86 && x86_ok=1
	if [ $x86_ok = 0 ]; then
		fail=$((fail + 1)); failed+=("lab-x86 (host did not finish)")
	fi
	echo "lab x86: $(($(date +%s) - t0)) s including set-up"
	tests/lab/check-x86.sh build/lab/x86 >"$res/lab-x86.log" 2>&1
	tally lab-x86 "$res/lab-x86.log"
fi

if [ $lab_ready = 1 ]; then
	echo "== lab tests (arm64 host, gic-version=4), run in the background"
	gic4_ok=0
	wait "$gic4_bg" || gic4_ok=$?
	gic4_bg=
	cat "$res/lab-gic4.out"
	lab_tally 4 "$gic4_ok" "$lab_all"
fi

if [ ${#failed[@]} -gt 0 ]; then
	echo "failed:"; printf '  %s\n' "${failed[@]}"
fi
if [ $skip -gt 0 ]; then
	echo "$pass passed, $fail failed, $skip skipped"
else
	echo "$pass passed, $fail failed"
fi
[ $fail -eq 0 ]
