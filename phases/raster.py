"""Tile order shared by both ladders: arch-independent index arithmetic, no device code of its own."""

import cutlass


def grouped_tile_coord(linear, tiles_m: int, tiles_n: int, group_m: int):
    """(m, n) tile of the ``linear``-th CTA (or cluster): bands of ``group_m`` M-tiles, N walked inside a band.

    CTAs resident together then share a band of A rows and a window of B columns instead of streaming all
    of A against a few B columns (plain row order), which keeps more of both in L2. ``linear`` is a DSL
    Int32 in a kernel or a Python int in tests; tiles_m, tiles_n are Python ints (static shapes).
    With pair (cluster) tiles, pass the number of pair rows as ``tiles_m``.
    """
    group_m = min(group_m, tiles_m)
    per_band = group_m * tiles_n
    band = linear // per_band
    in_band = linear % per_band
    first_m = band * group_m
    if tiles_m % group_m == 0:
        rows = group_m  # every band is full: static divisor
    else:
        rows = cutlass.min(tiles_m - first_m, group_m)  # the last band is short
    return first_m + in_band % rows, in_band // rows
