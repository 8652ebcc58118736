#!/usr/bin/env bash
# Fetches Debian packages that the build and the lab unpack rather than install, into the ignored
# cache (default .cache/), so a second run costs nothing. Usage: fetch.sh WHAT...
#   uapi       6.12 UAPI headers (linux-libc-dev from bookworm-backports, all arches' asm/)
#   sysroot    arm64 libfdt, zlib, libaio, libseccomp for the static cross build
#   kselftest  kselftest_harness.h and kselftest.h from linux-source-6.12
#   lab-arm64  Debian's 6.12 arm64 kernel + modules and busybox-static:arm64 for the lab host
#   lab-x86    Debian's 6.12 amd64 kernel + modules and busybox-static:amd64 for the x86 lab host
#   lab-qemu-arm64  bookworm-backports' qemu-system-aarch64 for arm64 with the shared libraries it
#              needs and the arm64 loader (make bench's QEMU/KVM peer inside the lab host)
#   lab-kvmtool-arm64  kvmtool built statically for arm64 from the source package Debian and Ubuntu
#              ship (0.20170904, Ubuntu's archive: Debian has dropped it and neither builds a
#              newer one), against the sysroot's libfdt, zlib and libaio (make bench's second
#              peer). Never committed: downloaded, checked against its pinned hash, built in the cache.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
cache=${VMM_CACHE:-$top/.cache}
debs=$cache/debs
mkdir -p "$debs"

# apt-get download SPEC -> path of the .deb (cached by file name).
download() {
	local spec=$1 name
	# run from / : in a folder that already holds the .deb, --print-uris prints nothing
	name=$(cd / && apt-get download --print-uris "$spec" 2>/dev/null | awk '{print $2}' | head -1)
	if [ -z "$name" ]; then
		echo "fetch: apt cannot find '$spec'; run 'make deps' (it enables bookworm-backports and arm64)" >&2
		return 1
	fi
	if [ ! -s "$debs/$name" ]; then
		(cd "$debs" && apt-get -q download "$spec" >/dev/null 2>&1) || {
			echo "fetch: downloading '$spec' failed" >&2; return 1; }
	fi
	echo "$debs/$name"
}

# Newest Debian 6.12 kernel image package of flavour $1 (arm64, amd64), unsigned.
kernel_pkg() {
	apt-cache pkgnames linux-image-6.12 | grep -E "^linux-image-6\.12\.[0-9]+\+(deb12|bpo)-$1-unsigned\$" |
		sort -V | tail -1
}

unpack_once() { # DIR STAMPKEY DEB...
	local dir=$1 key=$2; shift 2
	[ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "$key" ] && return 0
	# unpacked beside, then swapped in: a build reading the old tree never sees it half-made
	rm -rf "$dir.new"; mkdir -p "$dir.new"
	for d in "$@"; do dpkg-deb -x "$d" "$dir.new"; done
	echo "$key" >"$dir.new/.stamp"
	rm -rf "$dir.old"; [ ! -d "$dir" ] || mv "$dir" "$dir.old"
	mv "$dir.new" "$dir"; rm -rf "$dir.old"
}

# Newest version of arm64 package $1 in bookworm-backports.
bpo_version() {
	apt-cache madison "$1:arm64" | awk -F' *[|] *' '/bookworm-backports/ { print $2; exit }'
}

