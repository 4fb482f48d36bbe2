"""The PTX machine (``tests/ptxkit``) taught the sm_90a instructions the sm90 ladder uses: ``wgmma``,
named-barrier arrives, ``ld.shared::cluster``, ``griddepcontrol``, ``setmaxnreg`` (``machine90``), and
a harness that runs a registered sm90 phase on it for a small problem (``harness90``)."""
