#!/usr/bin/env python3
"""Check that two decodes of the same frames agree.

    agree.py A.jsonl B.jsonl

Both files are JSON lines as `candec decode` writes them, in capture order. The lines of a frame
(a run of lines with the same t, bus and id) may come in any order within the frame, since
decoders list a message's signals in different orders. The files agree when they hold the same
frames with the same signals, each pair of lines having the same t, ts, bus, id, signal, unit,
label and nonfinite, and values that are both null or equal to within 1e-9 relative (1e-9
absolute near zero). Prints the first differences and a count line; exit status 0 when they agree.
"""
import itertools
import json
import sys

KEYS = ('t', 'ts', 'bus', 'id', 'signal', 'unit', 'label', 'nonfinite')


def same_value(a, b):
    if a is None or b is None:
        return a is None and b is None
    a, b = float(a), float(b)
    return a == b or abs(a - b) <= 1e-9 * max(1.0, abs(a), abs(b))


def frames(path):
    """Yields the lines of each frame, as (signal, raw line, parsed line) sorted by signal."""
    with open(path, encoding='utf-8', errors='surrogateescape') as f:
        parsed = ((line, json.loads(line)) for line in f if line.strip())
        for _, group in itertools.groupby(parsed, key=lambda p: (p[1].get('t'), p[1].get('bus'), p[1].get('id'))):
            yield sorted(((d.get('signal'), line, d) for line, d in group), key=lambda x: x[0])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    lines = differ = extra = 0
    for fa, fb in itertools.zip_longest(frames(sys.argv[1]), frames(sys.argv[2]), fillvalue=[]):
        if len(fa) != len(fb):
            extra += abs(len(fa) - len(fb))
        for a, b in zip(fa, fb):
            lines += 1
            if a[1] == b[1]:
                continue
            da, db = a[2], b[2]
            if all(da.get(k) == db.get(k) for k in KEYS) and same_value(da.get('value'), db.get('value')):
                continue
            differ += 1
            if differ <= 10:
                print('%s\n%s' % (a[1].rstrip(), b[1].rstrip()))
    print('lines=%d different=%d unmatched=%d' % (lines, differ, extra))
    sys.exit(0 if differ == 0 and extra == 0 else 1)


if __name__ == '__main__':
    main()
