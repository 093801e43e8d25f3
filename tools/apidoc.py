#!/usr/bin/env python3
"""Generate docs/api.md from the public part of posenc.h (python3 stdlib only).

    python3 tools/apidoc.py posenc.h -o docs/api.md              # refresh the reference
    python3 tools/apidoc.py posenc.h -o OUT --check docs/api.md  # fail if docs/api.md is stale

The public part is everything before the "Internal interface" banner. Its comments are the
documentation: a "/* ----" banner opens a section, a one-line "/* ---- name ---- */" a
subsection. A comment documents the declarations that follow it up to the next blank line or
comment; a comment after a declaration on its own line documents it too. A POSENC_API function
with no comment at all is an error (exit 1): that keeps the header documented. A function that
returns posenc_status and names none of its error codes gets a warning.

The output depends only on the header's text, so it is the same on every machine.
"""
import argparse
import difflib
import re
import sys

REFRESH = 'python3 tools/apidoc.py posenc.h -o docs/api.md'


# ---- reading the header -------------------------------------------------------------------------
class Item:
    """One piece of the public header: 'comment', 'blank', 'ifndef', 'define' or 'decl'."""

    def __init__(self, kind, text, line, trailing=None):
        self.kind, self.text, self.line, self.trailing = kind, text, line, trailing


def public_part(src):
    """The header up to the comment that opens its internal interface."""
    at = src.find('Internal interface')
    if at < 0:
        sys.exit('apidoc: no "Internal interface" banner in the header')
    return src[:src.rfind('/*', 0, at)]


def scan(src):
    """Splits the text into items. Comments inside a declaration stay part of its text."""
    items, i, n = [], 0, len(src)

    def line_of(pos):
        return src.count('\n', 0, pos) + 1

    def trailing_comment(pos):
        """A comment that starts on the same line after pos: (text, end) or (None, pos)."""
        j = pos
        while j < n and src[j] in ' \t':
            j += 1
        if src.startswith('/*', j):
            end = src.index('*/', j) + 2
            return src[j:end], end
        return None, pos

    while i < n:
        eol = src.find('\n', i)
        eol = n if eol < 0 else eol
        line = src[i:eol]
        stripped = line.strip()
        if not stripped:
            items.append(Item('blank', '', line_of(i)))
            i = eol + 1
            continue
        start = i + len(line) - len(line.lstrip())
        if stripped == 'extern "C" {':  # C++ linkage: not a declaration
            i = eol + 1
            continue
        if stripped.startswith('extern "C++" {'):  # an internal C++ helper, on one line
            i = eol + 1
            continue
        if src.startswith('/*', start):
            end = src.index('*/', start) + 2
            items.append(Item('comment', src[start:end], line_of(start)))
            i = end
        elif src[start] == '#':
            g = re.match(r'#\s*ifndef\s+(\w+)', src[start:eol])
            m = re.match(r'#\s*define\s+(\w+)(\([^)]*\))?[ \t]*([^\n/]*)', src[start:eol])
            if g:
                items.append(Item('ifndef', g.group(1), line_of(start)))
            elif m and src[start:eol].rstrip().endswith('\\'):
                # a macro over several lines: a public one is documented; an internal one is left
                # out, but for the ISA table's names, which the posenc_isa enum is made of
                while src[start:eol].rstrip().endswith('\\'):
                    eol = src.find('\n', eol + 1)
                    eol = n if eol < 0 else eol
                if not m.group(1).startswith('POSENC_I_'):
                    items.append(Item('macro', (m.group(1), src[start:eol]), line_of(start)))
                elif m.group(1) == 'POSENC_I_ISA_TABLE':
                    names = re.findall(r'^\s*X\(\s*\w+\s*,\s*(\w+)\s*,', src[start:eol], re.M)
                    items.append(Item('isa_table', names, line_of(start)))
            elif m:
                cend = src.find('/*', start, eol)
                trail = None
                if cend >= 0:
                    trail, eol = trailing_comment(cend)
                items.append(Item('define', (m.group(1), m.group(3).strip()), line_of(start), trail))
            i = eol
        else:  # a declaration: up to ';' outside braces, skipping comments
            j, depth = start, 0
            while True:
                if j >= n:
                    sys.exit('apidoc: line %d: a declaration without its ";"' % line_of(start))
                if src.startswith('/*', j):
                    j = src.index('*/', j) + 2
                    continue
                c = src[j]
                depth += (c == '{') - (c == '}')
                j += 1
                if c == ';' and depth == 0:
                    break
            trail, end = trailing_comment(j)
            items.append(Item('decl', src[start:j], line_of(start), trail))
            i = end
        # the rest of the line after a comment or declaration is scanned next, if it is not empty
        while i < n and src[i] in ' \t':
            i += 1
        if i < n and src[i] == '\n':
            i += 1
    return items


