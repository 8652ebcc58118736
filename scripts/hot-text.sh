#!/usr/bin/env bash
# vmm's steady-state code, grouped (issue 22): in arm64's static build the functions marked VMM_HOT
# and VMM_HOT_VF (core/hot.h; their own sections, with -ffunction-sections for the rest), the
# library members they call and the read-only data both use go at the start of the text, so the
# kernel's 64 KiB fault-around windows the running guest needs are few.
#   hot-text.sh ld MAP OWN...        the linker fragment (stdout) from a first link's map: OWN are
#                                    vmm's own inputs (libvmm.a, main.o, ...), whose marked
#                                    sections are the roots; what they reference is followed into
#                                    the libraries' members up to HOT_DEPTH (3) calls deep ($OBJDUMP
#                                    -r says what each section references)
#   hot-text.sh check MAP            fails when no function is marked VMM_HOT, a marked section sits
#                                    outside the hot sections, or a pattern of the fragment matched
#                                    nothing (the map of the link that used it)
#   hot-text.sh sections MAP [OUT]   every input section of output section OUT (.text): START END
#                                    SECTION FILE (hex)
#   hot-text.sh resident BENCHLOG MAP
#                                    the input sections on the pages `bench --text-pages` found
#                                    resident ("bench: text-resident LO-HI" lines), per memory
#                                    figure (its first smaps read), with whether each is in the hot
#                                    set: what to mark, or unmark; MAP is the link map of the vmm
#                                    that ran
set -euo pipefail

# awk's hex (mawk has no strtonum): addresses of a static binary fit a double exactly.
HEX='function hex(s,   i, v) { s = tolower(s); sub(/^0x/, "", s); v = 0
	for (i = 1; i <= length(s); i++) v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v }'

# The map's input sections of an output section (ld's -Map): a section's name and its address,
# size and file are on one line, or on two when the name is long.
sections() {
	awk -v want="${2:-.text}" "$HEX"'
	/^Linker script and memory map/ { on = 1; next }
	!on { next }
	/^[^ ]/ { out = $1; pend = ""; next }          # an output section (or LOAD/OUTPUT lines)
	out != want { next }
	/^ \*fill\*/ { next }
	/^ [.][^ ]*$/ { pend = $1; next }              # a long input section name: the rest follows
	/^ [.][^ ]* +0x[0-9a-f]+ +0x[0-9a-f]+ / { emit($1, $2, $3, $4); next }
	pend != "" && /^ +0x[0-9a-f]+ +0x[0-9a-f]+ / { emit(pend, $1, $2, $3); pend = ""; next }
	{ pend = "" }
	function emit(sec, a, s, f,   lo, n) {
		lo = hex(a); n = hex(s)
		if (n > 0)
			printf "%x %x %s %s\n", lo, lo + n, sec, f
	}' "$1"
}

# An input section as a linker script pattern, from "FILE SECTION": *ARCHIVE:MEMBER(SECTION) or
# *OBJECT(SECTION), with the directories gone (the cross toolchain's libc.a, the build's libvmm.a).
PATTERN='function pattern(f, sec,   a, m) {
	sub(/.*\//, "", f)
	if (match(f, /^[^(]+\([^)]+\)$/)) {
		a = substr(f, 1, index(f, "(") - 1); m = substr(f, index(f, "(") + 1); sub(/\)$/, "", m)
		return "*" a ":" m "(" sec ")"
	}
	return "*" f "(" sec ")" }'

# The map's every input section ("S KEY SIZE", KEY being FILE<tab>SECTION) and the global symbols
# defined in each ("Y SYMBOL KEY"), in the map's order.
map_records() {
	awk "$HEX"'
	/^Linker script and memory map/ { on = 1; next }
	!on { next }
	/^[^ ]/ { pend = ""; cur = ""; next }
	/^ [.][^ ]*$/ { pend = $1; cur = ""; next }
	/^ [.][^ ]* +0x[0-9a-f]+ +0x[0-9a-f]+ / { input($1, $3, $4); next }
	pend != "" && /^ +0x[0-9a-f]+ +0x[0-9a-f]+ / { input(pend, $2, $3); pend = ""; next }
	cur != "" && NF == 2 && /^ +0x[0-9a-f]+ +[^ 0]/ { print "Y", $2, cur; next }
	{ pend = ""; if (!/^ +0x/) cur = "" }
	function input(sec, s, f) {
		pend = ""; cur = ""
		if (hex(s) > 0) { cur = f "\t" sec; print "S", cur, hex(s) }
	}' "$1"
}

case ${1:-} in
sections)
	sections "$2" "${3:-.text}"
	;;
