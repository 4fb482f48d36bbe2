"""The kernels: one class per (arch, phase). ``ALL`` lists them in ladder order."""

from phases.sm90 import ALL as SM90
from phases.sm100 import ALL as SM100

ALL = [*SM90, *SM100]
