#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# The layering of lib/meson.build holds at link level: no layer's archive needs a symbol that
# only a layer it may not call defines (nm: undefined in one archive, defined in another).
# Arguments: NAME=ARCHIVE ... in layer order. The allowed edges (doc/contributing.md):
#   engine  -> (nothing of ours)      offload -> engine       ethdev -> engine offload
#   verbs   -> engine offload         raw     -> verbs offload engine
#   roce    -> verbs offload engine
# The core reaches drivers and transports only through the tables they register.
set -u
allowed() {
	case $1 in
	engine) echo "" ;;
	offload) echo "engine" ;;
	ethdev) echo "engine offload" ;;
	verbs) echo "engine offload" ;;
	raw | roce) echo "verbs offload engine" ;;
	*) echo "?" ;;
	esac
}
tmp=${TMPDIR:-/tmp}/dpv-layers.$$
mkdir -p "$tmp" || exit 1
trap 'rm -rf "$tmp"' EXIT
names=""
for arg in "$@"; do
	name=${arg%%=*} a=${arg#*=}
	[ -f "$a" ] || { echo "FAIL: $a: no such archive"; exit 1; }
	[ "$(allowed "$name")" = "?" ] && { echo "FAIL: layer $name has no rule"; exit 1; }
	nm --defined-only -g "$a" 2>/dev/null | awk 'NF == 3 { print $3 }' | sort -u > "$tmp/$name.def"
	nm -u "$a" 2>/dev/null | awk '{ print $NF }' | sort -u > "$tmp/$name.und"
	names="$names $name"
done
bad=0 edges=0
for from in $names; do
	ok=" $(allowed "$from") "
	for to in $names; do
		[ "$from" = "$to" ] && continue
		# a symbol both define (none should) counts for neither
		comm -12 "$tmp/$from.und" "$tmp/$to.def" | comm -23 - "$tmp/$from.def" > "$tmp/e"
		[ -s "$tmp/e" ] || continue
		edges=$((edges + 1))
		case $ok in
		*" $to "*) ;;
		*)	bad=$((bad + 1))
			echo "FAIL: $from links to $to, which it may not call:"
			sed 's/^/    /' "$tmp/e" ;;
		esac
	done
done
echo "layers:$names; $edges edges, $bad not allowed"
[ "$bad" -eq 0 ] && [ "$edges" -gt 0 ]
