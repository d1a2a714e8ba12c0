//! The documents a user reads stand alone: they point to nothing outside the
//! repository (no `../shared` path, no design document that is not here, no
//! issue number), and the README and the guide cite the four papers by
//! authors, title and venue.

use std::path::{Path, PathBuf};

const REPO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");

/// README.md, ARCHITECTURE.md and every Markdown file under docs/.
fn documents() -> Vec<PathBuf> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let mut docs = vec![Path::new(REPO).join("README.md"), Path::new(REPO).join("ARCHITECTURE.md")];
    walk(&Path::new(REPO).join("docs"), &mut docs);
    docs
}

/// Where `text` names an issue by number ("issue 13", "Issue 23's").
fn issue_numbers(text: &str) -> Vec<usize> {
    let lower = text.to_lowercase();
    lower
        .match_indices("issue ")
        .filter(|(i, m)| lower[i + m.len()..].starts_with(|c: char| c.is_ascii_digit()))
        .map(|(i, _)| i)
        .collect()
}

#[test]
fn no_document_points_outside_the_repository() {
    let mut found = Vec::new();
    for doc in documents() {
        let text = std::fs::read_to_string(&doc).unwrap();
        for (n, line) in text.lines().enumerate() {
            let at = format!("{}:{}", doc.strip_prefix(REPO).unwrap_or(&doc).display(), n + 1);
            if line.contains("../shared") {
                found.push(format!("{at}: ../shared"));
            }
            if line.contains("DESIGN.md") {
                found.push(format!("{at}: DESIGN.md"));
            }
            if !issue_numbers(line).is_empty() {
                found.push(format!("{at}: an issue number"));
            }
        }
    }
    assert!(documents().len() > 20, "the documents were not found");
    assert!(found.is_empty(), "{}", found.join("\n"));
}

#[test]
fn the_readme_and_the_guide_cite_the_four_papers() {
    let cited = [
        ("Wei Chen, Jia Rao, Xiaobo Zhou", "Preemptive, Low Latency", "USENIX ATC 2017"),
        ("Jack Li, Calton Pu", "Application-Transparent Checkpointing", "Middleware 2015"),
        ("Călin Iorgulescu", "Don't cry over spilled records", "USENIX ATC 2017"),
        ("Chen Chen, Wei Wang, Bo Li", "Speculative Slot Reservation", "ICDCS 2017"),
    ];
    for doc in ["README.md", "docs/guide.md"] {
        // Line breaks inside a citation are spaces.
        let text = std::fs::read_to_string(Path::new(REPO).join(doc))
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ");
        for (authors, title, venue) in cited {
            let at = text.find(title).unwrap_or_else(|| panic!("{doc} does not cite {title}"));
            let (mut from, mut to) = (at.saturating_sub(200), (at + 400).min(text.len()));
            while !text.is_char_boundary(from) {
                from -= 1;
            }
            while !text.is_char_boundary(to) {
                to += 1;
            }
            let around = &text[from..to];
            assert!(around.contains(authors) && around.contains(venue), "{doc}: {title} without {authors} or {venue}");
        }
    }
}

#[test]
fn issue_numbers_are_found_in_any_case() {
    assert_eq!(issue_numbers("as issue 13 said; Issue 23's target"), vec![3, 18]);
    assert!(issue_numbers("the issue is open; issues 7").is_empty());
}
