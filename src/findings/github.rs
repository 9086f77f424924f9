//! GitHub pull-request reviews, as `gh api` prints them. Pure.
//!
//! Shapes read:
//! - review comments, `gh api repos/O/R/pulls/N/comments`: a JSON array;
//!   `--paginate` prints one array per page back to back (`[…][…]`),
//!   `--slurp` an array of pages; `--jq '.[]'` one object per line, and
//!   `jq '.[] | {path, line, body}'` pretty objects back to back;
//! - reviews, `gh api repos/O/R/pulls/N/reviews` (objects with a `state`),
//!   or `gh pr view N --json reviews` (`{"reviews": […]}`);
//! - review threads from `gh api graphql` (`reviewThreads` anywhere under
//!   `data`, with `nodes` or `edges`), and one comment node
//!   (`{"data": {"node": {…}}}`).
//!
//! Keys are read whatever their case (`start_line`, `startLine`,
//! `StartLine`): a Go program re-serialising GraphQL writes PascalCase.
//!
//! Each thread's first comment is a finding: its `path`, its `start_line`
//! to `line` (none on the old side of the diff, `side: LEFT`, or for a
//! comment on the whole file), the id `gh-<its id>`, and the title its
//! body leads with, after the reviewer's marker, which gives its severity
//! (docs/findings.md lists the markers read). A comment without a marker
//! (Copilot, Greptile, a person) is a bug. Replies are no finding.
//!
//! What GitHub already says is settled is no finding, and its id is listed
//! resolved (closed in a loop whose `closure` is `explicit` too): a thread
//! marked resolved, an outdated comment (`line` null with an
//! `original_line`, or `isOutdated`: the lines it was on have changed since),
//! a comment CodeRabbit edited to say `✅ Addressed in commit …`, or one it
//! answered with its `<!-- <review_comment_addressed> -->` reply.
//!
//! Reviews: a reviewer whose latest deciding review (approve, request
//! changes, dismissed) requests changes is a finding (no place, id
//! `gh-review-<id>`); comment-only reviews carry their findings in the
//! review comments. Reviews alone that neither approve nor request changes
//! prove nothing and are refused.

use std::collections::{HashMap, HashSet};

use serde_json::{Map, Value};

use super::{Draft, Drafts, FindingsError, Format, MAX_TITLE, Severity, bound};

/// CodeRabbit's edit to a comment it sees fixed, and the end of its reply
/// saying so.
const ADDRESSED: &str = "✅ Addressed in commit";
const ADDRESSED_REPLY: &str = "<!-- <review_comment_addressed> -->";

pub(crate) fn parse(text: &str) -> Result<Drafts, FindingsError> {
    let values = values(text)?;
    let several = values.len() > 1;
    let mut items = Items::default();
    for (line, value) in &values {
        let at = match several {
            true => format!("line {line}"),
            false => String::new(),
        };
        items.take(value, &at)?;
    }
    items.finish()
}

/// Whether `text` is GitHub review data: its first JSON value is (or is an
/// array whose first item is) a review comment or a review, or a GraphQL
/// answer (`data`), or holds `reviews` or `reviewThreads`. Read without
/// building the value: a 50 MB log of another format is skipped over.
pub(crate) fn looks_like(text: &str) -> bool {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<peek::First>();
    match stream.next() {
        Some(Ok(peek::First::Object(keys))) => keys.answer || keys.is_item(),
        Some(Ok(peek::First::Array(first))) => first.is_some_and(|keys| keys.is_item()),
        _ => false,
    }
}

/// A shallow look at a JSON value: the keys that tell GitHub's shapes
/// apart, every other part skipped.
mod peek {
    use std::fmt;

    use serde::Deserialize;
    use serde::de::{self, IgnoredAny, MapAccess, SeqAccess, Visitor};

    use super::ReviewState;

    /// The first value of the input.
    pub(super) enum First {
        Object(Keys),
        /// An array's first object (of its first page, for `--slurp`).
        Array(Option<Keys>),
        Other,
    }

    /// What an object's keys say.
    #[derive(Default)]
    pub(super) struct Keys {
        /// `data` (GraphQL), `reviews` or `reviewThreads`.
        pub answer: bool,
        body: bool,
        place: bool,
        review_state: bool,
        foreign: bool,
    }

    impl Keys {
        /// A review comment (`body`, and `path` or a diff hunk) or a review
        /// (`body` and a review `state`), with no key of another format.
        pub fn is_item(&self) -> bool {
            self.body && (self.place || self.review_state) && !self.foreign
        }
    }

    /// A value as far as it matters here.
    enum Small {
        Text(Option<String>),
        Object,
        Array,
        Other,
    }

