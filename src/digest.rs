//! sha256 digests as lowercase hex. Pure.

use std::io::Write as _;

use sha2::{Digest, Sha256};

/// The sha256 of `bytes` as 64 lowercase hex digits.
pub fn sha256_hex(bytes: &[u8]) -> String {
    hex(&Sha256::digest(bytes))
}

/// A sha256 whose fields are framed so that no two field lists hash alike
/// (`ab`,`c` differs from `a`,`bc`): each field is hashed as
/// `<len>:<bytes>,`, its length in decimal.
pub struct Framed(Vec<u8>);

impl Framed {
    pub fn new(domain: &str) -> Self {
        let mut framed = Framed(Vec::new());
        framed.field(domain.as_bytes());
        framed
    }

    pub fn field(&mut self, bytes: &[u8]) {
        // Writing into a Vec cannot fail.
        let _ = write!(self.0, "{}:", bytes.len());
        self.0.extend_from_slice(bytes);
        self.0.push(b',');
    }

    pub fn finish(self) -> String {
        hex(&Sha256::digest(&self.0))
    }
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

    /// The framing is part of every ledger row's and finding's hash: a
    /// field is `<len>:<bytes>,` whatever its length, the domain first.
    #[test]
    fn fields_are_framed_with_their_decimal_length() {
        for len in [0, 9, 10, 99, 100, 123_456] {
            let bytes = vec![b'x'; len];
            let mut framed = Framed::new("t");
            framed.field(&bytes);
            framed.field(b"");
            let mut want = format!("1:t,{len}:").into_bytes();
            want.extend_from_slice(&bytes);
            want.extend_from_slice(b",0:,");
            assert_eq!(framed.finish(), sha256_hex(&want), "{len}");
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
