//! 5. Agents that misbehave, through `referee run` and the fake agent.

use super::*;

fn vm_hwm_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Runs `cmd` to its end, polling its peak resident memory (`VmHWM`, KiB).
fn peak_memory(cmd: &mut Command) -> (std::process::ExitStatus, String, u64) {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let pid = child.id();
    let mut peak_kib = 0;
    while child.try_wait().unwrap().is_none() {
        if let Some(kib) = vm_hwm_kib(pid) {
            peak_kib = peak_kib.max(kib);
        }
        assert!(
            start.elapsed() < HANG_GUARD * 3,
            "hang guard: referee did not end"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let (status, stderr) = finish(child, "referee");
    (status, stderr, peak_kib)
}

/// 300 MB: the most referee itself may use while an agent floods it; the
/// agent runner keeps 32 MiB per stream.
const RSS_CAP_KIB: u64 = 300 * 1000 * 1000 / 1024;

#[test]
fn a_reviewer_printing_a_gigabyte_costs_bounded_memory_and_records_nothing() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 1 }' > src/a.rs\n")
        .file("reviewer-1.sh", "head -c 1073741824 /dev/zero\n");
    let start = Instant::now();
    let (status, stderr, peak_kib) = peak_memory(f.repo.referee_std().args(["run", "--task", "t"]));
    let elapsed = start.elapsed();
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(
            "round 1: reviewer `command` failed: printed 1040187392 bytes more than the 32 MiB kept; nothing was recorded"
        ),
        "{stderr}"
    );
    assert!(peak_kib > 0, "no memory reading of the referee process");
    assert!(
        peak_kib < RSS_CAP_KIB,
        "referee peaked at {peak_kib} KiB while the agent printed 1 GiB (cap {RSS_CAP_KIB} KiB)"
    );
    assert_eq!(f.rows(), 0);
    // What is kept of the output is capped on disk too.
    let kept: u64 = tree(&f.repo.join(".referee/ledgers/l/failed"))
        .values()
        .map(|b| b.len() as u64)
        .max()
        .unwrap_or(0);
    assert!(
        kept <= referee::agent::process::OUTPUT_CAP as u64,
        "{kept} bytes kept"
    );
    println!(
        "1 GiB reviewer: referee peak RSS {} MiB, {:.1} s",
        peak_kib / 1024,
        elapsed.as_secs_f64()
    );
}

#[test]

fn a_stale_git_ref_lock_left_by_a_crash_does_not_block_the_loop() {
    let repo = Repo::new();
    assert_eq!(referee(&repo, &["init", "--loop", "l"]).code, 0);
    // What git leaves when it is killed between taking the ref's lock and
    // renaming it into place.
    std::fs::create_dir_all(repo.join(".git/refs/referee/l")).unwrap();
    std::fs::write(repo.join(".git/refs/referee/l/round-1.lock"), "").unwrap();
    let (status, stderr) = finish(
        spawn_record(&repo, "l", &crash_finding(1)),
        "record after a crash",
    );
    assert_eq!(status.code(), Some(10), "{stderr}");
    assert_eq!(referee(&repo, &["ledger", "verify", "--loop", "l"]).code, 0);
}

#[test]

fn a_huge_responses_file_is_refused_with_bounded_memory() {
    let repo = Repo::new();
    assert_eq!(referee(&repo, &["init", "--loop", "l"]).code, 0);
    let findings = repo.join("findings.json");
    std::fs::write(&findings, r#"{"findings":[]}"#).unwrap();
    // 1 GiB that takes no disk: a sparse file.
    let responses = repo.join("responses.json");
    std::fs::File::create(&responses)
        .unwrap()
        .set_len(1 << 30)
        .unwrap();
    let (status, stderr, peak_kib) = peak_memory(repo.referee_std().args([
        "record",
        "--findings",
        findings.to_str().unwrap(),
        "--responses",
        responses.to_str().unwrap(),
    ]));
    assert!(
        peak_kib < RSS_CAP_KIB,
        "referee peaked at {peak_kib} KiB reading a 1 GiB responses file (cap {RSS_CAP_KIB} KiB)"
    );
    assert_eq!(status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("larger than"), "{stderr}");
}

#[test]
fn a_review_that_is_not_utf8_is_refused_and_records_nothing() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 2 }' > src/a.rs\n")
        .file("reviewer-1.print", b"\xc3({\"findings\": []}\n");
    let out = referee(&f.repo, &["run", "--task", "t"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr.contains(
            "round 1: reviewer `command` gave no readable review: input is not utf-8: invalid byte at offset 0"
        ),
        "{}",
        out.stderr
    );
    assert!(
        out.stderr.contains("nothing was recorded"),
        "{}",
        out.stderr
    );
    assert_eq!(f.rows(), 0);
}

#[test]
fn a_reviewer_that_exits_zero_with_nothing_is_not_a_clean_round() {
    let f = Driven::new();
    f.file("writer-1.sh", "echo 'fn a() { 3 }' > src/a.rs\n");
    let out = referee(&f.repo, &["run", "--task", "t"]);
    assert_eq!(out.code, 1, "{}", out.stdout);
    assert!(
        out.stderr
            .contains("round 1: reviewer `command` gave no readable review: input is empty"),
        "{}",
        out.stderr
    );
    assert_eq!(f.rows(), 0);
}
