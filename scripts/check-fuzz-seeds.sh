#!/usr/bin/env bash
# The committed seed corpora are what the generator writes (tests/fuzz/seeds*.c): runs it in a
# scratch copy of the paths it uses and compares every file it writes with tests/fuzz/corpus/.
# A seed edited without make fuzz-seeds, or a change of fuzz_guest.c's encoding, fails here.
# Usage: scripts/check-fuzz-seeds.sh GENERATOR (make fuzz-seeds-check builds and passes it)
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
gen=$(realpath "${1:?usage: scripts/check-fuzz-seeds.sh build/ARCH/tests/fuzz/seeds}")
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tests/fuzz/corpus"
ln -s "$top/tests/unit" "$tmp/tests/unit" # seeds_vlpi reads its fixtures
(cd "$tmp" && "$gen")
n=0 bad=0
while IFS= read -r f; do
	n=$((n + 1))
	if ! cmp -s "$tmp/tests/fuzz/corpus/$f" "$top/tests/fuzz/corpus/$f"; then
		echo "check-fuzz-seeds: tests/fuzz/corpus/$f differs from what the generator writes" \
			"(run make fuzz-seeds and commit the corpus)"
		bad=$((bad + 1))
	fi
done < <(cd "$tmp/tests/fuzz/corpus" && find . -type f | sed 's|^\./||' | sort)
[ "$n" -gt 0 ] || { echo "check-fuzz-seeds: the generator wrote nothing"; exit 1; }
[ "$bad" -eq 0 ] || exit 1
echo "check-fuzz-seeds: $n seeds as committed"
