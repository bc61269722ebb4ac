#!/usr/bin/env python3
"""Write a DBC file with its statements in the order dbcppp's grammar requires.

dbcppp 3.x parses a DBC with a fixed sequence of sections (VERSION, NS_, BS_, BU_, VAL_TABLE_,
BO_/SG_, BO_TX_BU_, EV_, ENVVAR_DATA_, SGTYPE_, CM_, BA_DEF_, BA_DEF_DEF_, BA_, VAL_, SIG_GROUP_,
SIG_VALTYPE_, SG_MUL_VAL_) and refuses a file whose statements come in another order. Generated
DBC files (opendbc's *_generated.dbc, which concatenate several files) put comments and value
tables between messages. This script moves every statement to its section, keeping the order of
statements within a section and changing nothing else, so that dbcppp reads the same database
that candec and cantools read from the original.

    dbc_order.py IN.dbc OUT.dbc
"""
import sys

ORDER = ['VERSION', 'NS_', 'BS_', 'BU_', 'VAL_TABLE_', 'BO_', 'BO_TX_BU_', 'EV_', 'ENVVAR_DATA_',
         'SGTYPE_', 'CM_', 'BA_DEF_', 'BA_DEF_REL_', 'BA_DEF_DEF_', 'BA_DEF_DEF_REL_', 'BA_',
         'BA_REL_', 'VAL_', 'SIG_GROUP_', 'SIG_VALTYPE_', 'SG_MUL_VAL_']
# Statements that end at the end of their line (or block) rather than at a ';'.
LINE_STATEMENTS = {'VERSION', 'NS_', 'BS_', 'BU_', 'BO_'}


def keyword(line):
    word = line.split(None, 1)[0] if line.strip() else ''
    return word.rstrip(':')


def statements(text):
    """Yields (keyword, text) for each top-level statement, comments and blank lines dropped."""
    lines = text.splitlines(keepends=True)
    i = 0
    while i < len(lines):
        line = lines[i]
        if not line.strip() or line.lstrip().startswith('//'):
            i += 1
            continue
        kw = keyword(line)
        if kw in ('BO_', 'NS_'):
            block = [line]
            i += 1
            # BO_ owns the SG_ lines that follow it; NS_ owns its indented symbol list.
            while i < len(lines) and lines[i].strip() and (
                    (kw == 'BO_' and keyword(lines[i]) == 'SG_') or
                    (kw == 'NS_' and lines[i][:1] in ' \t')):
                block.append(lines[i])
                i += 1
            yield kw, ''.join(block)
            continue
        if kw in LINE_STATEMENTS:
            yield kw, line
            i += 1
            continue
        # A ';'-terminated statement, possibly over several lines (quoted strings may hold ';').
        block, quoted = [], False
        while i < len(lines):
            block.append(lines[i])
            done = False
            prev = ''
            for ch in lines[i]:
                if ch == '"' and prev != '\\':
                    quoted = not quoted
                elif ch == ';' and not quoted:
                    done = True
                prev = ch
            i += 1
            if done:
                break
        yield kw, ''.join(block)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1], newline='', encoding='latin-1') as f:
        text = f.read()
    sections = {kw: [] for kw in ORDER}
    for kw, stmt in statements(text):
        if kw not in sections:
            sys.exit('dbc_order.py: %s: statement %r is not one dbcppp reads' % (sys.argv[1], kw))
        sections[kw].append(stmt if stmt.endswith('\n') else stmt + '\n')
    if not sections['BS_']:
        sections['BS_'].append('BS_:\n')
    if not sections['BU_']:
        sections['BU_'].append('BU_:\n')
    with open(sys.argv[2], 'w', newline='', encoding='latin-1') as f:
        for kw in ORDER:
            for stmt in sections[kw]:
                f.write(stmt)
                if kw in ('NS_', 'BO_'):
                    f.write('\n')


if __name__ == '__main__':
    main()
