use std::path::Path;

use super::*;
use crate::contract::Preset;

fn judge(toml_judge: &str) -> Judge {
    let text = format!("loop = \"t\"\n[judge]\n{toml_judge}");
    crate::contract::Contract::from_toml(&text, "HEAD")
        .unwrap()
        .judge
        .unwrap()
}

fn argv(unit: &dyn preset::Unit, model: Option<&str>) -> Vec<String> {
    let asked = JudgeCall {
        repo: Path::new("/repo"),
        model,
        prompt: "judge this",
        schema: "{\"type\":\"object\"}",
        schema_file: Path::new("/tmp/j/judge.schema.json"),
        output: Path::new("/tmp/j/judge.out"),
    };
    let invocation = unit.judge_invocation(&asked).unwrap();
    assert_eq!(invocation.stdin.as_deref(), Some(&b"judge this"[..]));
    invocation
        .args
        .iter()
        .chain(&invocation.last)
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

#[test]
fn the_judge_calls_claude_and_codex_through_their_presets() {
    assert_eq!(
        argv(preset::unit(Preset::Claude), Some("haiku")),
        [
            "-p",
            "--output-format",
            "json",
            "--json-schema",
            "{\"type\":\"object\"}",
            "--model",
            "haiku"
        ]
    );
    assert_eq!(
        argv(preset::unit(Preset::Codex), None),
        [
            "exec",
            "--json",
            "--sandbox",
            "read-only",
            "--skip-git-repo-check",
            "-C",
            "/repo",
            "--output-schema",
            "/tmp/j/judge.schema.json",
            "-o",
            "/tmp/j/judge.out",
            "-"
        ]
    );
    assert!(
        preset::unit(Preset::Gemini)
            .judge_invocation(&JudgeCall {
                repo: Path::new("/repo"),
                model: None,
                prompt: "",
                schema: "",
                schema_file: Path::new("s"),
                output: Path::new("o"),
            })
            .is_none()
    );
}

#[test]
fn a_claude_judge_counts_the_per_model_tokens_when_usage_reads_zero() {
    // Claude reports `usage` as all zeros when the budget ran out; the
    // per-model counts still hold what the call spent.
    let out = r#"{"type":"result","is_error":false,"total_cost_usd":0.01,
        "usage":{"input_tokens":0,"output_tokens":0},
        "modelUsage":{"claude-haiku-4-5":{"inputTokens":900,"outputTokens":40}},
        "structured_output":{"answers":{"stop_reason":{}}}}"#;
    let unit = preset::unit(Preset::Claude);
    let judged = unit
        .judgement(out.as_bytes(), &Err(std::io::ErrorKind::NotFound.into()))
        .unwrap();
    assert_eq!(
        (judged.cost_usd, judged.tokens),
        (Some("0.01".parse().unwrap()), Some(940))
    );
    // Without a model in the contract, the one the tool ran is named.
    let answered = answered_by(
        &judge("engine = \"claude\""),
        out.as_bytes().to_vec(),
        judged.clone(),
    );
    assert_eq!(answered.doc["model"], "claude-haiku-4-5");
    assert_eq!(answered.tokens, Some(940));
    // The contract's model wins: the referee chose it.
    let answered = answered_by(
        &judge("engine = \"claude\"\nmodel = \"haiku\""),
        Vec::new(),
        judged,
    );
    assert_eq!(answered.doc["model"], "haiku");
}

#[test]
fn a_claude_judge_without_structured_output_fails() {
    let unit = preset::unit(Preset::Claude);
    let no_file = Err(std::io::ErrorKind::NotFound.into());
    assert_eq!(
        unit.judgement(br#"{"result":"hi"}"#, &no_file).unwrap_err(),
        "claude's result has no `structured_output`"
    );
    assert!(
        unit.judgement(b"not json", &no_file)
            .unwrap_err()
            .starts_with("claude printed no JSON result: ")
    );
}

#[test]
fn a_codex_judge_reads_its_final_message_and_sums_turn_tokens() {
    let unit = preset::unit(Preset::Codex);
    let stream = concat!(
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":10,\"output_tokens\":5}}\n",
        "not json\n",
        "{\"type\":\"turn.completed\",\"usage\":{\"input_tokens\":1,\"output_tokens\":1}}\n",
    );
    let judged = unit
        .judgement(stream.as_bytes(), &Ok(" {\"answers\":{}}\n".into()))
        .unwrap();
    assert_eq!(judged.answers, json!({"answers": {}}));
    assert_eq!((judged.cost_usd, judged.tokens), (None, Some(17)));
    assert!(
        unit.judgement(stream.as_bytes(), &Err(std::io::ErrorKind::NotFound.into()))
            .unwrap_err()
            .starts_with("codex wrote no final message: ")
    );
    assert!(
        unit.judgement(b"", &Ok("nope".into()))
            .unwrap_err()
            .starts_with("codex's final message is not JSON: ")
    );
}
