#!/usr/bin/env python3
"""Runs a test of a Windows build (under Wine, cross/*.ini's exe_wrapper) and runs it once more
where Wine failed it, not the test:

    wine_retry.py COMMAND [ARG...]

Wine 8 now and then ends a process with status 1 and no output, or with glibc's 'Inconsistency
detected by ld.so: dl-fini.c' assertion as it exits, after a complete run (2 of about 7,500 CLI
runs here; tools/test_cli.py reruns those the same way). A test reports each of its own failures
on its output, so a failing test fails again and its status is the one returned. The output of
both runs is passed on as it comes, with a line between them that says why the second ran.
tests/meson.build's default test setup for a Windows build runs every test under this."""
import subprocess
import sys
import threading

LD_SO_ASSERTION = b'Inconsistency detected by ld.so:'


def pass_on(source, sink, seen):
    """Copies source to sink as it comes; seen gets the bytes' count and the last line."""
    last = b''
    for line in iter(source.readline, b''):
        sink.write(line)
        sink.flush()
        seen['bytes'] += len(line)
        if line.strip():
            last = line
    seen['last'] = last


def run(command):
    """One run: its exit status, and why Wine failed it (None where it did not)."""
    proc = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = {'bytes': 0, 'last': b''}, {'bytes': 0, 'last': b''}
    threads = [threading.Thread(target=pass_on, args=(proc.stdout, sys.stdout.buffer, out)),
               threading.Thread(target=pass_on, args=(proc.stderr, sys.stderr.buffer, err))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    status = proc.wait()
    if status == 0:
        return status, None
    if out['bytes'] == 0 and err['bytes'] == 0:
        return status, 'with no output'
    if err['last'].startswith(LD_SO_ASSERTION):
        return status, "at glibc's dl-fini assertion"
    return status, None


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    status, wine_failed = run(sys.argv[1:])
    if wine_failed:
        sys.stdout.write(f'\nwine_retry.py: exit status {status} {wine_failed}: Wine failed this run, not the test; '
                         'running it once more\n\n')
        sys.stdout.flush()
        status, _ = run(sys.argv[1:])
    sys.exit(status if status >= 0 else 128 - status)  # killed by a signal: as a shell reports it


if __name__ == '__main__':
    main()
