"""The pre-commit hook of this repository (.pre-commit-hooks.yaml), run by the
real `pre-commit` package on a temporary git repository: committing the bug
twin of a fixture is refused with its diagnostic, committing the clean twin
is accepted.

Usage:
    .venv/bin/python tests/python/pre_commit_hook.py [BINARY]

BINARY is the cute-lsp the hook finds on PATH (default target/release/cute-lsp).
Prints one line per case and `N passed, M failed` last; exits 1 on a failure.
"""

import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
BUG = os.path.join(REPO, "tests", "fixtures", "untoggled_phase", "jacobi_cluster_bug.py")
CLEAN = os.path.join(REPO, "tests", "fixtures", "untoggled_phase", "jacobi_cluster_clean.py")


def run(cmd, cwd, env):
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def main():
    binary = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(REPO, "target", "release", "cute-lsp"))
    pre_commit = os.path.join(os.path.dirname(sys.executable), "pre-commit")
    work = tempfile.mkdtemp(prefix="cute-lsp-pre-commit-")
    failures = []
    passed = 0
    try:
        # The hooks' repository as pre-commit fetches it: a git repository
        # holding this checkout's .pre-commit-hooks.yaml at a commit.
        hooks = os.path.join(work, "hooks")
        os.makedirs(hooks)
        shutil.copy(os.path.join(REPO, ".pre-commit-hooks.yaml"), hooks)
        bin_dir = os.path.join(work, "bin")
        os.makedirs(bin_dir)
        os.symlink(binary, os.path.join(bin_dir, "cute-lsp"))
        env = dict(os.environ)
        env["PATH"] = bin_dir + os.pathsep + env.get("PATH", "")
        env["PRE_COMMIT_HOME"] = os.path.join(work, "cache")
        for key, value in [("GIT_AUTHOR_NAME", "t"), ("GIT_AUTHOR_EMAIL", "t@example.invalid"),
                           ("GIT_COMMITTER_NAME", "t"), ("GIT_COMMITTER_EMAIL", "t@example.invalid")]:
            env[key] = value
        git = ["git", "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
        for cmd in (git + ["init", "-q"], git + ["add", "."], git + ["commit", "-q", "-m", "hooks"]):
            out = run(cmd, hooks, env)
            if out.returncode != 0:
                raise SystemExit(f"cannot make the hooks' repository: {out.stderr}")
        rev = run(["git", "rev-parse", "HEAD"], hooks, env).stdout.strip()

        project = os.path.join(work, "project")
        os.makedirs(project)
        with open(os.path.join(project, ".pre-commit-config.yaml"), "w") as f:
            f.write(f"repos:\n  - repo: {hooks}\n    rev: {rev}\n    hooks:\n      - id: cute-lsp\n")
        for cmd in (git + ["init", "-q"], [pre_commit, "install"], git + ["add", ".pre-commit-config.yaml"],
                    git + ["commit", "-q", "-m", "config"]):
            out = run(cmd, project, env)
            if out.returncode != 0:
                raise SystemExit(f"cannot set up the project ({' '.join(cmd)}): {out.stdout}{out.stderr}")

        def commit(source, name):
            shutil.copy(source, os.path.join(project, name))
            run(git + ["add", name], project, env)
            return run(git + ["commit", "-m", f"add {name}"], project, env)

        out = commit(BUG, "kernel.py")
        report = out.stdout + out.stderr
        if out.returncode != 0 and "untoggled-phase" in report and "kernel.py" in report:
            passed += 1
            print("PASS the bug twin's commit is refused with its diagnostic")
        else:
            failures.append(f"the bug twin's commit: exit {out.returncode}\n{report}")
            print("FAIL the bug twin's commit is refused with its diagnostic")
        run(git + ["reset", "-q", "HEAD", "kernel.py"], project, env)

        out = commit(CLEAN, "kernel.py")
        if out.returncode == 0:
            passed += 1
            print("PASS the clean twin's commit is accepted")
        else:
            failures.append(f"the clean twin's commit: exit {out.returncode}\n{out.stdout}{out.stderr}")
            print("FAIL the clean twin's commit is accepted")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    for f in failures:
        print(f, file=sys.stderr)
    print(f"{passed} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
