"""Mutation testing of both ladders: do the checks catch bugs planted in the kernels?

sm90 (``catalog_sm90.py``): the CPU checks (PTX protocol rules, the PTX machine) and, on an H200, the GPU
tests (``--gpu``, ``gpu90.py``); the report names each kind of check that kills a mutant
(``report90.py``). sm100, below:

No Blackwell GPU exists here, so the CPU checks (PTX control-flow rules, the PTX machine's runs, the
layout and epilogue algebra) are all the sm100 ladder has. ``catalog.MUTANTS`` plants plausible bugs,
one source-text substitution each, in copies of the phase files (a wrong tile coordinate, a dropped or
moved wait, wrong expect_tx bytes or arrival counts, a descriptor that disagrees with the TMA's
layout, a wrong multicast mask, a missing proxy fence, a wrong epilogue mapping, TMEM allocated or
freed at the wrong time, ...). For each, ``python -m tests.mutants`` copies the tree to a temporary
directory, applies the substitution there (the checkout is never touched), runs the mutant's CPU
checks and records whether they fail (the mutant is killed) or pass (it survives: only a Blackwell
run could catch it). It writes a JSON and a markdown report.
"""
