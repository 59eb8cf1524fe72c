# SPDX-License-Identifier: BSD-3-Clause
# The checks of the test scripts, sourced: check NAME CONDITION evaluates CONDITION and counts
# it (saying "FAIL: NAME" when it is false); finish NAME says the counts, "NAME: N checks
# passed, N failed", and is true when none failed (a script's last command, its exit code).
pass=0; fail=0
check() { if eval "$2"; then pass=$((pass + 1)); else fail=$((fail + 1)); echo "FAIL: $1"; fi; }
finish() {
	echo "$1: $pass checks passed, $fail failed"
	[ $fail -eq 0 ]
}
