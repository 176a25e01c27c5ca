"""Where a nutpie compilation's processor time goes, phase by phase.

    python scripts/compile_phases.py [FAMILY] [--participants 362] [--plans 5]

Builds the model of a family of analysis.FAMILIES (default ordinal; data as containers, as analyze's
compile-once path does) of a simulated study and compiles it with nutpie, printing the
processor seconds (this process, all threads) of PyTensor's graph functions (their numba
code is cached on disk by PyTensor between runs), of nutpie's two numba ``cfunc`` wrappers
(the log-density with its gradient, and the expansion to every variable: compiled again in
every process) and of the whole compilation. Run it twice: the second run shows what
PyTensor's cache saves and what it cannot.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from typing import Any


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    from analysis import FAMILIES

    parser.add_argument("family", nargs="?", default=FAMILIES.main.name, choices=list(FAMILIES))
    parser.add_argument("--participants", type=int, default=362)
    parser.add_argument("--plans", type=int, default=5)
    args = parser.parse_args()

    import numba
    import nutpie
    import nutpie.compile_pymc as compile_pymc

    from analysis import prepare, simulate_ratings
    from analysis.models import build_model

    data = prepare(simulate_ratings(participants=args.participants, plans=args.plans, seed=1),
                   "acceptance", "l1_profile")
    model = build_model(data, args.family, shared=True)

    def timed(label: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        def run(*a: Any, **k: Any) -> Any:
            start = time.process_time()
            out = fn(*a, **k)
            print(f"{label}: {time.process_time() - start:.1f} s CPU", flush=True)
            return out
        return run

    compile_pymc._make_functions = timed("PyTensor graph functions",
                                         compile_pymc._make_functions)
    cfunc = numba.cfunc

    def timed_cfunc(*a: Any, **k: Any) -> Callable[..., Any]:
        decorate = cfunc(*a, **k)
        return lambda f: timed(f"nutpie cfunc {f.__name__}", decorate)(f)

    numba.cfunc = timed_cfunc
    timed("whole compilation", nutpie.compile_pymc_model)(model)


if __name__ == "__main__":
    main()
