"""Field tables of the PTX ISA that the simulator and the descriptor checks decode (tcgen05, sm_100a).

Written from the PTX ISA's tables, not from the kernels' helpers:
- 9.7.16.4.1 Shared memory descriptor (Table 40) and the canonical layouts the descriptor describes
  (the tcgen05 / wgmma "canonical layouts" table, in CuTe notation, T = 128 / element bits):

    MN-major, 128B: ((T,8,m),(8,k)):((1,T,LBO),(8T,SBO))     K-major, 128B: ((8,m),(T,2k)):((8T,SBO),(1,T))
    MN-major,  64B: ((T,4,m),(8,k)):((1,T,LBO),(4T,SBO))     K-major,  64B: ((8,m),(T,2k)):((4T,SBO),(1,T))
    MN-major,  32B: ((T,2,m),(8,k)):((1,T,LBO),(2T,SBO))     K-major,  32B: ((8,m),(T,2k)):((2T,SBO),(1,T))
    MN-major, none: ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))     K-major, none: ((8,m),(T,2k)):((1T,SBO),(1,LBO))

  then Swizzle<3|2|1,4,3> on the byte address: 16-byte chunk bits [4,7) XOR address bits [7,10).
- 9.7.16.4.2 Instruction descriptor, .kind::f16 (Table 42).
"""

from __future__ import annotations

import dataclasses

# Table 40, bits 61-63: swizzling mode -> swizzle width in bytes (None: no swizzle); 1 (128B with 32B
# atomicity) is not used by these kernels and is reported as unsupported.
SWIZZLE_BYTES = {0: None, 2: 128, 4: 64, 6: 32}


@dataclasses.dataclass(frozen=True)
class SmemDesc:
    start: int  # byte address (bits 0-13, << 4)
    lbo: int  # leading dimension byte offset (bits 16-29, << 4)
    sbo: int  # stride dimension byte offset (bits 32-45, << 4)
    version: int  # bits 46-48: fixed 0b001
    base_offset: int  # bits 49-51
    lbo_mode: int  # bit 52: 0 relative, 1 absolute
    swizzle_mode: int  # bits 61-63


def decode_smem_desc(v: int) -> SmemDesc:
    v &= (1 << 64) - 1
    return SmemDesc(
        start=(v & 0x3FFF) << 4,
        lbo=((v >> 16) & 0x3FFF) << 4,
        sbo=((v >> 32) & 0x3FFF) << 4,
        version=(v >> 46) & 0x7,
        base_offset=(v >> 49) & 0x7,
        lbo_mode=(v >> 52) & 1,
        swizzle_mode=(v >> 61) & 0x7,
    )


def swizzle(addr: int, width: int | None) -> int:
    """The swizzle of a byte address: bits [4,7) XOR bits [7,10), masked to the swizzle width."""
    if width is None:
        return addr
    mask = {128: 7, 64: 3, 32: 1}[width]
    return addr ^ (((addr >> 7) & mask) << 4)


def operand_offset(d: SmemDesc, mn: int, k: int, mn_major: bool, elem_bytes: int) -> int:
    """Byte address (before the swizzle) of element (mn, k) of an MMA operand the descriptor describes."""
    t = 16 // elem_bytes  # elements per 16 bytes
    width = SWIZZLE_BYTES[d.swizzle_mode]
    if mn_major:
        atoms = (width or 16) // 16  # 16-B columns of one swizzle row: 8, 4, 2 or 1
        if width is None:  # ((T,1,m),(8,k)):((1,T,SBO),(1T,LBO))
            elems = (mn % t) + (mn // t) * (d.sbo // elem_bytes) + (k % 8) * t
            return d.start + elems * elem_bytes + (k // 8) * d.lbo
        run = t * atoms  # ((T,atoms,m),(8,k)):((1,T,LBO),(atoms T,SBO))
        return d.start + (mn % run) * elem_bytes + (mn // run) * d.lbo + (k % 8) * atoms * 16 + (k // 8) * d.sbo
    if width is None:  # ((8,m),(T,2k)):((1T,SBO),(1,LBO))
        return d.start + (mn % 8) * 16 + (mn // 8) * d.sbo + (k % t) * elem_bytes + (k // t) * d.lbo
    # ((8,m),(T,2k)):((W T,SBO),(1,T)) with W = width / 16: a row of the atom is ``width`` bytes
    return d.start + (mn % 8) * width + (mn // 8) * d.sbo + k * elem_bytes


# Table 42, bits 7-9 (A type) and 10-12 (B type) of a .kind::f16 instruction descriptor
KIND_F16_TYPES = {"f16": 0, "bf16": 1}


@dataclasses.dataclass(frozen=True)
class InstrDesc:
    sparse: bool
    dtype: int  # 0 F16, 1 F32
    atype: int  # 0 F16, 1 BF16
    btype: int
    negate_a: bool
    negate_b: bool
    transpose_a: bool  # True: A is M-major (MN-major); False: K-major
    transpose_b: bool  # True: B is N-major; False: K-major
    n: int
    m: int
    reserved_ok: bool  # bits 6, 23, 29 are zero


def decode_idesc(v: int) -> InstrDesc:
    v &= 0xFFFFFFFF
    return InstrDesc(
        sparse=bool((v >> 2) & 1),
        dtype=(v >> 4) & 0x3,
        atype=(v >> 7) & 0x7,
        btype=(v >> 10) & 0x7,
        negate_a=bool((v >> 13) & 1),
        negate_b=bool((v >> 14) & 1),
        transpose_a=bool((v >> 15) & 1),
        transpose_b=bool((v >> 16) & 1),
        n=((v >> 17) & 0x3F) << 3,
        m=((v >> 24) & 0x1F) << 4,
        reserved_ok=not ((v >> 6) & 1 or (v >> 23) & 1 or (v >> 29) & 1),
    )
