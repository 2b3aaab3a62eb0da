//! The RLE pattern format of Golly and LifeWiki, two-state only:
//!
//! ```text
//! #N Glider              comment lines, before the header
//! x = 3, y = 3, rule = B3/S23
//! bob$2bo$3o!
//! ```
//!
//! Runs of `b` (dead), `o` (alive) and `$` (end of row), each with an optional count,
//! across as many lines as needed, ending at `!` (what follows it is ignored).
//! Errors carry the 1-based line and column of the offending character.

use super::rule::{self, Rule};

/// A parsed pattern: its box, the rule of its header if any, and its live cells as
/// horizontal runs (row, first column, length) inside the box.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pattern {
    pub width: u64,
    pub height: u64,
    pub rule: Option<Rule>,
    pub runs: Vec<(u64, u64, u64)>,
}

/// Where and why the text is not RLE.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RleError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for RleError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

/// A cursor over the text that knows its line and column.
struct Cursor<'a> {
    text: &'a [u8],
    at: usize,
    line: usize,
    line_start: usize,
}

impl<'a> Cursor<'a> {
    fn peek(&self) -> Option<u8> {
        self.text.get(self.at).copied()
    }
    fn bump(&mut self) {
        if self.peek() == Some(b'\n') {
            self.line += 1;
            self.line_start = self.at + 1;
        }
        self.at += 1;
    }
    fn error_at(&self, at: usize, message: impl Into<String>) -> RleError {
        RleError { line: self.line, column: at - self.line_start + 1, message: message.into() }
    }
    fn error(&self, message: impl Into<String>) -> RleError {
        self.error_at(self.at, message)
    }
    /// Skips blanks on this line (not the line break).
    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r')) {
            self.bump();
        }
    }
    /// Skips blanks and line breaks.
    fn skip_space(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.bump();
        }
    }
    fn rest_of_line(&mut self) {
        while !matches!(self.peek(), None | Some(b'\n')) {
            self.bump();
        }
    }
    fn number(&mut self) -> Result<Option<u64>, RleError> {
        let start = self.at;
        let mut value: u64 = 0;
        while let Some(c @ b'0'..=b'9') = self.peek() {
            value = value
                .checked_mul(10)
                .and_then(|v| v.checked_add(u64::from(c - b'0')))
                .ok_or_else(|| self.error_at(start, "number too large"))?;
            self.bump();
        }
        Ok(if self.at == start { None } else { Some(value) })
    }
    fn expect(&mut self, c: u8, what: &str) -> Result<(), RleError> {
        self.skip_blanks();
        if self.peek() == Some(c) {
            self.bump();
            Ok(())
        } else {
            Err(self.error(format!("expected {what}, found {}", self.describe())))
        }
    }
    fn describe(&self) -> String {
        match self.peek() {
            None => "the end of the text".into(),
            Some(b'\n') => "the end of the line".into(),
            Some(c) if c.is_ascii_graphic() => format!("'{}'", c as char),
            Some(c) => format!("byte 0x{c:02x}"),
        }
    }
}

/// Parses the header line `x = W, y = H[, rule = R]`.
fn header(c: &mut Cursor) -> Result<(u64, u64, Option<Rule>), RleError> {
    let mut dims = [0u64; 2];
    for (i, name) in [b'x', b'y'].into_iter().enumerate() {
        if i == 1 {
            c.expect(b',', "','")?;
        }
        c.expect(name, &format!("'{}'", name as char))?;
        c.expect(b'=', "'='")?;
        c.skip_blanks();
        dims[i] = c.number()?.ok_or_else(|| c.error(format!("expected a number, found {}", c.describe())))?;
    }
    c.skip_blanks();
    let mut rule = None;
    if c.peek() == Some(b',') {
        c.bump();
        c.skip_blanks();
        for &k in b"rule" {
            if c.peek() != Some(k) {
                return Err(c.error(format!("expected 'rule', found {}", c.describe())));
            }
            c.bump();
        }
        c.expect(b'=', "'='")?;
        c.skip_blanks();
        let start = c.at;
        c.rest_of_line();
        let mut text = std::str::from_utf8(&c.text[start..c.at]).map_err(|_| c.error_at(start, "the rule is not UTF-8"))?;
        // Golly appends the topology of bounded grids (":T64,64"); the grid has its own.
        if let Some(colon) = text.find(':') {
            text = &text[..colon];
        }
        rule = Some(rule::parse(text).map_err(|e| c.error_at(start + e.offset, format!("bad rule: {}", e.message)))?);
    }
    c.skip_blanks();
    if !matches!(c.peek(), None | Some(b'\n')) {
        return Err(c.error(format!("unexpected {} after the header", c.describe())));
    }
    Ok((dims[0], dims[1], rule))
}

