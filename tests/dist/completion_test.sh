#!/usr/bin/env bash
# The bash completion (dist/vmm.bash-completion) against the vmm beside it: commands, options,
# their fixed values, and every option each command's --help lists.
# Usage: completion_test.sh [VMM]
set -uo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
vmm=${1:-$top/build/$(uname -m | sed s/aarch64/arm64/)/vmm}
. "$top/tests/dist/tap.sh"
. "$top/dist/vmm.bash-completion"

comp() { # WORDS...: what completing the last word offers, one line
	COMP_WORDS=("$vmm" "$@"); COMP_CWORD=$((${#COMP_WORDS[@]} - 1)); COMPREPLY=()
	_vmm; echo "${COMPREPLY[*]}"
}
offers() { # WANT WORDS...: the completion is exactly WANT
	local want=$1 got; shift
	got=$(comp "$@")
	[ "$got" = "$want" ] || { echo "# completing '$*': want '$want', got '$got'"; return 1; }
}
all_options() { # CMD: every --option of vmm CMD --help completes from "--"
	local o got; got=" $(comp "$1" --) "
	for o in $("$vmm" "$1" --help | grep -oE -- '--[a-z][a-z0-9-]*' | sort -u); do
		[[ $got == *" $o "* ]] || { echo "# vmm $1 --: $o is not offered"; return 1; }
	done
}

ok commands offers "run caps vf ctl stat ab bench --help --version" ""
ok option_prefix offers "--console" run --con
ok console_values offers "serial virtio none" run --console ""
ok vfio_backend_values offers "auto legacy iommufd" run --vfio-backend ""
ok summary_values offers "short full" run --summary ""
ok kernel_format_values offers "auto image flat" run --kernel-format ""
ok irqchip_values offers "kernel split" run --irqchip ""
ok ab_mode_values offers "auto one-vm boots" ab --mode ""
ok ab_run_options_after_dashes offers "--halt-poll-ns" ab --arm a:x -- --halt
ok ctl_requests offers "get set stats raw" ctl /run/vm.ctl ""
ok ctl_set_knobs offers "halt-poll-ns poll-control" ctl /run/vm.ctl set ""
ok vf_commands offers "list create mac bind unbind check --help" vf ""
ok bench_subcommands offers "show compare --help" bench ""
ok ab_subcommands offers "compare judge plot" ab ""
ok run_every_option all_options run
ok stat_every_option all_options stat
ok ab_every_option all_options ab
totals