def comment_lines(comment):
    """The text of a /* */ comment as lines, ' * ' prefixes removed, relative indent kept."""
    body = comment[2:-2]
    lines = body.split('\n')
    out = [lines[0].strip()]
    for ln in lines[1:]:
        m = re.match(r'\s*\*(?: |$)(.*)', ln)
        out.append(m.group(1).rstrip() if m else ln.strip())
    while out and not out[-1].strip():
        out.pop()
    while out and not out[0].strip():
        out.pop(0)
    return out


def banner(comment):
    """('section', title, rest-lines), ('sub', title, []) or None."""
    one = re.fullmatch(r'/\*\s*-{3,}\s*(.*?)\s*-{3,}\s*\*/', comment)
    if one and '\n' not in comment:
        return 'sub', one.group(1), []
    lines = comment_lines(comment)
    if lines and re.fullmatch(r'-{5,}', lines[0]):
        lines = [ln for ln in lines[1:] if not re.fullmatch(r'-{5,}', ln.strip())]
        m = re.match(r'(.*?)[.:](?:\s+|$)(.*)', lines[0])
        title, first = (m.group(1), m.group(2)) if m else (lines[0], '')
        return 'section', title, ([first] if first else []) + lines[1:]
    return None


# ---- the model: sections, entries ---------------------------------------------------------------
class Section:
    def __init__(self, title, level, intro):
        self.title, self.level, self.intro, self.entries, self.macros = title, level, intro, [], []


class Entry:
    """A documented declaration: kind 'function', 'struct' or 'enum'; functions may be grouped."""

    def __init__(self, kind, names, code, doc, line, ret=None):
        self.kind, self.names, self.code, self.doc, self.line, self.ret = kind, names, code, doc, line, ret


def parse_decl(text):
    """(kind, name, return type or None) of a public declaration; None for anything else."""
    flat = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    flat = ' '.join(flat.split())
    m = re.match(r'POSENC_API (.*?)\b(\w+)\s*\(', flat)
    if m:
        return 'function', m.group(2), m.group(1).strip()
    m = re.match(r'typedef (struct|enum) \w*\s*\{.*\}\s*(\w+);$', flat)
    if m:
        return m.group(1), m.group(2), None
    return None


def expand_isa_enum(text, names):
    """An enum whose body expands the ISA table (and #defines, #undefs the macro it passes):
    one enumerator a backend, in the table's order, as the preprocessor makes it."""
    out = []
    for line in text.split('\n'):
        if re.match(r'\s*#\s*(define|undef)\b', line):
            continue
        m = re.match(r'(\s*)POSENC_I_ISA_TABLE\(\w+\)', line)
        if m:
            out += ['%sPOSENC_ISA_%s,' % (m.group(1), name) for name in names]
            continue
        out.append(line)
    return '\n'.join(out)


def build(src, path):
    """Sections of the public part, in header order, and the functions without a comment."""
    items = scan(public_part(src))
    sections = [Section('Overview', 2, [])]
    errors = []
    doc = None          # a comment not yet used: it documents the next declaration
    group = None        # a function documented by a leading comment: the next ones share it
    guard = None        # the name of the last #ifndef: a #define under it can be overridden
    isa_names = []      # the ISA table's backends, in order: the posenc_isa enumerators
    for k, it in enumerate(items):
        sec = sections[-1]
        if it.kind == 'blank':
            doc = group = None
        elif it.kind == 'comment':
            b = banner(it.text)
            if k == 0:  # the file's own header comment
                sec.intro = comment_lines(it.text)
            elif b:
                sections.append(Section(b[1], 2 if b[0] == 'section' else 3, b[2]))
                doc = group = None
            else:
                doc, group = comment_lines(it.text), None
        elif it.kind == 'ifndef':
            guard = it.text
        elif it.kind == 'isa_table':
            isa_names = it.text
        elif it.kind == 'macro':  # documented like a declaration, by the comment above it
            name, code = it.text
            sec.entries.append(Entry('macro', [name], code, doc or [], it.line, None))
            doc = group = None
        elif it.kind == 'define':
            name, value = it.text
            if name not in ('POSENC_H', 'POSENC_API') and value and not name.startswith('POSENC_I_'):  # internal
                note = ' '.join(comment_lines(it.trailing)) if it.trailing else ''
                if name == guard:
                    note += (' ' if note else '') + '(Overridable: define it before including posenc.h.)'
                sec.macros.append((name, value, note))
        else:
            if 'POSENC_I_ISA_TABLE(' in it.text:  # the enum the ISA table makes, written out
                it.text = expand_isa_enum(it.text, isa_names)
            d = parse_decl(it.text)
            if not d:
                continue
            kind, name, ret = d
            own = comment_lines(it.trailing) if it.trailing else []
            if group and kind == 'function' and not own:
                group.names.append(name)
                group.code += '\n' + it.text
                continue
            text = (doc or []) + ([''] if doc and own else []) + own
            if kind == 'function' and not text:
                errors.append('%s:%d: %s has no comment: document it in the header' % (path, it.line, name))
            e = Entry(kind, [name], it.text, text, it.line, ret)
            sec.entries.append(e)
            group = e if kind == 'function' and doc and not own else None
            doc = None
    return sections, errors


