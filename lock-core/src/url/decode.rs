//! Percent-decoding of URL parts.

/// Decodes `%XX` escapes in `part`; `None` when an escape is malformed or the result is not
/// UTF-8. `+` is left alone: it means a space only in HTML forms, not in URLs.
pub fn percent_decode(part: &str) -> Option<String> {
    let bytes = part.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = part.get(index + 1..index + 3)?;
            if !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
                return None;
            }
            out.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            out.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_escapes_and_rejects_broken_ones() {
        assert_eq!(percent_decode("p%40ss%2Fw").as_deref(), Some("p@ss/w"));
        assert_eq!(percent_decode("a+b").as_deref(), Some("a+b"));
        for broken in ["%", "%z1", "%1", "%+1", "%ff"] {
            assert_eq!(percent_decode(broken), None, "{broken}");
        }
    }
}
