"""`cute-lsp trace` in a real browser: the page loads and shows the trace.

Runs the release binary's `trace` on the untoggled-phase bug twin of the
Jacobi kernel to an HTML file, loads that file in headless Chromium twice
(each run with a fresh profile and no network: no first-run, background,
component-update or sync traffic), and checks:

- the screenshot is a PNG of the page, not a blank one: non-empty, of the
  window's size, with many colours, among them the fill of the stuck
  marker (so the picture was painted, not only parsed);
- the DOM Chromium built from the page (`--dump-dom`) has a lane for every
  group of threads and every barrier the trace names, a step for every step
  of the trace (its number, line and lane), and a stuck marker for every
  wait left stuck at the end (its lane, line and the phase it waits for), as `cute-lsp check --format json` of the same
  file reports them: as many drawn as the trace has steps.

Prints `PASS`/`FAIL` lines and `N passed, M failed`; exits 1 if any failed.
Without Chromium it says so and exits 0, unless CUTE_LSP_REQUIRE_CHROMIUM=1
(scripts/test.sh sets it when it runs as root, where scripts/setup.sh
installs Chromium), which makes that a failure.

Usage:
    .venv/bin/python tests/python/trace_in_browser.py [--binary PATH] [--keep DIR]

The binary defaults to $CARGO_TARGET_DIR/release/cute-lsp (target/ when the
variable is not set). --keep writes the page, the screenshot and the DOM to
DIR for a person to look at.
"""

import argparse
import html.parser
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
FIXTURE = os.path.join("tests", "fixtures", "untoggled_phase", "jacobi_cluster_bug.py")
WINDOW = (2800, 1000)
# The fill of a stuck wait's box (`.stuck > rect` in cli/trace/svg.rs).
STUCK_FILL = (0xFD, 0xE8, 0xE8)
BROWSER_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--hide-scrollbars",
]


def default_binary():
    target = os.environ.get("CARGO_TARGET_DIR") or "target"
    if not os.path.isabs(target):
        target = os.path.join(REPO, target)
    return os.path.join(target, "release", "cute-lsp")


def find_chromium():
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def run(args, **kwargs):
    return subprocess.run(args, cwd=REPO, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=300, **kwargs)


def finding(binary):
    """The finding's line (from 1) and the `trace` objects of its steps, each
    with the line of its call as `line`."""
    proc = run([binary, "check", "--format", "json", FIXTURE])
    if proc.returncode not in (0, 1):
        raise RuntimeError(f"check: exit status {proc.returncode}: {proc.stderr.strip()}")
    [d] = json.loads(proc.stdout)
    steps = [dict(r["trace"], line=r["range"]["start"]["line"] + 1) for r in d["related"] if "trace" in r]
    return d["range"]["start"]["line"] + 1, steps


def browser(chromium, page, extra):
    """Chromium on `page` with a fresh profile; its standard output."""
    with tempfile.TemporaryDirectory(prefix="cute-lsp-chromium-") as profile:
        args = [chromium, *BROWSER_FLAGS, f"--user-data-dir={profile}", *extra, "file://" + page]
        proc = subprocess.run(args, stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=180)
    if proc.returncode != 0:
        raise RuntimeError(f"chromium: exit status {proc.returncode}: {proc.stderr.strip()[-2000:]}")
    return proc.stdout


def png_pixels(data):
    """Width, height and the rows of an 8-bit RGB or RGBA PNG, as tuples."""
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError("not a PNG")
    at, idat, header = 8, b"", None
    while at < len(data):
        (length,) = struct.unpack(">I", data[at : at + 4])
        kind = data[at + 4 : at + 8]
        body = data[at + 8 : at + 8 + length]
        if kind == b"IHDR":
            header = struct.unpack(">IIBBBBB", body)
        elif kind == b"IDAT":
            idat += body
        at += 12 + length
    width, height, depth, colour, _, _, interlace = header
    if depth != 8 or colour not in (2, 6) or interlace:
        raise ValueError(f"unexpected PNG format: depth {depth}, colour type {colour}, interlace {interlace}")
    channels = 3 if colour == 2 else 4
    stride = width * channels
    raw = zlib.decompress(idat)
    rows, previous = [], bytearray(stride)
    for y in range(height):
        kind, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1 : (y + 1) * (stride + 1)])
        if kind == 1:
            for i in range(channels, stride):
                line[i] = (line[i] + line[i - channels]) & 255
        elif kind == 2:
            line = bytearray((a + b) & 255 for a, b in zip(line, previous))
        elif kind == 3:
            for i in range(stride):
                left = line[i - channels] if i >= channels else 0
                line[i] = (line[i] + ((left + previous[i]) >> 1)) & 255
        elif kind == 4:
            for i in range(stride):
                a = line[i - channels] if i >= channels else 0
                b, c = previous[i], previous[i - channels] if i >= channels else 0
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(line)
        previous = line
    return width, height, [[tuple(row[x * channels : x * channels + 3]) for x in range(width)] for row in rows]


