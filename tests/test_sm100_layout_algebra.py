"""CPU checks of the sm100 phase 0/1 layout algebra: no GPU, no kernel launch.

1. The cp.async copy and the UMMA agree on smem. The "copy writes" side comes from the CuTe layouts
   the kernels build (``common.make_mma_and_smem_layouts`` + ``common.mma_to_copy_view``, the swizzle
   evaluated with CuTe's own functor on byte offsets, the way the kernel's swizzled smem pointer
   applies it) and from each phase's smem carve. The "UMMA reads" side is derived independently
   from the worklog's descriptor constants (section 2.2) and the canonical swizzle on absolute byte
   addresses (worklog 4.1: the reader's XOR key is (addr >> 7) & 3 for SW64, & 7 for SW128). Every
   (row, k) of every stage slot must land where the descriptor reads it, for phase 0 and phase 1 at
   NSTAGES 2, 3, 4. The worklog's trap shows the check is not vacuous: moving B's base by 512 B or
   A's by 128 B breaks the match.
2. The epilogue (tcgen05.ld 32x32b -> registers -> st.global) for 4 and 8 warps: every element of
   the C tile is written exactly once, from the TMEM cell that holds it, by a warp allowed to read
   that TMEM lane quarter; for a tile that sticks out of C (phases 2a-4 take any shape), the
   per-chunk predicate stores exactly the elements inside C.
3. The compiled kernels' smem descriptors carry the worklog's LBO/SBO/swizzle (one PTX compile each).
"""

import functools
import re

import pytest

cutlass = pytest.importorskip("cutlass")
import cutlass.cute as cute  # noqa: E402

from phases.sm100 import common  # noqa: E402
from phases.sm100.phase0_serialized import Sm100Phase0, Sm100Phase0Config  # noqa: E402
from phases.sm100.phase1_stages import Sm100Phase1, Sm100Phase1Config, _carve  # noqa: E402

# --- the worklog's constants (section 2.1/2.2), in bytes -------------------------------------------
BM, BN, BK, ELEM = 128, 128, 32, 2
A_STAGE_BYTES = BM * BK * ELEM  # 8 KB
B_STAGE_BYTES = BK * BN * ELEM  # 8 KB
A_ROW_BYTES, A_SBO, A_K16_BYTES, A_KEY_BITS = 64, 512, 32, 2  # K-major SW64: 64-B rows, 8-row bands
B_ROW_BYTES, B_LBO, B_SBO, B_K16_BYTES, B_KEY_BITS = 128, 1024, 2048, 4096, 3  # N-major SW128, phases 0-1
B_ATOM_N = B_ROW_BYTES // ELEM  # 64 N per SW128 row
MMA_K = 16
RING_BASE = 7 * 1024  # a 1024-aligned dynamic-smem base: where the ring sits must not matter


def umma_swizzle(addr: int, key_bits: int) -> int:
    """SW64 (2 key bits) / SW128 (3): the 16-B chunk index is XORed with address bits [7 + key_bits : 7]."""
    return addr ^ (((addr >> 7) & ((1 << key_bits) - 1)) << 4)