/// Parses RLE text.
pub fn parse(text: &[u8]) -> Result<Pattern, RleError> {
    let mut c = Cursor { text, at: 0, line: 1, line_start: 0 };
    // Comment lines and blank lines, then the header.
    loop {
        c.skip_space();
        match c.peek() {
            Some(b'#') => c.rest_of_line(),
            None => return Err(c.error("no header line 'x = …, y = …'")),
            _ => break,
        }
    }
    let (width, height, rule) = header(&mut c)?;
    let mut runs = Vec::new();
    let (mut row, mut col) = (0u64, 0u64);
    loop {
        c.skip_space();
        let start = c.at;
        let count = c.number()?;
        if count == Some(0) {
            return Err(c.error_at(start, "a run count of 0"));
        }
        let n = count.unwrap_or(1);
        c.skip_space();
        match c.peek() {
            Some(tag @ (b'b' | b'o')) => {
                let end = col.checked_add(n).filter(|&e| e <= width && row < height);
                let Some(end) = end else {
                    return Err(c.error_at(
                        start,
                        if row >= height {
                            format!("cells below the pattern's height y = {height}")
                        } else {
                            format!("run ends at column {} past the pattern's width x = {width}", col.saturating_add(n))
                        },
                    ));
                };
                if tag == b'o' {
                    match runs.last_mut() {
                        Some((r, c0, len)) if *r == row && *c0 + *len == col => *len += n,
                        _ => runs.push((row, col, n)),
                    }
                }
                col = end;
            }
            Some(b'$') => {
                // Rows past the box are an error only once a cell lands there.
                row = row.saturating_add(n);
                col = 0;
            }
            Some(b'!') => break,
            None => return Err(c.error("missing '!' at the end of the pattern")),
            Some(b'#') if count.is_none() && c.at == c.line_start => {
                return Err(c.error("comment line inside the pattern (comments go before the header)"))
            }
            Some(_) => {
                return Err(c.error(format!(
                    "unexpected {} (two-state RLE has only 'b', 'o', '$' and '!')",
                    c.describe()
                )))
            }
        }
        c.bump();
    }
    Ok(Pattern { width, height, rule, runs })
}

/// The longest line `write` produces.
pub(crate) const MAX_LINE: usize = 70;

/// Appends tokens to lines of at most MAX_LINE characters, breaking between tokens.
struct Writer {
    out: String,
    line_len: usize,
}

impl Writer {
    fn token(&mut self, count: u64, tag: char) {
        let mut tok = String::new();
        if count > 1 {
            tok.push_str(&count.to_string());
        }
        tok.push(tag);
        if self.line_len + tok.len() > MAX_LINE {
            self.out.push('\n');
            self.line_len = 0;
        }
        self.out.push_str(&tok);
        self.line_len += tok.len();
    }
}

/// Writes a grid of `width` x `height` as RLE; `row_runs(y)` gives row y's live runs
/// (first column, length), left to right and not touching.
pub fn write(width: u64, height: u64, rule: Rule, mut row_runs: impl FnMut(u64) -> Vec<(u64, u64)>) -> String {
    let mut w = Writer { out: format!("x = {width}, y = {height}, rule = {rule}\n"), line_len: 0 };
    let mut pending_rows = 0u64; // '$'s owed before the next live cell
    for y in 0..height {
        let runs = row_runs(y);
        if runs.is_empty() {
            pending_rows += 1;
            continue;
        }
        if pending_rows > 0 {
            w.token(pending_rows, '$');
        }
        let mut x = 0;
        for (start, len) in runs {
            if start > x {
                w.token(start - x, 'b');
            }
            w.token(len, 'o');
            x = start + len;
        }
        pending_rows = 1;
    }
    w.token(1, '!');
    w.out.push('\n');
    w.out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn glider() {
        let p = parse(b"#N Glider\n#C c\nx = 3, y = 3, rule = B3/S23\nbob$2bo$3o!\n").unwrap();
        assert_eq!((p.width, p.height, p.rule), (3, 3, Some(Rule::LIFE)));
        assert_eq!(p.runs, vec![(0, 1, 1), (1, 2, 1), (2, 0, 3)]);
    }

    #[test]
    fn wrapped_and_golly_suffix() {
        let p = parse(b"x=4,y=2,rule=B36/S23:T10,10\n2o\nbo$\n4o\n!trailing").unwrap();
        assert_eq!(p.runs, vec![(0, 0, 2), (0, 3, 1), (1, 0, 4)]);
        assert_eq!(p.rule.unwrap().to_string(), "B36/S23");
    }

    #[test]
    fn errors() {
        let at = |s: &str| parse(s.as_bytes()).map(|_| ()).map_err(|e| (e.line, e.column));
        assert_eq!(at(""), Err((1, 1)));
        assert_eq!(at("x = 3, y = 3\nbo2$4o!"), Err((2, 5)));
        assert_eq!(at("x = 3, y = 3\nboA!"), Err((2, 3)));
        assert_eq!(at("x = 3, y = 3\nbo"), Err((2, 3)));
        assert_eq!(at("x = 3, y = 3, rule = B9/S\no!"), Err((1, 23)));
        assert_eq!(at("x = 3 y = 3\n!"), Err((1, 7)));
        assert_eq!(at("x = 3, y = 1\no$o!"), Err((2, 3)));
        assert_eq!(at("x = 3, y = 1\n0o!"), Err((2, 1)));
    }

    #[test]
    fn round_trip() {
        let rows: Vec<Vec<(u64, u64)>> = vec![vec![(1, 2), (5, 1)], vec![], vec![], vec![(0, 100)], vec![]];
        let text = write(120, 5, Rule::LIFE, |y| rows[y as usize].clone());
        assert!(text.lines().all(|l| l.len() <= MAX_LINE));
        let p = parse(text.as_bytes()).unwrap();
        assert_eq!((p.width, p.height), (120, 5));
        assert_eq!(p.runs, vec![(0, 1, 2), (0, 5, 1), (3, 0, 100)]);
    }
}
