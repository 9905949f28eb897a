use std::time::Duration;

use lock_core::ErrorKind;

use super::*;

fn resolve(url: &str) -> Result<Settings> {
    Settings::resolve(url, &ServiceOptions::default(), &SqlOptions::default())
}

#[test]
fn own_parameters_are_read_and_the_drivers_passed_on() {
    let settings = resolve(
        "mariadb://root@h:3306/db?table=jobs&ssl-mode=disabled&pool_size=3\
         &connect_timeout=250ms&operation_timeout=750ms",
    )
    .expect("valid");
    assert_eq!(
        settings.driver_url,
        "mysql://root@h:3306/db?ssl-mode=disabled"
    );
    assert_eq!(settings.table.as_str(), "jobs");
    assert_eq!(settings.pool_size, 3);
    assert_eq!(settings.service.connect_timeout, Duration::from_millis(250));
    assert_eq!(
        settings.service.operation_timeout,
        Duration::from_millis(750)
    );
}

#[test]
fn defaults_fit_the_dialect() {
    for (url, pool, memory) in [
        ("postgres://h/db", 10, false),
        ("sqlite://x.db", 4, false),
        ("sqlite::memory:", 1, true),
        ("sqlite://x.db?mode=memory", 1, true),
    ] {
        let settings = resolve(url).expect(url);
        assert_eq!(
            (settings.pool_size, settings.memory),
            (pool, memory),
            "{url}"
        );
        assert_eq!(settings.table.as_str(), TableName::DEFAULT);
    }
}

#[test]
fn bad_settings_are_invalid_input_about_the_url() {
    for url in [
        "postgres://h/db?pool_size=-1",
        "postgres://h/db?pool_size=0",
        "postgres://h/db?connect_timeout=0s",
        "postgres://h/db?connect_timeout=250",
        "postgres://h/db?table=a%20b",
        "postgres://h/db?lease_ms=5",
        "postgres://a,b/db",
        "sqlite::memory:?pool_size=2",
        "sqlite://",
        "oracle://h",
    ] {
        let error = resolve(url).expect_err(url);
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{url}: {error}");
    }
}

#[test]
fn passwords_never_show() {
    let settings =
        resolve("postgres://app:s3cret@db:5432/x?sslmode=require&password=p").expect("valid");
    let shown = format!("{settings:?} {}", settings.server);
    assert!(
        !shown.contains("s3cret") && !shown.contains("=p"),
        "{shown}"
    );
    let error = resolve("postgres://app:s3cret@db:5432/x?bogus=1").expect_err("bogus");
    assert!(!error.to_string().contains("s3cret"), "{error}");
}

#[test]
fn tls_parameters_have_one_name_on_every_scheme() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = |name: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, "pem").expect("write");
        path.display().to_string()
    };
    let (ca, cert, key) = (file("ca.pem"), file("client.pem"), file("client.key"));
    let query = format!("tls_ca={ca}&tls_cert={cert}&tls_key={key}");
    let postgres = resolve(&format!("postgres://h/db?sslmode=verify-full&{query}")).expect("pg");
    let expected = format!(
        "postgres://h/db?sslmode=verify-full&sslrootcert={}&sslcert={}&sslkey={}",
        percent_encode(&ca),
        percent_encode(&cert),
        percent_encode(&key)
    );
    assert_eq!(postgres.driver_url, expected);
    let mysql = resolve(&format!("mariadb://h/db?ssl-mode=verify_identity&{query}")).expect("my");
    assert!(
        mysql
            .driver_url
            .contains(&format!("ssl-ca={}", percent_encode(&ca)))
            && mysql.driver_url.contains("ssl-cert=")
            && mysql.driver_url.contains("ssl-key="),
        "{}",
        mysql.driver_url
    );
}

#[test]
fn tls_files_are_checked_before_any_connection() {
    let dir = tempfile::tempdir().expect("temp dir");
    let present = dir.path().join("ca.pem");
    std::fs::write(&present, "pem").expect("write");
    let present = present.display().to_string();
    for (url, says) in [
        (
            "postgres://h/db?tls_ca=/nonexistent/ca.pem".to_owned(),
            "tls_ca",
        ),
        (
            "postgres://h/db?sslrootcert=/nonexistent/ca.pem".to_owned(),
            "sslrootcert",
        ),
        (
            "mysql://h/db?ssl-ca=/nonexistent/ca.pem".to_owned(),
            "ssl-ca",
        ),
        (format!("postgres://h/db?tls_cert={present}"), "go together"),
        (format!("mysql://h/db?ssl-cert={present}"), "go together"),
        (
            format!("mysql://h/db?ssl-cert={present}&ssl-key=/nonexistent/client.key"),
            "ssl-key",
        ),
        (
            format!("postgres://h/db?sslkey={present}&sslcert=/nonexistent/client.pem"),
            "sslcert",
        ),
        (
            format!("postgres://h/db?tls_ca={present}&sslrootcert={present}"),
            "twice",
        ),
        (format!("sqlite://x.db?tls_ca={present}"), "SQLite"),
    ] {
        let error = resolve(&url).expect_err(&url);
        assert_eq!(error.kind(), ErrorKind::InvalidInput, "{url}: {error}");
        let shown = error.to_string();
        assert!(shown.contains(says), "{url}: {shown}");
    }
    let inline = "postgres://h/db?sslrootcert=-----BEGIN%20CERTIFICATE-----";
    resolve(inline).expect("PEM text in the parameter is not a file name");
}

#[test]
fn client_certificates_pass_to_the_driver_under_its_own_names() {
    let dir = tempfile::tempdir().expect("temp dir");
    let file = |name: &str| {
        let path = dir.path().join(name);
        std::fs::write(&path, "pem").expect("write");
        percent_encode(&path.display().to_string())
    };
    let (cert, key) = (file("client.pem"), file("client.key"));
    let mysql = format!("mysql://h/db?ssl-mode=verify_identity&ssl-cert={cert}&ssl-key={key}");
    let resolved = resolve(&mysql).expect("mysql");
    assert!(
        resolved.driver_url.contains(&format!("ssl-cert={cert}"))
            && resolved.driver_url.contains(&format!("ssl-key={key}")),
        "{}",
        resolved.driver_url
    );
    let postgres = format!("postgres://h/db?sslmode=verify-full&sslcert={cert}&sslkey={key}");
    let resolved = resolve(&postgres).expect("postgres");
    assert!(
        resolved.driver_url.contains(&format!("sslcert={cert}"))
            && resolved.driver_url.contains(&format!("sslkey={key}")),
        "{}",
        resolved.driver_url
    );
}
