//! sha256 digests as lowercase hex. Pure.

use sha2::{Digest, Sha256};

/// The sha256 of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// An incremental sha256 whose fields are framed so that no two field lists
/// hash alike (`ab`,`c` differs from `a`,`bc`): each field is hashed as
/// `<len>:<bytes>,`. The framed text is gathered and hashed in one pass
/// (many small updates cost more than the hashing itself on a large
/// ledger).
#[derive(Default)]
pub struct Framed(Vec<u8>);

impl Framed {
    pub fn new(domain: &str) -> Self {
        let mut framed = Framed(Vec::with_capacity(512));
        framed.field(domain.as_bytes());
        framed
    }

    pub fn field(&mut self, bytes: &[u8]) {
        // `<len>:`, written without an allocation; most fields are shorter
        // than 100 bytes (a ledger frames millions of them).
        let len = bytes.len();
        let out = &mut self.0;
        if len < 10 {
            out.extend_from_slice(&[b'0' + len as u8, b':']);
        } else if len < 100 {
            out.extend_from_slice(&[b'0' + (len / 10) as u8, b'0' + (len % 10) as u8, b':']);
        } else {
            push_decimal(out, len as u64);
            out.push(b':');
        }
        out.extend_from_slice(bytes);
        out.push(b',');
    }

    pub fn finish(self) -> String {
        hex(&Sha256::digest(&self.0))
    }
}

/// Appends `n` in decimal digits, without the formatting machinery (the
/// ledger frames and prints millions of numbers, most of one digit).
/// Inline, so the one-digit case costs no call where it is used.
#[inline]
pub fn push_decimal(out: &mut Vec<u8>, mut n: u64) {
    if n < 10 {
        return out.push(b'0' + n as u8);
    }
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    while n > 0 {
        at -= 1;
        digits[at] = b'0' + (n % 10) as u8;
        n /= 10;
    }
    out.extend_from_slice(&digits[at..]);
}

pub fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for byte in bytes {
        out.push(DIGITS[usize::from(byte >> 4)] as char);
        out.push(DIGITS[usize::from(byte & 0x0f)] as char);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A field is framed as `<len>:<bytes>,` whatever its length.
    #[test]
    fn fields_are_framed_with_their_decimal_length() {
        for len in (0..1_100).chain([9_999, 10_000, 123_456]) {
            let bytes = vec![b'x'; len];
            let mut framed = Framed::default();
            framed.field(&bytes);
            framed.field(b"");
            let mut want = format!("{len}:").into_bytes();
            want.extend_from_slice(&bytes);
            want.extend_from_slice(b",0:,");
            assert_eq!(framed.0, want, "{len}");
        }
    }

    #[test]
    fn known_vector() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
    }

    #[test]
    fn framing_separates_fields() {
        let mut a = Framed::new("t");
        a.field(b"ab");
        a.field(b"c");
        let mut b = Framed::new("t");
        b.field(b"a");
        b.field(b"bc");
        assert_ne!(a.finish(), b.finish());
    }
}
