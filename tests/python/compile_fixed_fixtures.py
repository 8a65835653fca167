"""Every quick fix cute-lsp offers on the fixtures, applied, must leave a
kernel the real CuTe DSL still compiles (CPU-only, as compile_fixtures.py
compiles the fixtures themselves).

For each diagnostic of each fixture with quick fixes (`cute-lsp check
--format json`), each fix is applied alone to a copy of the file (its edits'
LSP ranges, UTF-16 columns, as an editor applies them) and the copy is
compiled in a subprocess; then all of them, as `cute-lsp check --fix
--unsafe-fixes` applies them to another copy. Prints one line per fix and `N passed, M failed`
last; exits 1 on a failure.

Usage:
    .venv/bin/python tests/python/compile_fixed_fixtures.py [--binary PATH] [PATH ...]
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import compile_fixtures  # noqa: E402  (the same compile step and environment)

REPO = compile_fixtures.REPO


def offset(lines, position):
    """Index into the text of an LSP position (line, UTF-16 column)."""
    line = min(position["line"], len(lines))
    before = sum(len(l) for l in lines[:line])
    if line == len(lines):
        return before
    text = lines[line]
    units = 0
    for i, ch in enumerate(text):
        if units >= position["character"] or ch in "\r\n":
            return before + i
        units += 2 if ord(ch) > 0xFFFF else 1
    return before + len(text.rstrip("\r\n"))


def apply(text, edits):
    lines = text.splitlines(keepends=True)
    spans = sorted(((offset(lines, e["range"]["start"]), offset(lines, e["range"]["end"]), e["new_text"]) for e in edits), reverse=True)
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def fixes_of(binary, path):
    proc = subprocess.run([binary, "check", "--format", "json", path], cwd=REPO, capture_output=True, text=True, timeout=600)
    if proc.returncode not in (0, 1):
        raise SystemExit(f"cute-lsp failed on {path}: {proc.stderr}")
    for d in json.loads(proc.stdout):
        for fix in d.get("fixes", []):
            yield d, fix


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--binary", default=os.path.join(REPO, "target", "release", "cute-lsp"))
    parser.add_argument("paths", nargs="*")
    args = parser.parse_args()
    fixtures = compile_fixtures.find_fixtures(args.paths or [compile_fixtures.DEFAULT_ROOT])
    work = tempfile.mkdtemp(prefix="cute-lsp-fixed-")
    jobs = []

    def copy_of(path, text):
        """A copy of the fixture at `path` holding `text`, in a directory of
        its own: with its whole package around it, for a module of one."""
        out_dir = os.path.join(work, f"{len(jobs)}")
        package = compile_fixtures.package_of(path)
        if package:
            top = os.path.join(package[0], package[1].split(".")[0])
            shutil.copytree(top, os.path.join(out_dir, os.path.basename(top)), ignore=shutil.ignore_patterns("__pycache__"))
            out = os.path.join(out_dir, os.path.relpath(path, package[0]))
        else:
            os.makedirs(out_dir)
            out = os.path.join(out_dir, os.path.basename(path))
        with open(out, "w", encoding="utf-8") as f:
            f.write(text)
        return out

    for path in fixtures:
        with open(path, encoding="utf-8") as f:
            text = f.read()
        for n, (d, fix) in enumerate(fixes_of(args.binary, os.path.relpath(path, REPO))):
            out = copy_of(path, apply(text, fix["edits"]))
            line = d["range"]["start"]["line"] + 1
            label = f"{os.path.relpath(path, REPO)}:{line} {d['name']}: {fix['title']}"
            jobs.append((label, out))
        # All of the file's fixes together, as `check --fix --unsafe-fixes`
        # applies them (one at a time, checking the text between).
        if any(True for _ in fixes_of(args.binary, os.path.relpath(path, REPO))):
            out = copy_of(path, text)
            proc = subprocess.run([args.binary, "check", "--fix", "--unsafe-fixes", "--quiet", out], capture_output=True, text=True, timeout=600)
            if proc.returncode not in (0, 1):
                raise SystemExit(f"cute-lsp check --fix failed on {out}: {proc.stderr}")
            jobs.append((f"{os.path.relpath(path, REPO)}: check --fix --unsafe-fixes", out))
    passed, failed = compile_fixtures.compile_all(jobs)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not jobs else 0


if __name__ == "__main__":
    sys.exit(main())
