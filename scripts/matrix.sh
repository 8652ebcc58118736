#!/usr/bin/env bash
# Prints the bad-input and fault matrix (case | exit status | vmm's message) as a Markdown table
# from the "# MATRIX" lines the tests print: tests/unit/cli_test.c (no KVM needed) and
# tests/lab/badinput_test.c (the lab). Usage: matrix.sh [LOG...]; by default the logs of the last
# make check (build/check) and lab run (build/lab/gic4), or runs cli_test now if it has no log.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
host=$(uname -m | sed s/aarch64/arm64/)
logs=("$@")
if [ ${#logs[@]} -eq 0 ]; then
	cli=$top/build/check/unit-$host-cli_test.log
	if [ ! -f "$cli" ] && [ -x "$top/build/$host/tests/unit/cli_test" ]; then
		cli=$(mktemp); "$top/build/$host/tests/unit/cli_test" >"$cli" 2>&1 || true
	fi
	logs=("$cli" "$top/build/lab/gic4/badinput_test.log")
fi
echo "| # | case | where | exit | message |"
echo "|---|---|---|---|---|"
n=0
for log in "${logs[@]}"; do
	[ -f "$log" ] || { echo "matrix: no $log (run make check, or the test)" >&2; continue; }
	case $log in *badinput*) where=lab ;; *) where=host ;; esac
	while IFS= read -r line; do
		rest=${line#\# MATRIX }
		name=${rest%% | *}; rest=${rest#* | }
		code=${rest%% | *}; msg=${rest#* | }
		n=$((n + 1))
		printf '| %d | %s | %s | %s | %s |\n' "$n" "$name" "$where" "$code" "${msg//|/\\|}"
	done < <(grep '^# MATRIX ' "$log")
done
