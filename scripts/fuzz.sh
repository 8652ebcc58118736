#!/usr/bin/env bash
# Runs the libFuzzer targets (build/fuzz/NAME_fuzz, make fuzz-build) for SECONDS each, from their
# seed corpora (tests/fuzz/corpus/NAME, read only) into a working corpus under build/fuzz/corpus.
# Prints per target the executions, libFuzzer's coverage (cov: edges, ft: features) and corpus
# size, then "N passed, N failed". A crash, a leak, a timeout or an out-of-memory fails its target
# and leaves the input in build/fuzz/crash/ (reproduce: build/fuzz/NAME_fuzz FILE). virtio_net
# needs root (a network namespace and a tap): skipped otherwise.
# Usage: scripts/fuzz.sh SECONDS [NAME,NAME...]   (FUZZ_JOBS targets at once; default: nproc)
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cd "$top"
secs=${1:?usage: scripts/fuzz.sh SECONDS [NAME,...]}
if [ -n "${2:-}" ]; then
	names=$(echo "$2" | tr ',' ' ')
else
	names=$(cd tests/fuzz && ls *_fuzz.c | sed 's/_fuzz\.c$//')
fi
out=build/fuzz
mkdir -p "$out/crash" "$out/log"
jobs=${FUZZ_JOBS:-$(nproc)}
# one_target NAME: runs it and leaves its table row in $out/log/NAME.row, its result in NAME.rc
one_target() {
	local n=$1 bin=$out/${1}_fuzz seeds=tests/fuzz/corpus/$1 work=$out/corpus/$1 log=$out/log/$1.log rc res
	local row=$out/log/$n.row
	if [ ! -x "$bin" ]; then
		printf '%-14s %10s %8s %8s %7s %s\n' "$n" - - - - "FAIL (not built: make fuzz-build)" >"$row"
		echo fail >"$out/log/$n.rc"; return
	fi
	if [ "$n" = virtio_net ] && [ "$(id -u)" != 0 ]; then # a network namespace and a tap
		printf '%-14s %10s %8s %8s %7s %s\n' "$n" - - - - "skip (needs root)" >"$row"
		echo skip >"$out/log/$n.rc"; return
	fi
	mkdir -p "$work"
	[ -d "$seeds" ] || seeds=
	# -close_fd_mask=3: vmm's own messages (a guest's errors, bad options) would drown the run;
	# libFuzzer and the sanitizers report on a descriptor of their own.
	"$bin" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -close_fd_mask=3 \
		-print_final_stats=1 -artifact_prefix="$out/crash/$n-" "$work" $seeds >"$log" 2>&1
	rc=$?
	local execs last cov ft corp
	execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
	last=$(grep -E '^#[0-9]+' "$log" | tail -1)
	cov=$(echo "$last" | sed -n 's/.* cov: \([0-9]*\).*/\1/p')
	ft=$(echo "$last" | sed -n 's/.* ft: \([0-9]*\).*/\1/p')
	corp=$(echo "$last" | sed -n 's/.* corp: \([0-9]*\).*/\1/p')
	if [ $rc -eq 0 ]; then
		res=ok; echo pass >"$out/log/$n.rc"
	else
		res="FAIL (exit $rc; see $log, input in $out/crash/)"; echo fail >"$out/log/$n.rc"
	fi
	printf '%-14s %10s %8s %8s %7s %s\n' "$n" "${execs:-?}" "${cov:-?}" "${ft:-?}" "${corp:-?}" "$res" >"$row"
}

# FUZZ_JOBS targets at a time (default: one a core): each runs its full SECONDS, so the coverage
# is the same and the wall time a fraction
for n in $names; do rm -f "$out/log/$n.row" "$out/log/$n.rc"; done
for n in $names; do
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	one_target "$n" &
done
wait
pass=0 fail=0
printf '%-14s %10s %8s %8s %7s %s\n' target execs cov ft corpus result
for n in $names; do
	if [ -f "$out/log/$n.row" ]; then cat "$out/log/$n.row"
	else printf '%-14s %10s %8s %8s %7s %s\n' "$n" - - - - "FAIL (no result)"; fi
	case $(cat "$out/log/$n.rc" 2>/dev/null) in
	pass) pass=$((pass + 1)) ;;
	skip) ;;
	*) fail=$((fail + 1)) ;;
	esac
done
echo "$pass passed, $fail failed"
[ $fail -eq 0 ]
