#!/usr/bin/env python3
"""Checks that committed baked headers are still exactly what posenc generates.

Usage: check_baked.py PATH/TO/posenc HEADER.h...

Each header made by 'posenc ... --format c' names, under "regenerate with:", the command that
made it. That command is run with the given binary, and its output must equal the header byte
for byte, so a stale table (or a change in the generator or the library's values) fails here.
A cross build's binary runs through MESON_EXE_WRAPPER (Wine for Windows), as meson passes it.
"""
import os
import shlex
import subprocess
import sys


def regenerate_command(text):
    lines = text.splitlines()
    for i, line in enumerate(lines[:-1]):
        if line == ' * regenerate with:':
            argv = shlex.split(lines[i + 1].lstrip(' *'))
            if argv[:1] == ['posenc'] and '--format' in argv:
                return argv[1:]
    return None


def check(posenc, path):
    with open(path, 'rb') as f:
        committed = f.read()
    args = regenerate_command(committed.decode('ascii'))
    if args is None:
        return f'{path}: no "regenerate with: posenc ..." line'
    wrapper = shlex.split(os.environ.get('MESON_EXE_WRAPPER', ''))
    proc = subprocess.run(wrapper + [posenc] + args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=120)
    if proc.returncode != 0:
        return f'{path}: posenc {shlex.join(args)} failed: {proc.stderr.decode().strip()}'
    if proc.stdout != committed:
        fresh, old = proc.stdout.decode().splitlines(), committed.decode().splitlines()
        line = next((i for i, (a, b) in enumerate(zip(fresh, old)) if a != b), min(len(fresh), len(old)))
        return (f'{path}: differs from a fresh posenc {shlex.join(args)} at line {line + 1}; '
                f'regenerate it with that command (-o {path})')
    return None


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    failed = 0
    for path in sys.argv[2:]:
        problem = check(sys.argv[1], path)
        print(f'FAIL {problem}' if problem else f'ok   {path}')
        failed += problem is not None
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
