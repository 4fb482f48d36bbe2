"""Which picks of ``phase="best"`` a change of its model moves, and the command that times them old against new.

    python bench/moved_picks.py REV [--random 300] [--seed 1] [--every 2]

REV is a git revision with the model before the change: ``cute_gemm/runtime/choose.py`` at REV is loaded beside
today's (the phases, registry and operands are today's, so this is for changes of the model, not of the kernels).
The shapes are every named set of ``cute-gemm bench --set`` and ``--random`` random ones (M from 1 to 512 tokens,
N and K from layer widths of 2048 to 14336, drawn with ``--seed``). It prints each shape whose pick moved (old ->
new) and a ``bench/candidates.py --top 0`` command that times, at every moved named-set shape and at every
``--every``-th moved random shape, the new pick (``best``) beside the old one (``--config ...@M,N,K``). The random
shapes are the check a refit cannot be fitted to: they were drawn before anything was measured.
(``bench/run_h200.sh model6-sample`` is the random half of this command for the 2026-12-03 refit against 17d9d26.)
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from candidates import spec_of  # noqa: E402  (an explain row as a --config spec)
from cute_gemm.measure import suite  # noqa: E402
from cute_gemm.runtime import choose  # noqa: E402

TOKENS = (1, 8, 16, 24, 32, 48, 64, 96, 128, 160, 192, 256, 384, 512)
N_WIDTHS = (2048, 3072, 4096, 5120, 6144, 8192, 11008, 14336)
K_WIDTHS = (2048, 3072, 4096, 5120, 8192, 14336)


def load_at(rev: str):
    """``cute_gemm/runtime/choose.py`` as it was at git revision ``rev``, as a module of its own."""
    src = subprocess.run(["git", "show", f"{rev}:cute_gemm/runtime/choose.py"], cwd=ROOT, check=True,
                         capture_output=True, text=True).stdout
    spec = importlib.util.spec_from_loader(f"choose_at_{rev}", loader=None)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses resolve their annotations through it
    exec(compile(src, f"{rev}:cute_gemm/runtime/choose.py", "exec"), module.__dict__)
    return module


def random_shapes(count: int, seed: int) -> list[tuple[int, int, int]]:
    rng = random.Random(seed)
    return [(rng.choice(TOKENS), rng.choice(N_WIDTHS), rng.choice(K_WIDTHS)) for _ in range(count)]


def moved(old, new, shapes) -> list[tuple[tuple[int, int, int], dict, dict]]:
    """(shape, old model's cheapest explain row, new model's) at every distinct shape where the two differ."""
    out = []
    for shape in dict.fromkeys(shapes):
        was, now = old.explain("sm90", *shape)[0], new.explain("sm90", *shape)[0]
        if spec_of(was) != spec_of(now):
            out.append((shape, was, now))
    return out


def command(rows) -> str:
    """The candidates run timing, at each moved shape, the new pick (best) beside the old one."""
    shapes = " ".join(",".join(map(str, shape)) for shape, _, _ in rows)
    configs = " ".join(f"--config {spec_of(was)}@{','.join(map(str, shape))}" for shape, was, _ in rows)
    return f"python3 bench/candidates.py --top 0 --rounds 5 --shapes {shapes} {configs}"


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("rev", help="the git revision with the model before the change (e.g. HEAD~1)")
    ap.add_argument("--random", type=int, default=300, help="random shapes besides the named sets (default 300)")
    ap.add_argument("--seed", type=int, default=1, help="their seed (default 1)")
    ap.add_argument("--every", type=int, default=2, help="time every K-th moved random shape (default 2)")
    args = ap.parse_args(argv)
    old = load_at(args.rev)
    named = [(p.m, p.n, p.k) for problems in suite.SETS.values() for p in problems]
    drawn = random_shapes(args.random, args.seed)
    timed = []
    for title, shapes, every in (("named sets", named, 1), (f"{args.random} random shapes (seed {args.seed})", drawn,
                                                             args.every)):
        rows = moved(old, choose, shapes)
        print(f"{title}: the pick moved at {len(rows)} of {len(dict.fromkeys(shapes))} distinct shapes")
        for shape, was, now in rows:
            print(f"  {'x'.join(map(str, shape)):>16}  {was['label']}  ->  {now['label']}")
        timed += rows[::max(1, every)]
    print("\n" + (command(timed) if timed else "no pick moved: nothing to time"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
