#!/usr/bin/env python3
"""Run `cute-lsp check --format json` over whole code bases, one file at a time, and summarise.

Usage:
    scripts/sweep.py [--bin PATH] [--timeout S] [--contains TEXT] [--jobs N] [--json OUT]
                     [--list SEVERITY,...] NAME=DIR [NAME=DIR ...]

Each NAME=DIR is one code base (a bare DIR is named after its last path component). Every `*.py`
file below DIR is checked on its own (skipping files that do not contain TEXT when `--contains` is
given), with a timeout per file. A run is a crash when the exit status is neither 0 nor 1, or when
standard output is not one JSON array.

Per code base the table gives:
  files             the `*.py` files checked
  kernel files      files with at least one `@cute.kernel` decorator
  @cute.kernel      `@cute.kernel` decorators (a regex over the source, so it counts definitions,
                    not launches or instantiations)
  @cute.jit         `@cute.jit` decorators, counted the same way
  diagnosed kernels distinct (file, kernel name) pairs named in a diagnostic
  checked kernels   `@cute.kernel` functions (found with Python's `ast`, named `Class.method` as
                    cute-lsp names them) that no analysis-incomplete note names: checked in full,
                    with or without findings; and their share of the kernels found
  within loop bounds those whose only analysis-incomplete note is the bounded verdict (found
                    clean with loops of unknown length explored a few iterations)
  diagnostics       by rule name and severity
  incomplete        the `analysis-incomplete` reasons, grouped after removing the kernel name, the
                    receiver of a method call and every number from the message
  crashes, timeouts and wall time (the sum of the per-file wall times, and the sweep's elapsed time)

`--list error,warning` (the default) prints every diagnostic of those severities with its location.
`--json OUT` writes every per-file result for further processing.
"""

import argparse
import ast
import collections
import concurrent.futures
import json
import os
import re
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT_BIN = os.path.join(REPO, "target", "release", "cute-lsp")

KERNEL_RE = re.compile(r"^\s*@cute\.kernel\b", re.M)
JIT_RE = re.compile(r"^\s*@cute\.jit\b", re.M)
# "`Class.kernel` was not checked: ..." -> the kernel name is the first backticked word
# ("the memory accesses of `Class.kernel` were not checked ..." names it too).
NAME_RE = re.compile(r"^(?:the memory accesses of )?`([^`]+)`")
# The verdict of a kernel found clean with its loops explored a bounded number of times.
BOUNDED = "was checked for a bounded number of loop iterations only"


def python_files(root, contains):
    out = []
    if os.path.isfile(root):
        return [root]
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith("."))
        for f in sorted(filenames):
            if not f.endswith(".py"):
                continue
            p = os.path.join(dirpath, f)
            if contains:
                try:
                    with open(p, encoding="utf-8", errors="replace") as fh:
                        if contains not in fh.read():
                            continue
                except OSError:
                    continue
            out.append(p)
    return out


def check_one(binary, path, timeout):
    t0 = time.monotonic()
    res = {"file": path, "status": "ok", "diagnostics": [], "stderr": ""}
    try:
        p = subprocess.run(
            [binary, "check", "--format", "json", path],
            capture_output=True,
            text=True,
            timeout=timeout,
        )
    except subprocess.TimeoutExpired:
        res["status"] = "timeout"
        res["wall"] = time.monotonic() - t0
        return res
    res["wall"] = time.monotonic() - t0
    res["exit"] = p.returncode
    res["stderr"] = p.stderr[-2000:]
    if p.returncode not in (0, 1):
        res["status"] = "crash"
        return res
    try:
        diags = json.loads(p.stdout)
        if not isinstance(diags, list):
            raise ValueError("not an array")
    except ValueError:
        res["status"] = "crash"
        res["stderr"] = ("no JSON on stdout; " + res["stderr"])[-2000:]
        return res
    res["diagnostics"] = diags
    return res


