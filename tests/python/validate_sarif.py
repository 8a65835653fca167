"""Validate `cute-lsp check --format sarif` against the SARIF 2.1.0 JSON schema.

Runs the release binary with `--format sarif` on every fixture file under
tests/fixtures/ (one log each) and once on the whole directory (one log with
every file's results), and validates each log with `jsonschema` against
tests/sarif/sarif-schema-2.1.0.json (draft-07, with its `uri` and
`uri-reference` formats checked). A log also fails when a result's
`ruleIndex` does not point at the rule of its `ruleId`, or when the run is not
the one SARIF run the format promises. Last, a log made invalid on purpose
(a result level that SARIF does not have, a line 0) must be rejected, so a
validator that accepts everything cannot pass.

Prints one line per log (`PASS path` or `FAIL path` with the first errors)
and a final line `N passed, M failed`; exits 1 if any failed.

Usage:
    .venv/bin/python tests/python/validate_sarif.py [--binary PATH] [PATH ...]

The binary defaults to $CARGO_TARGET_DIR/release/cute-lsp (target/ when the
variable is not set); PATH may be a fixture file or a directory to search,
tests/fixtures/ by default.
"""

import argparse
import copy
import json
import os
import subprocess
import sys

import jsonschema

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SCHEMA = os.path.join(REPO, "tests", "sarif", "sarif-schema-2.1.0.json")
DEFAULT_ROOT = os.path.join("tests", "fixtures")
SHOWN_ERRORS = 5


def default_binary():
    target = os.environ.get("CARGO_TARGET_DIR") or "target"
    if not os.path.isabs(target):
        target = os.path.join(REPO, target)
    return os.path.join(target, "release", "cute-lsp")


def find_fixtures(paths):
    found = []
    for path in paths:
        if os.path.isfile(path):
            found.append(path)
            continue
        for dirpath, dirnames, filenames in os.walk(path):
            dirnames[:] = sorted(d for d in dirnames if d != "__pycache__")
            found.extend(os.path.join(dirpath, n) for n in sorted(filenames) if n.endswith(".py"))
    return sorted(set(found))


def sarif_of(binary, path):
    """The log of `cute-lsp check --format sarif PATH`, run at the root of
    the repository (artifact URIs are relative to the working directory)."""
    proc = subprocess.run(
        [binary, "check", "--format", "sarif", path],
        cwd=REPO,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        timeout=600,
    )
    # 0: no errors, 1: errors found; 2 means the run itself failed.
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"exit status {proc.returncode}: {proc.stderr.strip()}")
    return json.loads(proc.stdout)


def problems(validator, log):
    """Why `log` is not a valid cute-lsp SARIF log: schema errors first."""
    out = []
    for error in sorted(validator.iter_errors(log), key=lambda e: list(e.absolute_path)):
        where = "/".join(str(p) for p in error.absolute_path) or "(root)"
        out.append(f"{where}: {error.message[:300]}")
    runs = log.get("runs") if isinstance(log, dict) else None
    if not isinstance(runs, list) or len(runs) != 1:
        out.append("the log does not have exactly one run")
        return out
    run = runs[0]
    rules = run.get("tool", {}).get("driver", {}).get("rules", [])
    for i, result in enumerate(run.get("results", [])):
        index = result.get("ruleIndex")
        if not isinstance(index, int) or not 0 <= index < len(rules) or rules[index].get("id") != result.get("ruleId"):
            out.append(f"runs/0/results/{i}: ruleIndex {index!r} does not name rule {result.get('ruleId')!r}")
    return out


def broken(log):
    """`log` made invalid: a level SARIF does not have, a line 0 (or, with
    no result, a version SARIF is not)."""
    bad = copy.deepcopy(log)
    results = bad["runs"][0].get("results") or []
    if results:
        results[0]["level"] = "fatal"
        results[0]["locations"][0]["physicalLocation"]["region"]["startLine"] = 0
    else:
        bad["version"] = "2.0.0"
    return bad


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=default_binary())
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args(argv[1:])
    roots = args.paths or [DEFAULT_ROOT]

    with open(SCHEMA, encoding="utf-8") as f:
        schema = json.load(f)
    validator_class = jsonschema.validators.validator_for(schema)
    validator_class.check_schema(schema)
    validator = validator_class(schema, format_checker=validator_class.FORMAT_CHECKER)

    fixtures = find_fixtures(os.path.join(REPO, r) if not os.path.isabs(r) else r for r in roots)
    if not fixtures:
        print(f"no fixtures found under {', '.join(roots)}")
        print("0 passed, 0 failed")
        return 1
    targets = [os.path.relpath(p, REPO) for p in fixtures]
    targets += [r for r in roots if os.path.isdir(os.path.join(REPO, r))]

    passed = failed = 0
    results = 0
    sample = None
    for target in targets:
        try:
            log = sarif_of(args.binary, target)
            found = problems(validator, log)
        except (RuntimeError, ValueError, OSError, subprocess.TimeoutExpired) as exc:
            found = [f"no log: {exc}"]
            log = None
        if found:
            failed += 1
            print(f"FAIL {target}")
            for line in found[:SHOWN_ERRORS]:
                print(f"    {line}")
            if len(found) > SHOWN_ERRORS:
                print(f"    ... and {len(found) - SHOWN_ERRORS} more")
        else:
            passed += 1
            count = len(log["runs"][0]["results"])
            print(f"PASS {target} ({count} result{'s' if count != 1 else ''})")
            if os.path.isfile(os.path.join(REPO, target)):
                results += count
            if sample is None or (count and not sample["runs"][0]["results"]):
                sample = log
        sys.stdout.flush()

    # The validator must reject what SARIF does not allow.
    if sample is not None:
        if list(validator.iter_errors(broken(sample))):
            passed += 1
            print("PASS a broken log is rejected")
        else:
            failed += 1
            print("FAIL a broken log is accepted")

    print(f"schema {os.path.relpath(SCHEMA, REPO)} ($id {schema.get('$id')})")
    print(f"{results} results in {len(fixtures)} fixture files")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
