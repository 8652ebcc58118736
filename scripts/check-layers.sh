#!/bin/bash
# Every #include points down the layers of scripts/layers, or within a layer, and the folders of
# one layer include each other without a loop. The includes that still point up are listed in
# scripts/layers-debt: a new one fails, and so does a listed one that is gone (the list only
# shrinks). make headers-check (the first step of make check) runs it.
# Usage: scripts/check-layers.sh [ROOT]  (default: the checkout this script is in)
set -u
root=${1:-$(dirname "$0")/..}
cd "$root" || exit 2
[ -f scripts/layers ] || { echo "check-layers: no scripts/layers in $PWD"; exit 2; }
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	files=$(git ls-files -co --exclude-standard -- '*.c' '*.h' '*.S' '*.ld' | grep -v '^tests/')
else
	files=$(find . \( -path ./build -o -path ./tests -o -path ./.cache \) -prune -o \
		\( -name '*.c' -o -name '*.h' -o -name '*.S' -o -name '*.ld' \) -print | sed 's|^\./||' | sort)
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# "FILE INCLUDED" per quoted include, "FILE" alone for every file
# shellcheck disable=SC2086 # the file list, split on purpose
awk 'FNR == 1 { print FILENAME }
	/^[ \t]*#[ \t]*include[ \t]*"/ { s = $0; sub(/^[^"]*"/, "", s); sub(/".*/, "", s); print FILENAME " " s }' $files >"$tmp/inc"
grep -v '^#' scripts/layers-debt 2>/dev/null | sed '/^[[:space:]]*$/d' | sort -u >"$tmp/debt"

awk -v tmp="$tmp" '
function glob2re(g,  r) { r = g; gsub(/\./, "\\.", r); gsub(/\*/, "[^ ]*", r); gsub(/\?/, ".", r); return "^" r "$" }
FILENAME == "scripts/layers" {
	if ($0 ~ /^[ \t]*(#|$)/) next
	if (!($1 in rank)) { rank[$1] = nl; lname[nl++] = $1 }
	for (i = 2; i <= NF; i++) { np++; pre[np] = glob2re($i); plen[np] = length($i); prank[np] = rank[$1] }
	next
}
NF == 1 { file[$1] = 1; order[++nf] = $1; next }
{ inc[++ni] = $0 }
END {
	for (k = 1; k <= nf; k++) {
		f = order[k]; best = -1; len = -1
		for (p = 1; p <= np; p++) if (f ~ pre[p] && plen[p] > len) { best = prank[p]; len = plen[p] }
		if (best < 0) { print "check-layers: " f " is in no layer: add a pattern for it to scripts/layers"; bad = 1 }
		else L[f] = best
	}
	for (k = 1; k <= ni; k++) {
		split(inc[k], a, " "); f = a[1]; t = a[2]
		if (!(f in L)) continue
		d = f; sub(/\/[^\/]*$/, "", d)
		if (!(t in L)) { t = d "/" t; if (!(t in L)) continue } # a generated or system header
		e = t; sub(/\/[^\/]*$/, "", e)
		if (L[t] > L[f]) {
			print f " -> " t > (tmp "/up")
			print f " -> " t "\t" f " (" lname[L[f]] ") includes " t " (" lname[L[t]] ", a layer above)" > (tmp "/why")
		} else if (L[t] == L[f] && d != e)
			print d " " e > (tmp "/edges")
	}
	print nf " " nl > (tmp "/counts")
	exit bad
}' scripts/layers "$tmp/inc"
bad=$?
touch "$tmp/up" "$tmp/why" "$tmp/edges"
sort -u "$tmp/up" -o "$tmp/up"
new=$(comm -23 "$tmp/up" "$tmp/debt")
gone=$(comm -13 "$tmp/up" "$tmp/debt")
if [ -n "$new" ]; then
	while read -r e; do grep -F "$e	" "$tmp/why" | cut -f2 | sed 's/^/check-layers: /'; done <<<"$new"
	echo "check-layers: an include above points up a layer: move what it needs down, or the includer up (scripts/layers)"
	bad=1
fi
if [ -n "$gone" ]; then
	sed 's/^/check-layers: no longer there, so take it out of scripts\/layers-debt: /' <<<"$gone"
	bad=1
fi
# the folders of one layer: no loop (tsort names one)
if [ -s "$tmp/edges" ] && ! sort -u "$tmp/edges" | tsort >/dev/null 2>"$tmp/loop"; then
	sed 's/^tsort: -: /check-layers: folders of one layer include each other in a loop: /; s/^tsort: /check-layers:   /' "$tmp/loop"
	bad=1
fi
[ "$bad" = 0 ] || exit 1
read -r nf nl <"$tmp/counts"
echo "check-layers: $nf files in $nl layers include only their own layer or below, no folders in a loop;" \
	"$(wc -l <"$tmp/debt") upward includes left in scripts/layers-debt"
