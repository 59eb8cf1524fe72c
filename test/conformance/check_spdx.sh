#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Every source file of the tree (C, shell, Python, meson) says its license in its first lines.
set -u
cd "$1" || exit 1
find . \( -path ./build -o -path './build-*' -o -path ./.git -o -path ./test/fuzz/corpus \) \
	-prune -o -type f \( -name '*.[ch]' -o -name '*.sh' -o -name '*.py' -o -name meson.build \) \
	-print > "${TMPDIR:-/tmp}/dpv-spdx.$$"
xargs awk 'FNR == 1 { n++; seen[FILENAME] = 0 }
	FNR <= 3 && /SPDX-License-Identifier: BSD-3-Clause/ { seen[FILENAME] = 1 }
	END { for (f in seen) if (!seen[f]) { bad++; print "FAIL: " f " has no SPDX line" }
	      printf "spdx: %d files checked, %d without the line\n", n, bad; exit bad > 0 || n == 0 }' \
	< "${TMPDIR:-/tmp}/dpv-spdx.$$"
rc=$?
rm -f "${TMPDIR:-/tmp}/dpv-spdx.$$"
exit $rc
