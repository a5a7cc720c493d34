"""How fast examkit validates from Python, next to the engine itself and to Python validators.

For each fixture (``typical`` and ``maximum`` from ``examkit-fixtures``), it times, interleaved so
that every row sees the same machine load:

* ``engine (native)``: ``examkit_engine::validate`` alone (parse, validate, score; the outcome as
  Rust values), timed in Rust inside this process (``examkit._examkit.time_engine``) -- the figure
  the Python entry points are compared with;
* ``engine + to_json (native)``: the same plus writing the outcome's canonical JSON, for reference
  (``validate`` returns Python data, not JSON, so the target compares it with the engine alone);
* ``examkit.validate(str)``: text in, outcome dict out (UTF-8 encoding, the engine, building the
  dict);
* ``examkit.validate(bytes)``: the raw document in (no encoding step);
* ``examkit.validate_json(str)``: text in, canonical outcome JSON out;
* ``examkit.validate(dict)``: a parsed document in (``json.dumps`` first);
* ``jsonschema`` and ``fastjsonschema`` on the published JSON Schema, compiled once, each given
  the text (``json.loads`` first) and the parsed dict. They check structure only (no references,
  pages, dependencies, geometry or scoring); jsonschema also checks the formats it knows.

It prints a table of medians and ratios (the ratio of a Python entry point is the median of
its per-round ratios to the engine, so load drift cancels), then the product targets: ``examkit.validate(str)``
within 1.15x of the native engine, and full validation faster than both Python validators. When
the Rust benchmark has run (``cargo bench -p examkit-engine --bench validate``), its criterion
medians are printed too; they come from another process and another time, so the targets use the
in-process figure.

Usage (from the repository root, with the examkit wheel, jsonschema and fastjsonschema installed;
``bench/run.sh`` does all of it):

    cargo run --release -p examkit-fixtures -- /tmp/examkit-fixtures
    python bindings/python/bench/bench.py /tmp/examkit-fixtures [--criterion DIR] [--seconds S]

Exit status 0, or 1 with ``--enforce`` when a target is missed.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional, Tuple

import examkit
from examkit import _examkit

ROOT = Path(__file__).resolve().parents[3]
SCHEMA_PATH = ROOT / "schemas" / "service-marking-import-v1.schema.json"
STR_TARGET = 1.15
# CPU time of the calling thread (the engine runs on it too, with the GIL released): steadier
# than wall time on a machine shared with other work. Thread pools are timed by wall time.
CLOCK = time.thread_time


def python_validators(schema: Dict[str, Any]) -> Dict[str, Callable[[Any], bool]]:
    """The two Python validators, compiled once: each returns whether the document is valid."""
    import fastjsonschema
    import jsonschema

    checker = jsonschema.Draft202012Validator(
        schema, format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER
    )
    compiled = fastjsonschema.compile(schema)

    def run_jsonschema(document: Any) -> bool:
        return not any(True for _ in checker.iter_errors(document))

    def run_fastjsonschema(document: Any) -> bool:
        try:
            compiled(document)
        except fastjsonschema.JsonSchemaValueException:
            return False
        return True

    return {"jsonschema": run_jsonschema, "fastjsonschema": run_fastjsonschema}


def calibrate(function: Callable[[int], float], sample_seconds: float) -> int:
    """Calls per sample so that one sample lasts about `sample_seconds`."""
    calls = 1
    while True:
        elapsed = function(calls)
        if elapsed >= sample_seconds / 4 or calls >= 1 << 20:
            return max(1, int(calls * sample_seconds / max(elapsed, 1e-9)))
        calls *= 4


def measure(
    cases: Dict[str, Callable[[int], float]],
    seconds: float,
    min_rounds: int = 5,
    reference: Optional[str] = None,
    sample_seconds: float = 0.02,
) -> Tuple[Dict[str, float], Dict[str, float]]:
    """Median seconds per call of each case, sampling all cases in turn (one sample of each per
    round, in a rotating order) until `seconds` have passed and at least `min_rounds` rounds ran.
    Each case takes a call count and returns the seconds those calls took.

    With a `reference` case, also returns for each case the median over rounds of its sample
    divided by the reference's sample of the same round: pairing samples taken moments apart
    cancels most of the drift of a shared machine's load."""
    counts = {name: calibrate(case, sample_seconds) for name, case in cases.items()}
    samples: Dict[str, List[float]] = {name: [] for name in cases}
    deadline = time.perf_counter() + seconds
    rounds = 0
    while rounds < min_rounds or time.perf_counter() < deadline:
        order = list(cases.items())
        order = order[rounds % len(order):] + order[: rounds % len(order)]
        for name, case in order:
            samples[name].append(case(counts[name]) / counts[name])
        rounds += 1
    medians = {name: statistics.median(values) for name, values in samples.items()}
    ratios: Dict[str, float] = {}
    if reference is not None:
        base = samples[reference]
        ratios = {
            name: statistics.median(value / ref for value, ref in zip(values, base))
            for name, values in samples.items()
        }
    return medians, ratios


