"""Tile order shared by both ladders: arch-independent index arithmetic, no device code of its own."""

import cutlass


def grouped_tile_coord(linear, tiles_m, tiles_n, group_m: int):
    """(m, n) tile of the ``linear``-th CTA (or cluster): bands of ``group_m`` M-tiles, N walked inside a band.

    CTAs resident together then share a band of A rows and a window of B columns instead of streaming all
    of A against a few B columns (plain row order), which keeps more of both in L2. ``linear``, ``tiles_m``
    and ``tiles_n`` are DSL integers in a kernel (tile counts are runtime values: one compile serves every
    shape) or Python ints in tests; ``group_m`` is static. With pair (cluster) tiles, pass the number of
    pair rows as ``tiles_m``. The last band is short when ``group_m`` does not divide ``tiles_m``.
    """
    per_band = group_m * tiles_n
    band = linear // per_band
    in_band = linear % per_band
    first_m = band * group_m
    rows = cutlass.min(tiles_m - first_m, group_m)  # a full band, or the short last one
    return first_m + in_band % rows, in_band // rows


def ceil_div(a, b):
    """Tiles of size ``b`` covering ``a`` (a partial last tile included); Python or DSL integers."""
    return (a + b - 1) // b


def persistent_clusters(tiles, slots):
    """Clusters a persistent grid launches: one per slot (``sm_count / cluster_m``), never more than the tiles."""
    return cutlass.min(tiles, slots)


def stream_k_schedule(tiles, slots, k_tiles, split: int):
    """(data-parallel tiles, split tiles, clusters launched) of a persistent grid of ``slots`` clusters.

    Cluster c computes tiles c, c + clusters, ... of the first ``tiles - split tiles`` (whole rounds);
    the R = tiles % slots tiles of the partial last round are split along K into ``split`` units each,
    one unit per cluster, when that shortens the round: their ``split * R`` units must fit on the slots,
    and ``split`` must divide the k-tiles (the units of one tile run rings of equal length). Otherwise
    nothing is split. Branch-free arithmetic, so the same function runs on the host (Python ints) and
    in a kernel (runtime tile counts).
    """
    rest = tiles % slots
    fits = 1 - cutlass.min(cutlass.max(split * rest - slots, 0), 1)  # split * rest <= slots
    even = 1 - cutlass.min(k_tiles % split, 1)  # split divides k_tiles
    sk = rest * fits * even  # rest == 0: nothing to split
    return tiles - sk, sk, cutlass.min(tiles + (split - 1) * sk, slots)
