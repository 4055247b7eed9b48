//! Human-readable output: tables that fit the terminal, content blocks as text. `--json`
//! bypasses all of this and prints the protocol's own JSON.

use std::fmt::Write as _;
use std::io::IsTerminal as _;

use serde_json::Value;

/// The width to fit: the terminal's, else `$COLUMNS`, else 100.
pub(crate) fn width() -> usize {
    if std::io::stdout().is_terminal()
        && let Some((terminal_size::Width(w), _)) = terminal_size::terminal_size()
    {
        return usize::from(w).max(40);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.parse().ok())
        .unwrap_or(100)
        .max(40)
}

/// A table: a header row and rows of cells, each column as wide as its widest cell; the
/// last column is cut (with `…`) so that a row fits `width`. Newlines in cells become
/// spaces, so one row is one line.
pub(crate) fn table(header: &[&str], rows: &[Vec<String>], width: usize) -> String {
    let clean =
        |cell: &str| printable(&cell.split_whitespace().collect::<Vec<_>>().join(" ")).into_owned();
    let rows: Vec<Vec<String>> = rows
        .iter()
        .map(|row| row.iter().map(|c| clean(c)).collect())
        .collect();
    let columns = header.len();
    let mut widths: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in &rows {
        for (i, cell) in row.iter().enumerate().take(columns) {
            widths[i] = widths[i].max(cell.chars().count());
        }
    }
    // Every column but the last keeps its width (at most 40); the last gets the rest.
    for w in widths.iter_mut().take(columns.saturating_sub(1)) {
        *w = (*w).min(40);
    }
    let fixed: usize = widths
        .iter()
        .take(columns.saturating_sub(1))
        .map(|w| w + 2)
        .sum();
    if let Some(last) = widths.last_mut() {
        *last = (*last).min(width.saturating_sub(fixed).max(10));
    }
    let mut out = String::new();
    let mut line = |cells: &[String]| {
        let mut text = String::new();
        for (i, w) in widths.iter().enumerate() {
            let cell = cells.get(i).map_or("", String::as_str);
            let cell = cut(cell, *w);
            if i + 1 == columns {
                text.push_str(&cell);
            } else {
                let _ = write!(text, "{cell:<w$}  ");
            }
        }
        out.push_str(text.trim_end());
        out.push('\n');
    };
    line(&header.iter().map(|h| (*h).to_owned()).collect::<Vec<_>>());
    for row in &rows {
        line(row);
    }
    out
}

/// `text` made safe for a terminal: control characters other than newline and tab (C0,
/// DEL, C1, which include the escape that starts terminal control sequences) and the
/// bidirectional overrides that can make text read other than it is (U+202A to U+202E,
/// U+2066 to U+2069) are shown as `\u{…}` escapes. Everything a server sends (names,
/// descriptions, results) passes through here before a human sees it.
pub(crate) fn printable(text: &str) -> std::borrow::Cow<'_, str> {
    let unsafe_char = |c: char| {
        (c.is_control() && c != '\n' && c != '\t')
            || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
    };
    if !text.chars().any(unsafe_char) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if unsafe_char(c) {
            let _ = write!(out, "\\u{{{:x}}}", u32::from(c));
        } else {
            out.push(c);
        }
    }
    std::borrow::Cow::Owned(out)
}

/// `text` in at most `width` characters, ending in `…` when cut.
pub(crate) fn cut(text: &str, width: usize) -> String {
    if text.chars().count() <= width {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(width.saturating_sub(1)).collect();
    out.push('…');
    out
}

/// The content blocks of a tool result or prompt message, as text: text as is, images and
/// audio as a one-line summary, resources by their text or URI.
pub(crate) fn content(blocks: &Value) -> String {
    printable(&content_raw(blocks)).into_owned()
}

fn content_raw(blocks: &Value) -> String {
    let mut out = String::new();
    for block in blocks.as_array().into_iter().flatten() {
        let line = match block["type"].as_str() {
            Some("text") => block["text"].as_str().unwrap_or_default().to_owned(),
            Some(kind @ ("image" | "audio")) => format!(
                "[{kind} {}, {} bytes of base64]",
                block["mimeType"].as_str().unwrap_or("?"),
                block["data"].as_str().map_or(0, str::len)
            ),
            Some("resource") => resource_raw(&block["resource"]),
            Some("resource_link") => format!("[link {}]", block["uri"].as_str().unwrap_or("?")),
            _ => block.to_string(),
        };
        out.push_str(&line);
        if !line.ends_with('\n') {
            out.push('\n');
        }
    }
    out
}

/// One resource's contents as text: its text, or a summary of a blob.
pub(crate) fn resource(contents: &Value) -> String {
    printable(&resource_raw(contents)).into_owned()
}

fn resource_raw(contents: &Value) -> String {
    match contents.get("text").and_then(Value::as_str) {
        Some(text) => text.to_owned(),
        None => format!(
            "[{} {}, {} bytes of base64]",
            contents["uri"].as_str().unwrap_or("?"),
            contents["mimeType"].as_str().unwrap_or("blob"),
            contents["blob"].as_str().map_or(0, str::len)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_table_fits_the_width_and_cuts_the_last_column() {
        let rows = vec![
            vec!["echo".to_owned(), "Returns its text argument".to_owned()],
            vec!["add".to_owned(), "Adds\ntwo integers".to_owned()],
        ];
        let out = table(&["NAME", "DESCRIPTION"], &rows, 20);
        assert_eq!(
            out,
            "NAME  DESCRIPTION\necho  Returns its t…\nadd   Adds two inte…\n"
        );
        for line in out.lines() {
            assert!(line.chars().count() <= 20, "{line}");
        }
    }

    #[test]
    fn server_text_cannot_drive_the_terminal() {
        let hostile = "ok\u{1b}]0;pwned\u{7}\u{1b}[2J\u{202e}txt.exe\u{9b}31m\tend\nnext";
        let shown = printable(hostile);
        assert_eq!(
            shown,
            "ok\\u{1b}]0;pwned\\u{7}\\u{1b}[2J\\u{202e}txt.exe\\u{9b}31m\tend\nnext"
        );
        assert!(matches!(
            printable("plain text\n"),
            std::borrow::Cow::Borrowed(_)
        ));
        let blocks = json!([{"type": "text", "text": "a\u{1b}[31mred"}]);
        assert_eq!(content(&blocks), "a\\u{1b}[31mred\n");
        let table = table(&["name"], &[vec!["x\u{1b}[8m".to_owned()]], 80);
        assert!(!table.contains('\u{1b}'), "{table}");
    }

    #[test]
    fn content_blocks_read_as_text() {
        let blocks = json!([
            {"type": "text", "text": "5"},
            {"type": "image", "mimeType": "image/png", "data": "AAAA"},
            {"type": "resource", "resource": {"uri": "x://a", "text": "inner"}}
        ]);
        assert_eq!(
            content(&blocks),
            "5\n[image image/png, 4 bytes of base64]\ninner\n"
        );
    }
}
