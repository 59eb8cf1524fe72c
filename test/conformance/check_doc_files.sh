#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# doc/architecture.md names every source file of lib/ and drivers/ (its "Every file" list):
# a file added without a line there, or a line left for a file that is gone, fails.
set -u
cd "$1" || exit 1
doc=doc/architecture.md
bad=0 n=0
for f in $(find lib drivers -type f \( -name '*.c' -o -name '*.h' -o -name '*.in' \) | sort); do
	n=$((n + 1))
	grep -q "\`$f\`" "$doc" || { echo "FAIL: $f is not in $doc"; bad=$((bad + 1)); }
done
# every lib/ or drivers/ path the list names exists
for f in $(sed -n '/^## Every file/,/^## /p' "$doc" | grep -o '`\(lib\|drivers\)/[^`]*\.\(c\|h\|in\)`' | tr -d '`' | sort -u); do
	[ -f "$f" ] || { echo "FAIL: $doc names $f, which does not exist"; bad=$((bad + 1)); }
done
echo "doc_files: $n files, $bad problems"
[ "$bad" -eq 0 ] && [ "$n" -gt 0 ]
