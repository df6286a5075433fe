//! Numeric literals (PTX ISA 4.5), parsed with `nom` combinators from a number token's text.
//!
//! Integers: decimal, `0x` hex, `0b` binary, leading-`0` octal, each with an optional `U`
//! suffix (unsigned). Values that do not fit `i64` become unsigned. Floats: `0f`/`0F` + 8 hex
//! digits (single precision bits), `0d`/`0D` + 16 hex digits (double bits), and decimal
//! literals such as `1.5` or `2e-3`, which PTX treats as double precision.

use crate::ir::Immediate;
use nom::branch::alt;
use nom::bytes::complete::{tag, tag_no_case, take_while1, take_while_m_n};
use nom::character::complete::{char, digit0, digit1, one_of};
use nom::combinator::{all_consuming, map_res, opt, recognize};
use nom::sequence::{pair, preceded, tuple};
use nom::IResult;

fn int_with_radix(digits: &str, radix: u32, unsigned: bool) -> Result<Immediate, ()> {
    let v = u64::from_str_radix(digits, radix).map_err(|_| ())?;
    Ok(match i64::try_from(v) {
        Ok(i) if !unsigned => Immediate::Int(i),
        _ => Immediate::UInt(v),
    })
}

fn hex_float(i: &str) -> IResult<&str, Immediate> {
    alt((
        map_res(
            preceded(
                tag_no_case("0f"),
                take_while_m_n(8, 8, |c: char| c.is_ascii_hexdigit()),
            ),
            |h: &str| u32::from_str_radix(h, 16).map(Immediate::F32),
        ),
        map_res(
            preceded(
                tag_no_case("0d"),
                take_while_m_n(16, 16, |c: char| c.is_ascii_hexdigit()),
            ),
            |h: &str| u64::from_str_radix(h, 16).map(Immediate::F64),
        ),
    ))(i)
}

fn decimal_float(i: &str) -> IResult<&str, Immediate> {
    let exponent = || tuple((one_of("eE"), opt(one_of("+-")), digit1));
    map_res(
        alt((
            recognize(tuple((digit1, char('.'), digit0, opt(exponent())))),
            recognize(pair(digit1, exponent())),
        )),
        |s: &str| s.parse::<f64>().map(|f| Immediate::F64(f.to_bits())),
    )(i)
}

fn integer(i: &str) -> IResult<&str, Immediate> {
    let u = || opt(char('U'));
    alt((
        map_res(
            pair(
                preceded(
                    tag_no_case("0x"),
                    take_while1(|c: char| c.is_ascii_hexdigit()),
                ),
                u(),
            ),
            |(d, s)| int_with_radix(d, 16, s.is_some()),
        ),
        map_res(
            pair(
                preceded(
                    tag_no_case("0b"),
                    take_while1(|c: char| c == '0' || c == '1'),
                ),
                u(),
            ),
            |(d, s)| int_with_radix(d, 2, s.is_some()),
        ),
        map_res(
            pair(
                preceded(tag("0"), take_while1(|c: char| ('0'..='7').contains(&c))),
                u(),
            ),
            |(d, s)| int_with_radix(d, 8, s.is_some()),
        ),
        map_res(
            pair(
                alt((recognize(pair(one_of("123456789"), digit0)), tag("0"))),
                u(),
            ),
            |(d, s)| int_with_radix(d, 10, s.is_some()),
        ),
    ))(i)
}

/// Parses a whole number token; `None` if it is not a valid PTX literal.
pub fn parse_number(text: &str) -> Option<Immediate> {
    // Fast path for the common small decimal literal.
    let b = text.as_bytes();
    if !b.is_empty()
        && b.len() <= 18
        && b.iter().all(u8::is_ascii_digit)
        && (b[0] != b'0' || b.len() == 1)
    {
        let v = b.iter().fold(0i64, |a, d| a * 10 + i64::from(d - b'0'));
        return Some(Immediate::Int(v));
    }
    // Fast path for `0f` + 8 / `0d` + 16 hex digits (what `hex_float` accepts).
    if let (Some(prefix), Some(digits)) = (b.get(..2), text.get(2..)) {
        if digits.bytes().all(|c| c.is_ascii_hexdigit()) {
            match (prefix, digits.len()) {
                (b"0f" | b"0F", 8) => {
                    return u32::from_str_radix(digits, 16).ok().map(Immediate::F32);
                }
                (b"0d" | b"0D", 16) => {
                    return u64::from_str_radix(digits, 16).ok().map(Immediate::F64);
                }
                _ => {}
            }
        }
    }
    all_consuming(alt((hex_float, decimal_float, integer)))(text)
        .ok()
        .map(|(_, v)| v)
}

