# TAP in the kselftest harness's shape (check.sh's tally reads it): source, then ok NAME CMD...
# and at the end totals.
n=0 pass=0 fail=0
ok() { # NAME COMMAND...: one test, passed when COMMAND succeeds
	local name=$1; shift
	n=$((n + 1))
	if "$@"; then pass=$((pass + 1)); echo "ok $n $name"
	else fail=$((fail + 1)); echo "not ok $n $name"; fi
}
totals() {
	echo "# Totals: pass:$pass fail:$fail xfail:0 xpass:0 skip:0 error:0"
	[ $fail -eq 0 ]
}
