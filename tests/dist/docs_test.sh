#!/usr/bin/env bash
# The README is a front door (a few screens, the two commands, links that resolve) and docs/ holds
# the reference by topic, each page titled, every relative link and picture present.
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
. "$top/tests/dist/tap.sh"
cd "$top"

short() { local n; n=$(wc -l <README.md); [ "$n" -le 150 ] || { echo "# README.md: $n lines, over 150"; return 1; }; }
two_commands() { grep -qF 'make deps && make demo' README.md && grep -qF 'make deps && make check' README.md; }
links() { # every relative link or image target of README.md and docs/*.md exists
	local f t bad=0
	for f in README.md docs/*.md; do
		while IFS= read -r t; do
			t=${t%%#*}
			case $t in ''|http*|mailto:*) continue ;; esac
			[ -e "$(dirname "$f")/$t" ] || { echo "# $f links to $t, which does not exist"; bad=1; }
		done < <(grep -oE '\]\([^)]+\)' "$f" | sed -E 's/^\]\((.*)\)$/\1/')
	done
	return $bad
}
titled() { local f; for f in docs/*.md; do head -n1 "$f" | grep -q '^# ' || { echo "# $f has no title"; return 1; }; done; }
topics() { # the topics the README promises
	local p
	for p in passthrough running halt-polling ab x86 lab benchmarks install internals; do
		[ -s "docs/$p.md" ] || { echo "# docs/$p.md missing"; return 1; }
	done
}
exit_statuses() { # the README's table names every status vmm(1) does
	local s
	for s in 0 1 2 3 4 5 128+N; do grep -qF "| $s |" README.md || { echo "# README: no exit status $s"; return 1; }; done
}

ok readme_at_most_150_lines short
ok readme_has_the_two_commands two_commands
ok readme_has_the_exit_statuses exit_statuses
ok links_and_pictures_resolve links
ok docs_pages_titled titled
ok docs_topics_present topics
totals
