#!/usr/bin/env bash
# scripts/check-layers.sh passes on this tree, and fails, naming what it found, on copies of it
# with an include planted that points up a layer, two folders of one layer that include each
# other, a debt line that is no longer true, and a file in no layer.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/dist/tap.sh"
cd "$top"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# a copy of the tracked sources and the layer files, outside git (the script's find path)
copy() {
	rm -rf "$tmp/t"; mkdir -p "$tmp/t"
	git ls-files -co --exclude-standard -- '*.c' '*.h' '*.S' '*.ld' scripts/layers scripts/layers-debt scripts/check-layers.sh |
		grep -v '^tests/' | tar -cf - -T - | tar -xf - -C "$tmp/t"
}
# check OUT_WANTED: the copy fails with a line matching it
fails_with() {
	local out
	out=$("$tmp/t/scripts/check-layers.sh" "$tmp/t" 2>&1) && { echo "# passed:"; echo "$out" | sed 's/^/# /'; return 1; }
	grep -qE "$1" <<<"$out" || { echo "# no line matching '$1' in:"; echo "$out" | sed 's/^/# /'; return 1; }
}

this_tree() { scripts/check-layers.sh >"$tmp/out" 2>&1 || { sed 's/^/# /' "$tmp/out"; return 1; }; }
copy_passes() { copy && "$tmp/t/scripts/check-layers.sh" "$tmp/t" >/dev/null; }
upward() { # the core's log including the A/B engine
	copy && sed -i '0,/^#include "core\/log.h"/s//#include "ab\/ab.h"\n&/' "$tmp/t/core/log.c" &&
		fails_with '^check-layers: core/log.c \(core\) includes ab/ab.h \(tools, a layer above\)$'
}
loop() { # virtio and vfio, both devices, each including the other
	copy && sed -i '0,/^#include "virtio\/virtio.h"/s//#include "vfio\/vfio.h"\n&/' "$tmp/t/virtio/blk.c" &&
		sed -i '0,/^#include "vfio\/vfio.h"/s//#include "virtio\/virtio.h"\n&/' "$tmp/t/vfio/pci.c" &&
		fails_with '^check-layers: folders of one layer include each other in a loop'
}
stale_debt() {
	copy && echo 'core/vm.c -> ab/ab.h' >>"$tmp/t/scripts/layers-debt" &&
		fails_with '^check-layers: no longer there, so take it out of scripts/layers-debt: core/vm.c -> ab/ab.h$'
}
no_layer() {
	copy && mkdir -p "$tmp/t/newdir" && echo 'int x;' >"$tmp/t/newdir/new.c" &&
		fails_with '^check-layers: newdir/new.c is in no layer'
}

ok this_tree_passes this_tree
ok a_copy_passes copy_passes
ok an_upward_include_fails upward
ok a_loop_between_folders_fails loop
ok a_stale_debt_line_fails stale_debt
ok a_file_in_no_layer_fails no_layer
totals