def kernel_names(src):
    """The `@cute.kernel` functions of a source file, as cute-lsp names them (`Class.method` or
    `function`); None when Python cannot parse the file."""
    try:
        tree = ast.parse(src)
    except (SyntaxError, ValueError):
        return None

    def dotted(e):
        if isinstance(e, ast.Call):
            e = e.func
        parts = []
        while isinstance(e, ast.Attribute):
            parts.append(e.attr)
            e = e.value
        if isinstance(e, ast.Name):
            parts.append(e.id)
        return ".".join(reversed(parts))

    names = []

    def visit(node, cls):
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.ClassDef):
                visit(child, child.name)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if any(dotted(d) in ("cute.kernel", "cutlass.cute.kernel") for d in child.decorator_list):
                    names.append(f"{cls}.{child.name}" if cls else child.name)
                visit(child, None)
            else:
                visit(child, cls)

    visit(tree, None)
    return names


def incomplete_reason(message):
    m = NAME_RE.sub("`K`", message)
    # The receiver of the call named after "through": `pipeline_q.producer_acquire` -> `*.producer_acquire`.
    m = re.sub(r"(through `?)[A-Za-z_][\w]*(?:\.[A-Za-z_]\w*)*\.(?=[A-Za-z_])", r"\1*.", m)
    # The pipeline's holder: "on a pipeline it is passed (`acc_pipeline`)" -> "(`*`)".
    m = re.sub(r"(on a pipeline it is passed \(|on )`[\w.]+`", r"\1`*`", m)
    m = re.sub(r"\d+", "N", m)
    return m


def sev_rank(s):
    return {"error": 0, "warning": 1, "info": 2, "hint": 3}.get(s, 4)


def summarise(name, results, elapsed):
    s = {
        "name": name,
        "files": len(results),
        "kernel_files": 0,
        "kernels": 0,
        "jits": 0,
        "diagnosed_kernels": set(),
        "parsed_kernels": 0,
        "checked_kernels": 0,
        "bounded_kernels": 0,
        "by_rule": collections.Counter(),
        "incomplete": collections.Counter(),
        "crashes": [],
        "timeouts": [],
        "wall": sum(r["wall"] for r in results),
        "elapsed": elapsed,
    }
    for r in results:
        try:
            with open(r["file"], encoding="utf-8", errors="replace") as fh:
                src = fh.read()
        except OSError:
            src = ""
        names = kernel_names(src)
        if names is not None:
            reasons = collections.defaultdict(list)
            for d in r["diagnostics"]:
                m = NAME_RE.match(d.get("message", ""))
                if d.get("name") == "analysis-incomplete" and m:
                    reasons[m.group(1)].append(d.get("message", ""))
            ok = r["status"] == "ok"
            s["parsed_kernels"] += len(names)
            s["checked_kernels"] += sum(1 for n in names if ok and n not in reasons)
            s["bounded_kernels"] += sum(
                1 for n in names if ok and n in reasons and all(BOUNDED in m for m in reasons[n])
            )
        k = len(KERNEL_RE.findall(src))
        s["kernels"] += k
        s["jits"] += len(JIT_RE.findall(src))
        if k:
            s["kernel_files"] += 1
        if r["status"] == "crash":
            s["crashes"].append(r)
        elif r["status"] == "timeout":
            s["timeouts"].append(r)
        for d in r["diagnostics"]:
            s["by_rule"][(d.get("name"), d.get("severity"))] += 1
            m = NAME_RE.match(d.get("message", ""))
            if m:
                s["diagnosed_kernels"].add((r["file"], m.group(1)))
            if d.get("name") == "analysis-incomplete":
                s["incomplete"][incomplete_reason(d.get("message", ""))] += 1
    return s


