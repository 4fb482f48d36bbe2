"""Documents into words and pictures: the bench's result table (``console``), plain-text tables of the
compile-only census and of Nsight Compute profiles (``tables``), and PNG figures (``plot``, with the
worklog's own numbers in ``worklog``).

Imports the layers below it (runtime, measure, profiling), never the CLI.
"""
