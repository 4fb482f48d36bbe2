"""The kernels: one class per (arch, phase). ``all_phases()`` lists them in ladder order.

Importing ``phases`` (or ``phases.base``, the contract and the phase ids) is cheap; the kernel modules,
and with them the CuTe DSL, load on the first ``all_phases()``.
"""


def all_phases():
    from phases.sm90 import ALL as SM90
    from phases.sm100 import ALL as SM100

    return [*SM90, *SM100]
