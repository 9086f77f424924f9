//! 3. Tamper: every byte of every committed row, every evidence file.

use std::os::unix::fs::FileExt;

use referee::digest::sha256_hex;
use referee::ledger::Store;

use super::*;

/// A loop `t` of three real rounds recorded through the binary, with
/// responses, so each round holds several evidence files.
fn three_rounds() -> Repo {
    let repo = Repo::new();
    assert_eq!(
        referee(&repo, &["init", "--loop", "t", "--max-rounds", "5"]).code,
        0
    );
    let responses = repo.join("responses.json");
    std::fs::write(
        &responses,
        r#"{"responses":[{"id":"T1","status":"disputed","note":"on purpose"}]}"#,
    )
    .unwrap();
    for round in 1..=3 {
        repo.write("src/t.rs", &"x\n".repeat(round));
        let mut cmd = repo.referee_std();
        cmd.args(["record", "--loop", "t", "--findings", "-"]);
        if round > 1 {
            cmd.args(["--responses", responses.to_str().unwrap()]);
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        // Titles that differ in words, not only in numbers (which the
        // fingerprint leaves out): three findings.
        let word = ["alpha", "beta", "gamma"][round - 1];
        let findings = format!(
            r#"{{"findings":[{{"id":"T{round}","severity":"bug","title":"tamper {word}","file":"src/t.rs","line":{round}}}]}}"#
        );
        // Dropped at once: `record` reads its findings to the end.
        child
            .stdin
            .take()
            .unwrap()
            .write_all(findings.as_bytes())
            .unwrap();
        let (status, stderr) = finish(child, "record");
        assert_eq!(status.code(), Some(10), "{stderr}");
    }
    repo
}

fn store_of(repo: &Repo, lp: &str) -> Store {
    let contract = std::fs::read(repo.join(&format!(".referee/contracts/{lp}.toml"))).unwrap();
    Store::new(
        repo.join(&format!(".referee/ledgers/{lp}.csv")),
        repo.join(&format!(".referee/ledgers/{lp}")),
        &sha256_hex(&contract),
    )
}

/// What `verify` must name when byte `i` of `ledger` changes: the header,
/// the row holding the byte, or (for the final newline) a torn tail.
fn expected_name(ledger: &[u8], i: usize) -> String {
    if i == ledger.len() - 1 {
        let rows = ledger.iter().filter(|&&b| b == b'\n').count() - 1;
        return format!("torn final line after row {}", rows - 1);
    }
    match ledger[..i].iter().filter(|&&b| b == b'\n').count() {
        0 => "header:".to_string(),
        row => format!("row {row}:"),
    }
}

#[test]
fn every_byte_of_every_row_and_every_evidence_file_is_guarded() {
    let repo = three_rounds();
    let store = store_of(&repo, "t");
    let path = store.path().to_path_buf();
    let original = std::fs::read(&path).unwrap();
    assert_eq!(store.verify().expect("a fresh ledger verifies").rows, 3);
    let file = std::fs::OpenOptions::new().write(true).open(&path).unwrap();

    // In process, through the library: each byte three ways (the lowest bit,
    // ASCII case, and the top bit that breaks UTF-8), restored after each.
    let mut checked = 0;
    for (i, &byte) in original.iter().enumerate() {
        let want = expected_name(&original, i);
        for mask in [0x01u8, 0x20, 0x80] {
            file.write_all_at(&[byte ^ mask], i as u64).unwrap();
            match store.verify() {
                Ok(summary) => panic!(
                    "byte {i} ({:?} -> {:?}) changed unnoticed: {summary:?}",
                    byte as char,
                    (byte ^ mask) as char
                ),
                Err(err) => {
                    let message = err.to_string();
                    assert!(
                        message.contains(&want),
                        "byte {i} ^ {mask:#04x}: expected `{want}` in: {message}"
                    );
                }
            }
            checked += 1;
        }
        file.write_all_at(&[byte], i as u64).unwrap();
    }
    assert_eq!(std::fs::read(&path).unwrap(), original);
    assert_eq!(checked, original.len() * 3);

    // Through the binary, for a sample: exit 1 and the same name.
    for i in (0..original.len()).step_by(97).chain([original.len() - 1]) {
        file.write_all_at(&[original[i] ^ 0x01], i as u64).unwrap();
        let out = referee(&repo, &["ledger", "verify", "--loop", "t"]);
        file.write_all_at(&[original[i]], i as u64).unwrap();
        assert_eq!(out.code, 1, "byte {i}");
        let want = expected_name(&original, i);
        assert!(
            out.stderr.contains(&want),
            "byte {i}: `{want}` in {}",
            out.stderr
        );
    }

    // Each evidence file of each round: one byte changed names that round.
    let mut files = 0;
    for round in 1..=3 {
        let dir = store.evidence_dir(round);
        for (file_path, bytes) in tree(&dir) {
            let mut perms = std::fs::metadata(&file_path).unwrap().permissions();
            let read_only = perms.readonly();
            #[allow(clippy::permissions_set_readonly_false)]
            perms.set_readonly(false);
            std::fs::set_permissions(&file_path, perms.clone()).unwrap();
            let mut changed = bytes.clone();
            match changed.get_mut(bytes.len() / 2) {
                Some(b) => *b ^= 0x01,
                None => changed.push(b'x'),
            }
            std::fs::write(&file_path, &changed).unwrap();
            let err = store.verify().expect_err("an evidence edit went unnoticed");
            let sample = files == 0;
            let cli = sample.then(|| referee(&repo, &["ledger", "verify", "--loop", "t"]));
            std::fs::write(&file_path, &bytes).unwrap();
            perms.set_readonly(read_only);
            std::fs::set_permissions(&file_path, perms).unwrap();
            let want = format!("row {round}: evidence digest mismatch");
            assert!(
                err.to_string().contains(&want),
                "{}: {err}",
                file_path.display()
            );
            if let Some(out) = cli {
                assert_eq!(out.code, 1);
                assert!(out.stderr.contains(&want), "{}", out.stderr);
            }
            files += 1;
        }
    }
    assert!(files >= 12, "only {files} evidence files");
    assert!(store.verify().is_ok());
    println!(
        "tamper: {} ledger bytes x 3 changes and {files} evidence files, each caught and named",
        original.len()
    );
}