/// Parses a non-negative integer that fits `u32` (alignments, counts, dimensions).
pub fn parse_u32(text: &str) -> Option<u32> {
    // Fast path (the same result as below): up to 9 decimal digits without a leading zero.
    let b = text.as_bytes();
    if !b.is_empty()
        && b.len() <= 9
        && (b[0] != b'0' || b.len() == 1)
        && b.iter().all(u8::is_ascii_digit)
    {
        return Some(b.iter().fold(0u32, |a, d| a * 10 + u32::from(d - b'0')));
    }
    match parse_number(text)? {
        Immediate::Int(v) => u32::try_from(v).ok(),
        Immediate::UInt(v) => u32::try_from(v).ok(),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use Immediate::*;

    #[test]
    fn all_forms() {
        assert_eq!(parse_number("42"), Some(Int(42)));
        assert_eq!(parse_number("0"), Some(Int(0)));
        assert_eq!(parse_number("0U"), Some(UInt(0)));
        assert_eq!(parse_number("42U"), Some(UInt(42)));
        assert_eq!(parse_number("0x1F"), Some(Int(31)));
        assert_eq!(parse_number("0XffU"), Some(UInt(255)));
        assert_eq!(parse_number("017"), Some(Int(15)));
        assert_eq!(parse_number("0b101"), Some(Int(5)));
        assert_eq!(parse_number("0xFFFFFFFFFFFFFFFF"), Some(UInt(u64::MAX)));
        assert_eq!(parse_number("0f3F800000"), Some(F32(0x3F80_0000)));
        assert_eq!(parse_number("0F7FC00000"), Some(F32(0x7FC0_0000)));
        assert_eq!(
            parse_number("0d3FF0000000000000"),
            Some(F64(0x3FF0_0000_0000_0000))
        );
        assert_eq!(parse_number("1.5"), Some(F64(1.5f64.to_bits())));
        assert_eq!(parse_number("1."), Some(F64(1.0f64.to_bits())));
        assert_eq!(parse_number("2e-3"), Some(F64(2e-3f64.to_bits())));
        assert_eq!(parse_number("1.5E+2"), Some(F64(150f64.to_bits())));
    }

    #[test]
    fn rejects() {
        for s in [
            "0f3F80",
            "0x",
            "08",
            "12a",
            "0d3FF",
            "1.5.2",
            "99999999999999999999",
            "1e",
        ] {
            assert_eq!(parse_number(s), None, "{s}");
        }
        assert_eq!(parse_u32("4294967296"), None);
        assert_eq!(parse_u32("4096"), Some(4096));
    }

    /// The fast paths of [`parse_number`] and [`parse_u32`] agree with the combinators.
    #[test]
    fn fast_paths_match_combinators() {
        let slow = |t: &str| {
            all_consuming(alt((hex_float, decimal_float, integer)))(t)
                .ok()
                .map(|(_, v)| v)
        };
        let slow_u32 = |t: &str| match slow(t)? {
            Int(v) => u32::try_from(v).ok(),
            UInt(v) => u32::try_from(v).ok(),
            _ => None,
        };
        let mut cases: Vec<String> = [
            "0",
            "00",
            "007",
            "1",
            "9",
            "10",
            "123456789",
            "999999999",
            "1234567890",
            "4294967295",
            "4294967296",
            "999999999999999999",
            "9223372036854775807",
            "0f",
            "0f3F80000",
            "0f3F800000",
            "0F3f800000",
            "0f3F8000000",
            "0f3G800000",
            "0d3FF0000000000000",
            "0D3ff0000000000000",
            "0d3FF000000000000",
            "0d3FF00000000000000",
            "0dZZF0000000000000",
            "0x1F",
            "0b1",
            "0fffffffff",
            "0d",
            "1e5",
            "0f00000000",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        for n in [
            0u64,
            1,
            7,
            8,
            42,
            65535,
            1 << 31,
            u64::from(u32::MAX),
            1 << 40,
        ] {
            cases.push(n.to_string());
            cases.push(format!("0{n}"));
            cases.push(format!("0f{:08X}", n as u32));
            cases.push(format!("0d{n:016x}"));
        }
        for c in &cases {
            assert_eq!(parse_number(c), slow(c), "{c}");
            assert_eq!(parse_u32(c), slow_u32(c), "{c}");
        }
    }
}