    impl<'de> Deserialize<'de> for Small {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Small, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Small;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a JSON value")
                }
                fn visit_str<E>(self, v: &str) -> Result<Small, E> {
                    Ok(Small::Text((v.len() <= 32).then(|| v.to_string())))
                }
                fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Small, A::Error> {
                    while m.next_entry::<IgnoredAny, IgnoredAny>()?.is_some() {}
                    Ok(Small::Object)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Small, A::Error> {
                    while s.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Small::Array)
                }
                fn visit_bool<E>(self, _: bool) -> Result<Small, E> {
                    Ok(Small::Other)
                }
                fn visit_i64<E>(self, _: i64) -> Result<Small, E> {
                    Ok(Small::Other)
                }
                fn visit_u64<E>(self, _: u64) -> Result<Small, E> {
                    Ok(Small::Other)
                }
                fn visit_f64<E>(self, _: f64) -> Result<Small, E> {
                    Ok(Small::Other)
                }
                fn visit_unit<E>(self) -> Result<Small, E> {
                    Ok(Small::Other)
                }
            }
            d.deserialize_any(V)
        }
    }

    fn keys<'de, A: MapAccess<'de>>(mut m: A) -> Result<Keys, A::Error> {
        let mut keys = Keys::default();
        while let Some(key) = m.next_key::<String>()? {
            let folded = super::fold(&key);
            match folded.as_str() {
                "data" | "reviews" | "reviewthreads" => {
                    let value = m.next_value::<Small>()?;
                    keys.answer |= match folded.as_str() {
                        "data" => matches!(value, Small::Object),
                        "reviews" => matches!(value, Small::Array),
                        _ => true,
                    };
                }
                "body" => keys.body = matches!(m.next_value::<Small>()?, Small::Text(_)),
                "path" | "diffhunk" => {
                    m.next_value::<IgnoredAny>()?;
                    keys.place = true;
                }
                "state" => {
                    keys.review_state = matches!(
                        m.next_value::<Small>()?,
                        Small::Text(Some(word)) if ReviewState::from(&word).is_some()
                    );
                }
                _ => {
                    m.next_value::<IgnoredAny>()?;
                    keys.foreign |= [
                        "title",
                        "severity",
                        "message",
                        "findings",
                        "checkname",
                        "runs",
                    ]
                    .contains(&folded.as_str());
                }
            }
        }
        Ok(keys)
    }

    /// An object's keys (the first item of an array).
    struct Item(Option<Keys>);

    impl<'de> Deserialize<'de> for Item {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<Item, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = Item;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a JSON value")
                }
                fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<Item, A::Error> {
                    keys(m).map(|k| Item(Some(k)))
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<Item, A::Error> {
                    // `--slurp`: the first page's first item.
                    let first = s.next_element::<Item>()?.and_then(|i| i.0);
                    while s.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(Item(first))
                }
                fn visit_str<E>(self, _: &str) -> Result<Item, E> {
                    Ok(Item(None))
                }
                fn visit_bool<E>(self, _: bool) -> Result<Item, E> {
                    Ok(Item(None))
                }
                fn visit_i64<E>(self, _: i64) -> Result<Item, E> {
                    Ok(Item(None))
                }
                fn visit_u64<E>(self, _: u64) -> Result<Item, E> {
                    Ok(Item(None))
                }
                fn visit_f64<E>(self, _: f64) -> Result<Item, E> {
                    Ok(Item(None))
                }
                fn visit_unit<E>(self) -> Result<Item, E> {
                    Ok(Item(None))
                }
            }
            d.deserialize_any(V)
        }
    }

    impl<'de> Deserialize<'de> for First {
        fn deserialize<D: de::Deserializer<'de>>(d: D) -> Result<First, D::Error> {
            struct V;
            impl<'de> Visitor<'de> for V {
                type Value = First;
                fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                    f.write_str("a JSON value")
                }
                fn visit_map<A: MapAccess<'de>>(self, m: A) -> Result<First, A::Error> {
                    keys(m).map(First::Object)
                }
                fn visit_seq<A: SeqAccess<'de>>(self, mut s: A) -> Result<First, A::Error> {
                    let first = s.next_element::<Item>()?.and_then(|i| i.0);
                    while s.next_element::<IgnoredAny>()?.is_some() {}
                    Ok(First::Array(first))
                }
                fn visit_str<E>(self, _: &str) -> Result<First, E> {
                    Ok(First::Other)
                }
                fn visit_bool<E>(self, _: bool) -> Result<First, E> {
                    Ok(First::Other)
                }
                fn visit_i64<E>(self, _: i64) -> Result<First, E> {
                    Ok(First::Other)
                }
                fn visit_u64<E>(self, _: u64) -> Result<First, E> {
                    Ok(First::Other)
                }
                fn visit_f64<E>(self, _: f64) -> Result<First, E> {
                    Ok(First::Other)
                }
                fn visit_unit<E>(self) -> Result<First, E> {
                    Ok(First::Other)
                }
            }
            d.deserialize_any(V)
        }
    }
}

/// Every JSON value of the text, with the line it starts on.
fn values(text: &str) -> Result<Vec<(usize, Value)>, FindingsError> {
    let mut stream = serde_json::Deserializer::from_str(text).into_iter::<Value>();
    let mut values = Vec::new();
    let (mut counted, mut line) = (0, 1);
    loop {
        let start = stream.byte_offset();
        let skipped = text[start..].len() - text[start..].trim_start().len();
        let at = start + skipped;
        line += text.as_bytes()[counted..at]
            .iter()
            .filter(|b| **b == b'\n')
            .count();
        counted = at;
        match stream.next() {
            None => return Ok(values),
            Some(Ok(value)) => values.push((line, value)),
            Some(Err(err)) => return Err(FindingsError::json(Format::Github, &err)),
        }
    }
}

/// The value of `key` in `object`, its case and underscores aside.
fn get<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a Value> {
    if let Some(value) = object.get(key) {
        return Some(value);
    }
    let want = fold(key);
    object
        .iter()
        .find(|(name, _)| fold(name) == want)
        .map(|(_, value)| value)
}

fn fold(key: &str) -> String {
    key.chars()
        .filter(|c| *c != '_')
        .map(|c| c.to_ascii_lowercase())
        .collect()
}

