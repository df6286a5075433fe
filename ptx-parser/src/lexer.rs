//! Stage 1: PTX text -> tokens with byte spans.
//!
//! A hand-written byte loop (the hot path of parsing) that borrows every token's text from the
//! source: no allocation per token. Dotted words such as `ld.global.nc.v4.f32`, `%tid.x` or
//! `shared::cta` are one [`TokKind::Word`]; the syntax stage splits them. Directives (`.reg`,
//! `.b32`, `.shared::cta`) are [`TokKind::Directive`]. Comments and whitespace are skipped;
//! an unterminated block comment or string, and stray bytes, become [`LexError`]s while lexing
//! continues.

/// Kind of a token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    /// Identifier-like word, possibly dotted: `ld.global.u32`, `%r1`, `$L__BB0_2`, `%tid.x`.
    Word,
    /// `.name` (a directive or a type/space keyword).
    Directive,
    /// Numeric literal text starting with a digit: `42`, `0x1F`, `0f3F800000`, `1.5e3`.
    Number,
    /// Double-quoted string, quotes included.
    Str,
    /// Single punctuation byte (`;` `,` `:` `{` `}` `[` `]` `(` `)` `<` `>` `+` `-` `!` `@` `=` `|` ...).
    Punct(u8),
}

/// A token: kind, byte range in the source, and 1-based line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    /// What kind of token.
    pub kind: TokKind,
    /// Byte offset of the first byte.
    pub start: u32,
    /// Byte offset one past the last byte.
    pub end: u32,
    /// 1-based line of the first byte.
    pub line: u32,
}

impl Token {
    /// The token's text.
    pub fn text<'a>(&self, src: &'a str) -> &'a str {
        src.get(self.start as usize..self.end as usize)
            .unwrap_or("")
    }
    /// True when this is the punctuation byte `c`.
    pub fn is(&self, c: u8) -> bool {
        self.kind == TokKind::Punct(c)
    }
}

/// A lexical error at a byte offset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LexError {
    /// Byte offset.
    pub offset: u32,
    /// 1-based line.
    pub line: u32,
    /// Description.
    pub message: String,
}

/// The token stream of one source text, plus the line start table used to compute columns.
#[derive(Debug, Default)]
pub struct Lexed {
    /// Tokens in order.
    pub tokens: Vec<Token>,
    /// Byte offset where each line starts (index = line - 1).
    pub line_starts: Vec<u32>,
    /// Lexical errors, in order.
    pub errors: Vec<LexError>,
}

impl Lexed {
    /// 1-based column (in bytes) of byte `offset` on 1-based `line`.
    pub fn col(&self, line: u32, offset: u32) -> u32 {
        let start = self
            .line_starts
            .get((line as usize).saturating_sub(1))
            .copied()
            .unwrap_or(0);
        offset.saturating_sub(start) + 1
    }
}

#[inline]
fn is_word_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'$' || b == b'%'
}

#[inline]
fn is_word_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'$'
}

/// Lexes `src`. Sources over 4 GiB are rejected with one error (offsets are `u32`).
pub fn lex(src: &str) -> Lexed {
    let bytes = src.as_bytes();
    let mut out = Lexed {
        tokens: Vec::with_capacity(bytes.len() / 4 + 16),
        line_starts: vec![0],
        errors: Vec::new(),
    };
    if bytes.len() >= u32::MAX as usize {
        out.errors.push(LexError {
            offset: 0,
            line: 1,
            message: "source larger than 4 GiB".into(),
        });
        return out;
    }
    let n = bytes.len();
    let mut i = 0usize;
    let mut line = 1u32;
    while i < n {
        let b = bytes[i];
        match b {
            b'\n' => {
                i += 1;
                line += 1;
                out.line_starts.push(i as u32);
            }
            b' ' | b'\t' | b'\r' | 0x0b | 0x0c => i += 1,
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i += 2;
                while i < n && bytes[i] != b'\n' {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                let start = i;
                let start_line = line;
                i += 2;
                let mut closed = false;
                while i < n {
                    if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        i += 2;
                        closed = true;
                        break;
                    }
                    if bytes[i] == b'\n' {
                        line += 1;
                        out.line_starts.push(i as u32 + 1);
                    }
                    i += 1;
                }
                if !closed {
                    out.errors.push(LexError {
                        offset: start as u32,
                        line: start_line,
                        message: "unterminated block comment".into(),
                    });
                }
            }
            b'"' => {
                let start = i;
                i += 1;
                let mut closed = false;
                while i < n {
                    match bytes[i] {
                        b'"' => {
                            i += 1;
                            closed = true;
                            break;
                        }
                        b'\\' if i + 1 < n && bytes[i + 1] != b'\n' => i += 2,
                        b'\n' => break,
                        _ => i += 1,
                    }
                }
                if closed {
                    out.tokens.push(Token {
                        kind: TokKind::Str,
                        start: start as u32,
                        end: i as u32,
                        line,
                    });
                } else {
                    out.errors.push(LexError {
                        offset: start as u32,
                        line,
                        message: "unterminated string literal".into(),
                    });
                }
            }
            b'.' if i + 1 < n && is_word_char(bytes[i + 1]) && !bytes[i + 1].is_ascii_digit() => {
                let start = i;
                i += 1;
                i = scan_word(bytes, i, false);
                out.tokens.push(Token {
                    kind: TokKind::Directive,
                    start: start as u32,
                    end: i as u32,
                    line,
                });
            }
            _ if is_word_start(b) => {
                let start = i;
                i = scan_word(bytes, i + 1, true);
                out.tokens.push(Token {
                    kind: TokKind::Word,
                    start: start as u32,
                    end: i as u32,
                    line,
                });
            }
            b'0'..=b'9' => {
                let start = i;
                i = scan_number(bytes, i);
                out.tokens.push(Token {
                    kind: TokKind::Number,
                    start: start as u32,
                    end: i as u32,
                    line,
                });
            }
            b';' | b',' | b':' | b'{' | b'}' | b'[' | b']' | b'(' | b')' | b'<' | b'>' | b'+'
            | b'-' | b'!' | b'@' | b'=' | b'|' | b'*' | b'/' | b'~' | b'&' | b'^' | b'?' | b'.' => {
                out.tokens.push(Token {
                    kind: TokKind::Punct(b),
                    start: i as u32,
                    end: i as u32 + 1,
                    line,
                });
                i += 1;
            }
            _ => {
                // Skip one whole UTF-8 character so the error points at a char boundary.
                let len = src
                    .get(i..)
                    .and_then(|s| s.chars().next())
                    .map_or(1, char::len_utf8);
                out.errors.push(LexError {
                    offset: i as u32,
                    line,
                    message: format!(
                        "unexpected character {:?}",
                        src.get(i..i + len).unwrap_or("?")
                    ),
                });
                i += len;
            }
        }
    }
    out
}

