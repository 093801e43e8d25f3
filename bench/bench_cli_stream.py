#!/usr/bin/env python3
"""Whole-process timing: `posenc table sinusoidal --positions N --dim D -o FILE` against the plain
streaming SLEEF writer a user would write (bench/sleef_stream_writer.c, Sleef_sincosf8_u35avx2).

Usage: bench_cli_stream.py BUILD_DIR [--posenc PATH] [--rows N] [--dim D] [--runs R] [--dir DIR]

Each program runs R times (default 15) in turn, writing a file in DIR (default BUILD_DIR/bench);
the best wall time of each is printed with its peak RSS, then the ratio. Each run is forked from a
small helper interpreter, which also takes the time (fork to wait), so neither the startup of
python nor its memory is counted. posenc replaces the file atomically (a temporary, fsync,
rename); the SLEEF writer writes it in place and does not sync: what each would do in practice.
"""
import argparse
import os
import subprocess
import sys

# fork, exec, wait: prints "exit-status seconds peak-RSS-KiB" for the child alone (a child's
# ru_maxrss includes the process it was forked from, hence this small interpreter).
RUNNER = (
    'import os, sys, time\n'
    't0 = time.perf_counter()\n'
    'pid = os.fork()\n'
    'if pid == 0:\n'
    '    os.execv(sys.argv[1], sys.argv[1:])\n'
    '_, status, usage = os.wait4(pid, 0)\n'
    'print(os.waitstatus_to_exitcode(status), time.perf_counter() - t0, usage.ru_maxrss)\n')


def run_once(argv):
    out = subprocess.run([sys.executable, '-S', '-I', '-c', RUNNER] + argv, check=True,
                         stdout=subprocess.PIPE).stdout.split()
    if int(out[0]) != 0:
        sys.exit(f'{argv}: exit {out[0]}')
    return float(out[1]), int(out[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('build_dir')
    ap.add_argument('--posenc', help='the posenc binary (default BUILD_DIR/tools/posenc)')
    ap.add_argument('--rows', type=int, default=131072)
    ap.add_argument('--dim', type=int, default=128)
    ap.add_argument('--runs', type=int, default=15)
    ap.add_argument('--dir', help='where the files are written (default BUILD_DIR/bench)')
    args = ap.parse_args()
    posenc = args.posenc or os.path.join(args.build_dir, 'tools', 'posenc')
    sleef = os.path.join(args.build_dir, 'bench', 'sleef_stream_writer')
    if not os.path.exists(sleef):
        sys.exit(f'{sleef} not built (needs SLEEF and an x86-64 with AVX2)')
    out_dir = args.dir or os.path.join(args.build_dir, 'bench')
    n, d = str(args.rows), str(args.dim)
    programs = {
        'posenc table sinusoidal': [posenc, 'table', 'sinusoidal', '--positions', n, '--dim', d, '-o',
                                    os.path.join(out_dir, 'stream_posenc.npy')],
        'SLEEF u35 streaming writer': [sleef, n, d, os.path.join(out_dir, 'stream_sleef.npy')],
    }
    best = {name: (float('inf'), 0) for name in programs}
    for _ in range(args.runs):  # interleaved, so that a slow moment of the machine hits both
        for name, argv in programs.items():
            t, rss = run_once(argv)
            if t < best[name][0]:
                best[name] = (t, rss)
    sizes = {os.path.getsize(argv[-1]) for argv in programs.values()}
    print(f'{args.rows} x {args.dim} f32 ({args.rows * args.dim * 4 / 2**20:.0f} MiB) to {out_dir}, '
          f'best of {args.runs}; file sizes {sorted(sizes)}')
    for name, (t, rss) in best.items():
        print(f'  {name:28s} {t * 1e3:8.1f} ms   peak RSS {rss / 1024:6.1f} MiB')
    ratio = best['SLEEF u35 streaming writer'][0] / best['posenc table sinusoidal'][0]
    print(f'  posenc is {ratio:.2f}x the speed of the SLEEF writer (> 1: faster)')
    for argv in programs.values():
        os.remove(argv[-1])


if __name__ == '__main__':
    main()
