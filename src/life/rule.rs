//! Life-like rules: the birth and survival neighbour counts, parsed from the B/S
//! notation Golly accepts ("B3/S23", "b3/s23", "B3S23", "S23/B3") and from the older
//! S/B form ("23/3": survival digits, then birth digits).

use std::fmt;

/// Bit n of `birth` (`survive`): a dead (live) cell with n live neighbours is alive
/// in the next generation; n in 0..=8.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Rule {
    pub birth: u16,
    pub survive: u16,
}

impl Rule {
    /// Conway's Life, every grid's rule until another is set.
    pub const LIFE: Rule = Rule { birth: 1 << 3, survive: (1 << 2) | (1 << 3) };

    /// The ways a cell is alive next generation, by the count of live cells in its 3x3
    /// block, itself included (0..=9): (alive whatever it was, alive only if it was dead,
    /// alive only if it was alive). The kernels count the block, not the neighbours:
    /// one adder tree shared by a row and both of its neighbours.
    pub fn block_terms(&self) -> [(bool, bool); 10] {
        let mut t = [(false, false); 10];
        for (sum, term) in t.iter_mut().enumerate() {
            let born = sum <= 8 && self.birth >> sum & 1 == 1;
            let survives = sum >= 1 && self.survive >> (sum - 1) & 1 == 1;
            *term = (born, survives);
        }
        t
    }
}

impl fmt::Display for Rule {
    /// The canonical B/S form, digits ascending: "B3/S23", "B2/S".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let digits = |mask: u16| (0..=8).filter(|n| mask >> n & 1 == 1).map(|n| char::from(b'0' + n)).collect::<String>();
        write!(f, "B{}/S{}", digits(self.birth), digits(self.survive))
    }
}

/// A rule text that is not a Life-like rule: the message, and the 0-based byte offset
/// in the text where the problem is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RuleError {
    pub offset: usize,
    pub message: String,
}

/// Reads the digits 0..=8 from `text[at..]` until a byte that is not a digit; returns
/// the mask and the offset after them.
fn digits(text: &[u8], mut at: usize) -> Result<(u16, usize), RuleError> {
    let mut mask = 0u16;
    while at < text.len() && text[at].is_ascii_digit() {
        let d = text[at] - b'0';
        if d > 8 {
            return Err(RuleError { offset: at, message: format!("neighbour count {d} is more than 8") });
        }
        mask |= 1 << d;
        at += 1;
    }
    Ok((mask, at))
}

/// Parses a rule. Surrounding blanks are ignored; anything else that is not part of
/// the notation is an error.
pub fn parse(text: &str) -> Result<Rule, RuleError> {
    let bytes = text.as_bytes();
    let start = bytes.iter().position(|b| !b.is_ascii_whitespace()).unwrap_or(bytes.len());
    let end = bytes.iter().rposition(|b| !b.is_ascii_whitespace()).map_or(start, |p| p + 1);
    let t = &bytes[..end];
    if start == end {
        return Err(RuleError { offset: start, message: "empty rule".into() });
    }
    let letter = |b: u8| b.to_ascii_uppercase();
    let mut rule = Rule { birth: 0, survive: 0 };
    let at = if matches!(letter(t[start]), b'B' | b'S') {
        // B/S notation: two parts, each a letter and digits, either order, '/' optional.
        let mut at = start;
        let mut seen = [false; 2];
        for part in 0..2 {
            if part == 1 && at < end && t[at] == b'/' {
                at += 1;
            }
            if at >= end {
                break;
            }
            let which = match letter(t[at]) {
                b'B' => 0,
                b'S' => 1,
                _ => return Err(RuleError { offset: at, message: format!("expected 'B' or 'S', found {:?}", t[at] as char) }),
            };
            if seen[which] {
                return Err(RuleError { offset: at, message: format!("'{}' appears twice", t[at] as char) });
            }
            seen[which] = true;
            let (mask, next) = digits(t, at + 1)?;
            if which == 0 {
                rule.birth = mask;
            } else {
                rule.survive = mask;
            }
            at = next;
        }
        if !(seen[0] && seen[1]) {
            return Err(RuleError { offset: at, message: format!("missing the '{}' part", if seen[0] { 'S' } else { 'B' }) });
        }
        at
    } else {
        // S/B form: "23/3".
        let (survive, at) = digits(t, start)?;
        if at >= end || t[at] != b'/' {
            return Err(RuleError { offset: at, message: "expected 'B…/S…' or 'survival/birth' digits".into() });
        }
        let (birth, at) = digits(t, at + 1)?;
        rule = Rule { birth, survive };
        at
    };
    if at < end {
        return Err(RuleError { offset: at, message: format!("unexpected {:?}", t[at] as char) });
    }
    Ok(rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forms() {
        for s in ["B3/S23", "b3/s23", "B3S23", "S23/B3", "23/3", " B3/S23 ", "B33/S32"] {
            assert_eq!(parse(s), Ok(Rule::LIFE), "{s}");
        }
        assert_eq!(parse("B36/S23").unwrap().to_string(), "B36/S23");
        assert_eq!(parse("B2/S").unwrap(), Rule { birth: 4, survive: 0 });
        assert_eq!(parse("/2").unwrap(), Rule { birth: 4, survive: 0 });
        assert_eq!(parse("B012345678/S012345678").unwrap().to_string(), "B012345678/S012345678");
    }

    #[test]
    fn errors() {
        for (s, at) in [("", 0), ("B9/S23", 1), ("B3/S23x", 6), ("B3", 2), ("X3/S23", 0), ("B3/B3", 3), ("23", 2), ("B3//S23", 3)] {
            assert_eq!(parse(s).map_err(|e| e.offset), Err(at), "{s}");
        }
    }
}
