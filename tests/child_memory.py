"""Peak memory of a child Python process, measured by the child itself.

``getrusage(RUSAGE_SELF).ru_maxrss`` is no good for this: Linux keeps it across ``exec`` from the process
that forked, so a child started by a large test worker reports the worker's peak. ``VmHWM`` in
``/proc/self/status`` belongs to the program's own address space, which starts fresh at ``exec``.
"""

PRINT_OWN_PEAK_KIB = (
    "print('PEAK_KIB', [line.split()[1] for line in open('/proc/self/status') if line.startswith('VmHWM:')][0],"
    " file=__import__('sys').stderr)\n"
)


def own_peak_mib(stderr: str) -> float:
    """The peak that ``PRINT_OWN_PEAK_KIB`` wrote to the child's stderr, in MiB."""
    return int(stderr.rsplit("PEAK_KIB", 1)[1].split()[0]) / 1024
