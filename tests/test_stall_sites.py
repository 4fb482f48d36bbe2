"""bench/stall_sites.py without a GPU: ncu's source-page CSV -> the most-sampled SASS lines."""

import pytest

from bench_scripts import load_script
from cute_gemm.errors import InputError

ss = load_script("stall_sites")

# the shape of `ncu -i R --page source --csv --print-source sass`: a preamble, then one row per SASS instruction
CSV = """==PROF== Connected to process
"# Address","Source","Warp Stall Sampling (All Samples)","Warp Stall Sampling (Not-issued Samples)","Instructions Executed"
"0x7f00","HGMMA.64x128x16.F32 R24, gdesc[UR4], R24","120","80","64"
"0x7f10","SYNCS.PHASECHK.TRANS64.TRYWAIT P0, [UR8+0x10], R3","600","590","900"
"0x7f20","WARPGROUP.DEPBAR.LE gsb0, 0x1","250","240","64"
"0x7f30","UTMALDG.2D [UR16], [UR4]","30","10","32"
"0x7f40","EXIT","0","0","8"
"""


def test_the_most_sampled_lines_first_with_their_share():
    rows = ss.summarize(CSV, top=3)
    assert [src.split()[0] for _, src, _, _, _ in rows] == ["SYNCS.PHASECHK.TRANS64.TRYWAIT", "WARPGROUP.DEPBAR.LE",
                                                           "HGMMA.64x128x16.F32"]
    assert [n for _, _, n, _, _ in rows] == [600, 250, 120]
    assert rows[0][3] == pytest.approx(600 / 1000)
    assert (rows[0][0], rows[0][4]) == ("0x7f10", 900)  # the address and the warp instructions executed


def test_a_csv_without_the_sampling_column_is_refused():
    with pytest.raises(ValueError, match="Warp Stall Sampling"):
        ss.summarize('"# Address","Source","Instructions Executed"\n"0x0","EXIT","1"\n')


def test_config_overrides_parse_like_the_cli():
    """--config goes through the CLI's parser (registry.parse_overrides), and a bad one stops before ncu runs."""
    assert ss.parse_overrides("bn=128,stages=4,use_pdl=True") == {"bn": 128, "stages": 4, "use_pdl": True}
    with pytest.raises(InputError, match="FIELD=VALUE"):
        ss.main(["--shape", "128,4096,14336", "--config", "bn"])


def test_the_epilogue_spec_sets_the_bias_and_the_activation_and_refuses_the_rest():
    """--epilogue reads bench's spelling into the config fields and gemm arguments it sets; a residual or the gated pairs
    (which need tensors this probe does not make) and an unknown term stop before ncu runs."""
    assert ss.epilogue_fields(None) == {}
    assert ss.epilogue_fields("bias,gelu") == {"bias": True, "activation": "gelu"}
    assert ss.epilogue_fields("silu") == {"activation": "silu"}
    with pytest.raises(ValueError, match="no residual"):
        ss.epilogue_fields("bias,residual")
    with pytest.raises(SystemExit):
        ss.main(["--shape", "128,4096,14336", "--epilogue", "bias,tanh"])