/// Scans word characters from `i`; with `dotted`, also `.x` continuations and `::` joins.
#[inline]
fn scan_word(bytes: &[u8], mut i: usize, dotted: bool) -> usize {
    let n = bytes.len();
    loop {
        while i < n && is_word_char(bytes[i]) {
            i += 1;
        }
        if i + 2 < n && bytes[i] == b':' && bytes[i + 1] == b':' && is_word_char(bytes[i + 2]) {
            i += 2;
            continue;
        }
        if dotted && i + 1 < n && bytes[i] == b'.' && is_word_char(bytes[i + 1]) {
            i += 1;
            continue;
        }
        return i;
    }
}

/// Scans a numeric literal: alphanumerics, `.`, and a signed exponent in decimal floats.
#[inline]
fn scan_number(bytes: &[u8], mut i: usize) -> usize {
    let n = bytes.len();
    let start = i;
    let radix_prefixed = bytes.get(start) == Some(&b'0')
        && matches!(
            bytes.get(start + 1),
            Some(b'x' | b'X' | b'f' | b'F' | b'd' | b'D' | b'b' | b'B')
        );
    while i < n {
        let b = bytes[i];
        let exponent_sign = (b == b'+' || b == b'-')
            && !radix_prefixed
            && matches!(bytes.get(i - 1), Some(b'e' | b'E'))
            && bytes.get(i + 1).is_some_and(u8::is_ascii_digit);
        if b.is_ascii_alphanumeric() || b == b'.' || b == b'_' || exponent_sign {
            i += 1;
        } else {
            break;
        }
    }
    i
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<(TokKind, &str)> {
        let l = lex(src);
        assert!(l.errors.is_empty(), "{:?}", l.errors);
        l.tokens.iter().map(|t| (t.kind, t.text(src))).collect()
    }

    #[test]
    fn dotted_words_and_directives() {
        use TokKind::*;
        assert_eq!(
            kinds("@!%p1 ld.global.nc.v4.f32 {%f1,_}, [%rd1+-4]; // c\n.reg .shared::cta"),
            vec![
                (Punct(b'@'), "@"),
                (Punct(b'!'), "!"),
                (Word, "%p1"),
                (Word, "ld.global.nc.v4.f32"),
                (Punct(b'{'), "{"),
                (Word, "%f1"),
                (Punct(b','), ","),
                (Word, "_"),
                (Punct(b'}'), "}"),
                (Punct(b','), ","),
                (Punct(b'['), "["),
                (Word, "%rd1"),
                (Punct(b'+'), "+"),
                (Punct(b'-'), "-"),
                (Number, "4"),
                (Punct(b']'), "]"),
                (Punct(b';'), ";"),
                (Directive, ".reg"),
                (Directive, ".shared::cta"),
            ]
        );
    }

    #[test]
    fn numbers() {
        use TokKind::*;
        assert_eq!(
            kinds("0f3F800000 1.5e-3 0x1e+5 %r<30>"),
            vec![
                (Number, "0f3F800000"),
                (Number, "1.5e-3"),
                (Number, "0x1e"),
                (Punct(b'+'), "+"),
                (Number, "5"),
                (Word, "%r"),
                (Punct(b'<'), "<"),
                (Number, "30"),
                (Punct(b'>'), ">"),
            ]
        );
    }

    #[test]
    fn lines_and_errors() {
        let l = lex("a\n/* x\ny */ b\n  c /* open");
        let lines: Vec<u32> = l.tokens.iter().map(|t| t.line).collect();
        assert_eq!(lines, vec![1, 3, 4]);
        assert_eq!(l.col(4, l.tokens[2].start), 3);
        assert_eq!(l.errors.len(), 1);
        assert_eq!(l.errors[0].line, 4);
        assert_eq!(l.errors[0].message, "unterminated block comment");
        let l = lex("a \u{e9} \"unterminated\n");
        assert_eq!(l.errors.len(), 2);
    }
}
