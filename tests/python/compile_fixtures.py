"""Compile every fixture kernel under tests/fixtures/ with the real CuTe DSL.

Each fixture is a self-contained script whose `__main__` block calls
`cute.compile(...)` on fake tensors. This runs each one in its own subprocess
(with the interpreter running this script), CPU-only for sm_90a (or the
architecture a `# target: sm_100a` line of its docstring names), two at a time,
and prints one line per file:

    PASS tests/fixtures/untoggled_phase/jacobi_cluster_clean.py
    FAIL tests/fixtures/deadlock/foo.py
        <last lines of stderr>

followed by a final line `N passed, M failed`. Exits 1 if any file failed
(or none was found). Nothing is launched: no GPU is needed.

Usage:
    .venv/bin/python tests/python/compile_fixtures.py [PATH ...]

PATH may be a fixture file or a directory to search; the default is
tests/fixtures/. tests/corpus/ holds pseudo-API code and is never compiled.

A fixture that is a package (a directory with an `__init__.py`) is compiled
through its modules that have a `__main__` block, as `python -m pkg.module`
from the directory above the package; its other modules are compiled as
they import.
"""

import concurrent.futures
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
DEFAULT_ROOT = os.path.join(REPO, "tests", "fixtures")

WORKERS = 2
DEFAULT_TARGET = "sm_90a"
TIMEOUT_S = 600
STDERR_TAIL_LINES = 25


def package_of(path):
    """For a module of a package: the directory above its outermost package
    and its dotted module name. None for a file outside any package."""
    directory = os.path.dirname(path)
    if not os.path.exists(os.path.join(directory, "__init__.py")):
        return None
    parts = [os.path.splitext(os.path.basename(path))[0]]
    while os.path.exists(os.path.join(directory, "__init__.py")):
        parts.insert(0, os.path.basename(directory))
        directory = os.path.dirname(directory)
    return directory, ".".join(p for p in parts if p != "__init__")


def runs_as_main(path):
    with open(path, encoding="utf-8") as f:
        return '__name__ == "__main__"' in f.read()


def find_fixtures(paths):
    found = []
    for path in paths:
        if os.path.isfile(path):
            found.append(os.path.abspath(path))
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            for name in sorted(filenames):
                path = os.path.abspath(os.path.join(dirpath, name))
                # A package's modules are compiled through the ones that run.
                if name.endswith(".py") and (package_of(path) is None or runs_as_main(path)):
                    found.append(path)
    return sorted(set(found))


def compile_env():
    env = dict(os.environ)
    env["CUTE_DSL_ARCH"] = DEFAULT_TARGET  # target without asking a (absent) GPU
    env["CUTE_DSL_DISABLE_FILE_CACHING"] = "1"  # always compile for real
    env["PYTHONDONTWRITEBYTECODE"] = "1"  # keep the fixture tree clean
    env["PYTHONUNBUFFERED"] = "1"
    return env


def target_of(path):
    """The architecture a fixture is compiled for: sm_90a unless a line of
    its docstring says `# target: sm_100a` (a Blackwell kernel)."""
    with open(path, encoding="utf-8") as f:
        for line in f.read().splitlines()[:20]:
            if line.startswith("# target: "):
                return line.split(":", 1)[1].strip()
    return DEFAULT_TARGET


def run_one(path, env):
    start = time.monotonic()
    env = dict(env, CUTE_DSL_ARCH=target_of(path))
    package = package_of(path)
    command, cwd = ([sys.executable, "-m", package[1]], package[0]) if package else ([sys.executable, path], os.path.dirname(path))
    try:
        proc = subprocess.run(
            command,
            cwd=cwd,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            timeout=TIMEOUT_S,
        )
        ok = proc.returncode == 0
        detail = proc.stderr
        if not ok and not detail.strip():
            detail = proc.stdout or f"exit status {proc.returncode}"
    except subprocess.TimeoutExpired as exc:
        ok = False
        err = exc.stderr or ""
        if isinstance(err, bytes):
            err = err.decode(errors="replace")
        detail = f"{err}\ntimed out after {TIMEOUT_S}s"
    return path, ok, detail, time.monotonic() - start


def compile_all(jobs):
    """Compiles each `(label, path)` of `jobs`, WORKERS at a time, printing
    `PASS label` or `FAIL label` with the end of its stderr. Returns the
    counts passed and failed."""
    env = compile_env()
    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max_workers=WORKERS) as pool:
        futures = {pool.submit(run_one, path, env): label for label, path in jobs}
        for future in concurrent.futures.as_completed(futures):
            label = futures[future]
            _, ok, detail, _ = future.result()
            if ok:
                passed += 1
                print(f"PASS {label}", flush=True)
            else:
                failed += 1
                print(f"FAIL {label}", flush=True)
                for line in detail.rstrip().splitlines()[-STDERR_TAIL_LINES:]:
                    print(f"    {line}")
                sys.stdout.flush()
    return passed, failed


def display(path):
    rel = os.path.relpath(path, REPO)
    return path if rel.startswith("..") else rel


def main(argv):
    roots = argv[1:] or [DEFAULT_ROOT]
    fixtures = find_fixtures(roots)
    if not fixtures:
        print(f"no fixtures found under {', '.join(roots)}")
        print("0 passed, 0 failed")
        return 1

    start = time.monotonic()
    passed, failed = compile_all([(display(path), path) for path in fixtures])
    print(f"wall time {time.monotonic() - start:.1f}s with {WORKERS} workers")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
