//! Property-style tests: no input, however broken, makes a parser panic,
//! and every refusal is an error with a message. A seeded xorshift keeps
//! the runs reproducible without another dependency.

use referee::findings::{self, Format};

const FORMATS: [Format; 6] = [
    Format::Auto,
    Format::Native,
    Format::Tagged,
    Format::Sarif,
    Format::Junit,
    Format::Codex,
];

struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn check(input: &[u8]) {
    for format in FORMATS {
        match findings::parse(input, format, "/work/repo") {
            Ok(parsed) => {
                for finding in &parsed.findings {
                    assert!(!finding.id.is_empty() && !finding.title.is_empty());
                }
            }
            Err(err) => assert!(!err.to_string().is_empty()),
        }
    }
}

#[test]
fn random_bytes_never_panic() {
    let mut rng = XorShift(0x9e37_79b9_7f4a_7c15);
    // Bytes skewed towards the characters the formats care about.
    const ALPHABET: &[u8] = b"{}[]<>\"':,/\\- \n\t0123456789abcdefPnulltrue&;#x!?\xe2\x80\x94";
    for round in 0..3000 {
        let len = rng.below(200);
        let input: Vec<u8> = (0..len)
            .map(|_| {
                if round % 2 == 0 {
                    ALPHABET[rng.below(ALPHABET.len())]
                } else {
                    rng.next() as u8
                }
            })
            .collect();
        check(&input);
    }
}

/// Lines built from the pieces the tagged and Codex text readers cut on:
/// list markers, emphasis, brackets, places, dashes and multi-byte spaces,
/// so that every slicing path meets odd neighbours.
#[test]
fn markdown_shaped_lines_never_panic() {
    const PIECES: &[&str] = &[
        "- ",
        "* ",
        "+ ",
        "• ",
        "1. ",
        "12) ",
        "(3) ",
        "### ",
        "> ",
        "[ ] ",
        "[x] ",
        "**",
        "*",
        "_",
        "`",
        "[bug]",
        "[P1]",
        "[bgu]",
        "[clean]",
        "[resolved]",
        "[severity: high]",
        "[",
        "]",
        "(",
        ")",
        "src/a.rs",
        "/abs/b.rs",
        "e.g.",
        ":",
        "3",
        "42-45",
        "#L",
        "L7",
        "-",
        " — ",
        " – ",
        " - ",
        "—",
        " ",
        "\t",
        "F1 ",
        "F-1a2b ",
        "title",
        "🔴",
        "\u{a0}",
        "\u{3000}",
        "é",
        "\n",
        "\n  ",
        "\n\n",
        "http://x.y/z",
        "a[high]",
        "[high](x)",
    ];
    let mut rng = XorShift(0x2545_f491_4f6c_dd1d);
    for _ in 0..3000 {
        let pieces = rng.below(24);
        let input: String = (0..pieces)
            .map(|_| PIECES[rng.below(PIECES.len())])
            .collect();
        check(input.as_bytes());
    }
}

#[test]
fn mutated_real_samples_never_panic() {
    let dir = format!("{}/tests/fixtures/findings", env!("CARGO_MANIFEST_DIR"));
    let mut samples = Vec::new();
    for sub in ["native", "tagged", "sarif", "junit", "codex"] {
        for entry in std::fs::read_dir(format!("{dir}/{sub}")).expect("fixtures") {
            let path = entry.expect("entry").path();
            if path.extension().is_some_and(|ext| ext != "md") {
                samples.push(std::fs::read(&path).expect("read"));
            }
        }
    }
    assert!(samples.len() >= 15, "fixtures missing");
    let mut rng = XorShift(42);
    for _ in 0..1500 {
        let mut input = samples[rng.below(samples.len())].clone();
        match rng.below(4) {
            0 => input.truncate(rng.below(input.len())),
            1 => {
                for _ in 0..1 + rng.below(8) {
                    let at = rng.below(input.len());
                    if let Some(byte) = input.get_mut(at) {
                        *byte = rng.next() as u8;
                    }
                }
            }
            2 => {
                let at = rng.below(input.len());
                let len = rng.below(input.len() - at + 1);
                input.drain(at..at + len);
            }
            _ => {
                let at = rng.below(input.len());
                let other = &samples[rng.below(samples.len())];
                let from = rng.below(other.len());
                input.splice(at..at, other[from..].iter().copied().take(64));
            }
        }
        check(&input);
    }
}
