#!/usr/bin/env bash
# Installs everything vmm needs on a fresh Debian bookworm machine, from Debian packages only.
# Idempotent: a second run changes nothing. Waits for the dpkg lock instead of failing.
set -euo pipefail

SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
APT=(env DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=900 -y -q)

changed=0
# The arm64 package lists are needed to fetch arm64 libraries, kernel and busybox (scripts/fetch.sh
# unpacks them into the ignored cache: libfdt-dev cannot be co-installed for two architectures).
if ! dpkg --print-foreign-architectures | grep -qx arm64; then
	$SUDO dpkg --add-architecture arm64
	changed=1
fi

# QEMU >= 8 (igb SR-IOV NIC) and 6.12 UAPI headers come from bookworm-backports. Reuse the mirror the
# machine already uses rather than naming one here.
bp=/etc/apt/sources.list.d/vmm-backports.sources
if ! grep -rqs "bookworm-backports" /etc/apt/sources.list /etc/apt/sources.list.d/; then
	uris=$(awk '/^URIs:/ && !done { for (i = 2; i <= NF; i++) if ($i !~ /security/) { print $i; done = 1; exit } }' \
		/etc/apt/sources.list.d/debian.sources 2>/dev/null || true)
	if [ -z "$uris" ]; then
		uris=$(awk '$1 == "deb" && $3 == "bookworm" { print $2; exit }' /etc/apt/sources.list 2>/dev/null || true)
	fi
	if [ -z "$uris" ]; then
		echo "deps: cannot find the machine's Debian mirror in /etc/apt; add bookworm-backports by hand" >&2
		exit 1
	fi
	printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
		"$uris" | $SUDO tee "$bp" >/dev/null
	changed=1
fi

pkgs=(make gcc libc6-dev pkg-config
	gcc-aarch64-linux-gnu libc6-dev-arm64-cross
	libfdt-dev zlib1g-dev libaio-dev libseccomp-dev
	device-tree-compiler cpio kmod procps xz-utils zstd dpkg-dev ca-certificates
	clang-14 libclang-rt-14-dev gnuplot-nox
	build-essential scdoc man-db bash-completion debhelper fakeroot lintian file)
bp_pkgs=(qemu-system-arm qemu-system-x86 qemu-utils qemu-user-static)

missing=()
for p in "${pkgs[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
qemu_ok=0
if command -v qemu-system-aarch64 >/dev/null; then
	v=$(qemu-system-aarch64 --version | sed -n 's/.*version \([0-9]*\)\..*/\1/p')
	[ "${v:-0}" -ge 8 ] && command -v qemu-aarch64-static >/dev/null && qemu_ok=1
fi

if [ ${#missing[@]} -gt 0 ] || [ $qemu_ok -eq 0 ] || [ $changed -eq 1 ]; then
	$SUDO "${APT[@]}" update
	[ ${#missing[@]} -eq 0 ] || $SUDO "${APT[@]}" install --no-install-recommends "${missing[@]}"
	[ $qemu_ok -eq 1 ] || $SUDO "${APT[@]}" install --no-install-recommends -t bookworm-backports "${bp_pkgs[@]}"
fi
echo "deps: ok ($(qemu-system-aarch64 --version | head -1))"
