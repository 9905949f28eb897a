//! Just enough RESP2 for the spawners' own admin commands: arguments sent as a multi-bulk
//! request (so keys and empty strings need no quoting) and replies read whole, arrays included.

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

/// One RESP2 reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reply {
    /// `+OK` and other status lines.
    Status(String),
    /// `-ERR ...`, `-MOVED ...`: the line without its `-`.
    Error(String),
    /// `:N`.
    Integer(i64),
    /// `$N` (`None` for the null bulk string `$-1`).
    Bulk(Option<Vec<u8>>),
    /// `*N` (`None` for the null array `*-1`).
    Array(Option<Vec<Reply>>),
}

impl Reply {
    /// A status line or bulk string as text; `None` for anything else.
    pub(crate) fn text(&self) -> Option<String> {
        match self {
            Reply::Status(text) => Some(text.clone()),
            Reply::Bulk(Some(bytes)) => Some(String::from_utf8_lossy(bytes).into_owned()),
            _ => None,
        }
    }

    /// The elements of an array; empty for a null array or anything else.
    pub(crate) fn items(&self) -> &[Reply] {
        match self {
            Reply::Array(Some(items)) => items,
            _ => &[],
        }
    }

    /// The reply unless it is an error, which becomes the error's text.
    pub(crate) fn ok(self) -> Result<Reply, String> {
        match self {
            Reply::Error(error) => Err(error),
            reply => Ok(reply),
        }
    }
}

/// Sends `args` as one command to the Redis (or sentinel) on loopback `port` and reads the
/// whole reply.
///
/// # Errors
///
/// The connection's I/O error; `UnexpectedEof` when the server closes before replying in full.
pub(crate) fn call<A: AsRef<[u8]>>(port: u16, args: &[A]) -> std::io::Result<Reply> {
    let mut stream = TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(2)))?;
    stream.write_all(&encode(args))?;
    let mut reply = Vec::new();
    let mut buffer = [0u8; 4096];
    loop {
        if let Some((parsed, _)) = parse(&reply) {
            return Ok(parsed);
        }
        let read = stream.read(&mut buffer)?;
        if read == 0 {
            return Err(std::io::ErrorKind::UnexpectedEof.into());
        }
        reply.extend_from_slice(&buffer[..read]);
    }
}

/// `args` as a RESP multi-bulk request.
fn encode<A: AsRef<[u8]>>(args: &[A]) -> Vec<u8> {
    let mut request = format!("*{}\r\n", args.len()).into_bytes();
    for arg in args.iter().map(AsRef::as_ref) {
        request.extend_from_slice(format!("${}\r\n", arg.len()).as_bytes());
        request.extend_from_slice(arg);
        request.extend_from_slice(b"\r\n");
    }
    request
}

/// The first whole reply in `buffer` and the bytes it takes, or `None` while it is incomplete.
/// A line of an unknown type reads as an [`Reply::Error`] naming it, so no caller waits for
/// the rest of something it cannot parse.
pub(crate) fn parse(buffer: &[u8]) -> Option<(Reply, usize)> {
    let line_end = buffer.windows(2).position(|pair| pair == b"\r\n")?;
    let line = String::from_utf8_lossy(&buffer[1..line_end]).into_owned();
    let after = line_end + 2;
    let length = || line.parse::<i64>().unwrap_or(-1);
    match buffer.first() {
        Some(b'+') => Some((Reply::Status(line), after)),
        Some(b'-') => Some((Reply::Error(line), after)),
        Some(b':') => Some((Reply::Integer(length()), after)),
        Some(b'$') if length() < 0 => Some((Reply::Bulk(None), after)),
        Some(b'$') => {
            let end = after + usize::try_from(length()).ok()?;
            let bytes = buffer.get(after..end)?.to_vec();
            buffer.get(end..end + 2)?;
            Some((Reply::Bulk(Some(bytes)), end + 2))
        }
        Some(b'*') if length() < 0 => Some((Reply::Array(None), after)),
        Some(b'*') => {
            let mut items = Vec::new();
            let mut offset = after;
            for _ in 0..length() {
                let (item, used) = parse(&buffer[offset..])?;
                items.push(item);
                offset += used;
            }
            Some((Reply::Array(Some(items)), offset))
        }
        _ => {
            let whole = String::from_utf8_lossy(&buffer[..line_end]);
            Some((Reply::Error(format!("unexpected reply: {whole}")), after))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nested_arrays_parse_only_once_complete() {
        let whole = b"*3\r\n$3\r\nkey\r\n:7\r\n*2\r\n+OK\r\n$-1\r\n";
        for cut in 0..whole.len() {
            assert_eq!(parse(&whole[..cut]), None, "complete after {cut} bytes");
        }
        let expected = Reply::Array(Some(vec![
            Reply::Bulk(Some(b"key".to_vec())),
            Reply::Integer(7),
            Reply::Array(Some(vec![
                Reply::Status("OK".to_owned()),
                Reply::Bulk(None),
            ])),
        ]));
        assert_eq!(parse(whole), Some((expected, whole.len())));
    }

    #[test]
    fn empty_strings_are_encoded_as_empty_bulks() {
        assert_eq!(
            encode(&["GET", ""]),
            b"*2\r\n$3\r\nGET\r\n$0\r\n\r\n".to_vec()
        );
    }
}