def status_codes(sections):
    """Short names of the error codes (NULL, SIZE, ...) from the posenc_status enum."""
    for s in sections:
        for e in s.entries:
            if e.names == ['posenc_status']:
                return [n[len('POSENC_ERR_'):] for n, _, _ in enum_rows(e.code) if n.startswith('POSENC_ERR_')]
    return []


def undocumented_errors(sections, path):
    """Functions that return posenc_status and whose comment names no error code."""
    codes = status_codes(sections)
    # a code by its short name (NULL, ERR_NULL), or "errors of / those of / errors as" a function
    pat = re.compile(r'\b(?:ERR_)?(?:%s)\b|\b(?i:errors|those) (?:of|as) posenc_\w+' % '|'.join(codes))
    out = []
    for s in sections:
        for e in s.entries:
            if e.kind == 'function' and e.ret == 'posenc_status':
                if e.doc and not pat.search(' '.join(e.doc)):
                    out.append('%s:%d: %s returns posenc_status but names no error code'
                               % (path, e.line, ', '.join(e.names)))
    return out


def enum_rows(code):
    """(name, value, comment) of each enumerator, values made explicit."""
    body = code[code.index('{') + 1:code.rindex('}')]
    rows, nxt = [], 0
    for m in re.finditer(r'/\*.*?\*/|([A-Z_][A-Z0-9_]*)\s*(?:=\s*([^,/]+?))?\s*(?:,|$|(?=/\*))', body, re.S):
        if m.group(0).startswith('/*'):
            if rows:
                rows[-1][2].append(' '.join(' '.join(comment_lines(m.group(0))).split()))
            continue
        if not m.group(1):
            continue
        value = m.group(2).strip() if m.group(2) else str(nxt)
        try:
            nxt = int(value, 0) + 1
        except ValueError:
            nxt = None
        rows.append((m.group(1), value, []))
    return [(n, v, ' '.join(c)) for n, v, c in rows]


# ---- markdown -----------------------------------------------------------------------------------
def slug(title, used):
    """GitHub's heading anchor."""
    s = re.sub(r'[^\w\- ]', '', title.lower()).replace(' ', '-')
    k, n = s, 1
    while k in used:
        k, n = '%s-%d' % (s, n), n + 1
    used.add(k)
    return k


