//! The web page served at `GET /`: one self-contained HTML file (styles and
//! script inline, no external assets, works offline) that fetches `/cluster`
//! and `/jobs` every 3 s and shows the nodes with their capacity and
//! allocation, the jobs by state, and each task's state and preemptions.
//! It is read-only unless the user types the API token, which enables a
//! cancel button on each job that has not ended.

/// The page.
pub const HTML: &str = include_str!("page.html");