fn text_of<'a>(object: &'a Map<String, Value>, key: &str) -> Option<&'a str> {
    get(object, key).and_then(Value::as_str)
}

fn number_of(object: &Map<String, Value>, key: &str) -> Option<u64> {
    get(object, key).and_then(Value::as_u64)
}

/// The object under `data` of a GraphQL answer.
fn graphql(object: &Map<String, Value>) -> Option<&Map<String, Value>> {
    get(object, "data").and_then(Value::as_object)
}

/// The first `reviewThreads` under a GraphQL answer's `data`.
fn find_threads(value: &Value) -> Option<&Value> {
    match value {
        Value::Object(object) => get(object, "reviewThreads").or_else(|| {
            object
                .values()
                .filter(|v| v.is_object())
                .find_map(find_threads)
        }),
        _ => None,
    }
}

/// The nodes of a GraphQL connection (`nodes`, or `edges[].node`), or a
/// plain list.
fn nodes(value: &Value) -> Vec<&Value> {
    match value {
        Value::Array(items) => items.iter().collect(),
        Value::Object(object) => {
            if let Some(Value::Array(nodes)) = get(object, "nodes") {
                return nodes.iter().collect();
            }
            match get(object, "edges") {
                Some(Value::Array(edges)) => edges
                    .iter()
                    .filter_map(|edge| edge.as_object().and_then(|e| get(e, "node")))
                    .collect(),
                _ => Vec::new(),
            }
        }
        _ => Vec::new(),
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReviewState {
    Approved,
    ChangesRequested,
    Commented,
    Dismissed,
    Pending,
}

impl ReviewState {
    fn from(word: &str) -> Option<ReviewState> {
        Some(match word {
            "APPROVED" => ReviewState::Approved,
            "CHANGES_REQUESTED" => ReviewState::ChangesRequested,
            "COMMENTED" => ReviewState::Commented,
            "DISMISSED" => ReviewState::Dismissed,
            "PENDING" => ReviewState::Pending,
            _ => return None,
        })
    }
}

/// A review, as read.
struct Review {
    id: Option<String>,
    author: String,
    state: ReviewState,
    body: String,
}

/// What the input holds, read in order.
#[derive(Default)]
struct Items {
    /// Thread-starting comments, each with its id, in order.
    findings: Vec<(Option<String>, Draft)>,
    resolved: Vec<String>,
    /// Ids a reply said were addressed.
    addressed: HashSet<String>,
    reviews: Vec<Review>,
    /// Whether anything but reviews was read (comments or threads, even
    /// none of them: an empty list of comments says there is none).
    comments_read: bool,
}

impl Items {
    fn take(&mut self, value: &Value, at: &str) -> Result<(), FindingsError> {
        match value {
            Value::Array(list) => {
                self.comments_read |= list.is_empty();
                for (i, item) in list.iter().enumerate() {
                    let at = format!("{at}[{i}]");
                    match item {
                        // `--slurp`: an array of pages.
                        Value::Array(_) => self.take(item, &at)?,
                        _ => self.item(item, &at)?,
                    }
                }
                Ok(())
            }
            Value::Object(object) => {
                if let Some(Value::Array(errors)) = get(object, "errors") {
                    let said: Vec<&str> = errors
                        .iter()
                        .filter_map(|e| e.as_object().and_then(|e| text_of(e, "message")))
                        .collect();
                    return Err(FindingsError::invalid(
                        Format::Github,
                        join(at, "errors"),
                        format!("GitHub answered with an error: {}", said.join("; ")),
                    ));
                }
                if let Some(data) = graphql(object) {
                    let data_value = get(object, "data").unwrap_or(value);
                    if let Some(threads) = find_threads(data_value) {
                        return self.threads(threads, &join(at, "reviewThreads"));
                    }
                    if let Some(node) = get(data, "node") {
                        return self.item(node, &join(at, "data.node"));
                    }
                    return Err(FindingsError::invalid(
                        Format::Github,
                        join(at, "data"),
                        "no `reviewThreads` and no `node`: ask GraphQL for \
                         `pullRequest { reviewThreads { nodes { … } } }`",
                    ));
                }
                if let Some(threads) = get(object, "reviewThreads") {
                    return self.threads(threads, &join(at, "reviewThreads"));
                }
                if let Some(Value::Array(reviews)) = get(object, "reviews") {
                    let at = join(at, "reviews");
                    for (i, review) in reviews.iter().enumerate() {
                        self.item(review, &format!("{at}[{i}]"))?;
                    }
                    return Ok(());
                }
                self.item(value, at)
            }
            _ => Err(FindingsError::invalid(
                Format::Github,
                top(at),
                "not a review comment, a review, nor a list of them",
            )),
        }
    }

    /// A comment or a review.
    fn item(&mut self, value: &Value, at: &str) -> Result<(), FindingsError> {
        let at = top(at);
        let Some(object) = value.as_object() else {
            return Err(FindingsError::invalid(
                Format::Github,
                at,
                "not a JSON object",
            ));
        };
        let is_review = get(object, "path").is_none()
            && get(object, "diff_hunk").is_none()
            && get(object, "state").is_some();
        if is_review {
            return self.review(object, &at);
        }
        let Some(body) = get(object, "body") else {
            return Err(FindingsError::invalid(
                Format::Github,
                at,
                "no `body`: neither a review comment (`path`, `body`) nor a review (`state`, `body`)",
            ));
        };
        if get(object, "path").is_none() && get(object, "diff_hunk").is_none() {
            return Err(FindingsError::invalid(
                Format::Github,
                at,
                "no `path`: a comment on the pull request's conversation, not on its code; \
                 referee reads review comments (`pulls/N/comments`), reviews and review threads",
            ));
        }
        let Some(body) = body.as_str() else {
            return Err(FindingsError::invalid(
                Format::Github,
                join(&at, "body"),
                format!("must be a string, not {body}"),
            ));
        };
        self.comments_read = true;
        let id = id_of(object, "gh-");
        if let Some(root) = get(object, "in_reply_to_id").filter(|v| !v.is_null()) {
            if body.contains(ADDRESSED_REPLY) {
                self.addressed.insert(format!("gh-{}", plain(root)));
            }
            return Ok(());
        }
        let outdated = get(object, "outdated")
            .or_else(|| get(object, "isOutdated"))
            .and_then(Value::as_bool)
            .unwrap_or(false)
            || (get(object, "line").is_some_and(Value::is_null)
                && number_of(object, "original_line").is_some());
        self.comment(id, object, object, body, outdated, false, &at)
    }

    /// A thread's first comment; `place` holds its path and lines (the
    /// thread's, or the comment's).
    #[allow(clippy::too_many_arguments)]
    fn comment(
        &mut self,
        id: Option<String>,
        place: &Map<String, Value>,
        comment: &Map<String, Value>,
        body: &str,
        outdated: bool,
        resolved: bool,
        at: &str,
    ) -> Result<(), FindingsError> {
        if outdated || resolved || body.contains(ADDRESSED) {
            if let Some(id) = id {
                self.resolved.push(id);
            }
            return Ok(());
        }
        let (severity, title) = read_body(body);
        if title.is_empty() {
            return Err(FindingsError::invalid(
                Format::Github,
                join(at, "body"),
                "no text to take a title from",
            ));
        }
        let path_of = |o: &Map<String, Value>| {
            text_of(o, "path")
                .filter(|p| !p.trim().is_empty())
                .map(str::to_string)
        };
        let file = path_of(place).or_else(|| path_of(comment));
        let lines_of = |o: &Map<String, Value>| {
            let left = [text_of(o, "side"), text_of(o, "diffSide")].contains(&Some("LEFT"));
            let whole_file = text_of(o, "subject_type") == Some("file");
            let end = number_of(o, "line").filter(|_| !left && !whole_file)?;
            let start = number_of(o, "start_line").filter(|s| *s < end);
            Some(match start {
                Some(start) => (start, Some(end)),
                None => (end, None),
            })
        };
        let lines = lines_of(place).or_else(|| lines_of(comment));
        let draft = Draft {
            id: id.clone(),
            severity,
            title,
            file,
            line: lines.map(|l| l.0),
            end_line: lines.and_then(|l| l.1),
            body: Some(body.trim().to_string()),
            ..Draft::default()
        };
        self.findings.push((id, draft));
        Ok(())
    }

    fn threads(&mut self, threads: &Value, at: &str) -> Result<(), FindingsError> {
        self.comments_read = true;
        for (i, thread) in nodes(threads).into_iter().enumerate() {
            let at = format!("{at}[{i}]");
            let Some(thread) = thread.as_object() else {
                return Err(FindingsError::invalid(
                    Format::Github,
                    at,
                    "not a JSON object",
                ));
            };
            let comments = get(thread, "comments").map(nodes).unwrap_or_default();
            let Some(first) = comments.first().and_then(|c| c.as_object()) else {
                return Err(FindingsError::invalid(
                    Format::Github,
                    join(&at, "comments"),
                    "no comment: ask GraphQL for the thread's `comments { nodes { body } }`",
                ));
            };
            let Some(body) = text_of(first, "body") else {
                return Err(FindingsError::invalid(
                    Format::Github,
                    join(&at, "comments[0]"),
                    "no `body`",
                ));
            };
            let id = id_of(first, "gh-").or_else(|| id_of(thread, "gh-"));
            let flag = |key: &str| get(thread, key).and_then(Value::as_bool).unwrap_or(false);
            let moved = get(thread, "line").is_some_and(Value::is_null)
                && number_of(thread, "originalLine").is_some();
            let addressed = comments[1..]
                .iter()
                .filter_map(|c| c.as_object().and_then(|c| text_of(c, "body")))
                .any(|b| b.contains(ADDRESSED_REPLY));
            self.comment(
                id,
                thread,
                first,
                body,
                flag("isOutdated") || moved,
                flag("isResolved") || addressed,
                &at,
            )?;
        }
        Ok(())
    }

    fn review(&mut self, object: &Map<String, Value>, at: &str) -> Result<(), FindingsError> {
        let state = get(object, "state");
        let Some(state) = state.and_then(Value::as_str).and_then(ReviewState::from) else {
            return Err(FindingsError::invalid(
                Format::Github,
                join(at, "state"),
                format!(
                    "`{}` is no review state; accepted: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING",
                    state.map(plain).unwrap_or_default()
                ),
            ));
        };
        let author = ["user", "author"]
            .iter()
            .find_map(|key| match get(object, key)? {
                Value::String(login) => Some(login.clone()),
                Value::Object(user) => text_of(user, "login").map(str::to_string),
                _ => None,
            })
            .unwrap_or_default();
        self.reviews.push(Review {
            id: id_of(object, "gh-review-"),
            author,
            state,
            body: text_of(object, "body").unwrap_or_default().to_string(),
        });
        Ok(())
    }

    fn finish(mut self) -> Result<Drafts, FindingsError> {
        // Each reviewer's latest deciding review stands; an earlier request
        // for changes it overrules is settled.
        let mut latest: HashMap<&str, usize> = HashMap::new();
        for (i, review) in self.reviews.iter().enumerate() {
            if matches!(
                review.state,
                ReviewState::Approved | ReviewState::ChangesRequested | ReviewState::Dismissed
            ) {
                latest.insert(review.author.as_str(), i);
            }
        }
        let mut approved = false;
        let mut requested = Vec::new();
        for (i, review) in self.reviews.iter().enumerate() {
            let stands = latest.get(review.author.as_str()) == Some(&i);
            match (review.state, stands) {
                (ReviewState::ChangesRequested, true) => requested.push(review),
                (ReviewState::ChangesRequested, false) => {
                    self.resolved.extend(review.id.clone());
                }
                (ReviewState::Approved, true) => approved = true,
                _ => {}
            }
        }
        if !self.comments_read && !approved && requested.is_empty() {
            let message = match self.reviews.len() {
                0 => "no review and no review comment: nothing says the pull request was reviewed"
                    .to_string(),
                n => format!(
                    "{n} review(s), none approving nor requesting changes: their findings are review comments"
                ),
            };
            return Err(FindingsError::NotProven {
                format: Format::Github,
                message,
                hint: "read the review comments: `gh api repos/OWNER/REPO/pulls/N/comments`".into(),
            });
        }
        let mut drafts = Drafts::default();
        for review in requested {
            let (severity, title) = read_body(&review.body);
            let title = match (title.is_empty(), review.author.is_empty()) {
                (false, _) => title,
                (true, false) => format!("{} requested changes", review.author),
                (true, true) => "changes requested".to_string(),
            };
            let body = review.body.trim();
            drafts.findings.push(Draft {
                id: review.id.clone(),
                severity,
                title,
                body: (!body.is_empty()).then(|| body.to_string()),
                ..Draft::default()
            });
        }
        for (id, draft) in self.findings {
            match id {
                Some(id) if self.addressed.contains(&id) => self.resolved.push(id),
                _ => drafts.findings.push(draft),
            }
        }
        drafts.resolved = self.resolved;
        Ok(drafts)
    }
}

/// `gh-<id>` from a REST `id` or a GraphQL `databaseId` (the same
/// number), else a GraphQL node `id`.
fn id_of(object: &Map<String, Value>, prefix: &str) -> Option<String> {
    let number = number_of(object, "databaseId").or_else(|| number_of(object, "id"));
    if let Some(number) = number {
        return Some(format!("{prefix}{number}"));
    }
    text_of(object, "id")
        .filter(|id| !id.trim().is_empty())
        .map(|id| format!("{prefix}{id}"))
}

/// A JSON value as its plain text: a string without quotes.
fn plain(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// A field's place: `[3].body`, or `line 2, body` for one value of many.
fn join(at: &str, key: &str) -> String {
    if at.is_empty() {
        key.to_string()
    } else if at.starts_with("line ") && !at.contains('[') {
        format!("{at}, {key}")
    } else {
        format!("{at}.{key}")
    }
}

fn top(at: &str) -> String {
    match at.is_empty() {
        true => "top level".to_string(),
        false => at.to_string(),
    }
}

/// The severity a comment's marker gives, and its title: the first line of
/// its text that is no marker, no HTML comment, no collapsed `<details>`
/// block and no rule, its Markdown emphasis taken off.
fn read_body(body: &str) -> (Option<Severity>, String) {
    let mut severity = None;
    let mut title: Option<String> = None;
    let mut depth = 0usize;
    let mut in_comment = false;
    for raw in body.lines() {
        let line = raw.trim();
        if in_comment {
            in_comment = !line.contains("-->");
            continue;
        }
        if line.starts_with("<!--") {
            in_comment = !line.contains("-->");
            continue;
        }
        if line.starts_with("<details") {
            depth += 1;
        }
        if depth > 0 {
            if line.contains("</details>") {
                depth -= 1;
            }
            continue;
        }
        if line.is_empty() || line.chars().all(|c| c == '-' || c == '*' || c == '_') {
            continue;
        }
        if title.is_some() {
            // Only Cursor puts its marker after the title, on the next line
            // with text; the body's own lines are not read for markers.
            if let Some(Marker::Only(found)) = cursor(line) {
                severity = severity.or(found);
            }
            break;
        }
        match marker(line) {
            Some(Marker::Only(found)) => severity = severity.or(found),
            Some(Marker::Titled(found, text)) => {
                severity = severity.or(Some(found));
                title = Some(text);
            }
            None => title = Some(clean(line)),
        }
    }
    (severity, bound(&title.unwrap_or_default(), MAX_TITLE))
}

enum Marker {
    /// A line that only marks the severity (when known).
    Only(Option<Severity>),
    /// A line that marks it and carries the title.
    Titled(Severity, String),
}

fn marker(line: &str) -> Option<Marker> {
    coderabbit(line)
        .or_else(|| gemini(line))
        .or_else(|| codex(line))
        .or_else(|| cursor(line))
        .or_else(|| qodo(line))
        .or_else(|| devin(line))
}

/// `_⚠️ Potential issue_ | _🟠 Major_ | _⚡ Quick win_`: italic fields; the
/// level (`Critical`, `Major`, `Minor`, `Trivial`) decides, else the kind.
/// Emoji are not looked at (a capture may have mangled them).
fn coderabbit(line: &str) -> Option<Marker> {
    let fields: Vec<&str> = line.split(" | ").map(str::trim).collect();
    let italic = |f: &&str| f.len() > 2 && f.starts_with('_') && f.ends_with('_');
    if !fields.iter().all(italic) {
        return None;
    }
    let words = |f: &str| -> String {
        f.trim_matches('_')
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || c.is_whitespace())
            .collect::<String>()
            .trim()
            .to_ascii_lowercase()
    };
    let level = fields.iter().find_map(|f| match words(f).as_str() {
        "critical" => Some(Severity::Block),
        "major" => Some(Severity::Bug),
        "minor" => Some(Severity::Should),
        "trivial" | "info" => Some(Severity::Nit),
        _ => None,
    });
    let kind = fields.iter().find_map(|f| match words(f).as_str() {
        "potential issue" => Some(Severity::Bug),
        "refactor suggestion" => Some(Severity::Should),
        "nitpick" => Some(Severity::Nit),
        _ => None,
    });
    Some(Marker::Only(level.or(kind)))
}

/// Gemini Code Assist's badges: `![high](https://www.gstatic.com/…)`, one
/// or more on a line; the highest decides.
fn gemini(line: &str) -> Option<Marker> {
    let mut rest = line;
    let mut found = None;
    while !rest.is_empty() {
        let after = rest.strip_prefix("![")?;
        let (name, after) = after.split_once("](")?;
        let (_, after) = after.split_once(')')?;
        let level = match name.strip_prefix("security-").unwrap_or(name) {
            "critical" => Severity::Block,
            "high" => Severity::Bug,
            "medium" => Severity::Should,
            "low" => Severity::Nit,
            _ => return None,
        };
        found = found.max(Some(level));
        rest = after.trim_start();
    }
    found.map(|level| Marker::Only(Some(level)))
}

/// Codex's `**<sub><sub>![P1 Badge](…)</sub></sub>  Title**`.
fn codex(line: &str) -> Option<Marker> {
    let start = line.find("![P")?;
    let after = &line[start + 3..];
    let digit = after.chars().next()?.to_digit(10)?;
    let rest = after.get(1..)?.strip_prefix(" Badge](")?;
    let (_, title) = rest.split_once(')')?;
    let level = match digit {
        0 => Severity::Block,
        1 => Severity::Bug,
        2 => Severity::Should,
        3 => Severity::Nit,
        _ => return None,
    };
    let title = title.replace("</sub>", "");
    let title = title.trim().strip_suffix("**").unwrap_or(&title);
    Some(Marker::Titled(level, clean(title)))
}

/// Cursor Bugbot's `**High Severity**`, under its `### Title`.
fn cursor(line: &str) -> Option<Marker> {
    let inner = line.strip_prefix("**")?.strip_suffix(" Severity**")?;
    let level = match inner {
        "Critical" => Severity::Block,
        "High" => Severity::Bug,
        "Medium" => Severity::Should,
        "Low" => Severity::Nit,
        _ => return None,
    };
    Some(Marker::Only(Some(level)))
}

/// Qodo's `<img … alt="Action required">` badge; its title follows as
/// `1\. Title <code>🐞 Bug</code> …`.
fn qodo(line: &str) -> Option<Marker> {
    if !line.starts_with("<img ") {
        return None;
    }
    let level = if line.contains("alt=\"Action required\"") {
        Some(Severity::Bug)
    } else if line.contains("alt=\"Remediation recommended\"")
        || line.contains("alt=\"Review recommended\"")
    {
        Some(Severity::Should)
    } else {
        None
    };
    Some(Marker::Only(level))
}

/// Devin's `🔴 **Title**` / `🟡 **Title**`.
fn devin(line: &str) -> Option<Marker> {
    let (level, rest) = [
        ("🔴", Severity::Bug),
        ("🟠", Severity::Bug),
        ("🟡", Severity::Should),
        ("🟢", Severity::Nit),
    ]
    .iter()
    .find_map(|(dot, level)| Some((*level, line.strip_prefix(dot)?)))?;
    let rest = rest.trim_start();
    rest.starts_with("**")
        .then(|| Marker::Titled(level, clean(rest)))
}

/// A line as a title: Markdown heading marks, emphasis, Qodo's numbering
/// and trailing `<code>` tags, and HTML tags taken off.
fn clean(line: &str) -> String {
    let mut text = line.trim().trim_start_matches('#').trim();
    // `1\. Title` (Qodo), `1. Title`.
    let digits = text.len() - text.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if digits > 0 {
        let rest = &text[digits..];
        if let Some(rest) = rest.strip_prefix("\\.").or_else(|| rest.strip_prefix(". ")) {
            text = rest.trim_start();
        }
    }
    let text = match text.find(" <code>") {
        Some(cut) => &text[..cut],
        None => text,
    };
    let mut out = String::with_capacity(text.len());
    let mut in_tag = false;
    for c in text.chars() {
        match c {
            '<' if !in_tag => in_tag = true,
            '>' if in_tag => in_tag = false,
            _ if in_tag => {}
            _ => out.push(c),
        }
    }
    let out = out.trim();
    // `**Title.** More words`: the bold lead is the title.
    let out = match out.strip_prefix("**").and_then(|o| o.split_once("**")) {
        Some((lead, _)) if !lead.trim().is_empty() => lead,
        _ => out,
    };
    out.trim().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(text: &str) -> Drafts {
        parse(text).unwrap_or_else(|err| panic!("{err}"))
    }

    #[test]
    fn each_bots_marker_gives_its_severity_and_title() {
        type Row = (&'static str, Option<Severity>, &'static str);
        let rows: [Row; 13] = [
            (
                "_⚠️ Potential issue_ | _🟠 Major_\n\n**Expired tokens pass.**\n\nbody",
                Some(Severity::Bug),
                "Expired tokens pass.",
            ),
            (
                "_ΓÜá∩╕Å Potential issue_ | _≡ƒö┤ Critical_\n\n**Mangled.**",
                Some(Severity::Block),
                "Mangled.",
            ),
            (
                "_🧹 Nitpick_ | _🔵 Trivial_\n\n**Rename it.**",
                Some(Severity::Nit),
                "Rename it.",
            ),
            (
                "_🛠️ Refactor suggestion_\n\n<details>\n<summary>🧩 Analysis chain</summary>\n\n**not this**\n</details>\n\n---\n\n**Drop the crate**",
                Some(Severity::Should),
                "Drop the crate",
            ),
            (
                "![high](https://www.gstatic.com/codereviewagent/high-priority.svg)\n\nThe lock is never released.",
                Some(Severity::Bug),
                "The lock is never released.",
            ),
            (
                "![security-medium](https://www.gstatic.com/codereviewagent/security-medium-priority.svg) ![critical](https://www.gstatic.com/codereviewagent/critical.svg)\n\nSQL built from input.",
                Some(Severity::Block),
                "SQL built from input.",
            ),
            (
                "**<sub><sub>![P2 Badge](https://img.shields.io/badge/P2-yellow?style=flat)</sub></sub>  Keep the old flag**\n\nUseful?",
                Some(Severity::Should),
                "Keep the old flag",
            ),
            (
                "### Retry loop never ends\n\n**Medium Severity**\n\n<!-- DESCRIPTION START -->x",
                Some(Severity::Should),
                "Retry loop never ends",
            ),
            (
                "<img src=\"https://img.shields.io/badge/Action_required-634FD1?style=flat-square\" height=\"20px\" alt=\"Action required\">\n\n1\\. Race on save <code>🐞 Bug</code> <code>≡ Correctness</code>",
                Some(Severity::Bug),
                "Race on save",
            ),
            (
                "<!-- devin-review-comment {\"id\": 1} -->\n\n🟡 **Stale cache**\n\nmore",
                Some(Severity::Should),
                "Stale cache",
            ),
            (
                "This call can throw when the list is empty.\n```suggestion\nx\n```",
                None,
                "This call can throw when the list is empty.",
            ),
            (
                "Plain words first.\n\n![high](https://www.gstatic.com/codereviewagent/high-priority.svg)\n\n**High Severity**",
                None,
                "Plain words first.",
            ),
            (
                "## Generic catch clause\n\nCatching all exceptions.",
                None,
                "Generic catch clause",
            ),
        ];
        for (body, severity, title) in rows {
            assert_eq!(read_body(body), (severity, title.to_string()), "{body}");
        }
    }

    #[test]
    fn a_comment_is_placed_by_its_lines_and_named_by_its_id() {
        let text = r#"[
          {"id": 11, "path": "a.rs", "line": 9, "start_line": 4, "body": "Range", "user": {"login": "x"}},
          {"id": 12, "path": "a.rs", "line": 3, "side": "LEFT", "body": "Removed line"},
          {"id": 13, "path": "b.rs", "line": null, "original_line": null, "subject_type": "file", "body": "Whole file"},
          {"id": 14, "path": "b.rs", "line": 5, "start_line": 5, "body": "One line"}
        ]"#;
        let drafts = read(text);
        let seen: Vec<_> = drafts
            .findings
            .iter()
            .map(|d| (d.id.as_deref(), d.file.as_deref(), d.line, d.end_line))
            .collect();
        assert_eq!(
            seen,
            [
                (Some("gh-11"), Some("a.rs"), Some(4), Some(9)),
                (Some("gh-12"), Some("a.rs"), None, None),
                (Some("gh-13"), Some("b.rs"), None, None),
                (Some("gh-14"), Some("b.rs"), Some(5), None),
            ]
        );
        assert!(looks_like(text));
    }

    #[test]
    fn what_github_says_is_settled_is_resolved_not_found() {
        let text = r#"[
          {"id": 1, "path": "a.rs", "line": null, "original_line": 4, "body": "Outdated"},
          {"id": 2, "path": "a.rs", "line": 5, "body": "Fixed\n\n✅ Addressed in commit 842f6a9"},
          {"id": 3, "path": "a.rs", "line": 6, "body": "Answered"},
          {"id": 4, "path": "a.rs", "line": 6, "in_reply_to_id": 3, "body": "Thanks!\n\n<!-- <review_comment_addressed> -->"},
          {"id": 5, "path": "a.rs", "line": 7, "body": "Open"},
          {"id": 6, "path": "a.rs", "line": 7, "in_reply_to_id": 5, "body": "Won't fix"}
        ]"#;
        let drafts = read(text);
        let open: Vec<_> = drafts.findings.iter().map(|d| d.title.as_str()).collect();
        assert_eq!(open, ["Open"]);
        assert_eq!(drafts.resolved, ["gh-1", "gh-2", "gh-3"]);
    }

    #[test]
    fn threads_pages_and_lines_are_read_alike() {
        let threads = r#"{"data":{"repository":{"pullRequest":{"reviewThreads":{"nodes":[
          {"id":"PRRT_a","isResolved":true,"isOutdated":false,"path":"a.rs","line":3,
           "comments":{"nodes":[{"databaseId":7,"body":"Done"}]}},
          {"id":"PRRT_b","isResolved":false,"isOutdated":true,"path":"a.rs","line":null,
           "comments":{"nodes":[{"databaseId":8,"body":"Moved"}]}},
          {"id":"PRRT_c","isResolved":false,"path":"a.rs","line":9,"startLine":8,
           "comments":{"nodes":[{"body":"Open","author":{"login":"copilot-pull-request-reviewer"}}]}}
        ]}}}}}"#;
        let drafts = read(threads);
        assert_eq!(drafts.resolved, ["gh-7", "gh-8"]);
        let [open] = drafts.findings.as_slice() else {
            panic!("{:?}", drafts.findings)
        };
        assert_eq!(
            (open.id.as_deref(), open.line, open.end_line),
            (Some("gh-PRRT_c"), Some(8), Some(9))
        );
        assert!(looks_like(threads));

        let pages = "[{\"id\":1,\"path\":\"a\",\"line\":1,\"body\":\"A\"}]\n[{\"id\":2,\"path\":\"b\",\"line\":2,\"body\":\"B\"}]";
        let lines = "{\"body\":\"A\",\"id\":1,\"line\":1,\"path\":\"a\",\"user\":\"Copilot\"}\n{\"body\":\"B\",\"id\":2,\"line\":2,\"path\":\"b\",\"user\":\"Copilot\"}\n";
        let slurped = "[[{\"id\":1,\"path\":\"a\",\"line\":1,\"body\":\"A\"}],[{\"id\":2,\"path\":\"b\",\"line\":2,\"body\":\"B\"}]]";
        for text in [pages, lines, slurped] {
            let ids: Vec<_> = read(text).findings.into_iter().map(|d| d.id).collect();
            assert_eq!(ids, [Some("gh-1".into()), Some("gh-2".into())], "{text}");
            assert!(looks_like(text), "{text}");
        }
    }

    #[test]
    fn reviews_request_changes_or_prove_nothing() {
        let reviews = r#"[
          {"id": 1, "user": {"login": "ann"}, "state": "CHANGES_REQUESTED", "body": "Needs tests"},
          {"id": 2, "user": {"login": "ann"}, "state": "COMMENTED", "body": ""},
          {"id": 3, "user": {"login": "bob"}, "state": "CHANGES_REQUESTED", "body": ""},
          {"id": 4, "user": {"login": "bob"}, "state": "APPROVED", "body": "ok"},
          {"id": 5, "user": {"login": "cy"}, "state": "CHANGES_REQUESTED", "body": ""}
        ]"#;
        let drafts = read(reviews);
        let found: Vec<_> = drafts
            .findings
            .iter()
            .map(|d| (d.id.as_deref(), d.title.as_str()))
            .collect();
        assert_eq!(
            found,
            [
                (Some("gh-review-1"), "Needs tests"),
                (Some("gh-review-5"), "cy requested changes")
            ]
        );
        assert_eq!(drafts.resolved, ["gh-review-3"]);
        assert!(looks_like(reviews));
        let approved =
            r#"{"reviews":[{"id":"PRR_1","author":{"login":"a"},"state":"APPROVED","body":""}]}"#;
        assert!(read(approved).findings.is_empty());
        let commented =
            r#"[{"id":1,"user":{"login":"a"},"state":"COMMENTED","body":"Pull request overview"}]"#;
        assert_eq!(
            parse(commented).unwrap_err().to_string(),
            "github: 1 review(s), none approving nor requesting changes: their findings are review comments"
        );
    }

    #[test]
    fn what_is_unreadable_is_named() {
        for (text, want) in [
            (
                r#"[{"path":"a","line":1}]"#,
                "github: [0]: no `body`: neither a review comment (`path`, `body`) nor a review (`state`, `body`)",
            ),
            (
                "{\"body\":\"a\",\"path\":\"a\"}\n{\"body\":7,\"path\":\"b\"}",
                "github: line 2, body: must be a string, not 7",
            ),
            (
                r#"[{"state":"LGTM","body":""}]"#,
                "github: [0].state: `LGTM` is no review state; accepted: APPROVED, CHANGES_REQUESTED, COMMENTED, DISMISSED, PENDING",
            ),
            (
                r#"{"errors":[{"message":"Could not resolve to a PullRequest"}]}"#,
                "github: errors: GitHub answered with an error: Could not resolve to a PullRequest",
            ),
            (
                r#"{"data":{"node":{"body":"Walkthrough","author":{"login":"coderabbitai"}}}}"#,
                "github: data.node: no `path`: a comment on the pull request's conversation, not on its code; referee reads review comments (`pulls/N/comments`), reviews and review threads",
            ),
            (
                r#"[{"path":"a","body":"  \n<!-- x -->\n"}]"#,
                "github: [0].body: no text to take a title from",
            ),
            (
                "[{\"path\":\"a\",",
                "github: line 1 column 13: EOF while parsing a value",
            ),
        ] {
            assert_eq!(parse(text).unwrap_err().to_string(), want, "{text}");
        }
        assert!(read("[]").findings.is_empty());
        for other in [
            "[]",
            r#"{"findings":[]}"#,
            r#"[{"severity":"bug","title":"t","path":"a","body":"b"}]"#,
            r#"{"message":"m","location":{"path":"a"}}"#,
        ] {
            assert!(!looks_like(other), "{other}");
        }
    }
}