def umma_reads_a(a_base: int, stages: int) -> dict:
    """(m, k, slot) -> smem byte the two K16 descriptors of each slot read, from the worklog's A desc."""
    out = {}
    for s in range(stages):
        for kk in range(BK // MMA_K):
            start = a_base + s * A_STAGE_BYTES + kk * A_K16_BYTES  # make_ab_descs: a_base + K16 step
            for m in range(BM):
                for k in range(MMA_K):
                    addr = start + (m % 8) * A_ROW_BYTES + (m // 8) * A_SBO + k * ELEM
                    out[(m, kk * MMA_K + k, s)] = umma_swizzle(addr, A_KEY_BITS)
    return out


def umma_reads_b(b_base: int, stages: int) -> dict:
    """(n, k, slot) -> smem byte the B descriptors read (N atoms LBO apart, 8-row K bands SBO apart)."""
    out = {}
    for s in range(stages):
        for kk in range(BK // MMA_K):
            start = b_base + s * B_STAGE_BYTES + kk * B_K16_BYTES
            for n in range(BN):
                for k in range(MMA_K):
                    addr = start + (n % B_ATOM_N) * ELEM + (n // B_ATOM_N) * B_LBO  # N: in the row, then atoms
                    addr += (k % 8) * B_ROW_BYTES + (k // 8) * B_SBO  # K: rows of a band, then bands
                    out[(n, kk * MMA_K + k, s)] = umma_swizzle(addr, B_KEY_BITS)
    return out


# --- what the kernels' CuTe layouts say ------------------------------------------------------------
def _swizzled_offsets(layout, mn: int, k: int, stages: int) -> dict:
    """(mn, k, slot) -> byte offset from the operand's base: CuTe swizzle of 2 * copy_view(mn, k, slot)."""
    view = common.mma_to_copy_view(layout.outer)
    swizzle = cute.make_composed_layout(layout.inner, 0, cute.make_layout(1 << 20))  # CuTe's functor
    return {(i, j, s): swizzle(ELEM * view((i, j, s))) for s in range(stages) for j in range(k) for i in range(mn)}


def _copy_vectors(tiled_copy, threads: int, shape) -> list:
    """Every thread's 16-B copies as lists of 8 (mn, k) tile coordinates (the copy's source side)."""
    ident = cute.make_identity_tensor(shape)
    vectors = []
    for t in range(threads):
        part = tiled_copy.get_slice(t).partition_S(ident)
        vec = cute.size(part, mode=[0])
        vectors += [[part[v + vec * r] for v in range(vec)] for r in range(cute.size(part) // vec)]
    return vectors


_CACHE: dict = {}


def copy_writes(cfg) -> dict:
    """The phase's layouts evaluated at trace time: offsets per operand and the cp.async vectors."""
    key = (cfg.bm, cfg.bn, cfg.bk, cfg.stages)
    if key in _CACHE:
        return _CACHE[key]
    out = {}

    @cute.jit
    def trace():
        _, a_layout, b_layout = common.make_mma_and_smem_layouts(cfg.bm, cfg.bn, cfg.bk, cfg.stages)
        out["a"] = _swizzled_offsets(a_layout, cfg.bm, cfg.bk, cfg.stages)
        out["b"] = _swizzled_offsets(b_layout, cfg.bn, cfg.bk, cfg.stages)
        out["a_bytes"] = cute.size_in_bytes(cutlass.Float16, a_layout.outer)
        out["a_swizzle"], out["b_swizzle"] = str(a_layout.inner), str(b_layout.inner)
        threads = 32 * cfg.warps
        out["a_vectors"] = _copy_vectors(common.make_cpasync_copy_a(threads, cfg.bk), threads, (cfg.bm, cfg.bk))
        out["b_vectors"] = _copy_vectors(common.make_cpasync_copy_b(threads, cfg.bn), threads, (cfg.bn, cfg.bk))

    trace()
    _CACHE[key] = out
    return out


def operand_bases(phase: str, cfg, writes) -> tuple[int, int]:
    """Where each phase puts A and B in dynamic smem (offsets from the 1024-aligned base)."""
    if phase == "0":
        # SmemAllocator: sA then sB, each allocate_tensor(byte_alignment=1024)
        return 0, -(-writes["a_bytes"] // 1024) * 1024
    b_offset, _ = _carve(cfg.stages, A_STAGE_BYTES, B_STAGE_BYTES)  # the kernel's carve
    return 0, b_offset


def mismatches(writes: dict, base: int, reads: dict) -> list:
    return [(c, base + off, reads.get(c)) for c, off in writes.items() if base + off != reads.get(c)]


CASES = [pytest.param("0", Sm100Phase0Config(), id="phase0")] + [
    pytest.param("1", Sm100Phase1Config(stages=n), id=f"phase1-NS{n}") for n in (2, 3, 4)
]


# --- 1. copy writes == UMMA reads ------------------------------------------------------------------
@pytest.mark.parametrize("phase,cfg", CASES)
def test_copy_writes_what_the_umma_descriptors_read(phase, cfg):
    w = copy_writes(cfg)
    assert (w["a_swizzle"], w["b_swizzle"]) == ("S<2,4,3>", "S<3,4,3>"), "A must be SW64, B SW128 (bytes)"
    a_off, b_off = operand_bases(phase, cfg, w)
    a_base, b_base = RING_BASE + a_off, RING_BASE + b_off
    reads_a, reads_b = umma_reads_a(a_base, cfg.stages), umma_reads_b(b_base, cfg.stages)
    assert len(w["a"]) == len(reads_a) == BM * BK * cfg.stages
    assert len(w["b"]) == len(reads_b) == BN * BK * cfg.stages
    bad_a, bad_b = mismatches(w["a"], a_base, reads_a), mismatches(w["b"], b_base, reads_b)
    assert not bad_a, f"A: {len(bad_a)} elements land where the descriptor does not read, e.g. {bad_a[:3]}"
    assert not bad_b, f"B: {len(bad_b)} elements land where the descriptor does not read, e.g. {bad_b[:3]}"
    # the reads are a bijection onto the stage slots: no two elements share a byte
    assert len(set(reads_a.values())) == len(reads_a) and len(set(reads_b.values())) == len(reads_b)
    # A's and B's slots do not overlap
    a_bytes, b_bytes = set(reads_a.values()), set(reads_b.values())
    assert max(a_bytes) < min(b_bytes) or max(b_bytes) < min(a_bytes)


@pytest.mark.parametrize("phase,cfg", [CASES[0], CASES[2]])
def test_alignment_trap_breaks_the_match(phase, cfg):
    """Worklog 4.1: the writer keys the swizzle off the offset in the stage, the UMMA off the address.
    A base 512 B off breaks B's SW128 (needs 1024), 128 B off breaks A's SW64 (needs 512)."""
    w = copy_writes(cfg)
    a_off, b_off = operand_bases(phase, cfg, w)
    for shift in (512, 1536):
        b_base = RING_BASE + b_off + shift
        assert mismatches(w["b"], b_base, umma_reads_b(b_base, cfg.stages)), f"B base +{shift} should break SW128"
    for shift in (128, 256, 384):
        a_base = RING_BASE + a_off + shift
        assert mismatches(w["a"], a_base, umma_reads_a(a_base, cfg.stages)), f"A base +{shift} should break SW64"
    # SW64 needs 512-B alignment only; SW128 a full 1024
    a_base = RING_BASE + a_off + 512
    assert not mismatches(w["a"], a_base, umma_reads_a(a_base, cfg.stages))


@pytest.mark.parametrize("phase,cfg", [CASES[0], CASES[3]])
def test_cpasync_vectors_are_16B_and_cover_each_stage_once(phase, cfg):
    """128 threads x 4 cp.async per operand: each a 16-B contiguous run in global (along K for A,
    N for B) and in smem (the swizzle moves whole 16-B chunks), together covering the tile once."""
    w = copy_writes(cfg)
    for name, contiguous_mode, extent in (("a", 1, (cfg.bm, cfg.bk)), ("b", 0, (cfg.bn, cfg.bk))):
        vectors = w[f"{name}_vectors"]
        assert len(vectors) == 32 * cfg.warps * 4, f"{name}: {len(vectors)} copies, the worklog has 4 per thread"
        seen = [c for vec in vectors for c in vec]
        assert sorted(seen) == sorted((i, j) for i in range(extent[0]) for j in range(extent[1]))
        for vec in vectors:
            first = vec[0]
            assert first[contiguous_mode] % 8 == 0
            for v, c in enumerate(vec):  # consecutive along the contiguous mode
                step = (0, v) if contiguous_mode == 1 else (v, 0)
                assert c == (first[0] + step[0], first[1] + step[1]), f"{name}: vector {vec} is not contiguous"
            for s in range(cfg.stages):
                offs = [w[name][(c[0], c[1], s)] for c in vec]
                assert offs[0] % 16 == 0 and offs == list(range(offs[0], offs[0] + 16, 2)), (name, vec, offs)


def test_phase1_carve_asserts_b_alignment():
    for n in (2, 3, 4):
        b_offset, ring = _carve(n, A_STAGE_BYTES, B_STAGE_BYTES)
        assert b_offset == n * A_STAGE_BYTES and ring == n * (A_STAGE_BYTES + B_STAGE_BYTES)
    with pytest.raises(AssertionError, match="B slot"):
        _carve(3, A_STAGE_BYTES + 512, B_STAGE_BYTES)  # a padded A stage would push B off 1024
    with pytest.raises(AssertionError, match="B slot 1"):
        _carve(2, A_STAGE_BYTES, B_STAGE_BYTES + 512)  # a padded B stage breaks the second slot


# --- 2. the epilogue mapping -------------------------------------------------------------------------
def _element(coord_tensor, crd) -> tuple:
    """Element ``crd`` of a partitioned coordinate tensor: its (row, col) origin plus its layout at crd."""
    return tuple(a + b for a, b in zip(coord_tensor.iterator, coord_tensor.layout(crd)))


def _tmem_accumulator(bn: int):
    """The kernels' (128, BN) accumulator layout on a TMEM pointer at address 0 (lane 0, column 0)."""
    tiled_mma = common.make_tiled_mma(128, bn)
    acc = tiled_mma.make_fragment_C(tiled_mma.partition_shape_C((128, bn)))
    tmem0 = cute.make_ptr(cutlass.Float32, 0, cute.AddressSpace.tmem)
    return cute.make_tensor(tmem0, acc.layout)[(None, None), 0, 0]


def _epilogue_records(warps: int, bn: int, out: dict):
    tAcc = _tmem_accumulator(bn)
    # a CuTe layout is the sum of its modes' contributions: rows and columns pin it down
    out["acc_rows"] = [tAcc.layout((m, 0)) for m in range(128)]
    out["acc_cols"] = [tAcc.layout((0, n)) for n in range(bn)]
    tmem_copy = common.make_epilogue_tmem_copy(tAcc, warps)
    ident = cute.make_identity_tensor((128, bn))  # stands in for TMEM and for C: elements = (row, col)
    out["threads"] = []
    for t in range(32 * warps):
        tDtC, tDgC = common.partition_epilogue(tmem_copy, ident, ident, t, warps)
        chunks = []
        for i in range(cute.size(tDgC, mode=[2])):
            # the warp's tcgen05.ld block (the same for its 32 threads: record it at lane 0) ...
            block = [_element(tDtC, (v, 0, i)) for v in range(cute.size(tDtC, mode=[0]))] if t % 32 == 0 else None
            # ... and where this thread's registers go in C
            chunks.append((block, [_element(tDgC, (j, 0, i)) for j in range(cute.size(tDgC, mode=[0]))]))
        out["threads"].append(chunks)


@functools.lru_cache(maxsize=None)
def epilogue_mapping(warps: int, bn: int) -> dict:
    """Trace the kernel's epilogue partitioning for every thread (loops stay Python: plain helper)."""
    out = {}

    @cute.jit
    def trace():
        _epilogue_records(warps, bn, out)

    trace()
    return out


def check_epilogue(mapping: dict, warps: int, bn: int, lane_shift: int = 0) -> list:
    """Problems with the mapping; ``lane_shift`` fakes a wrong lane quarter (negative control)."""
    problems = []
    # the accumulator of a cta_group::1 M=128 MMA: row m in TMEM lane m (address bits 31:16), column n in column n
    if mapping["acc_rows"] != [m << 16 for m in range(128)] or mapping["acc_cols"] != list(range(bn)):
        problems.append("accumulator is not lane=row, column=col")
    written = {}
    for t, chunks in enumerate(mapping["threads"]):
        w, lane = t // 32, t % 32
        for i, (_, regs) in enumerate(chunks):
            block = mapping["threads"][32 * w][i][0]  # recorded once per warp (lane 0)
            lanes = sorted({c[0] for c in block})
            cols = sorted({c[1] for c in block})
            lane0 = lanes[0] + lane_shift
            # tcgen05.ld.32x32b.xN: the warp reads 32 consecutive lanes x N consecutive columns ...
            if lanes != list(range(lanes[0], lanes[0] + 32)) or cols != list(range(cols[0], cols[0] + len(regs))):
                problems.append(f"warp {w} chunk {i}: block is not 32 lanes x {len(regs)} columns")
            # ... only from its own lane quarter
            if lane0 != 32 * (w % 4):
                problems.append(f"warp {w} reads lanes {lane0}.. but may only touch {32 * (w % 4)}..")
            # thread `lane` gets TMEM lane lane0+lane, register j = column cols[0]+j
            for j, dst in enumerate(regs):
                held = (lane0 + lane, cols[0] + j)  # the (row, col) of C that TMEM cell holds
                if dst != held:
                    problems.append(f"thread {t} reg {j} chunk {i}: holds C{held} but stores to C{dst}")
                written[dst] = written.get(dst, 0) + 1
    missing = [(m, n) for m in range(128) for n in range(bn) if written.get((m, n), 0) != 1]
    if missing:
        problems.append(f"{len(missing)} C elements written {{0, 2+}} times, e.g. {missing[:3]}")
    return problems


@pytest.mark.parametrize("warps,bn", [(4, 128), (8, 256), (8, 128)])
def test_epilogue_writes_every_element_once_from_its_tmem_cell(warps, bn):
    problems = check_epilogue(epilogue_mapping(warps, bn), warps, bn)
    assert not problems, problems[:5]


def test_epilogue_check_catches_a_wrong_lane_quarter():
    mapping = epilogue_mapping(4, 128)
    assert check_epilogue(mapping, 4, 128, lane_shift=32), "the check must reject a shifted lane quarter"


def _partial_tile_records(warps: int, bn: int, m: int, n: int, tile: tuple, out: dict):
    """The kernels' predicated epilogue of C tile ``tile`` in an (m, n) C: per thread and chunk, the
    coordinate the predicate tests (the chunk's first element) and the C elements the chunk stores.
    ``cC`` is built as the kernels build it: the tile of an identity tensor over C's shape."""
    tAcc = _tmem_accumulator(bn)
    tmem_copy = common.make_epilogue_tmem_copy(tAcc, warps)
    cC = cute.local_tile(cute.make_identity_tensor((m, n)), (128, bn), tile)
    out["chunks"] = []
    for t in range(32 * warps):
        _, tDcC = common.partition_epilogue(tmem_copy, tAcc, cC, t, warps)
        for i in range(cute.size(tDcC, mode=[2])):
            chunk = tDcC[None, None, i]
            first = tuple(int(x) for x in chunk[0])
            out["chunks"].append((first, [tuple(int(x) for x in chunk[j]) for j in range(cute.size(chunk))]))


@functools.lru_cache(maxsize=None)
def partial_tile_chunks(warps: int, bn: int, m: int, n: int, tile: tuple) -> list:
    out = {}

    @cute.jit
    def trace():
        _partial_tile_records(warps, bn, m, n, tile, out)

    trace()
    return out["chunks"]


def stored_by_predicate(chunks, m: int, n: int, inside=lambda rc, mn: rc[0] < mn[0] and rc[1] < mn[1]) -> dict:
    """C element -> times stored, when a chunk is stored iff ``inside`` its first element (the kernels'
    ``cute.elem_less(first, mC.shape)``)."""
    written = {}
    for first, elems in chunks:
        if inside(first, (m, n)):
            for e in elems:
                written[e] = written.get(e, 0) + 1
    return written


# (warps, BN, M, N, tile): tiles that stick out along both M and N
PARTIAL_CASES = [
    (4, 128, 200, 136, (1, 1)),  # phases 2a-2b: 72 rows x 8 columns of the tile are inside C
    (8, 256, 1000, 3000, (3, 11)),  # phases 3-4: 8 warps, BN=256, 104 rows x 184 columns inside C
]


@pytest.mark.parametrize("warps,bn,m,n,tile", PARTIAL_CASES)
def test_predicated_epilogue_writes_exactly_the_tile_inside_c(warps, bn, m, n, tile):
    """Every element of the tile inside C is stored once, none outside: each 8-column chunk is inside C
    or outside it as a whole (N % 8 == 0), so one predicate per chunk is exact."""
    chunks = partial_tile_chunks(warps, bn, m, n, tile)
    rows = range(128 * tile[0], min(128 * (tile[0] + 1), m))
    cols = range(bn * tile[1], min(bn * (tile[1] + 1), n))
    want = {(r, c) for r in rows for c in cols}
    written = stored_by_predicate(chunks, m, n)
    assert set(written) == want and set(written.values()) <= {1}
    for first, elems in chunks:
        inside = [r < m and c < n for r, c in elems]
        assert all(inside) or not any(inside), f"chunk at {first} straddles C's edge"


def test_partial_tile_check_catches_a_wrong_predicate():
    """Negative controls: predicating on the row alone stores columns past N; on the tile's column
    count instead of N (an off-by-one chunk) drops or adds a chunk."""
    warps, bn, m, n, tile = PARTIAL_CASES[0]
    chunks = partial_tile_chunks(warps, bn, m, n, tile)
    rows_only = stored_by_predicate(chunks, m, n, inside=lambda rc, mn: rc[0] < mn[0])
    assert any(c >= n for _, c in rows_only)
    shifted = stored_by_predicate(chunks, m, n, inside=lambda rc, mn: rc[0] < mn[0] and rc[1] + 8 < mn[1])
    assert len(shifted) < len(stored_by_predicate(chunks, m, n))


def test_epilogue_rejects_unsupported_warp_counts():
    @cute.jit
    def trace():
        common.make_epilogue_tmem_copy(_tmem_accumulator(128), 6)

    with pytest.raises(Exception, match="4 or 8 warps"):
        trace()


# --- 3. the compiled descriptors carry the worklog's constants ---------------------------------------
def smem_descriptor_constants(ptx: str) -> set:
    """(swizzle mode, LBO, SBO) of every 64-bit immediate OR-ed into a descriptor (version bit 46 set)."""
    found = set()
    for imm in re.findall(r"or\.b64\s+%rd\d+,\s*%rd\d+,\s*(-?\d+);", ptx):
        v = int(imm) % (1 << 64)
        if (v >> 46) & 3 == 1 and v >> 61:
            found.add((v >> 61, ((v >> 16) & 0x3FFF) << 4, ((v >> 32) & 0x3FFF) << 4))
    return found


@pytest.mark.parametrize(
    "kernel", [Sm100Phase0(), Sm100Phase1(Sm100Phase1Config(stages=3))], ids=["phase0", "phase1-NS3"]
)
def test_compiled_descriptors_match_the_worklog(kernel):
    from cute_gemm.runtime.compile import compile_kernel

    ptx = compile_kernel(kernel, "sm_100a", keep=True).ptx
    assert ptx is not None
    # A: SW64 (mode 4), LBO unused (encodes 1 = 16 B), SBO 512; B: SW128 (mode 2), LBO 1024, SBO 2048
    assert smem_descriptor_constants(ptx) == {(4, 16, A_SBO), (2, B_LBO, B_SBO)}
