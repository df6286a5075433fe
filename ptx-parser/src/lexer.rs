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
    /// Blocks skipped by [`lex_lazy`] (empty after [`lex`]), in source order.
    pub blocks: Vec<Block>,
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

/// Byte classes for the lexer's dispatch (one table lookup per byte).
pub(crate) const C_OTHER: u8 = 0;
pub(crate) const C_WORD: u8 = 1; // letters, `_`, `$`: may start and continue a word
pub(crate) const C_DIGIT: u8 = 2;
pub(crate) const C_PERCENT: u8 = 3; // starts a word but does not continue one
pub(crate) const C_SPACE: u8 = 4;

static CLASS: [u8; 256] = {
    let mut t = [C_OTHER; 256];
    let mut b = 0;
    while b < 256 {
        let c = b as u8;
        t[b] = if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            C_WORD
        } else if c.is_ascii_digit() {
            C_DIGIT
        } else if c == b'%' {
            C_PERCENT
        } else if matches!(c, b' ' | b'\t' | b'\r' | 0x0b | 0x0c) {
            C_SPACE
        } else {
            C_OTHER
        };
        b += 1;
    }
    t
};

#[inline]
pub(crate) fn class(b: u8) -> u8 {
    CLASS[b as usize]
}

/// Bytes that continue a word: letters, digits, `_`, `$`.
static WORD_CHAR: [bool; 256] = {
    let mut t = [false; 256];
    let mut b = 0;
    while b < 256 {
        t[b] = matches!(CLASS[b], C_WORD | C_DIGIT);
        b += 1;
    }
    t
};

#[inline]
pub(crate) fn is_word_char(b: u8) -> bool {
    WORD_CHAR[b as usize]
}

/// A `{ ... }` block at brace depth 0 (a function body or a `.section`) that [`lex_lazy`]
/// did not tokenise: only its two braces are tokens. [`lex_block`] lexes it on demand into
/// a reused buffer, so the token stream of a whole file never exists at once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Block {
    /// Token index of the opening `{` (the closing `}` is the next token).
    pub open: u32,
    /// Byte offset just after the `{`.
    pub start: u32,
    /// Byte offset just after the matching `}`.
    pub end: u32,
    /// 1-based line of the `{`.
    pub line: u32,
}

/// Lexes `src` completely. Sources over 4 GiB are rejected with one error (offsets are `u32`).
pub fn lex(src: &str) -> Lexed {
    lex_with(src, false)
}

/// Lexes `src` like [`lex`], except that `{ ... }` blocks at brace depth 0 not preceded by
/// `=` (function bodies, sections; initialisers are lexed) are skipped by a brace-matching
/// scan and recorded in [`Lexed::blocks`]; see [`lex_block`]. A block without its closing
/// brace is lexed normally, so errors are the same as with [`lex`].
pub fn lex_lazy(src: &str) -> Lexed {
    lex_with(src, true)
}

/// Lexes the inside of `block` plus its closing `}` into `tokens` (cleared first), appending
/// lexical errors to `errors`. Lines are counted from the block's line; `Lexed::line_starts`
/// of the whole file already covers them.
pub fn lex_block(src: &str, block: &Block, tokens: &mut Vec<Token>, errors: &mut Vec<LexError>) {
    tokens.clear();
    let end = (block.end as usize).min(src.len());
    // About one token per four bytes of PTX.
    tokens.reserve(end.saturating_sub(block.start as usize) / 4 + 2);
    let Some(part) = src.get(..end) else {
        return;
    };
    let mut sink = Sink {
        tokens,
        errors,
        line_starts: None,
        blocks: None,
    };
    run(part, block.start as usize, block.line, &mut sink);
}

fn lex_with(src: &str, lazy: bool) -> Lexed {
    let bytes = src.as_bytes();
    let mut out = Lexed {
        tokens: Vec::with_capacity(if lazy { 256 } else { bytes.len() / 4 + 16 }),
        line_starts: Vec::with_capacity(bytes.len() / 16 + 1),
        errors: Vec::new(),
        blocks: Vec::new(),
    };
    out.line_starts.push(0);
    if bytes.len() >= u32::MAX as usize {
        out.errors.push(LexError {
            offset: 0,
            line: 1,
            message: "source larger than 4 GiB".into(),
        });
        return out;
    }
    let mut sink = Sink {
        tokens: &mut out.tokens,
        errors: &mut out.errors,
        line_starts: Some(&mut out.line_starts),
        blocks: if lazy { Some(&mut out.blocks) } else { None },
    };
    run(src, 0, 1, &mut sink);
    out
}

