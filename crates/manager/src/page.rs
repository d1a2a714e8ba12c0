//! The web page served at `GET /`: one self-contained HTML file (styles and
//! script inline, no external assets, works offline) that fetches `/cluster`,
//! `/metrics.json` and a page of `/jobs` (20, newest first; finished jobs stay
//! listed, a page back) every 3 s and shows the nodes with their capacity and
//! allocation, the jobs by state, each job's submission, start (and wait) and
//! end times, its tasks' states, exit codes and preemptions (when, and by
//! which mechanism), and the last lines of each task's stdout (at most 5
//! lines and 600 bytes; as text, never parsed as HTML).
//! It is read-only unless the user types the API token, which enables a
//! cancel button on each job that has not ended.

use base64::Engine;
use std::sync::LazyLock;

/// The page.
pub const HTML: &str = include_str!("page.html");

/// The page's `Content-Security-Policy`: nothing loads or runs but its own
/// inline script and style (by their SHA-256), it talks only to this
/// server, and no other site may frame it.
pub static CONTENT_SECURITY_POLICY: LazyLock<String> = LazyLock::new(|| {
    format!(
        "default-src 'none'; script-src '{}'; style-src '{}'; connect-src 'self'; img-src 'self' data:; \
         base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
        inline_hash("script"),
        inline_hash("style")
    )
});

/// `sha256-…` of the text of the page's one `<TAG>` element.
fn inline_hash(tag: &str) -> String {
    let open = format!("<{tag}>");
    let start = HTML.find(&open).map(|i| i + open.len()).expect("the page has the element");
    let end = start + HTML[start..].find(&format!("</{tag}>")).expect("the element is closed");
    let digest = ring::digest::digest(&ring::digest::SHA256, &HTML.as_bytes()[start..end]);
    format!("sha256-{}", base64::engine::general_purpose::STANDARD.encode(digest))
}
