#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Docs that cannot drift: every "<!-- include FILE -->" block in the README and doc/ holds
# FILE's current text.
set -u
top=$1; pass=0; fail=0
for doc in "$top"/README.md "$top"/doc/*.md; do
	for f in $(sed -n 's/^<!-- include \(.*\) -->$/\1/p' "$doc"); do
		got=$(awk -v f="$f" '$0 == "<!-- include " f " -->" {on=1; getline; next}
			on && /^```$/ {exit} on {print}' "$doc")
		if [ "$got" = "$(cat "$top/$f")" ]; then
			pass=$((pass + 1))
		else
			fail=$((fail + 1)); echo "FAIL: $doc includes an old copy of $f"
		fi
	done
done
echo "doc includes: $pass checks passed, $fail failed"
[ $fail -eq 0 ] && [ $pass -gt 0 ]