/// Where [`run`] puts its output.
struct Sink<'o> {
    tokens: &'o mut Vec<Token>,
    errors: &'o mut Vec<LexError>,
    /// Line start table to extend (the top-level pass), or `None` (re-lexing a block).
    line_starts: Option<&'o mut Vec<u32>>,
    /// Skip depth-0 blocks and record them here (lazy top-level pass).
    blocks: Option<&'o mut Vec<Block>>,
}

impl Sink<'_> {
    #[inline]
    fn newline(&mut self, next: usize) {
        if let Some(ls) = self.line_starts.as_mut() {
            ls.push(next as u32);
        }
    }
    #[inline]
    fn push(&mut self, kind: TokKind, start: usize, end: usize, line: u32) {
        self.tokens.push(Token {
            kind,
            start: start as u32,
            end: end as u32,
            line,
        });
    }
}

const LO: u64 = 0x0101_0101_0101_0101;
const HI: u64 = 0x8080_8080_8080_8080;

/// Nonzero when some byte of `x` equals `c`; its lowest set bit marks the first such byte.
#[inline]
fn has_byte(x: u64, c: u8) -> u64 {
    let v = x ^ (LO * u64::from(c));
    v.wrapping_sub(LO) & !v & HI
}

/// Index of the first `\n` at or after `i` (or `bytes.len()`).
#[inline]
fn find_newline(bytes: &[u8], mut i: usize) -> usize {
    while let Some(chunk) = bytes.get(i..i + 8) {
        let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
        let hit = has_byte(x, b'\n');
        if hit != 0 {
            return i + hit.trailing_zeros() as usize / 8;
        }
        i += 8;
    }
    while i < bytes.len() && bytes[i] != b'\n' {
        i += 1;
    }
    i
}

