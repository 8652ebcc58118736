#!/usr/bin/env bash
# CI's package check (.ci/run): make deb, install the host's .deb on this machine, and check that
# what a user runs first works: vmm --version names the version and the commit, man finds the
# pages, the completion loads, vmm caps answers (where /dev/kvm exists); the arm64 .deb holds an
# aarch64 vmm. Removes the package again. One line per check, then "check-deb: ok" or exit 1.
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
ver=$(head -n1 debian/changelog | tr -d '()' | cut -d' ' -f2)
arch=$(dpkg --print-architecture)
bad=0
check() { # WHAT COMMAND...
	local what=$1; shift
	if out=$("$@" 2>&1); then echo "check-deb: $what: ok${out:+ ($(echo "$out" | head -n1))}"
	else echo "check-deb: $what: FAILED: $(echo "$out" | tail -n3)"; bad=$((bad + 1)); fi
}

mkdir -p build # a clean checkout has none yet
t0=$(date +%s)
if ! make deb >build/deb.log 2>&1; then
	tail -n 30 build/deb.log; echo "check-deb: FAIL: make deb (see build/deb.log)"; exit 1
fi
echo "check-deb: make deb: ../vmm_${ver}_amd64.deb, ../vmm_${ver}_arm64.deb, lintian without errors ($(($(date +%s) - t0)) s)"
# dpkg-buildflags' hardening reached both binaries (lintian says so only at info level)
check "hardened (no lintian hardening-* tag)" sh -c "! lintian -I ../vmm_${ver}_amd64.deb ../vmm_${ver}_arm64.deb 2>&1 | grep hardening-"
check "dpkg -i vmm_${ver}_$arch.deb" $SUDO dpkg -i "../vmm_${ver}_$arch.deb"
check "vmm --version" sh -c "/usr/bin/vmm --version | grep -x 'vmm $ver (commit [0-9a-f]*)'"
check "man -w vmm-run" man -w vmm-run
check "man -w vmm" man -w vmm
check "bash completion" bash -c '. /usr/share/bash-completion/completions/vmm && complete -p vmm'
if [ -e /dev/kvm ]; then
	check "vmm caps" sh -c '/usr/bin/vmm caps | grep "^KVM_CAP_IRQFD "'
else
	echo "check-deb: vmm caps: not run (this machine has no /dev/kvm)"
fi
check "arm64 .deb holds an aarch64 vmm" sh -c "dpkg-deb --fsys-tarfile ../vmm_${ver}_arm64.deb | tar -xO ./usr/bin/vmm | file - | grep -q 'ARM aarch64'"
check "dpkg -r vmm" $SUDO dpkg -r vmm
if [ $bad -gt 0 ]; then echo "check-deb: FAIL: $bad checks"; exit 1; fi
echo "check-deb: ok"