class Writer:
    def __init__(self, sections):
        self.sections, self.links = sections, {}
        for s in sections:
            for e in s.entries:
                for n in e.names:
                    self.links[n] = n
                if e.kind == 'enum':
                    for n, _, _ in enum_rows(e.code):
                        self.links[n] = e.names[0]

    def inline(self, text, here=()):
        """Prose with identifiers in code spans, public names linked, markdown escaped."""
        parts = []
        pat = re.compile(r'\b(posenc_\w+|POSENC_\w+|ERR_[A-Z]+|[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+)+)(\(\))?')
        last = 0
        for m in pat.finditer(text):
            parts.append(re.sub(r'([\\`*_\[\]<>])', r'\\\1', text[last:m.start()]))
            name, call = m.group(1), m.group(2) or ''
            target = self.links.get(name)
            if target and target not in here:
                parts.append('[`%s%s`](#%s)' % (name, call, target))
            else:
                parts.append('`%s%s`' % (name, call))
            last = m.end()
        parts.append(re.sub(r'([\\`*_\[\]<>])', r'\\\1', text[last:]))
        return ''.join(parts)

    def prose(self, lines, here=()):
        """Comment lines: indented runs (formulas, code) become text blocks, the rest paragraphs."""
        out, para, pre = [], [], []

        def flush():
            if para:
                out.append(self.inline(' '.join(para), here))
                out.append('')
                para.clear()
            if pre:
                ind = min(len(p) - len(p.lstrip()) for p in pre if p.strip())
                out.extend(['```text'] + [p[ind:] for p in pre] + ['```', ''])
                pre.clear()

        for ln in lines:
            if not ln.strip():
                flush()
            elif para and re.search(r'[\w)]$', para[-1]) and '  ' not in ln.strip():  # a wrapped sentence
                para.append(ln.strip())
            elif ln.startswith('  ') or (pre and ln.startswith(' ')):
                if para:
                    flush()
                pre.append(ln)
            else:
                if pre:
                    flush()
                para.append(ln.strip())
        flush()
        return out

    def table(self, head, rows):
        cell = lambda s: s.replace('|', '\\|')
        out = ['| ' + ' | '.join(head) + ' |', '|' + ' --- |' * len(head)]
        out += ['| ' + ' | '.join(cell(c) for c in r) + ' |' for r in rows]
        return out + ['']

    def render(self, version):
        used, anchors = set(), []
        for s in self.sections:
            anchors.append(slug(s.title, used))
        w = ['# posenc API reference', '',
             'posenc %s. Generated from the comments in `posenc.h` by `tools/apidoc.py`: edit the header, '
             'not this file, then run `%s`.' % (version, REFRESH), '',
             '## Contents', '']
        for s, a in zip(self.sections, anchors):
            names = [n for e in s.entries for n in e.names]
            ind = '  ' if s.level == 3 else ''
            w.append('%s- [%s](#%s)%s' % (ind, s.title, a, ': ' + ', '.join(
                '[`%s`](#%s)' % (n, n) for n in names) if names else ''))
        w.append('')
        for s, a in zip(self.sections, anchors):
            w += ['#' * s.level + ' ' + s.title, '']
            w += self.prose(s.intro)
            if s.macros:
                w += self.table(['Macro', 'Value', 'Meaning'],
                                [('`%s`' % n, '`%s`' % v, self.inline(c)) for n, v, c in s.macros])
            for e in s.entries:
                w += self.entry(e)
        while w and w[-1] == '':
            w.pop()
        return '\n'.join(w) + '\n'

    def entry(self, e):
        w = ['#' * 4 + ' `%s`' % e.names[0]]
        w += ['<a id="%s"></a>' % n for n in e.names[1:]]
        w.append('')
        if e.kind == 'enum':
            w += self.prose(e.doc, e.names)
            w += self.table(['Name', 'Value', 'Meaning'],
                            [('`%s`' % n, '`%s`' % v, self.inline(c, e.names)) for n, v, c in enum_rows(e.code)])
        else:
            w += ['```c', e.code, '```', '']
            w += self.prose(e.doc, e.names)
        return w


def generate(src, path='posenc.h'):
    sections, errors = build(src, path)
    m = re.search(r'#define POSENC_VERSION_STRING "([^"]+)"', src)
    return Writer(sections).render(m.group(1) if m else '?'), errors, undocumented_errors(sections, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('header', help='posenc.h')
    ap.add_argument('-o', '--output', help='where to write the reference (default: stdout)')
    ap.add_argument('--check', metavar='MD', help='fail if MD differs from the generated reference')
    args = ap.parse_args()
    with open(args.header, encoding='utf-8') as f:
        md, errors, warnings = generate(f.read(), args.header)
    for msg in warnings:
        print('apidoc: warning: ' + msg, file=sys.stderr)
    for msg in errors:
        print('apidoc: error: ' + msg, file=sys.stderr)
    if args.output:
        with open(args.output, 'w', encoding='utf-8', newline='\n') as f:
            f.write(md)
    elif not args.check:
        sys.stdout.write(md)
    status = 1 if errors else 0
    if args.check:
        try:
            with open(args.check, encoding='utf-8') as f:
                old = f.read()
        except OSError as exc:
            old = ''
            print('apidoc: %s' % exc, file=sys.stderr)
        if old != md:
            diff = list(difflib.unified_diff(old.splitlines(), md.splitlines(), args.check, 'generated', lineterm=''))
            print('\n'.join(diff[:60] + (['... (%d more lines)' % (len(diff) - 60)] if len(diff) > 60 else [])))
            print('apidoc: %s is out of date with the header; refresh it (from the source root) with:\n    %s' % (args.check, REFRESH),
                  file=sys.stderr)
            status = 1
        else:
            print('apidoc: %s is up to date' % args.check)
    return status


if __name__ == '__main__':
    sys.exit(main())
