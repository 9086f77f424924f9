use super::*;
use crate::patch::parse;

/// One file's part of a diff: one hunk after a context line.
fn one_hunk(file: &str, removed: &[&str], added: &[&str]) -> String {
    let mut s = format!(
        "diff --git a/{file} b/{file}\n--- a/{file}\n+++ b/{file}\n@@ -1,{} +1,{} @@\n",
        removed.len() + 1,
        added.len() + 1
    );
    s.push_str(" ctx\n");
    for r in removed {
        s.push_str(&format!("-{r}\n"));
    }
    for a in added {
        s.push_str(&format!("+{a}\n"));
    }
    s
}

/// The fix rounds' patches recorded in order (round 2 on), then `later` checked.
fn after(fixes: &[&str], later: &str) -> Option<LineReversal> {
    let mut lines = FixLines::default();
    for (i, fix) in fixes.iter().enumerate() {
        lines.record(i as u32 + 2, &parse(fix.as_bytes()));
    }
    lines.reversal(&parse(later.as_bytes()))
}

fn reversal(later: &str, fix: &str) -> Option<LineReversal> {
    after(&[fix], later)
}

#[test]
fn reverses_line_table() {
    struct Case {
        name: &'static str,
        fix: String,
        later: String,
        reverses: bool,
    }
    let cases = [
        Case {
            name: "exact reversal",
            fix: one_hunk("f.rs", &["if a < b {"], &["if a <= b {"]),
            later: one_hunk("f.rs", &["if a <= b {"], &["if a < b {"]),
            reverses: true,
        },
        Case {
            name: "reversal with different whitespace",
            fix: one_hunk("f.rs", &["if a<b {"], &["if a <= b {", ""]),
            later: one_hunk("f.rs", &["  if a<=b {"], &["\tif a < b {"]),
            reverses: true,
        },
        Case {
            name: "a line the fix added, removed with nothing in its place",
            fix: one_hunk("f.rs", &[], &["check_expiry(token);"]),
            later: one_hunk("f.rs", &["check_expiry(token);"], &[]),
            reverses: true,
        },
        Case {
            name: "a line the fix added, replaced by a line with nothing of its own",
            fix: one_hunk("f.py", &[], &["check_expiry(token)"]),
            later: one_hunk("f.py", &["check_expiry(token)"], &["pass"]),
            reverses: true,
        },
        Case {
            name: "a line the fix added, removed while its neighbour is re-indented",
            fix: one_hunk("f.py", &[], &["check_expiry(token)"]),
            later: one_hunk(
                "f.py",
                &["check_expiry(token)", "  return token"],
                &["    return token"],
            ),
            reverses: true,
        },
        Case {
            name: "a line the fix added, rewritten into a third form",
            fix: one_hunk("f.rs", &["if limit < count {"], &["if limit <= count {"]),
            later: one_hunk("f.rs", &["if limit <= count {"], &["if limit.le(&count) {"]),
            reverses: false,
        },
        Case {
            name: "partial reversal inside a larger hunk",
            fix: one_hunk(
                "f.rs",
                &["let x = a;", "let y = b;"],
                &["let x = a?;", "let y = b?;"],
            ),
            later: one_hunk("f.rs", &["let x = a?;"], &["let x = a;"]),
            reverses: true,
        },
        Case {
            name: "the same change again is not a reversal",
            fix: one_hunk("f.rs", &["if limit < count {"], &["if limit <= count {"]),
            later: one_hunk("f.rs", &["if limit < count {"], &["if limit <= count {"]),
            reverses: false,
        },
        Case {
            name: "the line back in another file, with no code moved there",
            fix: one_hunk("f.rs", &["if limit < count {"], &["if limit <= count {"]),
            later: one_hunk("g.rs", &["if limit <= count {"], &["if limit < count {"]),
            reverses: false,
        },
        Case {
            name: "lines with nothing of their own never count",
            fix: one_hunk("f.rs", &["    }", "  else {", "return;"], &[]),
            later: one_hunk("f.rs", &[], &["}", "else {", "return;"]),
            reverses: false,
        },
        Case {
            name: "a line the fix moved within the file",
            fix: one_hunk(
                "f.rs",
                &["use std::io;"],
                &["use std::fmt;", "use std::io;"],
            ),
            later: one_hunk("f.rs", &[], &["use std::io;"]),
            reverses: false,
        },
        Case {
            name: "whitespace-only changes never count",
            fix: one_hunk("f.rs", &["x  y"], &["x y"]),
            later: one_hunk("f.rs", &["x y"], &["x  y"]),
            reverses: false,
        },
        Case {
            name: "empty patches",
            fix: String::new(),
            later: String::new(),
            reverses: false,
        },
    ];
    for c in cases {
        let got = reversal(&c.later, &c.fix);
        assert_eq!(got.is_some(), c.reverses, "{}: {got:?}", c.name);
    }
    let r = reversal(
        &one_hunk("f.rs", &["let n = s.trim();"], &["let n = s;"]),
        &one_hunk("f.rs", &["let n = s;"], &["let n = s.trim();"]),
    );
    assert_eq!(
        r.map(|r| r.to_string()).as_deref(),
        Some("puts back a line that round 2 removed in `f.rs`: `let n = s;`")
    );
}

