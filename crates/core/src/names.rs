//! Names a user types (presets, scenarios): the error for an unknown one,
//! with the closest known name when it looks like a typo.

/// The error for an unknown `what` (`policy`, `scenario`) called `name`:
/// the known name closest to it, if any is close (a "did you mean"), then
/// every known name.
pub fn unknown(what: &str, name: &str, known: &[&str]) -> String {
    let list = known.join(", ");
    match closest(name, known) {
        Some(near) => format!("unknown {what} `{name}`: did you mean `{near}`? (known: {list})"),
        None => format!("unknown {what} `{name}` (known: {list})"),
    }
}

/// The known name most like `name` (Jaro–Winkler similarity, as clap
/// suggests subcommands), if it is similar enough to be a typo.
pub fn closest<'a>(name: &str, known: &[&'a str]) -> Option<&'a str> {
    let lower = name.to_lowercase();
    known
        .iter()
        .map(|k| (strsim::jaro_winkler(&lower, k), *k))
        .filter(|(score, _)| *score >= 0.8)
        .max_by(|a, b| a.0.total_cmp(&b.0))
        .map(|(_, k)| k)
}

#[cfg(test)]
mod tests {
    use super::*;

    const KNOWN: &[&str] = &["fifo", "kill", "gp", "ip", "checkpoint-nvm", "mixed", "high-load"];

    #[test]
    fn a_typo_gets_the_closest_name_and_nonsense_none() {
        assert_eq!(closest("gpp", KNOWN), Some("gp"));
        assert_eq!(closest("KILL", KNOWN), Some("kill"));
        assert_eq!(closest("checkpoint-nv", KNOWN), Some("checkpoint-nvm"));
        assert_eq!(closest("mixd", KNOWN), Some("mixed"));
        assert_eq!(closest("zzzz", KNOWN), None);
    }

    #[test]
    fn the_message_names_the_guess_then_every_name() {
        assert_eq!(unknown("policy", "gpp", &["gp", "ip"]), "unknown policy `gpp`: did you mean `gp`? (known: gp, ip)");
        assert_eq!(unknown("scenario", "zzzz", &["mixed"]), "unknown scenario `zzzz` (known: mixed)");
    }
}
