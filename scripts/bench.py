"""Whole-process benchmarks for scripts/bench.sh: generates the inputs, runs
each command RUNS times under /usr/bin/time, prints medians, peak memory and
ratios. Standard library only."""

import hashlib
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import time

REFEREE, WORK, RUNS = sys.argv[1], sys.argv[2], int(sys.argv[3])


def timed(cmd, cwd, stdout=subprocess.DEVNULL, ok=(0,), stdin=None):
    """Wall seconds (perf_counter) and peak RSS (MiB) of one run. The peak
    comes from /usr/bin/time, a small C parent: a child forked from Python
    would report Python's own size before its exec."""
    out = os.path.join(WORK, "time.txt")
    start = time.perf_counter()
    r = subprocess.run(["/usr/bin/time", "-f", "%M", "-o", out] + cmd, cwd=cwd,
                       stdout=stdout, stderr=subprocess.PIPE,
                       stdin=open(stdin, "rb") if stdin else subprocess.DEVNULL)
    wall = time.perf_counter() - start
    if r.returncode not in ok:
        raise SystemExit(f"{cmd} exited {r.returncode}: {r.stderr.decode()[-500:]}")
    return wall, int(open(out).read().split()[-1]) / 1024


def bench(name, cmd, cwd, setup=None, ok=(0,), runs=RUNS, stdin=None):
    walls, rss = [], []
    for i in range(runs):
        if setup:
            setup(i)
        w, m = timed(cmd(i) if callable(cmd) else cmd, cwd, ok=ok, stdin=stdin)
        walls.append(w)
        rss.append(m)
    med = statistics.median(walls)
    print(f"  {name:<58} {med*1000:8.0f} ms  (min {min(walls)*1000:.0f}, max {max(walls)*1000:.0f})  peak {max(rss):6.1f} MiB")
    PEAK[name] = max(rss)
    return med


def in_turn(benches, cwd, runs=RUNS, setup=None):
    """Benchmarks run in turn, one run of each at a time, so that what the
    machine does meanwhile (writing back a repository just made, a busy
    neighbour on a shared host) falls on all of them alike. Each bench is
    (name, cmd, ok) or (name, cmd, ok, stdin); a cmd may take the run's
    number; `setup(i)`, if given, runs before each run's turn. Gives the
    medians in the benches' order."""
    names = [b[0] for b in benches]
    walls = {name: [] for name in names}
    rss = {name: [] for name in names}
    for i in range(runs):
        if setup:
            setup(i)
        for name, cmd, ok, *stdin in benches:
            w, m = timed(cmd(i) if callable(cmd) else cmd, cwd, ok=ok, stdin=stdin[0] if stdin else None)
            walls[name].append(w)
            rss[name].append(m)
    medians = []
    for name in names:
        med = statistics.median(walls[name])
        print(f"  {name:<58} {med*1000:8.0f} ms  (min {min(walls[name])*1000:.0f}, max {max(walls[name])*1000:.0f})  peak {max(rss[name]):6.1f} MiB")
        PEAK[name] = max(rss[name])
        medians.append(med)
    return medians


# The peak memory (MiB) of each benchmark by name, for rows that have a memory target.
PEAK = {}


def git(cwd, *args):
    subprocess.run(["git", *args], cwd=cwd, check=True, stdout=subprocess.DEVNULL)


def repo(path):
    shutil.rmtree(path, ignore_errors=True)
    os.makedirs(path)
    git(path, "init", "-q", "-b", "main")
    return path


# ONLY="3 5" runs only those sections (section 2's inputs take a while).
ONLY = set(os.environ.get("ONLY", "1 2 3 4 5 6 7").split())


def ratio(a, b, target):
    verdict = "meets" if a / b <= target else "MISSES"
    return f"{a / b:.2f}x ({verdict} the {target}x target)"


def within(seconds, target_ms):
    return f"{seconds * 1000:.0f} ms ({'meets' if seconds * 1000 <= target_ms else 'MISSES'} the {target_ms} ms target)"


