#!/usr/bin/env bash
# make bench: runs tests/lab/bench.c (start-up, exits, virtio-blk, virtio-net, memory) on this
# machine when it is an arm64 KVM host vmm can use, otherwise inside the emulated lab. Keeps the
# report as build/bench/WHERE-DATE.json (and latest.json), prints the table, and says how to
# compare two reports (vmm bench compare OLD.json NEW.json).
#   VMM_BENCH_ARGS  extra arguments for the runner (e.g. --quick, --only startup,mmio)
#   VMM_BENCH_DISK  on a KVM host: a scratch block device for the virtio-blk figures (its data is
#                   overwritten); without it those figures are skipped
#   VMM_BENCH_X86   on an x86_64 machine the x86 lab (nested SVM) runs the bench too, with this
#                   machine's qemu-system-x86_64 as the peer: report build/bench/lab-x86-DATE.json;
#                   0 leaves it out
#   VMM_BENCH_X86_ARGS  its arguments (default: --quick --only startup,memory,blk)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
out=build/bench
mkdir -p "$out"
stamp=$(date -u +%Y%m%dT%H%M%SZ)
arch=$(uname -m | sed s/aarch64/arm64/)
args=${VMM_BENCH_ARGS:-}

if [ "$arch" = arm64 ] && [ -r /dev/kvm ] && [ -w /dev/kvm ]; then
	echo "bench: on this host's /dev/kvm"
	[ -f .cache/lab/arm64/pkg/.stamp ] || scripts/fetch.sh lab-arm64
	stage=$top/build/hw-stage
	# QEMU/KVM as the peer, from the same packages as in the lab (its figures are skipped without)
	[ -f .cache/lab/arm64/qemu/.stamp ] || scripts/fetch.sh lab-qemu-arm64 ||
		echo "bench: fetching QEMU failed: no QEMU peer figures" >&2
	[ -f .cache/lab/arm64/kvmtool/.stamp ] || scripts/fetch.sh lab-kvmtool-arm64 ||
		echo "bench: fetching or building kvmtool failed: no kvmtool peer figures" >&2
	tests/lab/mkinitramfs.sh --stage "$stage" --bench
	SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
	if [ -e /lab ] && [ ! -L /lab ]; then echo "bench: /lab exists and is not a link: move it away" >&2; exit 1; fi
	$SUDO ln -sfn "$stage" /lab
	json=$out/host-$stamp.json
	kernel=$(ls "$top"/.cache/lab/arm64/pkg/boot/vmlinuz-* | head -1)
	# shellcheck disable=SC2086 # args are words
	$SUDO env VMM_BENCH_HOST=1 VMM_LAB_KERNEL="$kernel" /lab/bench --json "$json" \
		--disk "${VMM_BENCH_DISK:-/nonexistent}" $args
	$SUDO chown "$(id -u):$(id -g)" "$json" 2>/dev/null || true
	$SUDO rm -f /lab
else
	echo "bench: no usable arm64 /dev/kvm here: inside the emulated lab (nested, TCG: figures are"
	echo "bench: for comparing builds on the same machine, not hardware figures)"
	json=$out/lab-$stamp.json
	st=0
	# a loaded machine (other QEMUs) makes nested boots many times slower: a generous timeout
	tests/lab/run.sh --bench --timeout "${VMM_BENCH_TIMEOUT:-2700}" --out build/lab/bench \
		${args:+--args "bench=$(echo $args | tr ',' '+' | tr ' ' ',')"} || st=$?
	[ -s build/lab/bench/bench.json ] || { echo "bench: no report came out of the lab" >&2; exit 1; }
	cp build/lab/bench/bench.json "$json"
	if [ $st -ne 0 ]; then
		echo "bench: the lab run did not finish; $json holds the sections done:" >&2
		"build/$arch/vmm" bench show "$json" || true
	fi
fi
ln -sfn "$(basename "$json")" "$out/latest.json"
echo "bench: report in $json (and $out/latest.json); compare two with:"
echo "bench:   build/$arch/vmm bench compare OLD.json NEW.json"
xst=0
if [ "$arch" = x86_64 ] && [ "${VMM_BENCH_X86:-1}" != 0 ]; then
	echo "bench: the x86 lab (nested SVM under TCG), vmm and this machine's QEMU/KVM"
	xargs=${VMM_BENCH_X86_ARGS:---quick --only startup,memory,blk}
	tests/lab/run-x86.sh --bench --timeout "${VMM_BENCH_TIMEOUT:-2700}" --out build/lab/bench-x86 \
		--args "bench=$(echo $xargs | tr ',' '+' | tr ' ' ',')" || xst=$?
	if [ -s build/lab/bench-x86/bench.json ]; then
		xjson=$out/lab-x86-$stamp.json
		cp build/lab/bench-x86/bench.json "$xjson"
		ln -sfn "$(basename "$xjson")" "$out/latest-x86.json"
		echo "bench: x86 report in $xjson (and $out/latest-x86.json)"
	else
		echo "bench: no report came out of the x86 lab" >&2; xst=1
	fi
	# the emulated x86 host fails on its own now and then (docs/lab.md): said, and the arm64
	# report above stands
	[ $xst = 0 ] || echo "bench: the x86 lab's bench did not finish (status $xst): see build/lab/bench-x86/console.log" >&2
fi
exit "${st:-0}"