def timed(function: Callable[[], Any]) -> Callable[[int], float]:
    """`calls` calls of `function`, in CPU seconds of this thread."""

    def run(calls: int) -> float:
        start = CLOCK()
        for _ in range(calls):
            function()
        return CLOCK() - start

    return run


def timed_once(function: Callable[[int], Any]) -> Callable[[int], float]:
    """One call of `function(calls)` that itself repeats its work `calls` times."""

    def run(calls: int) -> float:
        start = CLOCK()
        function(calls)
        return CLOCK() - start

    return run


def criterion_medians(directory: Optional[Path], fixture: str) -> Dict[str, float]:
    """The Rust benchmark's medians (seconds) for one fixture, if it has run."""
    found: Dict[str, float] = {}
    if directory is None:
        return found
    for bench in ("engine", "parse", "parse+jsonschema"):
        path = directory / fixture / bench / "new" / "estimates.json"
        if path.is_file():
            estimates = json.loads(path.read_text(encoding="utf-8"))
            found[bench] = estimates["median"]["point_estimate"] / 1e9
    return found


def default_criterion_dir() -> Optional[Path]:
    for candidate in (
        os.environ.get("CRITERION_HOME"),
        os.environ.get("CARGO_TARGET_DIR") and os.path.join(os.environ["CARGO_TARGET_DIR"], "criterion"),
        str(ROOT / "target" / "criterion"),
    ):
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


def human(seconds: float) -> str:
    if seconds >= 1e-3:
        return f"{seconds * 1e3:9.2f} ms"
    return f"{seconds * 1e6:9.1f} µs"