# QEMU and its libraries, pruned to what the binary loads: every lib* package in the recursive
# Depends of qemu-system-arm (its candidates), unpacked together; then the NEEDED entries of the
# binary followed through those files, so the list is derived, not typed. OUT: bin/ and lib/.
qemu_tree() { # OUT VERSION
	local out=$1 ver=$2 tmp specs=() names=() need=() seen=" " so f
	mapfile -t specs < <(echo "qemu-system-arm:arm64=$ver"; cd / && apt-cache depends --recurse --no-recommends \
		--no-suggests --no-conflicts --no-breaks --no-replaces --no-enhances "qemu-system-arm:arm64=$ver" |
		grep -E '^(lib|zlib)[^ <>]*:arm64$' | grep -vE -- '-(data|common|dev|bin):arm64$' | sort -u)
	# one apt call for all the names (a call per package costs seconds each)
	mapfile -t names < <(cd / && apt-get download --print-uris "${specs[@]}" 2>/dev/null | awk '{print $2}')
	[ ${#names[@]} -eq ${#specs[@]} ] || {
		echo "fetch: apt resolves ${#names[@]} of ${#specs[@]} QEMU packages; run 'make deps'" >&2; return 1; }
	local missing=() n
	for n in "${names[@]}"; do # NAME_VERSION_arm64.deb: the package is what comes before the first _
		[ -s "$debs/$n" ] && continue
		case ${n%%_*} in qemu-system-arm) missing+=("qemu-system-arm:arm64=$ver") ;; *) missing+=("${n%%_*}:arm64") ;; esac
	done
	if [ ${#missing[@]} -gt 0 ]; then
		(cd "$debs" && apt-get -q download "${missing[@]}" >/dev/null 2>&1) || {
			echo "fetch: downloading QEMU's packages failed: ${missing[*]}" >&2; return 1; }
	fi
	tmp=$(mktemp -d)
	for n in "${names[@]}"; do dpkg-deb -x "$debs/$n" "$tmp"; done
	mkdir -p "$out/bin" "$out/lib"
	cp "$tmp/usr/bin/qemu-system-aarch64" "$out/bin/"
	cp -L "$tmp/lib/ld-linux-aarch64.so.1" "$out/lib/" 2>/dev/null ||
		cp -L "$tmp/usr/lib/ld-linux-aarch64.so.1" "$out/lib/"
	need=("$out/bin/qemu-system-aarch64")
	while [ ${#need[@]} -gt 0 ]; do
		f=${need[0]}; need=("${need[@]:1}")
		for so in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
			case $seen in *" $so "*) continue ;; esac
			seen="$seen$so "
			local src
			src=$(ls "$tmp"/{lib,usr/lib}/aarch64-linux-gnu/"$so" 2>/dev/null | head -1)
			[ -n "$src" ] || { echo "fetch: QEMU needs $so, which no package in its Depends holds" >&2
				rm -rf "$tmp"; return 1; }
			cp -L "$src" "$out/lib/$so"
			need+=("$out/lib/$so")
		done
	done
	rm -rf "$tmp"
	echo "fetch: QEMU $ver with $(ls "$out/lib" | wc -l) libraries ($(du -sh "$out" | cut -f1))" >&2
}

# The one kvmtool source tarball a distribution ships: its sha256 from jammy's universe Sources.
KVMTOOL_VER=0.20170904
KVMTOOL_URL=http://archive.ubuntu.com/ubuntu/pool/universe/k/kvmtool/kvmtool_$KVMTOOL_VER.orig.tar.xz
KVMTOOL_SHA256=5a70657add5663391f689f3dc43393093abddb28df0543229498b01fe0fdbaa5

kvmtool_build() { # OUT: OUT/lkvm, static arm64
	local out=$1 tar=$debs/kvmtool_$KVMTOOL_VER.orig.tar.xz tmp sr=$cache/sysroot-arm64
	if [ ! -s "$tar" ] || ! echo "$KVMTOOL_SHA256  $tar" | sha256sum -c --quiet 2>/dev/null; then
		# apt's own downloader (no curl on a fresh machine): it checks the hash before keeping it
		/usr/lib/apt/apt-helper download-file "$KVMTOOL_URL" "$tar.part" "SHA256:$KVMTOOL_SHA256" \
			>/dev/null 2>"$tar.log" || {
			echo "fetch: downloading $KVMTOOL_URL failed: $(grep -m1 '^E:' "$tar.log")" >&2
			rm -f "$tar.part" "$tar.log"; return 1; }
		mv "$tar.part" "$tar"; rm -f "$tar.log"
	fi
	tmp=$(mktemp -d)
	tar -xJf "$tar" -C "$tmp"
	# the sysroot's headers and libraries through CC: kvmtool's feature probes use CC and CFLAGS
	# without LDFLAGS; WERROR=0: its 2017 code warns under today's GCC
	if ! make -s -C "$tmp/kvmtool-$KVMTOOL_VER.orig" -j"$(nproc)" ARCH=arm64 CROSS_COMPILE=aarch64-linux-gnu- \
		WERROR=0 CC="aarch64-linux-gnu-gcc -I$sr/usr/include -L$sr/usr/lib/aarch64-linux-gnu" \
		lkvm-static >"$tmp/build.log" 2>&1; then
		echo "fetch: building kvmtool failed; its log ends:" >&2; tail -20 "$tmp/build.log" >&2
		rm -rf "$tmp"; return 1
	fi
	mkdir -p "$out"
	cp "$tmp/kvmtool-$KVMTOOL_VER.orig/lkvm-static" "$out/lkvm"
	rm -rf "$tmp"
	echo "fetch: kvmtool $KVMTOOL_VER built ($(du -h "$out/lkvm" | cut -f1), static arm64)" >&2
}

for what in "$@"; do
	case $what in
	uapi)
		d=$(download linux-libc-dev/bookworm-backports)
		unpack_once "$cache/uapi" "$(basename "$d")" "$d"
		test -f "$cache/uapi/usr/include/aarch64-linux-gnu/asm/kvm.h"
		;;
	sysroot)
		ds=()
		for p in libfdt-dev libfdt1 zlib1g-dev zlib1g libaio-dev libaio1 libseccomp-dev libseccomp2; do ds+=("$(download "$p:arm64")"); done
		unpack_once "$cache/sysroot-arm64" "$(for d in "${ds[@]}"; do basename "$d"; done | tr '\n' ' ')" "${ds[@]}"
		;;
	kselftest)
		out=${KSELFTEST_DIR:-$cache/kselftest}
		if [ ! -f "$out/kselftest_harness.h" ]; then
			d=$(download linux-source-6.12)
			tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
			dpkg-deb --fsys-tarfile "$d" | tar -x -C "$tmp" --wildcards '*/linux-source-6.12.tar.xz'
			mkdir -p "$out"
			tar -xJf "$tmp"/usr/src/linux-source-6.12.tar.xz -C "$tmp" --wildcards \
				'*/tools/testing/selftests/kselftest_harness.h' '*/tools/testing/selftests/kselftest.h'
			cp "$tmp"/linux-source-6.12/tools/testing/selftests/kselftest{_harness,}.h "$out/"
			rm -rf "$tmp"; trap - EXIT
		fi
		;;
	lab-arm64)
		k=$(kernel_pkg arm64)
		[ -n "$k" ] || { echo "fetch: no linux-image-6.12.*-arm64-unsigned package; run 'make deps'" >&2; exit 1; }
		kd=$(download "$k:arm64"); bd=$(download busybox-static:arm64)
		unpack_once "$cache/lab/arm64/pkg" "$(basename "$kd") $(basename "$bd")" "$kd" "$bd"
		;;
	lab-x86)
		k=$(kernel_pkg amd64)
		[ -n "$k" ] || { echo "fetch: no linux-image-6.12.*-amd64-unsigned package; run 'make deps'" >&2; exit 1; }
		kd=$(download "$k:amd64"); bd=$(download busybox-static:amd64)
		unpack_once "$cache/lab/x86/pkg" "$(basename "$kd") $(basename "$bd")" "$kd" "$bd"
		;;
	lab-qemu-arm64)
		ver=$(bpo_version qemu-system-arm)
		[ -n "$ver" ] || { echo "fetch: no qemu-system-arm:arm64 in bookworm-backports; run 'make deps'" >&2; exit 1; }
		dir=$cache/lab/arm64/qemu
		[ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "qemu-system-arm $ver" ] && continue
		# made beside, then swapped in, as unpack_once does
		rm -rf "$dir.new"
		qemu_tree "$dir.new" "$ver" || { rm -rf "$dir.new"; exit 1; }
		echo "qemu-system-arm $ver" >"$dir.new/.stamp"
		rm -rf "$dir.old"; [ ! -d "$dir" ] || mv "$dir" "$dir.old"
		mv "$dir.new" "$dir"; rm -rf "$dir.old"
		;;
	lab-kvmtool-arm64)
		dir=$cache/lab/arm64/kvmtool
		[ -f "$dir/.stamp" ] && [ "$(cat "$dir/.stamp")" = "kvmtool $KVMTOOL_VER" ] && continue
		"$0" sysroot
		rm -rf "$dir.new"
		kvmtool_build "$dir.new" || { rm -rf "$dir.new"; exit 1; }
		echo "kvmtool $KVMTOOL_VER" >"$dir.new/.stamp"
		rm -rf "$dir.old"; [ ! -d "$dir" ] || mv "$dir" "$dir.old"
		mv "$dir.new" "$dir"; rm -rf "$dir.old"
		;;
	*) echo "fetch: unknown item '$what'" >&2; exit 2 ;;
	esac
done
