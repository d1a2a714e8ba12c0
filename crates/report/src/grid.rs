//! Aligned text tables (comfy-table): a label column, then groups of
//! right-aligned figures with `|` between groups and, when groups are named,
//! a line above the header with each group's name over its columns. `-`
//! marks a figure not measured.

use comfy_table::{CellAlignment, ContentArrangement, Table};

/// What an unmeasured figure prints as.
pub(crate) const NOT_MEASURED: &str = "-";

/// A figure with `decimals` digits, or `-`.
pub(crate) fn fixed(x: Option<f64>, decimals: usize) -> String {
    x.map_or_else(|| NOT_MEASURED.to_string(), |x| format!("{x:.decimals$}"))
}

/// A table under construction.
pub(crate) struct Grid {
    table: Table,
    sizes: Vec<usize>,
    names: Vec<String>,
}

/// A table whose columns are `groups`: (name, column headers); the first
/// group holds the label column.
pub(crate) fn grid(groups: &[(&str, Vec<String>)]) -> Grid {
    let mut header = Vec::new();
    for (g, (_, columns)) in groups.iter().enumerate() {
        if g > 0 {
            header.push("|".to_string());
        }
        header.extend(columns.iter().cloned());
    }
    let mut table = Table::new();
    table.load_preset("     -             ").set_content_arrangement(ContentArrangement::Disabled).set_header(header);
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_cell_alignment(if i == 0 { CellAlignment::Left } else { CellAlignment::Right });
        if i == 0 {
            column.set_padding((0, 1));
        }
    }
    Grid {
        table,
        sizes: groups.iter().map(|(_, c)| c.len()).collect(),
        names: groups.iter().map(|(n, _)| n.to_string()).collect(),
    }
}

impl Grid {
    /// Adds a row: the cells of every group in order.
    pub(crate) fn row(&mut self, cells: Vec<String>) {
        assert_eq!(cells.len(), self.sizes.iter().sum::<usize>(), "a cell per column");
        let mut cells = cells.into_iter();
        let mut row = Vec::new();
        for (g, &size) in self.sizes.iter().enumerate() {
            if g > 0 {
                row.push("|".to_string());
            }
            row.extend(cells.by_ref().take(size));
        }
        self.table.add_row(row);
    }

    /// The table as text, a line per row, no trailing blanks; the group
    /// names, if any, start just after their group's `|` in the header.
    pub(crate) fn render(&self) -> String {
        let body: Vec<String> = self.table.to_string().lines().map(|l| l.trim_end().to_string()).collect();
        let mut out = String::new();
        if self.names.iter().any(|n| !n.is_empty()) {
            let header: Vec<char> = body[0].chars().collect();
            let bars = header.iter().enumerate().filter(|(_, &c)| c == '|').map(|(i, _)| i);
            let mut line: Vec<char> = vec![' '; header.len()];
            for (at, name) in bars.zip(&self.names[1..]) {
                line[at] = '|';
                for (k, c) in name.chars().enumerate() {
                    if let Some(slot) = line.get_mut(at + 2 + k) {
                        *slot = c;
                    }
                }
            }
            out.push_str(line.iter().collect::<String>().trim_end());
            out.push('\n');
        }
        for l in body {
            out.push_str(&l);
            out.push('\n');
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_labels_keep_every_column_aligned() {
        let mut g = grid(&[("", vec!["policy".into()]), ("short", vec!["jobs".into(), "p50 s".into()])]);
        g.row(vec!["fifo".into(), "57".into(), fixed(Some(3461.25), 1)]);
        g.row(vec!["a-policy-name-longer-than-14".into(), "1".into(), fixed(None, 1)]);
        let text = g.render();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines.len(), 5, "{text}");
        let bars: Vec<usize> = lines.iter().filter(|l| !l.starts_with('-')).map(|l| l.find('|').unwrap()).collect();
        assert!(bars.windows(2).all(|w| w[0] == w[1]), "the group separator in one column:\n{text}");
        let ends: Vec<usize> = lines[1..].iter().filter(|l| !l.starts_with('-')).map(|l| l.chars().count()).collect();
        assert!(ends.windows(2).all(|w| w[0] == w[1]), "right-aligned figures end together:\n{text}");
        assert!(lines[4].ends_with(" -"), "not measured is `-`:\n{text}");
        assert!(lines[0].contains("short") && lines[1].contains("jobs"), "{text}");
    }
}
