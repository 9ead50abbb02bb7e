//! The API server's format checkers for CRD schemas: the formats
//! apiextensions-apiserver keeps (`supportedVersionedFormats`), each as kube-openapi's
//! strfmt registry checks it. Any other format (`int32`, `date-time`, ...) is stripped by
//! the server and so checks nothing here either.

use std::sync::OnceLock;

use regex::Regex;

/// Whether `s` is of `format`, as the API server checks it; `None` for formats it strips.
/// The server looks a format up with its dashes removed (go-openapi's normalization), so
/// `date-time` is `datetime`, and `k8s-short-name`/`k8s-long-name`, listed with their
/// dashes, never match and are not checked.
pub fn check(format: &str, s: &str) -> Option<bool> {
    let normalized = format.replace('-', "");
    Some(match normalized.as_str() {
        "bsonobjectid" => s.len() == 24 && s.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => is_uri(s),
        "email" => is_email(s),
        "hostname" => is_hostname(s),
        "ipv4" => s.parse::<std::net::Ipv4Addr>().is_ok() || is_go_ipv4(s),
        "ipv6" => s.contains(':') && s.parse::<std::net::Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(s),
        "mac" => is_mac(s),
        "uuid" => matches(
            &UUID,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid3" => matches(
            &UUID3,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid4" => matches(
            &UUID4,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s,
        ),
        "uuid5" => matches(
            &UUID5,
            r"(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$",
            s,
        ),
        "hexcolor" => matches(&HEX, r"^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$", s),
        "rgbcolor" => matches(
            &RGB,
            r"^rgb\(\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*,\s*(0|[1-9]\d?|1\d\d?|2[0-4]\d|25[0-5])\s*\)$",
            s,
        ),
        "ssn" => matches(&SSN, r"^\d{3}[- ]?\d{2}[- ]?\d{4}$", s),
        "byte" => is_base64(s),
        "password" => true,
        "date" => is_date(s),
        "datetime" => is_datetime(s),
        "duration" => is_duration(s),
        _ => return None,
    })
}

static UUID: OnceLock<Regex> = OnceLock::new();
static UUID3: OnceLock<Regex> = OnceLock::new();
static UUID4: OnceLock<Regex> = OnceLock::new();
static UUID5: OnceLock<Regex> = OnceLock::new();
static HEX: OnceLock<Regex> = OnceLock::new();
static RGB: OnceLock<Regex> = OnceLock::new();
static SSN: OnceLock<Regex> = OnceLock::new();

fn matches(cell: &'static OnceLock<Regex>, pattern: &str, s: &str) -> bool {
    cell.get_or_init(|| Regex::new(pattern).expect("format regexes compile"))
        .is_match(s)
}

/// strfmt's `uuid`.
pub(crate) fn is_uuid(s: &str) -> bool {
    check("uuid", s) == Some(true)
}

/// Go's `net.ParseIP` for dotted quads also takes leading zeros? No: since Go 1.17 it
/// rejects them, as Rust does; this only admits nothing extra.
fn is_go_ipv4(_s: &str) -> bool {
    false
}

fn is_cidr(s: &str) -> bool {
    let Some((a, p)) = s.split_once('/') else {
        return false;
    };
    let Ok(addr) = a.parse::<std::net::IpAddr>() else {
        return false;
    };
    if p.is_empty() || !p.bytes().all(|b| b.is_ascii_digit()) || (p.len() > 1 && p.starts_with('0'))
    {
        return false;
    }
    let max = if addr.is_ipv4() { 32 } else { 128 };
    p.parse::<u32>().is_ok_and(|n| n <= max)
}

fn is_mac(s: &str) -> bool {
    // net.ParseMAC: 6, 8 or 20 octets separated by `:` or `-`, or dotted groups of four.
    let groups: Vec<&str> = if s.contains(':') {
        s.split(':').collect()
    } else if s.contains('-') {
        s.split('-').collect()
    } else if s.contains('.') {
        let g: Vec<&str> = s.split('.').collect();
        return [3, 4, 10].contains(&g.len())
            && g.iter()
                .all(|x| x.len() == 4 && x.bytes().all(|b| b.is_ascii_hexdigit()));
    } else {
        return false;
    };
    [6, 8, 20].contains(&groups.len())
        && groups
            .iter()
            .all(|x| x.len() == 2 && x.bytes().all(|b| b.is_ascii_hexdigit()))
}

fn is_hostname(s: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    if s.len() > 255 {
        return false;
    }
    matches(
        &RE,
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([a-zA-Z0-9-\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
        s,
    )
}

fn is_email(s: &str) -> bool {
    // net/mail.ParseAddress, for the plain `local@domain` and `Name <local@domain>` forms.
    let addr = match (s.find('<'), s.ends_with('>')) {
        (Some(i), true) => &s[i + 1..s.len() - 1],
        _ => s,
    };
    match addr.rsplit_once('@') {
        Some((local, domain)) => {
            !local.is_empty()
                && !domain.is_empty()
                && !addr.contains(char::is_whitespace)
                && !domain.starts_with('.')
                && !domain.ends_with('.')
                && !domain.contains("..")
        }
        None => false,
    }
}

fn is_uri(s: &str) -> bool {
    // url.ParseRequestURI: an absolute URI or an absolute path, no fragment handling.
    if s.is_empty() || s.chars().any(|c| c.is_ascii_control() || c == ' ') {
        return false;
    }
    if s.starts_with('/') {
        return true;
    }
    match s.split_once(':') {
        Some((scheme, _)) => {
            let mut c = scheme.chars();
            c.next().is_some_and(|f| f.is_ascii_alphabetic())
                && c.all(|x| x.is_ascii_alphanumeric() || "+-.".contains(x))
        }
        None => false,
    }
}

/// strfmt's `byte`: standard base64 with padding, not empty.
pub fn is_base64(s: &str) -> bool {
    if s.is_empty() || !s.len().is_multiple_of(4) {
        return false;
    }
    let body = s.trim_end_matches('=');
    s.len() - body.len() <= 2
        && body
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'+' || b == b'/')
}

/// RFC 3339 full-date.
pub fn is_date(s: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    if !matches(&RE, r"^\d{4}-\d{2}-\d{2}$", s) {
        return false;
    }
    let (y, m, d): (i32, u32, u32) = (
        s[0..4].parse().unwrap_or(0),
        s[5..7].parse().unwrap_or(0),
        s[8..10].parse().unwrap_or(0),
    );
    valid_ymd(y, m, d)
}

/// Whether the day exists in the proleptic Gregorian calendar (leap years included).
pub(crate) fn valid_ymd(y: i32, m: u32, d: u32) -> bool {
    let leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
    let days = match m {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    (1..=days).contains(&d)
}

/// strfmt's `datetime`: RFC 3339 date-times (and the layouts strfmt also accepts).
pub fn is_datetime(s: &str) -> bool {
    static RE: OnceLock<Regex> = OnceLock::new();
    let re = RE.get_or_init(|| {
        Regex::new(r"^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:?\d{2})?$")
            .expect("datetime regex compiles")
    });
    let Some(c) = re.captures(s) else {
        return false;
    };
    let n = |i: usize| c[i].parse::<u32>().unwrap_or(99);
    valid_ymd(c[1].parse().unwrap_or(0), n(2), n(3)) && n(4) < 24 && n(5) < 60 && n(6) < 60
}

fn is_duration(s: &str) -> bool {
    // Go's time.ParseDuration or strfmt's "3 days" form.
    crate::cel::duration::is_strfmt(s)
}
