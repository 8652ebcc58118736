#!/usr/bin/env bash
# Every option a command's --help lists appears in its man page (docs/man/vmm-CMD.1.scd), and
# every option the page defines (a line "*--name*" or "*-x*, *--name*" in it) is one --help lists,
# so the two cannot drift; every command vmm --help lists has a page. --help and --version are
# every command's (vmm(1)), so a page may define them without its --help naming them.
# Usage: check-man.sh [VMM [MANDIR]]; prints one line per mismatch naming the option and the page,
# then "check-man: ok ..." (exit 0) or "check-man: FAIL ..." (exit 1).
set -uo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
host=$(uname -m | sed s/aarch64/arm64/)
vmm=${1:-$top/build/$host/vmm}
man=${2:-$top/docs/man}
bad=0 opts=0 pages=0

[ -x "$vmm" ] || { echo "check-man: FAIL: no $vmm (make first)"; exit 1; }
# the options a text names: --word tokens (a lone "--" is no option)
tokens() { grep -oE -- '--[a-z][a-z0-9-]*' | sort -u; }
# the options a page defines: the first --word of each definition line
defined() {
	sed -nE 's/^\*(-[[:alnum:]]\*, \*)?(--[a-z][a-z0-9-]*)\*.*/\2/p' "$1" | sort -u
}

cmds=$("$vmm" --help | sed -nE 's/^  ([a-z]+)  .*/\1/p')
for cmd in "" $cmds; do
	page=$man/vmm${cmd:+-$cmd}.1.scd
	name="vmm${cmd:+ $cmd}"
	if [ ! -f "$page" ]; then
		echo "check-man: $name has no man page: write ${page#$top/}"; bad=$((bad + 1)); continue
	fi
	pages=$((pages + 1))
	help=$("$vmm" $cmd --help 2>&1)
	# vmm vf's commands each have a --help of their own
	if [ "$cmd" = vf ]; then
		for sub in $(echo "$help" | sed -nE 's/^  ([a-z]+) .*/\1/p'); do
			help+=$'\n'$("$vmm" vf "$sub" --help 2>&1)
		done
	fi
	in_page=$(tokens <"$page")
	for o in $(echo "$help" | tokens); do
		opts=$((opts + 1))
		if ! grep -qx -- "$o" <<<"$in_page"; then
			echo "check-man: $o is in '$name --help' but not in its man page ${page#$top/}"
			bad=$((bad + 1))
		fi
	done
	in_help=$(echo "$help" | tokens)
	for o in $(defined "$page"); do
		case $o in --help|--version) continue ;; esac
		if ! grep -qx -- "$o" <<<"$in_help"; then
			echo "check-man: $o is an option in ${page#$top/} but '$name --help' does not list it"
			bad=$((bad + 1))
		fi
	done
done
if [ $bad -gt 0 ]; then
	echo "check-man: FAIL: $bad mismatches between --help and the man pages"
	exit 1
fi
echo "check-man: ok ($opts options of $pages commands' --help in their man pages, and back)"