def thread_speedup(text: str, assets: List[Dict[str, Any]], seconds: float) -> Tuple[float, float]:
    """Calls per second of examkit.validate(str) on one thread and on a pool of two."""
    batch = 64 if len(text) < 100_000 else 4

    def one(calls: int) -> float:
        start = time.perf_counter()
        for _ in range(calls * batch):
            examkit.validate(text, assets)
        return time.perf_counter() - start

    pool = ThreadPoolExecutor(max_workers=2)

    def two(calls: int) -> float:
        start = time.perf_counter()
        list(pool.map(lambda _: examkit.validate(text, assets), range(calls * batch)))
        return time.perf_counter() - start

    medians, _ = measure({"1 thread": one, "2 threads": two}, seconds, sample_seconds=0.05)
    pool.shutdown()
    return batch / medians["1 thread"], batch / medians["2 threads"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("fixtures", type=Path, help="directory written by examkit-fixtures")
    parser.add_argument("--criterion", type=Path, default=None,
                        help="criterion directory of the Rust bench (default: CRITERION_HOME, "
                             "$CARGO_TARGET_DIR/criterion or target/criterion, if present)")
    parser.add_argument("--seconds", type=float, default=10.0,
                        help="sampling time per fixture (default 10)")
    parser.add_argument("--enforce", action="store_true", help="exit 1 when a target is missed")
    args = parser.parse_args()

    schema = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    validators = python_validators(schema)
    criterion_dir = args.criterion or default_criterion_dir()
    missed: List[str] = []
    rust_found = False

    print(f"examkit {examkit.__version__}, Python {sys.version.split()[0]}, "
          f"{os.cpu_count()} CPUs, load average {os.getloadavg()[0]:.2f}")
    for fixture in ("typical", "maximum"):
        text = (args.fixtures / f"{fixture}.json").read_text(encoding="utf-8")
        assets = json.loads((args.fixtures / f"{fixture}.assets.json").read_text(encoding="utf-8"))
        raw = text.encode("utf-8")
        document = json.loads(text)
        outcome = examkit.validate(text, assets)
        if not outcome["valid"]:
            print(f"the {fixture} fixture is invalid; its timings would not be comparable: "
                  f"{outcome['errors'][:3]}", file=sys.stderr)
            return 2
        for name, check in validators.items():
            if not check(document):
                print(f"{name} rejects the {fixture} fixture", file=sys.stderr)
                return 2

        native_name = "engine (native, in process)"
        ours: Dict[str, Callable[[int], float]] = {
            native_name: timed_once(lambda calls: _examkit.time_engine(raw, assets, calls)),
            "engine + to_json (native)": timed_once(
                lambda calls: _examkit.time_engine(raw, assets, calls, to_json=True)
            ),
            "examkit.validate(str)": timed(lambda: examkit.validate(text, assets)),
            "examkit.validate(bytes)": timed(lambda: examkit.validate(raw, assets)),
            "examkit.validate_json(str)": timed(lambda: examkit.validate_json(text, assets)),
            "examkit.validate(dict)": timed(lambda: examkit.validate(document, assets)),
        }
        theirs: Dict[str, Callable[[int], float]] = {}
        for name, check in validators.items():
            theirs[f"{name}(json.loads(str))"] = timed(lambda check=check: check(json.loads(text)))
            theirs[f"{name}(dict)"] = timed(lambda check=check: check(document))

        seconds = args.seconds * (2 if fixture == "maximum" else 1)
        medians, ratios = measure(ours, seconds, min_rounds=10, reference=native_name)
        other_medians, _ = measure(theirs, seconds / 2, min_rounds=3)
        native = medians[native_name]
        for name, median in other_medians.items():
            medians[name] = median
            ratios[name] = median / native
        print(f"\n{fixture}: {len(raw):,} bytes, {outcome['score']['max']} criteria "
              f"in {len(outcome['questions'])} questions")
        print(f"  {'':38} {'median':>12} {'× native':>9}")
        for name, median in medians.items():
            print(f"  {name:38} {human(median)} {ratios[name]:9.2f}")
        rust = criterion_medians(criterion_dir, fixture)
        rust_found = rust_found or bool(rust)
        for bench, median in rust.items():
            print(f"  {'Rust bench: ' + bench:38} {human(median)} {median / native:9.2f}"
                  "   (criterion, separate run)")

        ratio = ratios["examkit.validate(str)"]
        verdict = "met" if ratio <= STR_TARGET else "MISSED"
        print(f"  target: validate(str) within {STR_TARGET}x native: {ratio:.3f}x -- {verdict}")
        if ratio > STR_TARGET:
            missed.append(f"{fixture}: validate(str) is {ratio:.3f}x native")
        for ours, theirs in (("str", "json.loads(str)"), ("dict", "dict")):
            for name in validators:
                mine = medians[f"examkit.validate({ours})"]
                other = medians[f"{name}({theirs})"]
                verdict = "met" if mine < other else "MISSED"
                print(f"  target: validate({ours}) faster than {name}({theirs}): "
                      f"{other / mine:.1f}x faster -- {verdict}")
                if mine >= other:
                    missed.append(f"{fixture}: validate({ours}) not faster than {name}")

        single, double = thread_speedup(text, assets, min(args.seconds, 5.0))
        print(f"  threads: {single:,.0f} validate(str)/s on one thread, {double:,.0f}/s on two "
              f"({double / single:.2f}x; the GIL is released while the engine runs)")

    if not rust_found:
        print(f"\n(no criterion results in {criterion_dir or 'any default location'}: run `cargo bench -p examkit-engine --bench validate` "
              "to print the Rust benchmark's medians beside these)")
    if missed:
        print("\ntargets missed:\n  " + "\n  ".join(missed))
    return 1 if missed and args.enforce else 0


if __name__ == "__main__":
    sys.exit(main())