/// Skips a block body from just after its `{` to just after the matching `}`, following the
/// lexer's rules for comments and strings; counts lines. `None` when the block is not closed.
fn skip_block(bytes: &[u8], mut i: usize, line: &mut u32, sink: &mut Sink<'_>) -> Option<usize> {
    let n = bytes.len();
    let mut depth = 1u32;
    while i < n {
        // Jump over bytes that cannot change the state, eight at a time.
        while let Some(chunk) = bytes.get(i..i + 8) {
            let x = u64::from_le_bytes(chunk.try_into().unwrap_or([0; 8]));
            let hit = has_byte(x, b'\n')
                | has_byte(x, b'{')
                | has_byte(x, b'}')
                | has_byte(x, b'/')
                | has_byte(x, b'"');
            if hit != 0 {
                // The lowest flagged byte is exact (borrows only propagate upwards).
                i += hit.trailing_zeros() as usize / 8;
                break;
            }
            i += 8;
        }
        let Some(&b) = bytes.get(i) else {
            break;
        };
        match b {
            b'\n' => {
                i += 1;
                *line += 1;
                sink.newline(i);
            }
            b'{' => {
                depth += 1;
                i += 1;
            }
            b'}' => {
                i += 1;
                depth -= 1;
                if depth == 0 {
                    return Some(i);
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                i = find_newline(bytes, i + 2);
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i += 2;
                loop {
                    if i >= n {
                        return None;
                    }
                    if bytes[i] == b'*' && bytes.get(i + 1) == Some(&b'/') {
                        i += 2;
                        break;
                    }
                    if bytes[i] == b'\n' {
                        *line += 1;
                        sink.newline(i + 1);
                    }
                    i += 1;
                }
            }
            b'"' => {
                i += 1;
                while i < n {
                    match bytes[i] {
                        b'"' => {
                            i += 1;
                            break;
                        }
                        b'\\' if i + 1 < n && bytes[i + 1] != b'\n' => i += 2,
                        b'\n' => break,
                        _ => i += 1,
                    }
                }
            }
            _ => i += 1,
        }
    }
    None
}

/// The lexer loop over `src[i..]`, starting on line `line`.
fn run(src: &str, mut i: usize, mut line: u32, out: &mut Sink<'_>) {
    let bytes = src.as_bytes();
    let n = bytes.len();
    // Brace depth (for block skipping).
    let mut depth = 0u32;
    while i < n {
        let b = bytes[i];
        match class(b) {
            C_SPACE => {
                i += 1;
                continue;
            }
            C_WORD | C_PERCENT => {
                let start = i;
                i = scan_word(bytes, i + 1, true);
                out.push(TokKind::Word, start, i, line);
            }
            C_DIGIT => {
                let start = i;
                i = scan_number(bytes, i);
                out.push(TokKind::Number, start, i, line);
            }
            _ => match b {
                b'\n' => {
                    i += 1;
                    line += 1;
                    out.newline(i);
                    continue;
                }
                b'/' if bytes.get(i + 1) == Some(&b'/') => {
                    i = find_newline(bytes, i + 2);
                    continue;
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
                            out.newline(i + 1);
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
                    continue;
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
                        out.push(TokKind::Str, start, i, line);
                    } else {
                        out.errors.push(LexError {
                            offset: start as u32,
                            line,
                            message: "unterminated string literal".into(),
                        });
                        continue;
                    }
                }
                b'.' if i + 1 < n && class(bytes[i + 1]) == C_WORD => {
                    let start = i;
                    i = scan_word(bytes, i + 1, false);
                    out.push(TokKind::Directive, start, i, line);
                }
                // Not after `=`: that `{` opens an initialiser, which is lexed.
                b'{' if depth == 0
                    && out.blocks.is_some()
                    && !out.tokens.last().is_some_and(|t| t.is(b'=')) =>
                {
                    let open = out.tokens.len();
                    out.push(TokKind::Punct(b'{'), i, i + 1, line);
                    let (saved_line, saved_starts) =
                        (line, out.line_starts.as_ref().map_or(0, |l| l.len()));
                    match skip_block(bytes, i + 1, &mut line, out) {
                        Some(end) => {
                            if let Some(blocks) = out.blocks.as_mut() {
                                blocks.push(Block {
                                    open: open as u32,
                                    start: i as u32 + 1,
                                    end: end as u32,
                                    line: saved_line,
                                });
                            }
                            out.push(TokKind::Punct(b'}'), end - 1, end, line);
                            i = end;
                        }
                        None => {
                            // Unclosed: lex the rest normally so errors match `lex`.
                            line = saved_line;
                            if let Some(ls) = out.line_starts.as_mut() {
                                ls.truncate(saved_starts);
                            }
                            depth = 1;
                            i += 1;
                        }
                    }
                }
                b';' | b',' | b':' | b'{' | b'}' | b'[' | b']' | b'(' | b')' | b'<' | b'>'
                | b'+' | b'-' | b'!' | b'@' | b'=' | b'|' | b'*' | b'/' | b'~' | b'&' | b'^'
                | b'?' | b'.' => {
                    if b == b'{' {
                        depth += 1;
                    } else if b == b'}' {
                        depth = depth.saturating_sub(1);
                    }
                    out.push(TokKind::Punct(b), i, i + 1, line);
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
                    continue;
                }
            },
        }
    }
}

/// Scans word characters from `i`; with `dotted`, also `.x` continuations and `::` joins.
#[inline]
pub(crate) fn scan_word(bytes: &[u8], mut i: usize, dotted: bool) -> usize {
    loop {
        match bytes.get(i) {
            Some(&b) if is_word_char(b) => i += 1,
            Some(b'.') if dotted && bytes.get(i + 1).is_some_and(|&c| is_word_char(c)) => i += 2,
            Some(b':')
                if bytes.get(i + 1) == Some(&b':')
                    && bytes.get(i + 2).is_some_and(|&c| is_word_char(c)) =>
            {
                i += 3
            }
            _ => return i,
        }
    }
}

/// Scans a numeric literal: alphanumerics, `.`, and a signed exponent in decimal floats.
#[inline]
pub(crate) fn scan_number(bytes: &[u8], mut i: usize) -> usize {
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
