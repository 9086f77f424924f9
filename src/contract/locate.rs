//! Where in a contract's text a refused field is, and which allowed key an
//! unknown one was probably meant to be. Pure.

use toml::de::{DeTable, DeValue};

/// The line (1-based) of the key `field` (dotted, as a `ContractError`
/// names it) in the TOML `text`, or of the deepest part of it that is
/// there: `reviewer.flags` is found under `[reviewer]`, as a dotted key or
/// in an inline table. `None` when the text does not parse or holds none of
/// it (a missing field).
pub fn line_of(text: &str, field: &str) -> Option<usize> {
    let top = DeTable::parse(text).ok()?;
    let mut table = top.get_ref();
    let mut found = None;
    for part in field.split('.') {
        // `reviewers[1]`: the second table of the array `reviewers`.
        let (name, index) = match part.split_once('[') {
            Some((name, rest)) => (name, rest.trim_end_matches(']').parse::<usize>().ok()),
            None => (part, None),
        };
        let (key, value) = table.get_key_value(name)?;
        found = Some(key.span().start);
        let mut value = value.get_ref();
        if let (Some(index), DeValue::Array(items)) = (index, value) {
            let Some(item) = items.get(index) else { break };
            found = Some(item.span().start);
            value = item.get_ref();
        }
        match value {
            DeValue::Table(inner) => table = inner,
            _ => break,
        }
    }
    found.map(|at| line_at(text, at))
}

/// The line (1-based) byte offset `at` of `text` lies on.
fn line_at(text: &str, at: usize) -> usize {
    let at = at.min(text.len());
    text.as_bytes()[..at]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// The allowed key (of the comma-separated `allowed`) closest to the last
/// part of `field`, when it is close enough to be a slip: at most one edit
/// for a short key, two from five letters, three from nine.
pub fn meant(field: &str, allowed: &str) -> Option<String> {
    let key = field.rsplit('.').next().unwrap_or(field);
    let most = match key.chars().count() {
        0..=4 => 1,
        5..=8 => 2,
        _ => 3,
    };
    allowed
        .split(',')
        .map(str::trim)
        .filter(|name| !name.is_empty() && *name != key)
        .map(|name| (strsim::damerau_levenshtein(key, name), name))
        .filter(|(distance, _)| *distance <= most)
        .min_by_key(|(distance, _)| *distance)
        .map(|(_, name)| name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_key_is_found_on_its_line_in_a_table_a_dotted_key_or_an_inline_table() {
        let text = "loop = \"x\"\nmax_round = 3\n\n[reviewer]\npreset = \"codex\"\nflags = 1\n";
        assert_eq!(line_of(text, "max_round"), Some(2));
        assert_eq!(line_of(text, "reviewer.flags"), Some(6));
        assert_eq!(line_of(text, "reviewer"), Some(4));
        let dotted = "loop = \"x\"\nbudget.dollars = 3\n";
        assert_eq!(line_of(dotted, "budget.dollars"), Some(2));
        let inline = "loop = \"x\"\n\nwriter = { preset = \"claude\", flags = 1 }\n";
        assert_eq!(line_of(inline, "writer.flags"), Some(3));
    }

    #[test]
    fn a_field_of_an_array_of_tables_is_found_in_its_entry() {
        let text = "loop = \"x\"\n\n[[reviewers]]\nname = \"a\"\npreset = \"codex\"\n\n[[reviewers]]\nname = \"b\"\nmodle = 1\n";
        assert_eq!(line_of(text, "reviewers[1].modle"), Some(9));
        assert_eq!(line_of(text, "reviewers[0].preset"), Some(5));
        assert_eq!(line_of(text, "reviewers[5].preset"), Some(3));
    }

    #[test]
    fn a_field_below_a_value_is_found_at_the_value_and_a_missing_one_nowhere() {
        let text = "loop = \"x\"\nguards = [\"stalled\", \"loud\"]\n";
        assert_eq!(line_of(text, "guards"), Some(2));
        assert_eq!(line_of(text, "guards.loud"), Some(2));
        assert_eq!(line_of(text, "reviewer.preset"), None);
        assert_eq!(line_of("loop = = 1", "loop"), None);
    }

    #[test]
    fn a_slip_of_a_key_is_told_the_key_it_was_meant_to_be() {
        let allowed = "loop, max_rounds, severity_floor, scope, closure, budget";
        assert_eq!(meant("max_round", allowed).as_deref(), Some("max_rounds"));
        assert_eq!(
            meant("severity-floor", allowed).as_deref(),
            Some("severity_floor")
        );
        assert_eq!(meant("scoep", allowed).as_deref(), Some("scope"));
        assert_eq!(meant("budget.dollar", "usd, tokens"), None);
        assert_eq!(meant("colour", allowed), None);
        assert_eq!(
            meant("reviewer.modle", "preset, model, bin").as_deref(),
            Some("model")
        );
    }

    #[test]
    fn the_closest_key_wins_and_a_short_key_takes_one_edit_only() {
        assert_eq!(meant("bins", "binaries, bin").as_deref(), Some("bin"));
        assert_eq!(meant("lop", "loop").as_deref(), Some("loop"));
        assert_eq!(meant("xy", "loop"), None);
        assert_eq!(meant("cwdx", "cwd, env").as_deref(), Some("cwd"));
        assert_eq!(meant("enve", "cwd, env").as_deref(), Some("env"));
    }
}