#[test]
fn reversal_across_a_rename() {
    let fix = one_hunk("old.rs", &["let x = 1;"], &["let y = 2;"]);
    let later = "diff --git a/old.rs b/new.rs\nrename from old.rs\nrename to new.rs\n\
--- a/old.rs\n+++ b/new.rs\n@@ -1,2 +1,2 @@\n ctx\n-let y = 2;\n+let x = 1;\n";
    assert!(reversal(later, &fix).is_some());
    // Renamed in one fix round, reversed under the new name in the next.
    let rename = "diff --git a/old.rs b/new.rs\nsimilarity index 100%\nrename from old.rs\nrename to new.rs\n";
    let later = one_hunk("new.rs", &["let y = 2;"], &["let x = 1;"]);
    assert!(after(&[&fix, rename], &later).is_some());
}

/// The function `load` as the writer wrote it, with or without its fix line.
const LOAD: [&str; 4] = [
    "def load(path):",
    "    with open(path) as fh:",
    "        data = json.load(fh)",
    "    return normalise(data)",
];

#[test]
fn a_line_a_fix_removed_comes_back_where_the_code_moved() {
    // Round 2 replaced eval with literal_eval in api.py; the next round moves
    // the function to parse.py with eval back.
    let fix = one_hunk(
        "api.py",
        &["    value = eval(text)"],
        &["    value = ast.literal_eval(text)"],
    );
    let later = one_hunk(
        "api.py",
        &[
            "def parse_value(text):",
            "    value = ast.literal_eval(text)",
            "    return clamp(value)",
        ],
        &["from parse import parse_value"],
    ) + &one_hunk(
        "parse.py",
        &[],
        &[
            "def parse_value(text):",
            "    value = eval(text)",
            "    return clamp(value)",
        ],
    );
    let r = reversal(&later, &fix).expect("a reversal across files");
    assert!(r.restored);
    assert_eq!(r.moved.as_deref(), Some("api.py"));
    assert_eq!(
        r.to_string(),
        "puts back a line that round 2 removed in `api.py`, in `parse.py` where the code moved: `value = eval(text)`"
    );
}

