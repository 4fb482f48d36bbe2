"""Reading the sm100 kernels' PTX on the CPU: a parser (``parse``), control flow and the static checks
built on it (``cfg``), and a simulator that runs a kernel's PTX for a small problem (``sim``)."""
