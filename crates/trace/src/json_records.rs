//! Splits a stream of JSON objects (an SLS trace: pretty-printed or one per
//! line, bare or inside arrays) into one text per top-level object with the
//! line it starts on, so that a malformed record is skipped and the records
//! after it are still read.
//!
//! Objects are found by counting braces outside strings. A record whose
//! closing brace is missing ends where a line starts the next job (`{`
//! followed by a `"job.…"` or `"am.type"` key) or at the end of the input;
//! it is handed out marked unclosed. Text between objects that is not `[`,
//! `]`, `,` or white space is handed out, a line at a time, as a record of
//! its own (which then fails to parse).

use std::collections::VecDeque;
use std::io::BufRead;

/// One top-level record of the stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Record {
    /// Its text, from its opening brace.
    pub text: String,
    /// The 1-based line it starts on.
    pub first_line: u64,
    /// True when the input (or the next job) came before its closing brace.
    pub unclosed: bool,
}

impl Record {
    /// The line of the `nth` (0-based) occurrence of the key `"key"` in the
    /// record, or its first line if there is none.
    pub fn line_of(&self, key: &str, nth: usize) -> u64 {
        let quoted = format!("\"{key}\"");
        match self.text.match_indices(&quoted).nth(nth) {
            Some((at, _)) => self.first_line + self.text[..at].matches('\n').count() as u64,
            None => self.first_line,
        }
    }
}

/// The records of a stream, in order.
pub struct Records<R> {
    input: R,
    line: u64,
    eof: bool,
    ready: VecDeque<Record>,
    text: String,
    start: u64,
    depth: u32,
    in_string: bool,
    escaped: bool,
}

impl<R: BufRead> Records<R> {
    /// Reads records from `input`.
    pub fn new(input: R) -> Self {
        Records {
            input,
            line: 0,
            eof: false,
            ready: VecDeque::new(),
            text: String::new(),
            start: 0,
            depth: 0,
            in_string: false,
            escaped: false,
        }
    }

    fn finish(&mut self, unclosed: bool) {
        let text = std::mem::take(&mut self.text);
        self.ready.push_back(Record { text, first_line: self.start, unclosed });
        (self.depth, self.in_string, self.escaped) = (0, false, false);
    }

    fn scan(&mut self, line: &str) {
        if self.depth > 0 && starts_job(line) {
            self.finish(true);
        }
        for (i, c) in line.char_indices() {
            if self.depth == 0 {
                match c {
                    '{' => {
                        self.start = self.line;
                        self.depth = 1;
                        self.text.push(c);
                    }
                    '[' | ']' | ',' => {}
                    c if c.is_whitespace() => {}
                    _ => {
                        self.start = self.line;
                        self.text = line[i..].trim_end().to_owned();
                        self.finish(false);
                        return;
                    }
                }
                continue;
            }
            self.text.push(c);
            if self.in_string {
                match (self.escaped, c) {
                    (true, _) => self.escaped = false,
                    (false, '\\') => self.escaped = true,
                    (false, '"') => self.in_string = false,
                    _ => {}
                }
                continue;
            }
            match c {
                '"' => self.in_string = true,
                '{' | '[' => self.depth += 1,
                '}' | ']' => {
                    self.depth -= 1;
                    if self.depth == 0 {
                        self.finish(false);
                    }
                }
                _ => {}
            }
        }
        // A JSON string cannot hold a raw line break: whatever follows is outside it.
        (self.in_string, self.escaped) = (false, false);
    }
}

/// Whether `line` opens a job record: `{` and then a job key.
fn starts_job(line: &str) -> bool {
    let Some(rest) = line.trim_start().strip_prefix('{') else { return false };
    let rest = rest.trim_start();
    rest.starts_with("\"job.") || rest.starts_with("\"am.type\"")
}

impl<R: BufRead> Iterator for Records<R> {
    type Item = std::io::Result<Record>;

    fn next(&mut self) -> Option<Self::Item> {
        loop {
            if let Some(r) = self.ready.pop_front() {
                return Some(Ok(r));
            }
            if self.eof {
                return None;
            }
            let mut bytes = Vec::new();
            match self.input.read_until(b'\n', &mut bytes) {
                Err(e) => return Some(Err(e)),
                Ok(0) => {
                    self.eof = true;
                    if self.depth > 0 {
                        self.finish(true);
                    }
                }
                Ok(_) => {
                    self.line += 1;
                    self.scan(&String::from_utf8_lossy(&bytes));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn split(text: &str) -> Vec<(u64, bool, String)> {
        Records::new(text.as_bytes()).map(|r| r.unwrap()).map(|r| (r.first_line, r.unclosed, r.text)).collect()
    }

    #[test]
    fn objects_arrays_and_braces_in_strings() {
        let text = "[{\"a\": \"}{\"},\n {\"b\": [1, {\"c\": 2}]}]\n{\"d\":\n 3}\n";
        let got = split(text);
        assert_eq!(
            got,
            vec![
                (1, false, "{\"a\": \"}{\"}".to_owned()),
                (2, false, "{\"b\": [1, {\"c\": 2}]}".to_owned()),
                (3, false, "{\"d\":\n 3}".to_owned()),
            ]
        );
    }

    #[test]
    fn a_missing_brace_ends_at_the_next_job_and_junk_is_its_own_record() {
        let text = "{\"job.id\": 1,\n \"job.tasks\": [\n{\"job.id\": 2}\nnot json\n{\"job.id\": 3, \"x\": \"unclosed\n";
        let got = split(text);
        assert_eq!(got.len(), 4, "{got:?}");
        assert_eq!((got[0].0, got[0].1), (1, true));
        assert_eq!(got[1], (3, false, "{\"job.id\": 2}".to_owned()));
        assert_eq!(got[2], (4, false, "not json".to_owned()));
        assert_eq!((got[3].0, got[3].1), (5, true));
        let r = Record { text: "{\"a\": 1,\n\"b\": {\"a\": 2}}".into(), first_line: 7, unclosed: false };
        assert_eq!((r.line_of("a", 0), r.line_of("a", 1), r.line_of("zz", 0)), (7, 8, 7));
    }
}
