#!/usr/bin/env python3
"""Runs a Windows program under Wine, and once more where Wine failed the run, not the program:

    wine_retry.py WINE PROGRAM [ARG...]

The cross files' wrapper (cross/x86_64-*.ini) puts this before Wine where POSENC_WINE_RETRY names
it, as tests/meson.build's test setups do. Wine 8 now and then ends a process with a nonzero status
and no output, or with glibc's 'Inconsistency detected by ld.so: dl-fini.c' assertion as it exits,
after a complete run (2 of about 7,500 CLI runs here; tools/test_cli.py, which compares the CLI's
output run by run, reruns those itself with wine_failure). A test reports each of its own failures
on its output, so a failing test fails again and its status is the one returned. Both runs'
output is passed on as it comes, with a line on stderr between them that says why the second ran."""
import os
import signal
import subprocess
import sys
import threading

LD_SO_ASSERTION = b'Inconsistency detected by ld.so:'


def wine_failure(status, said_nothing, stderr):
    """Why Wine, not the program, failed a run, or None: a nonzero status where the program said
    nothing where it reports its failures (a test: no output at all; the CLI: nothing on stderr),
    or glibc's ld.so assertion on stderr."""
    if status == 0:
        return None
    if LD_SO_ASSERTION in stderr:
        return "at glibc's ld.so assertion"
    return 'with no output' if said_nothing else None


def pass_on(source, sink, kept):
    """Copies source to sink as it comes; kept gets the bytes."""
    for chunk in iter(lambda: source.read1(65536), b''):
        sink.write(chunk)
        sink.flush()
        kept.append(chunk)


def run(command):
    """One run: its status (-N: killed by signal N), and why Wine failed it (None where it did not)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = [], []
    threads = [threading.Thread(target=pass_on, args=(proc.stdout, sys.stdout.buffer, out)),
               threading.Thread(target=pass_on, args=(proc.stderr, sys.stderr.buffer, err))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status = proc.wait()
    return status, wine_failure(status, not out and not err, b''.join(err))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    status, why = run(sys.argv[1:])
    if why:
        sys.stderr.write(f'\nwine_retry.py: status {status} {why}: Wine failed this run, not the program; '
                         'running it once more\n\n')
        sys.stderr.flush()
        status, _ = run(sys.argv[1:])
    if status < 0:  # killed by a signal: end the same way, as the program's own run would
        signal.signal(-status, signal.SIG_DFL)
        os.kill(os.getpid(), -status)
    sys.exit(status)


if __name__ == '__main__':
    main()