# ---------------------------------------------------------------- 1. record
def section_1():
    print("1. record: 100 findings, 1,000-line patch, 20,000 files")
    big = repo(os.path.join(WORK, "big"))
    for d in range(200):
        os.makedirs(f"{big}/src/d{d}")
        for f in range(100):
            with open(f"{big}/src/d{d}/f{f}.rs", "w") as fh:
                fh.write("".join(f"fn f{i}() -> u32 {{ {i} }}\n" for i in range(30)))
    git(big, "add", "-A")
    git(big, "commit", "-q", "-m", "20,000 files")
    for d in range(50):  # 50 files x 10 lines changed: +500 -500
        p = f"{big}/src/d{d}/f0.rs"
        lines = open(p).read().split("\n")
        for i in range(10):
            lines[i] = lines[i].replace("{", "{ /* changed */", 1)
        open(p, "w").write("\n".join(lines))
    findings = os.path.join(WORK, "f100.json")
    json.dump({"findings": [{"id": f"F{i}", "severity": "bug", "title": f"problem {i} in this module",
                             "file": f"src/d{i % 200}/f1.rs", "line": i % 30 + 1, "body": "why"}
                            for i in range(100)]}, open(findings, "w"))
    for i in range(RUNS + 1):
        subprocess.run([REFEREE, "init", "--loop", f"b{i}"], cwd=big, stdout=subprocess.DEVNULL, check=True)
    # The floor: what any snapshot of the work tree costs, `git add -A` and
    # `git write-tree` into a temporary index. Cold, the index is new (every
    # file is hashed, as at a loop's first round); warm, it is the one the
    # previous run left (as referee's own index cache at later rounds).
    cold = os.path.join(WORK, "floor-cold.index")
    warm = os.path.join(WORK, "floor-warm.index")
    floor = "GIT_INDEX_FILE={0} git add -A && GIT_INDEX_FILE={0} git write-tree >/dev/null"
    floor_cold = ["sh", "-c", f"rm -f {cold} && " + floor.format(cold)]
    floor_warm = ["sh", "-c", floor.format(warm)]
    # Warm everything, let the 20,000 new files reach the disk, then time
    # in turn: timed one after the other, `git status` ran while they were
    # still being written back, which slowed it by a third.
    subprocess.run(["git", "status", "--porcelain"], cwd=big, stdout=subprocess.DEVNULL)
    subprocess.run(floor_warm, cwd=big, stdout=subprocess.DEVNULL, check=True)
    subprocess.run([REFEREE, "record", "--loop", f"b{RUNS}", "--findings", findings], cwd=big,
                   stdout=subprocess.DEVNULL)
    subprocess.run(["sync"])
    status, cold_t, record = in_turn([
        ("git status --porcelain", ["git", "status", "--porcelain"], (0,)),
        ("floor, cold: git add -A && git write-tree (new index)", floor_cold, (0,)),
        ("referee record (round 1 of a fresh loop)",
         lambda i: [REFEREE, "record", "--loop", f"b{i}", "--findings", findings], (10,)),
    ], big)
    print(f"  round 1 / git status: {ratio(record, status, 2.0)}")
    print(f"  round 1 / cold floor: {ratio(record, cold_t, 1.5)}")

    # Round 2: each run's loop had its round 1 timed above; the writer then
    # changed one more file.
    def changed(i):
        with open(f"{big}/src/d199/f99.rs", "a") as fh:
            fh.write(f"fn g{i}() {{}}\n")

    status, warm_t, record = in_turn([
        ("git status --porcelain", ["git", "status", "--porcelain"], (0,)),
        ("floor, warm: git add -A && git write-tree (kept index)", floor_warm, (0,)),
        ("referee record (round 2)",
         lambda i: [REFEREE, "record", "--loop", f"b{i}", "--findings", findings], (10, 20)),
    ], big, setup=changed)
    print(f"  round 2 / git status: {ratio(record, status, 2.0)}")
    print(f"  round 2 / warm floor: {ratio(record, warm_t, 1.5)}")


# ---------------------------------------------------------------- 2. SARIF
# Results enough for a 50 MB file (a large CodeQL or Semgrep run).
RESULTS = 63_000


