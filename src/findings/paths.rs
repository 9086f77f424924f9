//! Finding file paths: made repo-relative and normalized, and flagged when
//! they leave the repository. Pure: the root comes in as text, nothing is
//! opened or resolved on disk.

/// A normalized finding path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NormPath {
    /// Repo-relative with `/` separators, or the cleaned text when it escapes.
    pub path: String,
    /// The path leaves the repository (`../`, or absolute elsewhere).
    pub escapes: bool,
}

/// Normalizes `raw` against `repo_root` (absolute). `None` for an empty path.
///
/// Handles `file:` URIs (`file:///a`, `file://localhost/a`, `file:/a`, with
/// `%XX` escapes), `\` separators, `./`, duplicate slashes and `..`;
/// absolute paths under the root become relative. A path a shell would
/// expand (`~/…`, `~user/…`, `$HOME/…`, `%USERPROFILE%\…`) and a `file:` URI
/// naming another host escape. Symlinks are not resolved: this is text only.
pub fn normalize(raw: &str, repo_root: &str) -> Option<NormPath> {
    let raw = raw.trim();
    let decoded;
    let raw = match strip_file_scheme(raw) {
        Some(Uri::Path(rest)) => {
            decoded = percent_decode(rest);
            decoded.as_str()
        }
        Some(Uri::Remote(rest)) => {
            return Some(NormPath {
                path: format!("//{}", rest.replace('\\', "/")),
                escapes: true,
            });
        }
        None => raw,
    };
    let text = raw.replace('\\', "/");
    if text.is_empty() {
        return None;
    }
    if expanded_by_a_shell(&text) {
        let cleaned = clean(&text);
        return Some(NormPath {
            path: cleaned.parts.join("/"),
            escapes: true,
        });
    }
    let root = clean(&repo_root.replace('\\', "/"));
    if is_absolute(&text) {
        let cleaned = clean(&text);
        if !root.parts.is_empty()
            && !root.escapes
            && is_absolute(repo_root.trim())
            && let Some(rest) = cleaned.parts.strip_prefix(root.parts.as_slice())
            && cleaned.prefix == root.prefix
            && !cleaned.escapes
            && !rest.is_empty()
        {
            return Some(NormPath {
                path: rest.join("/"),
                escapes: false,
            });
        }
        return Some(NormPath {
            path: format!("{}{}", cleaned.prefix, cleaned.parts.join("/")),
            escapes: true,
        });
    }
    let cleaned = clean(&text);
    if cleaned.parts.is_empty() {
        return None;
    }
    Some(NormPath {
        path: cleaned.parts.join("/"),
        escapes: cleaned.escapes,
    })
}

struct Cleaned {
    /// `/` or `C:/` for absolute paths, empty otherwise.
    prefix: String,
    parts: Vec<String>,
    /// A `..` climbed above the start.
    escapes: bool,
}

fn clean(path: &str) -> Cleaned {
    let (prefix, rest) = split_prefix(path);
    let mut parts: Vec<String> = Vec::new();
    let mut escapes = false;
    for part in rest.split('/') {
        match part {
            "" | "." => {}
            ".." => {
                if parts.last().is_some_and(|last| last != "..") {
                    parts.pop();
                } else {
                    escapes = true;
                    parts.push("..".to_string());
                }
            }
            other => parts.push(other.to_string()),
        }
    }
    Cleaned {
        prefix,
        parts,
        escapes,
    }
}

fn split_prefix(path: &str) -> (String, &str) {
    if let Some(rest) = path.strip_prefix('/') {
        return ("/".to_string(), rest);
    }
    let bytes = path.as_bytes();
    if bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/' {
        return (
            format!("{}:/", (bytes[0] as char).to_ascii_uppercase()),
            &path[3..],
        );
    }
    (String::new(), path)
}

fn is_absolute(path: &str) -> bool {
    !split_prefix(&path.replace('\\', "/")).0.is_empty()
}

/// What a `file:` URI names.
enum Uri<'a> {
    /// A path on this machine.
    Path(&'a str),
    /// `file://host/…` for a host other than `localhost`: host and path.
    Remote(&'a str),
}

/// The path of a `file:` URI (`file:///a`, `file://localhost/a`, `file:/a`,
/// any case); `None` when `raw` is no such URI.
fn strip_file_scheme(raw: &str) -> Option<Uri<'_>> {
    let scheme = raw.get(..5)?;
    if !scheme.eq_ignore_ascii_case("file:") {
        return None;
    }
    let after = &raw[5..];
    let rest = match after.strip_prefix("//") {
        Some(authority) => {
            let host_end = authority.find('/').unwrap_or(authority.len());
            let host = &authority[..host_end];
            if !host.is_empty() && !host.eq_ignore_ascii_case("localhost") {
                return Some(Uri::Remote(authority));
            }
            &authority[host_end..]
        }
        None if after.starts_with('/') => after,
        // `file:a` is no URI: a file of that name.
        None => return None,
    };
    // `file:///C:/x` names the Windows path `C:/x`.
    let bytes = rest.as_bytes();
    if bytes.len() >= 4 && bytes[0] == b'/' && bytes[1].is_ascii_alphabetic() && bytes[2] == b':' {
        return Some(Uri::Path(&rest[1..]));
    }
    Some(Uri::Path(rest))
}