class Elements(html.parser.HTMLParser):
    """Every element's tag and attributes, in document order."""

    def __init__(self):
        super().__init__()
        self.found = []

    def handle_starttag(self, tag, attrs):
        self.found.append((tag, dict(attrs)))

    handle_startendtag = handle_starttag

    def with_class(self, tag, wanted):
        return [a for t, a in self.found if t == tag and wanted in (a.get("class") or "").split()]


def check_screenshot(png):
    width, height, rows = png_pixels(png)
    problems = []
    if (width, height) != WINDOW:
        problems.append(f"the screenshot is {width}x{height}, not the window's {WINDOW[0]}x{WINDOW[1]}")
    colours = {p for row in rows[::4] for p in row[::4]}
    if len(colours) < 16:
        problems.append(f"the screenshot has {len(colours)} colours: the page was not painted")
    if not any(STUCK_FILL in row for row in rows):
        problems.append("no pixel has the stuck marker's fill: the end of the trace is not on screen")
    return problems, len(colours)


def check_dom(dom, line, steps):
    page = Elements()
    page.feed(dom)
    problems = []
    lanes = {a["data-lane"] for a in page.with_class("g", "lane")}
    expected = set()
    for s in steps:
        if "lane" in s:
            expected.add(s["lane"]["threads"])
        for b in [s["barrier"]] if "barrier" in s else []:
            expected.add(b["name"])
        expected.update(b["name"] for b in s.get("barriers", []))
    if lanes != expected:
        problems.append(f"lanes {sorted(lanes)} are not those of the trace {sorted(expected)}")
    drawn = [(int(a["data-step"]), int(a["data-line"]), a["data-lane"]) for a in page.with_class("g", "step")]
    moves = [s for s in steps if s["kind"] in ("prefix", "step")]
    want = [(s["first"], s["line"], s["lane"]["threads"] if "lane" in s else "*") for s in moves]
    if drawn != want:
        problems.append(f"steps drawn {drawn} are not the trace's {want}")
    stuck = page.with_class("g", "stuck")
    stuck_steps = [s for s in steps if s["kind"] == "stuck"]
    if [(a["data-lane"], int(a["data-parity"]), int(a["data-line"])) for a in stuck] != [(s["lane"]["threads"], s["parity"], s["line"]) for s in stuck_steps]:
        problems.append(f"stuck markers {stuck} are not the trace's stuck waits {stuck_steps}")
    if not stuck:
        problems.append("no stuck marker")
    if str(line) not in {a["data-line"] for a in stuck}:
        problems.append(f"the finding's wait (line {line}) is not among the stuck markers")
    if len(drawn) + len(stuck) != len(steps):
        problems.append(f"{len(drawn)} steps and {len(stuck)} stuck markers drawn for a trace of {len(steps)} steps")
    if page.with_class("svg", "trace") == []:
        problems.append("no <svg class=\"trace\"> in the DOM")
    return problems, len(lanes), len(drawn), len(stuck)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--binary", default=default_binary())
    parser.add_argument("--keep", metavar="DIR", help="write the page, the screenshot and the DOM here")
    args = parser.parse_args()
    chromium = find_chromium()
    if chromium is None:
        message = "trace-in-browser: Chromium is not installed (scripts/setup.sh installs it as root: apt-get install chromium)"
        if os.environ.get("CUTE_LSP_REQUIRE_CHROMIUM") == "1":
            print(f"FAIL {message}")
            print("0 passed, 1 failed")
            return 1
        print(f"SKIP {message}")
        return 0

    line, steps = finding(args.binary)
    work = args.keep or tempfile.mkdtemp(prefix="cute-lsp-trace-")
    os.makedirs(work, exist_ok=True)
    page = os.path.abspath(os.path.join(work, "trace.html"))
    proc = run([args.binary, "trace", f"{FIXTURE}:{line}", "-o", page])
    if proc.returncode != 0:
        raise RuntimeError(f"trace: exit status {proc.returncode}: {proc.stderr.strip()}")

    passed, failed = 0, 0

    def report(name, problems, detail):
        nonlocal passed, failed
        if problems:
            failed += 1
            print(f"FAIL {name}")
            for p in problems:
                print(f"  {p}")
        else:
            passed += 1
            print(f"PASS {name} ({detail})")

    shot = os.path.join(work, "trace.png")
    browser(chromium, page, [f"--window-size={WINDOW[0]},{WINDOW[1]}", f"--screenshot={shot}"])
    with open(shot, "rb") as f:
        png = f.read()
    problems, colours = check_screenshot(png) if png else (["the screenshot is empty"], 0)
    report("screenshot", problems, f"{len(png)} bytes, {colours} colours")

    dom = browser(chromium, page, ["--dump-dom"])
    with open(os.path.join(work, "dom.html"), "w") as f:
        f.write(dom)
    problems, lanes, drawn, stuck = check_dom(dom, line, steps)
    report("dom", problems, f"{lanes} lanes, {drawn} steps, {stuck} stuck waits of a {len(steps)}-step trace")

    if not args.keep:
        shutil.rmtree(work, ignore_errors=True)
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
