//! What an agent call produced: the reply a preset's unit reads from it (the
//! reviewer's findings bytes for the findings parsers, the writer's
//! responses, the spend) and the reading every preset shares (the output cap,
//! a failed exit, JSON, fences, responses). Pure: the captured output comes in
//! as bytes.

use serde_json::Value;

use super::preset::{self, Role};
use super::process::Finished;
use crate::contract::Preset;
use crate::findings::responses::{self, Response};
use crate::money::Usd;

/// What a call brought back.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Reply {
    /// Reviewer: the output the findings parsers read.
    pub review: Option<Vec<u8>>,
    /// Writer: its responses to open findings, if it gave any.
    pub responses: Vec<Response>,
    pub cost_usd: Option<Usd>,
    pub tokens: Option<u64>,
}

/// What a call left for its preset to read.
pub struct Produced<'a> {
    pub finished: &'a Finished,
    pub stdout: &'a [u8],
    /// What the call left in its `REFEREE_OUTPUT_FILE` / `-o` file, unless
    /// that is empty or blank.
    pub output_file: Option<&'a [u8]>,
    /// The `tests` preset's JUnit report.
    pub junit: Option<&'a [u8]>,
}

/// Reads `finished` as `preset` prints. `output_file` is what the call left in
/// its `REFEREE_OUTPUT_FILE` / `-o` file; `junit` the `tests` preset's report.
pub fn interpret(
    preset: Preset,
    role: Role,
    finished: &Finished,
    output_file: Option<&[u8]>,
    junit: Option<&[u8]>,
) -> Result<Reply, String> {
    if finished.stdout.dropped > 0 {
        return Err(format!(
            "printed {} bytes more than the {} MiB kept",
            finished.stdout.dropped,
            super::process::OUTPUT_CAP / 1024 / 1024
        ));
    }
    let unit = preset::unit(preset);
    let stdout = &finished.stdout.bytes;
    let failed_exit = match finished.code {
        Some(0) => None,
        Some(code) => Some(format!("exited with status {code}")),
        None => Some("was killed by a signal".to_string()),
    };
    if unit.exit_fails()
        && let Some(why) = failed_exit
    {
        if let Some(message) = unit.failure(finished) {
            return Err(format!("{why}: {message}"));
        }
        let detail = first_line(&finished.stderr.bytes)
            .or_else(|| first_line(stdout))
            .map(|l| format!(": {l}"))
            .unwrap_or_default();
        return Err(format!("{why}{detail}"));
    }
    let reply = unit.read(
        role,
        &Produced {
            finished,
            stdout,
            output_file: output_file.filter(|b| !b.iter().all(u8::is_ascii_whitespace)),
            junit,
        },
    )?;
    Ok(reply)
}

/// The document as JSON: the whole text, else its last line that parses.
pub(crate) fn json_of(bytes: &[u8]) -> Option<Value> {
    if let Ok(v) = serde_json::from_slice::<Value>(bytes) {
        return Some(v);
    }
    bytes.split(|&b| b == b'\n').rev().find_map(|line| {
        serde_json::from_slice::<Value>(line)
            .ok()
            .filter(Value::is_object)
    })
}

/// The text inside one ```json fence, if the whole reply is fenced.
pub fn strip_fences(text: &str) -> String {
    let t = text.trim();
    if let Some(rest) = t.strip_prefix("```")
        && let Some(body) = rest.strip_suffix("```")
    {
        let body = body.split_once('\n').map_or("", |(first, body)| {
            if first.trim().chars().all(|c| c.is_ascii_alphanumeric()) {
                body
            } else {
                rest
            }
        });
        return body.trim().to_string();
    }
    t.to_string()
}

/// The writer's responses in its final text: the last JSON object (fenced or
/// not) with a `responses` list. A writer that gave none gave none.
pub fn responses_in(text: &str) -> Vec<Response> {
    let mut starts: Vec<usize> = text.match_indices('{').map(|(i, _)| i).collect();
    starts.reverse();
    for start in starts {
        let tail = &text[start..];
        let mut stream = serde_json::Deserializer::from_str(tail).into_iter::<Value>();
        if let Some(Ok(value)) = stream.next()
            && value.get("responses").is_some_and(Value::is_array)
            && let Ok(list) = responses::parse(value.to_string().as_bytes())
        {
            return list;
        }
    }
    Vec::new()
}

fn first_line(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    text.lines()
        .map(str::trim)
        .find(|l| !l.is_empty())
        .map(|l| crate::text::one_line(l).chars().take(200).collect())
}

#[cfg(test)]
mod tests;
