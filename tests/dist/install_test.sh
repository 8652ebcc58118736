#!/usr/bin/env bash
# make install / make uninstall into a DESTDIR: the binary runs, man finds every page, the
# completion and docs are in place, and uninstall leaves no file behind.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/dist/tap.sh"
d=$(mktemp -d)
trap 'rm -rf "$d" "$d.log"' EXIT
cd "$top"

log=$d.log
quiet() { "$@" >>"$log" 2>&1 || { sed 's/^/# /' "$log"; false; }; }
ok make_install quiet make -s install DESTDIR="$d" PREFIX=/usr
ok binary_runs sh -c "'$d/usr/bin/vmm' --version | grep -q '^vmm .* (commit '"
pages() { # every page, found by man in the installed tree, and it renders
	local p
	for p in vmm vmm-run vmm-vf vmm-ctl vmm-stat vmm-ab vmm-bench vmm-caps; do
		MANPATH=$d/usr/share/man man -w "$p" >/dev/null 2>&1 || { echo "# man -w $p: not found"; return 1; }
		MANPATH=$d/usr/share/man MANWIDTH=80 man "$p" 2>/dev/null | grep -q "^NAME" ||
			{ echo "# man $p: no NAME section"; return 1; }
	done
}
ok man_finds_every_page pages
ok completion_installed test -s "$d/usr/share/bash-completion/completions/vmm"
ok docs_installed test -s "$d/usr/share/doc/vmm/README.md"
ok prefix_default sh -c "make -s -n install DESTDIR=/x | grep -q ' /x/usr/local/bin/vmm'"
ok make_uninstall quiet make -s uninstall DESTDIR="$d" PREFIX=/usr
ok nothing_left sh -c "[ -z \"\$(find '$d' -type f)\" ] || { find '$d' -type f | sed 's/^/# left: /'; false; }"
totals