#[test]
fn a_module_split_that_keeps_the_fix_is_not_a_reversal() {
    // Round 2 added the guard in store.py; the next round deletes store.py
    // and splits it into two modules, the guard with its function.
    let fix = one_hunk(
        "store.py",
        &[],
        &["    if not path: raise ValueError(\"no path\")"],
    );
    let mut whole = vec![LOAD[0], "    if not path: raise ValueError(\"no path\")"];
    whole.extend(&LOAD[1..]);
    whole.extend([
        "def save(path, data):",
        "    with open(path, \"w\") as fh:",
        "        json.dump(data, fh)",
    ]);
    let deleted = format!(
        "diff --git a/store.py b/store.py\ndeleted file mode 100644\n--- a/store.py\n+++ /dev/null\n@@ -1,{} +0,0 @@\n{}",
        whole.len(),
        whole.iter().map(|l| format!("-{l}\n")).collect::<String>()
    );
    let created = |file: &str, lines: &[&str]| {
        format!(
            "diff --git a/{file} b/{file}\nnew file mode 100644\n--- /dev/null\n+++ b/{file}\n@@ -0,0 +1,{} @@\n{}",
            lines.len(),
            lines.iter().map(|l| format!("+{l}\n")).collect::<String>()
        )
    };
    let later =
        deleted + &created("store/load.py", &whole[..5]) + &created("store/save.py", &whole[5..]);
    assert_eq!(reversal(&later, &fix), None);
    // Recorded, the guard lives in store/load.py: removing it there later is
    // a reversal of round 2.
    let mut lines = FixLines::default();
    lines.record(2, &parse(fix.as_bytes()));
    lines.record(3, &parse(later.as_bytes()));
    let gone = one_hunk(
        "store/load.py",
        &["    if not path: raise ValueError(\"no path\")"],
        &[],
    );
    let r = lines
        .reversal(&parse(gone.as_bytes()))
        .expect("the guard removed");
    assert_eq!(
        (r.round, r.restored, r.file.as_str()),
        (2, false, "store/load.py")
    );
}

#[test]
fn a_line_a_fix_added_left_behind_when_its_code_moves() {
    let guard = "    if not path: raise ValueError(\"no path\")";
    let fix = one_hunk("store.py", &[], &[guard]);
    let mut old = vec![LOAD[0], guard];
    old.extend(&LOAD[1..]);
    let later = one_hunk("store.py", &old, &["from store_io import load"])
        + &one_hunk("store_io.py", &[], &LOAD);
    let r = reversal(&later, &fix).expect("the guard left behind");
    assert!(!r.restored);
    assert_eq!(r.moved.as_deref(), Some("store_io.py"));
    assert_eq!(
        r.to_string(),
        format!(
            "leaves out a line that round 2 added in `store.py` when the code around it moved to `store_io.py`: `{}`",
            guard.trim()
        )
    );
}

#[test]
fn a_common_line_in_another_file_is_not_a_reversal() {
    // Round 2 removed an unused import in a.py; round 3 needs it in b.py,
    // and also moves one line from a.py (one line is a coincidence, not a move).
    let fix = one_hunk("a.py", &["import os"], &[]);
    let later = one_hunk("a.py", &["LIMIT = 10"], &[])
        + &one_hunk("b.py", &[], &["import os", "LIMIT = 10"]);
    assert_eq!(reversal(&later, &fix), None);
    // And a line a fix added in a.py, removed from c.py, is c.py's business.
    let fix = one_hunk("a.py", &[], &["import os"]);
    let later = one_hunk("c.py", &["import os"], &[]);
    assert_eq!(reversal(&later, &fix), None);
}

#[test]
fn the_latest_fix_round_of_a_line_is_the_one_named() {
    let r = after(
        &[
            &one_hunk("f.rs", &["if limit < count {"], &["if limit <= count {"]),
            &one_hunk("f.rs", &["if limit <= count {"], &["if limit.le(&count) {"]),
        ],
        &one_hunk("f.rs", &["if limit.le(&count) {"], &["if limit <= count {"]),
    )
    .expect("round 3's line removed, round 3 put back");
    assert_eq!(r.round, 3);
}

#[test]
fn what_is_kept_holds_no_code_text_and_reads_back() {
    let mut lines = FixLines::default();
    lines.record(
        2,
        &parse(
            one_hunk(
                "f.rs",
                &["let key = \"sk-live-123\";"],
                &["let key = env(\"KEY\");"],
            )
            .as_bytes(),
        ),
    );
    let bytes = lines.to_bytes();
    let text = String::from_utf8_lossy(&bytes);
    assert!(!text.contains("sk-live") && !text.contains("env"), "{text}");
    let back = FixLines::from_bytes(&bytes).unwrap();
    assert_eq!(back, lines);
    assert!(
        back.reversal(&parse(
            one_hunk(
                "f.rs",
                &["let key = env(\"KEY\");"],
                &["let key = \"sk-live-123\";"]
            )
            .as_bytes()
        ))
        .is_some()
    );
}

