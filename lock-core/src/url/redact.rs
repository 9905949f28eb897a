//! URLs without their secrets, for messages and `Debug` output.

/// Query parameters whose values are secrets.
const SECRET_PARAMETERS: [&str; 3] = ["password", "secret", "token"];

/// `url` with every password replaced by `***`: in the user info of each URL (several may be
/// joined by commas, as Redlock's masters are) and in query parameters named like a secret.
/// Works on any text, valid URL or not, so it can be used before parsing.
pub fn redact(url: &str) -> String {
    let (body, query) = match url.split_once('?') {
        Some((body, query)) => (body, Some(query)),
        None => (url, None),
    };
    let mut out: Vec<String> = body.split(',').map(redact_user_info).collect::<Vec<_>>();
    if let Some(query) = query {
        let pairs: Vec<String> = query.split('&').map(redact_pair).collect();
        if let Some(last) = out.last_mut() {
            last.push('?');
            last.push_str(&pairs.join("&"));
        }
    }
    out.join(",")
}

/// `scheme://user:***@rest` for one URL piece; pieces without user info stay as they are.
fn redact_user_info(piece: &str) -> String {
    let (prefix, rest) = match piece.find("://") {
        Some(at) => piece.split_at(at + 3),
        None => ("", piece),
    };
    let authority_end = rest.find(['/', '#']).unwrap_or(rest.len());
    let Some(at) = rest[..authority_end].rfind('@') else {
        return piece.to_owned();
    };
    match rest[..at].split_once(':') {
        Some((user, _password)) => format!("{prefix}{user}:***{}", &rest[at..]),
        None => piece.to_owned(),
    }
}

fn redact_pair(pair: &str) -> String {
    match pair.split_once('=') {
        Some((key, _)) if is_secret(key) => format!("{key}=***"),
        _ => pair.to_owned(),
    }
}

fn is_secret(key: &str) -> bool {
    let key = key.to_ascii_lowercase();
    SECRET_PARAMETERS.iter().any(|secret| key.contains(secret))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hides_every_password_and_keeps_the_rest() {
        let cases = [
            ("redis://app:s3cret@h:1/0", "redis://app:***@h:1/0"),
            (
                "redis://a:p1@h1:1,redis://:p2@h2:2",
                "redis://a:***@h1:1,redis://:***@h2:2",
            ),
            ("zk://bob:x@h1,h2/chroot", "zk://bob:***@h1,h2/chroot"),
            (
                "postgres://u:p@db/x?sslmode=require&password=q",
                "postgres://u:***@db/x?sslmode=require&password=***",
            ),
            ("mysql://root@h/db", "mysql://root@h/db"),
            ("sqlite::memory:", "sqlite::memory:"),
            ("not a url at all", "not a url at all"),
        ];
        for (url, redacted) in cases {
            assert_eq!(redact(url), redacted, "{url}");
        }
    }
}