def section_2():
    print(f"2. an {RESULTS:,}-result SARIF (~50 MB)")
    random.seed(7)


    def sarif(path, reword):
        results = []
        for i in range(RESULTS):
            msg = f"variable v{i} shadows an outer binding of the same name declared in the enclosing scope; " \
                  f"rename one of them so that readers and reviewers can tell them apart at a glance ({i % 97})"
            if reword and i % 10 == 0:
                msg = "note: " + msg
            results.append({
                "ruleId": f"rule-{i % 40}", "level": "warning",
                "message": {"text": msg},
                "locations": [{"physicalLocation": {"artifactLocation": {"uri": f"src/module_{i % 50}/file_{i % 500}.rs"},
                                                    "region": {"startLine": 1 + (i // 500) * 3 + (30 if reword and i % 7 == 0 else 0),
                                                               "startColumn": 5, "endLine": 1 + (i // 500) * 3, "endColumn": 40}}}],
                "partialFingerprints": {"primaryLocationLineHash": hashlib.sha256(f"r{i}".encode()).hexdigest()[:16]},
                "properties": {"tags": ["maintainability", "shadowing"], "precision": "high"},
            })
        doc = {"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
               "runs": [{"tool": {"driver": {"name": "bench-lint", "version": "1.0.0",
                                             "rules": [{"id": f"rule-{r}", "shortDescription": {"text": f"rule {r}"}} for r in range(40)]}},
                         "results": results}]}
        json.dump(doc, open(path, "w"), indent=1)


    a = os.path.join(WORK, "a.sarif")
    b = os.path.join(WORK, "b.sarif")
    sarif(a, False)
    sarif(b, True)
    print(f"  (files: {os.path.getsize(a) / 1e6:.1f} MB and {os.path.getsize(b) / 1e6:.1f} MB)")
    small = repo(os.path.join(WORK, "small"))
    open(f"{small}/README.md", "w").write("x\n")
    git(small, "add", "-A")
    git(small, "commit", "-q", "-m", "x")
    jq, parse = in_turn([
        ("jq length", ["jq", "length", a], (0,)),
        ("referee parse", [REFEREE, "parse", a], (0,)),
    ], small)
    print(f"  parse / jq: {ratio(parse, jq, 0.5)}")
    of_file = PEAK["referee parse"] * 1024 * 1024 / os.path.getsize(a)
    print(f"  parse peak memory / file size: {of_file:.2f}x ({'meets' if of_file <= 2.5 else 'MISSES'} the 2.5x target)")
    counter = {"n": 0}


    def fresh_loop(i):
        counter["n"] += 1
        name = f"s{counter['n']}"
        subprocess.run([REFEREE, "init", "--loop", name, "--floor", "should", "--max-rounds", "5"], cwd=small,
                       stdout=subprocess.DEVNULL, check=True)
        open(f"{small}/README.md", "a").write(f"{name}\n")
        subprocess.run([REFEREE, "record", "--loop", name, "--findings", a], cwd=small, stdout=subprocess.DEVNULL)
        open(f"{small}/README.md", "a").write("round 2\n")


    # jq again, in turn with each record (a fresh loop's round 1 made
    # before each pair).
    jq, match = in_turn([
        ("jq length b.sarif (in turn with record)", ["jq", "length", b], (0,)),
        (f"referee record: {RESULTS:,} against {RESULTS:,} known (round 2)",
         lambda i: [REFEREE, "record", "--loop", f"s{counter['n']}", "--findings", b], (10,)),
    ], small, runs=min(RUNS, 5), setup=fresh_loop)
    print(f"  record round 2 / jq: {match / jq:.2f}x (no target: a regression guard for matching)")


# ---------------------------------------------------------------- 3. 100 rounds
def section_3():
    print("3. a loop of 100 rounds (the most a contract allows) and 1,000 findings")
    st = repo(os.path.join(WORK, "status"))
    open(f"{st}/a.txt", "w").write("a\n")
    git(st, "add", "-A")
    git(st, "commit", "-q", "-m", "a")
    subprocess.run([REFEREE, "init", "--loop", "s", "--max-rounds", "100"], cwd=st,
                   stdout=subprocess.DEVNULL, check=True)
    review = os.path.join(WORK, "status-review.json")
    for n in range(1, 101):
        open(f"{st}/a.txt", "a").write(f"line {n}\n")
        known = min(n * 10, 1000)
        json.dump({"findings": [{"id": f"F{i}", "severity": "bug" if i % 4 else "nit",
                                 "title": f"problem {i} in module {i % 37}", "file": f"src/m{i % 37}.rs",
                                 "line": i % 200 + 1, "body": "why it matters"} for i in range(known)]},
                  open(review, "w"))
        r = subprocess.run([REFEREE, "record", "--loop", "s", "--findings", review], cwd=st,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode not in (10, 20):
            raise SystemExit(f"round {n}: exit {r.returncode}: {r.stderr.decode()[-300:]}")
    runs = max(RUNS, 11)
    verify, status, show = in_turn([
        ("referee ledger verify", [REFEREE, "ledger", "verify"], (0,)),
        ("referee status", [REFEREE, "status"], (0,)),
        ("referee ledger show --format json", [REFEREE, "ledger", "show", "--format", "json"], (0,)),
    ], st, runs=runs)
    print(f"  ledger verify: {within(verify, 50)}")
    print(f"  status: {within(status, 50)}")
    print(f"  ledger show --format json: {within(show, 50)}")


# ---------------------------------------------------------------- 4. start-up
def section_4():
    print("4. start-up")
    bench("referee --version", [REFEREE, "--version"], WORK, runs=max(RUNS, 11))


# ---------------------------------------------------------------- 5. hook stop, no loop
def section_5():
    print("5. `referee hook stop` in a repository with no loop (the end of every agent turn)")
    plain = repo(os.path.join(WORK, "plain"))
    open(f"{plain}/a.txt", "w").write("a\n")
    payload = os.path.join(WORK, "payload.json")
    json.dump({"session_id": "s", "cwd": plain, "hook_event_name": "Stop", "stop_hook_active": False,
               "transcript_path": None}, open(payload, "w"))
    runs = max(RUNS, 31)
    top, hook = in_turn([
        ("git rev-parse --show-toplevel", ["git", "rev-parse", "--show-toplevel"], (0,)),
        ("referee hook stop", [REFEREE, "hook", "stop"], (0,), payload),
    ], plain, runs=runs)
    print(f"  hook stop / git rev-parse: {ratio(hook, top, 2)}; under 10 ms: {'yes' if hook < 0.010 else 'NO'}")


# ---------------------------------------------------------------- 6. a long loop of big fix patches
def section_6():
    print("6. `record` over a 100-round loop whose every fix round rewrites 500 lines (+500 -500)")
    lp = repo(os.path.join(WORK, "long"))
    width = 500

    def write(n):
        with open(f"{lp}/src.py", "w") as fh:
            fh.write("".join(f"value_{i} = compute({i}, round={n})\n" for i in range(width)))

    write(0)
    git(lp, "add", "-A")
    git(lp, "commit", "-q", "-m", "base")
    subprocess.run([REFEREE, "init", "--loop", "l", "--max-rounds", "100"], cwd=lp,
                   stdout=subprocess.DEVNULL, check=True)
    review = os.path.join(WORK, "long-review.json")
    # One finding the writer never fixes, at a place no round touches: the
    # loop goes on to its cap.
    json.dump({"findings": [{"id": "F1", "severity": "bug", "title": "config loader ignores the env",
                             "file": "other.py", "line": 1, "body": "why"}]}, open(review, "w"))
    times = {}
    for n in range(1, 101):
        write(n)
        w, _ = timed([REFEREE, "record", "--loop", "l", "--findings", review], lp, ok=(10, 20))
        times[n] = w
    first = statistics.median(times[n] for n in range(2, 12))
    last = statistics.median(times[n] for n in range(91, 101))
    print(f"  rounds 2-11 (median)  {first*1000:8.0f} ms")
    print(f"  rounds 91-100 (median) {last*1000:7.0f} ms")
    print(f"  round 100 / round 2: {ratio(last, first, 1.3)}")


# ---------------------------------------------------------------- 7. JUnit
def junit(path, cases, suites):
    """A JUnit report of `cases` test cases in `suites` suites, as a large
    CI run writes it: one case in 100 fails with a message and a trace,
    one in 50 is skipped."""
    per = cases // suites
    with open(path, "w") as fh:
        fh.write('<?xml version="1.0" encoding="UTF-8"?>\n')
        fh.write(f'<testsuites name="bench" tests="{cases}" failures="{cases // 100}" errors="0" time="1.0">\n')
        n = 0
        for s in range(suites):
            failing = sum(1 for i in range(n, n + per) if i % 100 == 0)
            fh.write(f'  <testsuite name="pkg{s}.ModuleTest" tests="{per}" failures="{failing}" errors="0" '
                     f'skipped="0" time="0.5" timestamp="2026-12-02T00:00:00">\n')
            fh.write('    <properties><property name="python" value="3.11.7"/></properties>\n')
            for _ in range(per):
                head = f'    <testcase classname="pkg{s}.ModuleTest" name="test_case_{n}" file="tests/pkg{s}/test_module.py" line="{n % 400}" time="0.001"'
                if n % 100 == 0:
                    fh.write(head + f'>\n      <failure message="AssertionError: assert {n} == {n + 1}">def test_case_{n}():\n'
                             f'&gt;       assert compute({n}) == {n + 1}\nE       AssertionError: assert {n} == {n + 1}\n\n'
                             f'tests/pkg{s}/test_module.py:{n % 400 + 2}: AssertionError</failure>\n'
                             f'      <system-out>captured output of case {n}</system-out>\n    </testcase>\n')
                elif n % 50 == 1:
                    fh.write(head + '>\n      <skipped message="needs a database"/>\n    </testcase>\n')
                else:
                    fh.write(head + '/>\n')
                n += 1
            fh.write('  </testsuite>\n')
        fh.write('</testsuites>\n')


def section_7():
    print("7. `parse --format junit` of large reports, next to Python's ElementTree")
    for cases, suites in ((100_000, 1_000), (300_000, 3_000)):
        path = os.path.join(WORK, f"junit-{cases}.xml")
        junit(path, cases, suites)
        print(f"  ({cases:,} cases in {suites:,} suites: {os.path.getsize(path) / 1e6:.1f} MB)")
        etree = ["python3", "-c", "import sys, xml.etree.ElementTree as ET; ET.parse(sys.argv[1])", path]
        et, parse = in_turn([
            (f"ElementTree.parse, {cases:,} cases", etree, (0,)),
            (f"referee parse --format junit, {cases:,} cases", [REFEREE, "parse", "--format", "junit", path], (0,)),
        ], WORK)
        print(f"  parse / ElementTree: {ratio(parse, et, 1.0)}")


for n in sorted(ONLY):
    globals()[f"section_{n}"]()