/// Whether a shell would expand the path's start: `~`, `~user`, `$HOME`,
/// `${HOME}`, `%USERPROFILE%`. Such a path names a place outside the
/// repository, never a file in it.
fn expanded_by_a_shell(path: &str) -> bool {
    let first = path.split('/').next().unwrap_or_default();
    let user = |s: &str| {
        s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
    };
    match first.as_bytes().first() {
        Some(b'~') => user(&first[1..]),
        Some(b'$') => first.len() > 1,
        Some(b'%') => first.len() > 2 && first.ends_with('%'),
        _ => false,
    }
}

/// Decodes `%XX` escapes; invalid escapes and non-UTF-8 results stay as text.
pub(crate) fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            let hex = |b: u8| (b as char).to_digit(16);
            if let (Some(hi), Some(lo)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((hi * 16 + lo) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).unwrap_or_else(|_| text.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(raw: &str) -> Option<(String, bool)> {
        normalize(raw, "/work/repo").map(|n| (n.path, n.escapes))
    }

    #[test]
    fn relative_paths_are_cleaned() {
        let table = [
            ("src/a.rs", "src/a.rs"),
            ("./src/a.rs", "src/a.rs"),
            ("src//a.rs", "src/a.rs"),
            ("src\\win\\a.rs", "src/win/a.rs"),
            ("src/x/../a.rs", "src/a.rs"),
            ("  src/./a.rs ", "src/a.rs"),
        ];
        for (raw, want) in table {
            assert_eq!(norm(raw), Some((want.to_string(), false)), "{raw}");
        }
    }

    #[test]
    fn absolute_paths_under_the_root_become_relative() {
        assert_eq!(
            norm("/work/repo/src/a.rs"),
            Some(("src/a.rs".into(), false))
        );
        assert_eq!(
            norm("/work//repo/./src/a.rs"),
            Some(("src/a.rs".into(), false))
        );
        assert_eq!(
            norm("file:///work/repo/src/a%20b.rs"),
            Some(("src/a b.rs".into(), false))
        );
        assert_eq!(
            normalize("C:\\w\\repo\\src\\a.rs", "c:/w/repo"),
            Some(NormPath {
                path: "src/a.rs".into(),
                escapes: false
            })
        );
    }

    #[test]
    fn escaping_paths_are_kept_as_text_and_flagged() {
        assert_eq!(norm("../etc/passwd"), Some(("../etc/passwd".into(), true)));
        assert_eq!(norm("src/../../x"), Some(("../x".into(), true)));
        assert_eq!(norm("/etc/passwd"), Some(("/etc/passwd".into(), true)));
        assert_eq!(
            norm("/work/repository/a"),
            Some(("/work/repository/a".into(), true))
        );
        assert_eq!(
            norm("/work/repo/../other/a"),
            Some(("/work/other/a".into(), true))
        );
        assert_eq!(norm("/work/repo"), Some(("/work/repo".into(), true)));
        // Without a root every absolute path escapes.
        assert_eq!(
            normalize("/a/b", ""),
            Some(NormPath {
                path: "/a/b".into(),
                escapes: true
            })
        );
    }

    #[test]
    fn uris_and_shell_paths_that_leave_the_repository_are_flagged() {
        let table = [
            ("file:/etc/passwd", "/etc/passwd"),
            ("FILE:///etc/passwd", "/etc/passwd"),
            ("File://localhost/etc/shadow", "/etc/shadow"),
            (
                "file://evil.example/etc/passwd",
                "//evil.example/etc/passwd",
            ),
            ("~/.ssh/id_rsa", "~/.ssh/id_rsa"),
            ("~", "~"),
            ("~root/.bashrc", "~root/.bashrc"),
            ("~\\.aws\\credentials", "~/.aws/credentials"),
            ("$HOME/.netrc", "$HOME/.netrc"),
            ("${HOME}/.netrc", "${HOME}/.netrc"),
            ("%USERPROFILE%\\.ssh\\id_rsa", "%USERPROFILE%/.ssh/id_rsa"),
        ];
        for (raw, path) in table {
            assert_eq!(norm(raw), Some((path.to_string(), true)), "{raw}");
        }
        // In the repository, and names that only look alike.
        assert_eq!(
            norm("file:/work/repo/src/a.rs"),
            Some(("src/a.rs".into(), false))
        );
        assert_eq!(
            norm("src/~backup.rs"),
            Some(("src/~backup.rs".into(), false))
        );
        assert_eq!(norm("file:notes.md"), Some(("file:notes.md".into(), false)));
        assert_eq!(norm("100%/a"), Some(("100%/a".into(), false)));
    }

    #[test]
    fn empty_paths_are_none() {
        assert_eq!(norm(""), None);
        assert_eq!(norm("./"), None);
        assert_eq!(norm("  "), None);
    }

    #[test]
    fn bad_percent_escapes_stay_text() {
        assert_eq!(
            norm("file:///work/repo/a%zz%"),
            Some(("a%zz%".into(), false))
        );
        assert_eq!(norm("file:///work/repo/a%ff"), Some(("a%ff".into(), false)));
    }
}