ld)
	map=$2; shift 2
	own=" $* "
	# what each input file's code (and its tables of pointers, .data.rel.ro: the strings they point
	# to) references: "R FILE<tab>SECTION TARGET", TARGET a symbol or, for a
	# reference within the file, a section (".text.put", ".rodata.str1.8")
	relocs() {
		local f
		for f in $(awk '/^LOAD / && $2 ~ /[.][ao]$/ { print $2 }' "$map"); do
			echo "@FILE $f"
			"${OBJDUMP:-objdump}" -r "$f"
		done | awk '
		/^@FILE / { file = $2; ar = file ~ /[.]a$/; next }
		/:     file format / { m = $1; sub(/:$/, "", m); cur = ar ? file "(" m ")" : file; sec = ""; next }
		/^RELOCATION RECORDS FOR \[/ { sec = $4; sub(/^\[/, "", sec); sub(/\]:$/, "", sec); if (sec !~ /^[.](text|data[.]rel[.]ro)/) sec = ""; next }
		sec != "" && NF == 3 && $1 ~ /^[0-9a-f]+$/ { t = $3; sub(/[+-]0x[0-9a-f]+$/, "", t); print "R", cur "\t" sec, t }'
	}
	{ map_records "$map"; relocs; } | awk -v own="$own" -v depth="${HOT_DEPTH:-3}" -v window=65536 "$PATTERN"'
	{ split($0, w, " ") }
	w[1] == "S" { k = w[2] " " w[3]; sub(/ /, "\t", k); size[k] = w[4]; order[++n] = k; next }
	w[1] == "Y" { k = w[3] " " w[4]; sub(/ /, "\t", k); if (!(w[2] in def)) def[w[2]] = k; next }
	w[1] == "R" {
		k = w[2] " " w[3]; sub(/ /, "\t", k)
		if (w[4] ~ /^[.]/) { t = w[2] "\t" w[4] } else if (w[4] in def) { t = def[w[4]] } else next
		if (t in size && t != k) edge[k, ++ne[k]] = t
	}
	function file(k) { return substr(k, 1, index(k, "\t") - 1) }
	function sec(k) { return substr(k, index(k, "\t") + 1) }
	function is_own(k,   f) { f = file(k); sub(/[(].*/, "", f); return index(own, " " f " ") > 0 }
	# Tier t: the marked sections, then breadth first what they reference: read-only data (but not
	# a section bigger than a window, the built-in initramfs: grouping gains it nothing), and the
	# code of the libraries up to depth calls deep (the code of vmm itself is hot where marked only).
	# Tier 0, the idle path, stays within a window: two calls deep, and no member over 4 KiB (printf,
	# malloc: what the idle path calls on its error paths, or before the release; tier 1 has them).
	function tier(t, root,   i, j, q, h, k, x) {
		split("", seen); split("", dist); q = 0; h = 0
		for (i = 1; i <= n; i++)
			if (sec(order[i]) == root && is_own(order[i])) { queue[++q] = order[i]; seen[order[i]] = 1; dist[order[i]] = 0 }
		while (h < q) {
			k = queue[++h]
			for (j = 1; j <= ne[k]; j++) {
				x = edge[k, j]
				if (x in seen)
					continue
				if (sec(x) ~ /^[.]data[.]rel[.]ro/) {
					# a table of pointers (it stays in the data): the strings it points to
					seen[x] = 1; dist[x] = dist[k]; queue[++q] = x
				} else if (sec(x) ~ /^[.]rodata/ && size[x] < window) {
					seen[x] = 1; if (!(x in in_tier)) { in_tier[x] = t; ro[t, ++nro[t]] = x }
				} else if (sec(k) ~ /^[.]text/ && sec(x) ~ /^[.]text/ && !is_own(x) && dist[k] < (t ? depth : 2) &&
					   (t || size[x] <= 4096)) {
					seen[x] = 1; dist[x] = dist[k] + 1; queue[++q] = x
					if (!(x in in_tier)) { in_tier[x] = t; tx[t, ++ntx[t]] = x }
				}
			}
		}
		return q
	}
	function emit(name, first, list, cnt, t,   i, p, done) {
		printf "  %s :\n  {\n", name
		if (first != "")
			printf "    %s\n", first
		for (i = 1; i <= cnt; i++) {
			p = pattern(file(list == "tx" ? tx[t, i] : ro[t, i]), sec(list == "tx" ? tx[t, i] : ro[t, i]))
			if (!(p in done)) { done[p] = 1; printf "    %s\n", p }
		}
		printf "  }\n"
	}
	END {
		tier(0, ".text.vmm_hot_idle")
		if (!tier(1, ".text.vmm_hot")) {
			print "hot-text: no function of vmm is marked VMM_HOT (core/hot.h), or objects built before it: make ARCH=arm64 clean" > "/dev/stderr"
			exit 1
		}
		tier(2, ".text.vmm_hot_vf")
		print "/* Generated by scripts/hot-text.sh ld: the code and read-only data the running guest uses,"
		print " * grouped at the start of the text (issue 22; core/hot.h marks the functions of vmm). */"
		print "SECTIONS\n{"
		# First what an idle guest still runs, its code then its data, in the first window of the text;
		# then each tier: its read-only data, then its code: the functions of vmm, then the members
		# they call directly, then those deeper down (less likely run: the resident windows stay
		# together).
		emit(".text.hot_vmm_idle", "*(.text.vmm_hot_idle)", "tx", ntx[0], 0)
		emit(".rodata.hot_vmm_idle", "", "ro", nro[0], 0)
		emit(".rodata.hot_vmm", "", "ro", nro[1], 1)
		emit(".text.hot_vmm", "*(.text.vmm_hot)", "tx", ntx[1], 1)
		emit(".rodata.hot_vmm_vf", "", "ro", nro[2], 2)
		emit(".text.hot_vmm_vf", "*(.text.vmm_hot_vf)", "tx", ntx[2], 2)
		print "}\nINSERT BEFORE .text;"
	}'
	;;
check)
	map=$2
	# In the map, each pattern of an output section is followed by the input sections it took.
	awk -v map="$map" '
	/^Linker script and memory map/ { on = 1; next }
	!on { next }
	/^[^ ]/ { if (hot && pat != "") miss[++m] = pat; hot = $1 ~ /^[.](text|rodata)[.]hot_vmm/; pat = ""; mpend = ""; next }
	# a marked section (its name alone on a line when long, then its address, size and file)
	/^ [.]text[.]vmm_hot[^ ]* +0x/ { marked($1, $4) }
	/^ [.]text[.]vmm_hot[^ ]*$/ { mpend = $1 }
	mpend != "" && /^ +0x[0-9a-f]+ +0x[0-9a-f]+ / { marked(mpend, $3) }
	/^ / && !/^ +0x/ && !/^ [.]text[.]vmm_hot[^ ]*$/ { mpend = "" }
	function marked(sec, f) { mpend = ""; if (hot) n_marked[sec]++; else stray[++ns] = sec " of " f }
	!hot { next }
	/^ \*[^ ]*\(/ { if (pat != "") miss[++m] = pat; pat = $0; npat++; next }
	/^ [.]|^ +0x[0-9a-f]+ +0x[0-9a-f]+ / { pat = ""; next }
	END {
		if (hot && pat != "") miss[++m] = pat
		for (i = 1; i <= m; i++) { sub(/^ +/, "", miss[i]); printf "hot-text: %s: %s matched nothing\n", map, miss[i] }
		for (i = 1; i <= ns; i++) printf "hot-text: %s: %s is outside the hot sections\n", map, stray[i]
		if (!npat) printf "hot-text: %s: no hot sections (was the fragment linked in?)\n", map
		if (!n_marked[".text.vmm_hot"]) printf "hot-text: %s: no function marked VMM_HOT in the hot section\n", map
		if (m || ns || !npat || !n_marked[".text.vmm_hot"]) exit 1
	}' "$map"
	;;
resident)
	log=$2 map=$3
	# each figure's resident ranges (the lines after its smaps lines), in the log's order
	figs=$(awk '/bench: smaps / { f = $3 } /bench: text-resident 0x/ && f != "" && !seen[f]++ { print f }' "$log")
	[ -n "$figs" ] || { echo "hot-text.sh: no 'bench: text-resident' lines in $log" >&2; exit 1; }
	outs=$(awk '/^Linker script and memory map/ { on = 1 } on && /^[.](text|rodata)[^ ]*/ && !seen[$1]++ { print $1 }' "$map")
	for f in $figs; do
		ranges=$(awk -v f="$f" '/bench: smaps / { cur = $3 } cur == f && /bench: text-resident 0x/ {
			split($3, r, "-"); print r[1], r[2] }' "$log")
		for o in $outs; do sections "$map" "$o" | sed "s/\$/ $o/"; done | awk -v r="$ranges" -v fig="$f" "$HEX"'
		BEGIN { n = split(r, v, /[ \n]+/); for (i = 1; i < n; i += 2) { lo[++k] = hex(v[i]); hi[k] = hex(v[i + 1]) } }
		{ a = hex($1); b = hex($2)
		  for (i = 1; i <= k; i++) if (a < hi[i] && b > lo[i]) {
			printf "%s %s %s %s\n", fig, $5 ~ /hot_vmm/ ? "hot" : "cold", $3, $4; break } }'
	done
	;;
*)
	sed -n '2,22s/^# \{0,1\}//p' "$0" >&2
	exit 2
	;;
esac