def print_table(summaries):
    rules = sorted({k for s in summaries for k in s["by_rule"]}, key=lambda k: (sev_rank(k[1]), k[0]))
    rows = [
        ("files", lambda s: s["files"]),
        ("files with @cute.kernel", lambda s: s["kernel_files"]),
        ("@cute.kernel decorators", lambda s: s["kernels"]),
        ("@cute.jit decorators", lambda s: s["jits"]),
        ("kernels named in a diagnostic", lambda s: len(s["diagnosed_kernels"])),
        ("@cute.kernel functions (Python's ast)", lambda s: s["parsed_kernels"]),
        ("of them checked in full (no analysis-incomplete)", lambda s: s["checked_kernels"]),
        ("of them checked within loop bounds only", lambda s: s["bounded_kernels"]),
    ]
    for rule in rules:
        rows.append((f"{rule[0]} ({rule[1]})", lambda s, rule=rule: s["by_rule"].get(rule, 0)))
    rows += [
        ("crashes", lambda s: len(s["crashes"])),
        ("timeouts", lambda s: len(s["timeouts"])),
        ("wall, sum per file (s)", lambda s: f"{s['wall']:.1f}"),
        ("wall, elapsed (s)", lambda s: f"{s['elapsed']:.1f}"),
    ]
    header = "| | " + " | ".join(s["name"] for s in summaries) + " | total |"
    print(header)
    print("|---|" + "---:|" * (len(summaries) + 1))
    for label, f in rows:
        vals = [f(s) for s in summaries]
        try:
            tot = sum(float(v) for v in vals)
            tot = f"{tot:.1f}" if any(isinstance(v, str) for v in vals) else int(tot)
        except ValueError:
            tot = ""
        print(f"| {label} | " + " | ".join(str(v) for v in vals) + f" | {tot} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("bases", nargs="+", metavar="NAME=DIR")
    ap.add_argument("--bin", default=DEFAULT_BIN)
    ap.add_argument("--timeout", type=float, default=30.0)
    ap.add_argument("--contains", default=None, help="only files whose text contains this string")
    ap.add_argument("--jobs", type=int, default=1, help="files checked in parallel (1 gives honest per-file times)")
    ap.add_argument("--json", default=None, help="write every per-file result here")
    ap.add_argument("--list", default="error,warning", help="severities to list one by one ('' for none)")
    ap.add_argument("--reasons", type=int, default=15, help="incomplete reasons shown per code base")
    args = ap.parse_args()

    if not os.access(args.bin, os.X_OK):
        sys.exit(f"sweep: no executable {args.bin}; build it with `cargo build --release -p cute-lsp`")
    listed = {x for x in args.list.split(",") if x}

    t_start = time.monotonic()
    summaries, dump = [], {}
    for base in args.bases:
        name, _, root = base.partition("=")
        if not root:
            root = name
            name = os.path.basename(os.path.normpath(root))
        files = python_files(root, args.contains)
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, args.jobs)) as ex:
            results = list(ex.map(lambda p: check_one(args.bin, p, args.timeout), files))
        s = summarise(name, results, time.monotonic() - t0)
        summaries.append(s)
        dump[name] = results

        print(f"## {name}: {root}")
        for r in s["crashes"]:
            print(f"  crash (exit {r.get('exit')}): {r['file']}: {r['stderr'].strip().splitlines()[-1:]}")
        for r in s["timeouts"]:
            print(f"  timeout ({args.timeout:.0f} s): {r['file']}")
        for r in results:
            for d in sorted(r["diagnostics"], key=lambda d: d["range"]["start"]["line"]):
                if d.get("severity") in listed:
                    line = d["range"]["start"]["line"] + 1
                    print(f"  {d['severity']} {d['code']} {d['name']}: {r['file']}:{line}: {d['message']}")
        if s["incomplete"]:
            print(f"  analysis-incomplete reasons ({sum(s['incomplete'].values())}, {len(s['incomplete'])} distinct):")
            for reason, n in s["incomplete"].most_common(args.reasons):
                print(f"    {n:5d}  {reason}")
        print()

    total = time.monotonic() - t_start
    print_table(summaries)
    found = sum(s["parsed_kernels"] for s in summaries)
    checked = sum(s["checked_kernels"] for s in summaries)
    bounded = sum(s["bounded_kernels"] for s in summaries)
    if found:
        print(f"\nkernels checked in full: {checked} of {found} ({100 * checked / found:.0f}%)")
        both = checked + bounded
        print(f"kernels checked in full or within loop bounds: {both} of {found} ({100 * both / found:.0f}%)")
    print()
    allr = collections.Counter()
    for s in summaries:
        allr.update(s["incomplete"])
    if allr:
        print(f"analysis-incomplete reasons over all code bases ({sum(allr.values())}, {len(allr)} distinct):")
        for reason, n in allr.most_common(args.reasons):
            print(f"  {n:5d}  {reason}")
        print()
    print(f"sweep wall time: {total:.1f} s")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(dump, fh, indent=1)


if __name__ == "__main__":
    main()
