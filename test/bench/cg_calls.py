#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""cg_calls.py FILE FN...: for each function FN, how often it was called and the instructions
its calls took (inclusive), summed over every call site of a callgrind output file. Prints
"FN calls instructions" per FN (0 0 for a function never called). Standard library only."""
import re
import sys


def main():
    path, fns = sys.argv[1], sys.argv[2:]
    names = {}                     # compressed id -> name
    calls = {f: 0 for f in fns}
    cost = {f: 0 for f in fns}
    target = None                  # the function of the pending calls= line
    after_calls = False
    ref = re.compile(r'^c?fn=\((\d+)\)(?: (.*))?$')
    with open(path, errors='replace') as f:
        for line in f:
            line = line.rstrip('\n')
            m = ref.match(line)
            if m:
                if m.group(2) is not None:
                    names[m.group(1)] = m.group(2)
                if line.startswith('cfn='):
                    target = names.get(m.group(1))
                continue
            if line.startswith('calls='):
                if target in calls:
                    calls[target] += int(line[6:].split()[0])
                after_calls = True
                continue
            if after_calls:
                after_calls = False
                parts = line.split()
                if target in cost and len(parts) >= 2:
                    cost[target] += int(parts[1])
    for fn in fns:
        print(fn, calls[fn], cost[fn])


if __name__ == '__main__':
    main()
