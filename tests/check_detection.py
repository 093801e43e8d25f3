#!/usr/bin/env python3
"""posenc's CPU detection says what the kernel says: for each x86 backend a test program reports
(compiled, supported), "supported" must equal what /proc/cpuinfo's flags say, and the backend
chosen on first use must be the best one that is compiled and that the flags allow. A detection
that fails silently (a compiler whose CPUID path is missing: scalar or SSE2 chosen on an AVX2 CPU)
fails here.

usage: check_detection.py POSENC_H PROGRAM...
       Each PROGRAM prints "NAME compiled C supported S" for every backend and "active backend:
       NAME" or "single-file backend: NAME" (tests/test_dispatch.c, tests/test_single_file.c).
       A cross build's programs run through MESON_EXE_WRAPPER (Wine for Windows: it runs them on
       this machine's CPU, under this kernel's register state). The priorities come from POSENC_H's
       ISA table. The last line is "N passed, N failed".
"""
import os
import re
import shlex
import subprocess
import sys

# What each x86 backend needs, as Linux's /proc/cpuinfo names the features (the kernel clears a
# flag whose register state it does not save: no avx2 or avx512f without XSAVE of YMM/ZMM). A
# compiled backend missing here fails the check, and tools/test_cli.py's, which imports this table
# (a backend added to posenc.h's ISA table needs its line here).
X86_FLAGS = {'sse2': ['sse2'], 'avx2': ['avx', 'avx2', 'f16c'],
             'avx512': ['avx512f', 'avx512bw', 'avx512dq', 'avx512vl', 'f16c'],
             'avx512bf16': ['avx512f', 'avx512bw', 'avx512dq', 'avx512vl', 'f16c', 'avx512_bf16']}


def priorities(posenc_h):
    """{name: prio} from the ISA table's rows, X(name, NAME, prio, ..."""
    with open(posenc_h) as f:
        text = f.read()
    table = text[text.index('#define POSENC_I_ISA_TABLE(X)'):]
    table = table[:table.index('\ntypedef')]
    return {m.group(1): int(m.group(2)) for m in re.finditer(r'X\((\w+),\s*\w+,\s*(\d+),', table)}


def check(program, prio, cpu_flags):
    """The problems with one program's report (an empty list if none) and a summary."""
    wrapper = shlex.split(os.environ.get('MESON_EXE_WRAPPER', ''))
    env = dict(os.environ)
    env.pop('POSENC_ISA', None)  # the automatic choice is under test
    proc = subprocess.run(wrapper + [program], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                          timeout=300)
    out = proc.stdout.decode(errors='replace').replace('\r\n', '\n')  # Windows' text mode
    name = os.path.basename(program)
    if proc.returncode != 0:
        return [f'{name}: exit {proc.returncode}\n{out[-2000:]}{proc.stderr.decode(errors="replace")[-2000:]}'], ''
    report = {m.group(1): (m.group(2) == '1', m.group(3) == '1')
              for m in re.finditer(r'^(\w+)\s+compiled (\d) supported (\d)$', out, re.M)}
    active = re.search(r'^(?:active|single-file) backend: (\w+)$', out, re.M)
    if not report or not active:
        return [f'{name}: no backend report in its output'], ''
    problems = [f'{name}: {isa} is compiled, but X86_FLAGS has no /proc/cpuinfo flags for it'
                for isa, (compiled, _) in report.items() if compiled and isa != 'scalar' and isa not in X86_FLAGS]
    for isa, need in X86_FLAGS.items():
        if isa not in report:
            problems.append(f'{name}: no line for {isa}')
            continue
        want = all(flag in cpu_flags for flag in need)
        if report[isa][1] != want:
            problems.append(f'{name}: posenc says {isa} supported={report[isa][1]}, /proc/cpuinfo says {want}')
    runnable = [isa for isa, (compiled, _) in report.items()
                if compiled and (isa == 'scalar' or all(flag in cpu_flags for flag in X86_FLAGS.get(isa, ['?'])))]
    # ['?']: a backend missing from X86_FLAGS, reported above, counts as not runnable here
    best = max(runnable, key=lambda isa: prio[isa])  # the table's first among equals: none are equal here
    if active.group(1) != best:
        problems.append(f'{name}: chose {active.group(1)}, the best compiled backend this CPU runs is {best}')
    compiled = ' '.join(isa for isa, (c, _) in report.items() if c)
    return problems, f'{name}: compiled {compiled}; chose {active.group(1)}, as /proc/cpuinfo says'


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    prio = priorities(sys.argv[1])
    with open('/proc/cpuinfo') as f:
        cpu_flags = set(re.search(r'^flags\s*:(.*)$', f.read(), re.M).group(1).split())
    print('/proc/cpuinfo:', ' '.join(sorted(f for f in cpu_flags if f in {x for v in X86_FLAGS.values() for x in v})))
    passed = failed = 0
    for program in sys.argv[2:]:
        problems, summary = check(program, prio, cpu_flags)
        for problem in problems:
            print(f'FAIL {problem}')
        if not problems:
            print(f'ok   {summary}')
        passed += not problems
        failed += bool(problems)
    print(f'{passed} passed, {failed} failed')
    sys.exit(1 if failed else 0)


if __name__ == '__main__':
    main()