#[test]
fn any_bytes_record_and_check_without_panicking() {
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 ^= self.0 << 13;
            self.0 ^= self.0 >> 7;
            self.0 ^= self.0 << 17;
            self.0
        }
        fn below(&mut self, n: usize) -> usize {
            (self.next() % n as u64) as usize
        }
    }
    let pieces: &[&[u8]] = &[
        b"diff --git a/a b/b\n",
        b"diff --git a/b b/a\n",
        b"rename from a\nrename to b\n",
        b"--- a/a\n+++ b/a\n",
        b"--- a/b\n+++ b/b\n",
        b"@@ -1,3 +1,3 @@\n",
        b"+value = compute(1)\n",
        b"-value = compute(1)\n",
        b"+other = compute(2)\n",
        b"-other = compute(2)\n",
        b" context line\n",
        b"+}\n",
        b"\xff\xfe\n",
    ];
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut lines = FixLines::default();
    for round in 0..2000u32 {
        let mut input = Vec::new();
        for _ in 0..rng.below(40) {
            input.extend_from_slice(pieces[rng.below(pieces.len())]);
        }
        let p = parse(&input);
        if let Some(r) = lines.reversal(&p) {
            assert!(r.round >= 2 && r.round <= round + 1, "{r:?}");
            assert!(!r.to_string().is_empty());
        }
        lines.record(round + 2, &p);
    }
}

#[test]
fn what_is_kept_is_grouped_by_round_and_file() {
    let mut lines = FixLines::default();
    lines.record(
        2,
        &parse(one_hunk("f.rs", &[], &["let a = 1;", "let b = 2;", "let c = 3;"]).as_bytes()),
    );
    lines.record(
        3,
        &parse(one_hunk("g.rs", &["let d = 4;"], &["let e = 5;"]).as_bytes()),
    );
    let bytes = lines.to_bytes();
    let header_end = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
    let header_len = bytes[header_end..]
        .iter()
        .position(|&b| b == b'\n')
        .unwrap();
    let json: serde_json::Value =
        serde_json::from_slice(&bytes[header_end..header_end + header_len]).unwrap();
    // Round 2's three lines in f.rs; round 3's removed and added line in g.rs.
    assert_eq!(
        json,
        serde_json::json!({
            "files": [["f.rs"], ["g.rs"]],
            "changes": [
                {"round": 2, "added": true, "file": 0, "lines": 3},
                {"round": 3, "added": false, "file": 1, "lines": 1},
                {"round": 3, "added": true, "file": 1, "lines": 1},
            ],
        })
    );
    // Then the five hashes, 8 bytes each.
    assert_eq!(bytes.len(), header_end + header_len + 1 + 5 * 8);
    assert!(bytes.starts_with(b"referee fix-lines 1\n"));
}

#[test]
fn the_first_loops_json_reads_as_the_same_lines() {
    let mut lines = FixLines::default();
    lines.record(
        2,
        &parse(one_hunk("f.rs", &["let a = 1;"], &["let b = 2;"]).as_bytes()),
    );
    let bytes = lines.to_bytes();
    let start = bytes.len() - 16;
    let hash =
        |i: usize| u64::from_be_bytes(bytes[start + 8 * i..start + 8 * i + 8].try_into().unwrap());
    let json = format!(
        r#"{{"files":[["f.rs"]],"changes":[{{"round":2,"added":false,"file":0,"lines":[{}]}},{{"round":2,"added":true,"file":0,"lines":[{}]}}]}}"#,
        hash(0),
        hash(1)
    );
    assert_eq!(FixLines::from_bytes(json.as_bytes()).unwrap(), lines);
}

#[test]
fn stored_bytes_that_do_not_add_up_are_refused_by_what_is_wrong() {
    let mut lines = FixLines::default();
    lines.record(
        2,
        &parse(one_hunk("f.rs", &["let a = 1;"], &["let b = 2;"]).as_bytes()),
    );
    let bytes = lines.to_bytes();
    let err = |b: &[u8]| FixLines::from_bytes(b).unwrap_err().to_string();
    assert!(
        err(&bytes[..bytes.len() - 3]).contains("not a multiple of 8"),
        "{}",
        err(&bytes[..bytes.len() - 3])
    );
    assert!(err(&bytes[..bytes.len() - 8]).contains("counts more lines than the 1 it holds"));
    let mut more = bytes.clone();
    more.extend_from_slice(&[0; 8]);
    assert!(
        err(&more).contains("3 line hashes, 1 more than its header counts"),
        "{}",
        err(&more)
    );
    assert!(err(b"referee fix-lines 1\n{\"files\":[]").contains("header line has no end"));
    assert!(err(b"referee fix-lines 1\n{\"files\":1}\n").contains("its header line"));
    assert!(err(b"\x00\x01").contains("neither referee's fix lines nor their JSON"));
    // Any cut of the bytes is refused or read; none panics.
    for end in 0..bytes.len() {
        let _ = FixLines::from_bytes(&bytes[..end]);
    }
}

#[test]
fn a_line_left_behind_by_code_moved_within_its_file() {
    let guard = "    if not path: raise ValueError(\"no path\")";
    let fix = one_hunk("store.py", &[], &[guard]);
    let mut old = vec![LOAD[0], guard];
    old.extend(&LOAD[1..]);
    // The function moves to the end of the same file, without the guard.
    let later = format!(
        "diff --git a/store.py b/store.py\n--- a/store.py\n+++ b/store.py\n@@ -1,7 +1,6 @@\n ctx\n{} middle()\n{}",
        old.iter().map(|l| format!("-{l}\n")).collect::<String>(),
        LOAD.iter().map(|l| format!("+{l}\n")).collect::<String>()
    );
    let r = reversal(&later, &fix).expect("the guard left behind");
    assert_eq!(r.moved.as_deref(), Some("store.py"));
    assert_eq!(
        r.to_string(),
        format!(
            "leaves out a line that round 2 added in `store.py` when the code around it moved: `{}`",
            guard.trim()
        )
    );
}

#[test]
fn a_twin_of_a_removed_line_moved_within_its_file_is_not_put_back() {
    // Round 2 removed one of two copies of a call; the next round moves the
    // other copy down the file: nothing comes back.
    let fix = one_hunk("a.py", &["    audit(user)"], &[]);
    let later = "diff --git a/a.py b/a.py\n--- a/a.py\n+++ b/a.py\n@@ -1,4 +1,4 @@\n ctx\n-    audit(user)\n middle()\n+    audit(user)\n end()\n";
    assert_eq!(reversal(later, &fix), None);
}

#[test]
fn a_fix_line_replaced_in_a_run_where_little_moved_is_an_ordinary_fix() {
    // Round 2 added the check; the next round rewrites its run: one line of
    // three moves elsewhere, the check is replaced by a new one.
    let fix = one_hunk("a.py", &[], &["    check_expiry(token)"]);
    let later = one_hunk(
        "a.py",
        &[
            "    check_expiry(token)",
            "    refresh(token)",
            "    log_use(token)",
        ],
        &["    token.ensure_valid()"],
    ) + &one_hunk("b.py", &[], &["    refresh(token)"]);
    assert_eq!(reversal(&later, &fix), None);
}

#[test]
fn code_moved_to_two_files_is_said_to_go_where_most_of_it_went() {
    let guard = "    if not path: raise ValueError(\"no path\")";
    let fix = one_hunk("store.py", &[], &[guard]);
    let mut old = vec![LOAD[0], guard];
    old.extend(&LOAD[1..]);
    // One line goes to the file the patch names first, three to the other.
    let later = one_hunk("store.py", &old, &["from store_io import load"])
        + &one_hunk("a_first.py", &[], &[LOAD[0]])
        + &one_hunk("store_io.py", &[], &LOAD[1..]);
    let r = reversal(&later, &fix).expect("the guard left behind");
    assert_eq!(r.moved.as_deref(), Some("store_io.py"));
}
