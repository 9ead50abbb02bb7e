//! Cron schedules as robfig/cron v1.2.0 reads and runs them (`cron.ParseStandard` and
//! `Schedule.Next`), the version the Go project pins: five fields (minute, hour, day of
//! month, month, day of week; names `jan`..`dec`, `sun`..`sat`; `*`, `?`, ranges, steps and
//! lists), the descriptors `@yearly`, `@annually`, `@monthly`, `@weekly`, `@daily`,
//! `@midnight`, `@hourly` and `@every <Go duration>`, evaluated in a time zone (the
//! controller's local one, as Go's `time.Now()` is), with robfig's error messages, which the
//! webhook sends back. v1.2.0 has no `TZ=`/`CRON_TZ=` prefix: such a spec is an error here too.
//!
//! No crate on crates.io reads this dialect with these messages and this arithmetic (the
//! `cron` crate wants seconds, `croner` words its errors and its day-of-week rules its own
//! way), so this is a port of robfig's parser.go, spec.go and constantdelay.go, and of the Go
//! runtime parts they rest on: `strconv.Atoi`, `time.ParseDuration`, and `time.Date`'s
//! normalization in a zone with daylight saving time. tests/cron_differential.rs compares it
//! with robfig/cron itself on thousands of schedules and instants (hack/cron-reference).

use jiff::Timestamp;
use jiff::tz::TimeZone;

/// A parsed schedule: when it runs next after a given instant.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Schedule {
    /// Five fields, or a descriptor other than `@every`.
    Spec(SpecSchedule),
    /// `@every <duration>`: a constant delay, whole seconds, at least one.
    Every {
        /// The delay in seconds.
        seconds: i64,
    },
}

/// The bit sets of a five-field schedule (robfig's `SpecSchedule`, seconds always 0): bit
/// `n` is set when value `n` matches; bit 63 marks a field given as `*` or `?`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SpecSchedule {
    second: u64,
    minute: u64,
    hour: u64,
    dom: u64,
    month: u64,
    dow: u64,
}

/// A spec robfig/cron refuses, with its message (`Expected exactly 5 fields, found 1: x`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(String);

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

const STAR_BIT: u64 = 1 << 63;

struct Bounds {
    min: u64,
    max: u64,
    names: &'static [(&'static str, u64)],
}

const SECONDS: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const MINUTES: Bounds = Bounds {
    min: 0,
    max: 59,
    names: &[],
};
const HOURS: Bounds = Bounds {
    min: 0,
    max: 23,
    names: &[],
};
const DOM: Bounds = Bounds {
    min: 1,
    max: 31,
    names: &[],
};
const MONTHS: Bounds = Bounds {
    min: 1,
    max: 12,
    names: &[
        ("jan", 1),
        ("feb", 2),
        ("mar", 3),
        ("apr", 4),
        ("may", 5),
        ("jun", 6),
        ("jul", 7),
        ("aug", 8),
        ("sep", 9),
        ("oct", 10),
        ("nov", 11),
        ("dec", 12),
    ],
};
const DOW: Bounds = Bounds {
    min: 0,
    max: 6,
    names: &[
        ("sun", 0),
        ("mon", 1),
        ("tue", 2),
        ("wed", 3),
        ("thu", 4),
        ("fri", 5),
        ("sat", 6),
    ],
};

fn err(message: String) -> ParseError {
    ParseError(message)
}

/// `cron.ParseStandard`.
///
/// # Errors
///
/// What robfig/cron v1.2.0 refuses, with its message.
pub fn parse_standard(spec: &str) -> Result<Schedule, ParseError> {
    if spec.is_empty() {
        return Err(err("Empty spec string".into()));
    }
    if spec.starts_with('@') {
        return parse_descriptor(spec);
    }
    // Go's strings.Fields: Unicode white space, as Rust's.
    let fields: Vec<&str> = spec.split_whitespace().collect();
    if fields.len() != 5 {
        return Err(err(format!(
            "Expected exactly 5 fields, found {}: {spec}",
            fields.len()
        )));
    }
    // Fields in robfig's order, the first error wins.
    Ok(Schedule::Spec(SpecSchedule {
        second: get_field("0", &SECONDS)?,
        minute: get_field(fields[0], &MINUTES)?,
        hour: get_field(fields[1], &HOURS)?,
        dom: get_field(fields[2], &DOM)?,
        month: get_field(fields[3], &MONTHS)?,
        dow: get_field(fields[4], &DOW)?,
    }))
}

/// A comma-separated list of ranges (empty items are skipped, as Go's FieldsFunc does).
fn get_field(field: &str, r: &Bounds) -> Result<u64, ParseError> {
    let mut bits = 0;
    for expr in field.split(',').filter(|e| !e.is_empty()) {
        bits |= get_range(expr, r)?;
    }
    Ok(bits)
}

fn get_range(expr: &str, r: &Bounds) -> Result<u64, ParseError> {
    let range_and_step: Vec<&str> = expr.split('/').collect();
    let low_and_high: Vec<&str> = range_and_step[0].split('-').collect();
    let single_digit = low_and_high.len() == 1;
    let (start, mut end, extra);
    if low_and_high[0] == "*" || low_and_high[0] == "?" {
        // robfig ignores what follows a `-` here: `*-5` is `*`.
        (start, end, extra) = (r.min, r.max, STAR_BIT);
    } else {
        start = parse_int_or_name(low_and_high[0], r)?;
        end = match low_and_high.len() {
            1 => start,
            2 => parse_int_or_name(low_and_high[1], r)?,
            _ => return Err(err(format!("Too many hyphens: {expr}"))),
        };
        extra = 0;
    }
    let step = match range_and_step.len() {
        1 => 1,
        2 => {
            let step = must_parse_int(range_and_step[1])?;
            // `N/step` means `N-max/step`.
            if single_digit {
                end = r.max;
            }
            step
        }
        _ => return Err(err(format!("Too many slashes: {expr}"))),
    };
    if start < r.min {
        return Err(err(format!(
            "Beginning of range ({start}) below minimum ({}): {expr}",
            r.min
        )));
    }
    if end > r.max {
        return Err(err(format!(
            "End of range ({end}) above maximum ({}): {expr}",
            r.max
        )));
    }
    if start > end {
        return Err(err(format!(
            "Beginning of range ({start}) beyond end of range ({end}): {expr}"
        )));
    }
    if step == 0 {
        return Err(err(format!(
            "Step of range should be a positive number: {expr}"
        )));
    }
    Ok(get_bits(start, end, step) | extra)
}

fn parse_int_or_name(expr: &str, r: &Bounds) -> Result<u64, ParseError> {
    let lower = expr.to_lowercase();
    if let Some((_, n)) = r.names.iter().find(|(name, _)| *name == lower) {
        return Ok(*n);
    }
    must_parse_int(expr)
}

fn must_parse_int(expr: &str) -> Result<u64, ParseError> {
    let num = atoi(expr).map_err(|e| err(format!("Failed to parse int from {expr}: {e}")))?;
    if num < 0 {
        return Err(err(format!("Negative number ({num}) not allowed: {expr}")));
    }
    Ok(num as u64)
}

fn get_bits(min: u64, max: u64, step: u64) -> u64 {
    if step == 1 {
        return !(u64::MAX << (max + 1)) & (u64::MAX << min);
    }
    let mut bits = 0;
    let mut i = min;
    while i <= max {
        bits |= 1 << i;
        i = i.saturating_add(step);
    }
    bits
}

fn all(r: &Bounds) -> u64 {
    get_bits(r.min, r.max, 1) | STAR_BIT
}

fn parse_descriptor(descriptor: &str) -> Result<Schedule, ParseError> {
    let first = |r: &Bounds| 1u64 << r.min;
    let spec = |dom, month, dow, hour| {
        Schedule::Spec(SpecSchedule {
            second: first(&SECONDS),
            minute: first(&MINUTES),
            hour,
            dom,
            month,
            dow,
        })
    };
    let midnight = first(&HOURS);
    Ok(match descriptor {
        "@yearly" | "@annually" => spec(first(&DOM), first(&MONTHS), all(&DOW), midnight),
        "@monthly" => spec(first(&DOM), all(&MONTHS), all(&DOW), midnight),
        "@weekly" => spec(all(&DOM), all(&MONTHS), first(&DOW), midnight),
        "@daily" | "@midnight" => spec(all(&DOM), all(&MONTHS), all(&DOW), midnight),
        "@hourly" => spec(all(&DOM), all(&MONTHS), all(&DOW), all(&HOURS)),
        _ => match descriptor.strip_prefix("@every ") {
            Some(duration) => {
                let nanos = parse_duration(duration)
                    .map_err(|e| err(format!("Failed to parse duration {descriptor}: {e}")))?;
                // cron.Every: at least a second, whole seconds.
                let nanos = nanos.max(NANOS_PER_SECOND);
                Schedule::Every {
                    seconds: nanos / NANOS_PER_SECOND,
                }
            }
            None => return Err(err(format!("Unrecognized descriptor: {descriptor}"))),
        },
    })
}

const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// Go's `strconv.Atoi` (64-bit `int`), its error as Go prints it.
fn atoi(s: &str) -> Result<i64, String> {
    let syntax = || format!("strconv.Atoi: parsing {}: invalid syntax", strconv_quote(s));
    let (neg, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return Err(syntax());
    }
    let mut n: u64 = 0;
    let mut overflow = false;
    for b in digits.bytes() {
        match n
            .checked_mul(10)
            .and_then(|n| n.checked_add(u64::from(b - b'0')))
        {
            Some(v) => n = v,
            None => {
                overflow = true;
                break;
            }
        }
    }
    let limit = if neg { 1u64 << 63 } else { (1u64 << 63) - 1 };
    if overflow || n > limit {
        return Err(format!(
            "strconv.Atoi: parsing {}: value out of range",
            strconv_quote(s)
        ));
    }
    Ok(if neg {
        (n as i64).wrapping_neg()
    } else {
        n as i64
    })
}

/// Go's `strconv.Quote` for the texts a cron spec holds: `"` and `\` escaped, control
/// characters as Go escapes them, other characters as they are.
fn strconv_quote(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\x07' => out.push_str("\\a"),
            '\x08' => out.push_str("\\b"),
            '\x0c' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\x0b' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\x7f' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() || c == '\u{a0}' || c == '\u{ad}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `time.ParseDuration`, in nanoseconds; its error as Go prints it.
fn parse_duration(orig: &str) -> Result<i64, String> {
    let invalid = || format!("time: invalid duration {}", time_quote(orig));
    let mut s = orig.as_bytes();
    let mut neg = false;
    if let Some(&c) = s.first()
        && (c == b'-' || c == b'+')
    {
        neg = c == b'-';
        s = &s[1..];
    }
    if s == b"0" {
        return Ok(0);
    }
    if s.is_empty() {
        return Err(invalid());
    }
    const LIMIT: u64 = 1 << 63;
    let mut d: u64 = 0;
    while !s.is_empty() {
        if !(s[0] == b'.' || s[0].is_ascii_digit()) {
            return Err(invalid());
        }
        // leadingInt
        let before = s.len();
        let mut v: u64 = 0;
        let mut i = 0;
        while i < s.len() && s[i].is_ascii_digit() {
            if v > LIMIT / 10 {
                return Err(invalid());
            }
            v = v * 10 + u64::from(s[i] - b'0');
            if v > LIMIT {
                return Err(invalid());
            }
            i += 1;
        }
        s = &s[i..];
        let pre = before != s.len();
        // leadingFraction
        let (mut f, mut scale, mut post) = (0u64, 1f64, false);
        if s.first() == Some(&b'.') {
            s = &s[1..];
            let before = s.len();
            let mut i = 0;
            let mut overflow = false;
            while i < s.len() && s[i].is_ascii_digit() {
                if !overflow {
                    if f > (LIMIT - 1) / 10 {
                        overflow = true;
                    } else {
                        let y = f * 10 + u64::from(s[i] - b'0');
                        if y > LIMIT {
                            overflow = true;
                        } else {
                            f = y;
                            scale *= 10.0;
                        }
                    }
                }
                i += 1;
            }
            s = &s[i..];
            post = before != s.len();
        }
        if !pre && !post {
            return Err(invalid());
        }
        let i = s
            .iter()
            .position(|&c| c == b'.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if i == 0 {
            return Err(format!(
                "time: missing unit in duration {}",
                time_quote(orig)
            ));
        }
        let unit_bytes = &s[..i];
        s = &s[i..];
        let unit: u64 = match unit_bytes {
            b"ns" => 1,
            // "µs" (U+00B5) and "μs" (U+03BC), as Go spells microseconds.
            b"us" | b"\xc2\xb5s" | b"\xce\xbcs" => 1_000,
            b"ms" => 1_000_000,
            b"s" => 1_000_000_000,
            b"m" => 60_000_000_000,
            b"h" => 3_600_000_000_000,
            _ => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    time_quote_bytes(unit_bytes),
                    time_quote(orig)
                ));
            }
        };
        if v > LIMIT / unit {
            return Err(invalid());
        }
        v *= unit;
        if f > 0 {
            v += (f as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                return Err(invalid());
            }
        }
        d += v;
        if d > LIMIT {
            return Err(invalid());
        }
    }
    if neg {
        return Ok((d as i64).wrapping_neg());
    }
    if d > LIMIT - 1 {
        return Err(invalid());
    }
    Ok(d as i64)
}

/// The time package's own `quote`: bytes of non-ASCII and control characters as `\xNN`.
fn time_quote(s: &str) -> String {
    time_quote_bytes(s.as_bytes())
}

fn time_quote_bytes(s: &[u8]) -> String {
    let mut out = String::from("\"");
    for &b in s {
        if !(b' '..0x80).contains(&b) {
            out.push_str(&format!("\\x{b:02x}"));
        } else {
            if b == b'"' || b == b'\\' {
                out.push('\\');
            }
            out.push(b as char);
        }
    }
    out.push('"');
    out
}

/// Go's zero `time.Time` (0001-01-01T00:00:00Z): what `Next` returns when no time in five
/// years matches.
pub fn go_zero_time() -> Timestamp {
    Timestamp::from_second(GO_ZERO_UNIX).expect("in range")
}

const GO_ZERO_UNIX: i64 = -62_135_596_800;

impl Schedule {
    /// `Schedule.Next`: the first activation strictly after `t`, in `tz`; Go's zero time
    /// ([`go_zero_time`]) when a spec matches nothing within five years (Feb 30).
    #[must_use]
    pub fn next(&self, t: Timestamp, tz: &TimeZone) -> Timestamp {
        match self {
            Schedule::Every { seconds } => {
                // t.Add(Delay - t.Nanosecond())
                Timestamp::from_second(t.as_second().saturating_add(*seconds))
                    .unwrap_or(Timestamp::MAX)
            }
            Schedule::Spec(s) => s.next(t, tz),
        }
    }
}

/// A local wall-clock reading of an instant.
struct Local {
    year: i64,
    month: i64,
    day: i64,
    hour: i64,
    minute: i64,
    second: i64,
    weekday: u32,
}

fn offset_at(tz: &TimeZone, unix: i64) -> i64 {
    match Timestamp::from_second(unix) {
        Ok(ts) => i64::from(tz.to_offset(ts).seconds()),
        Err(_) => 0,
    }
}

fn local(tz: &TimeZone, unix: i64) -> Local {
    let l = unix + offset_at(tz, unix);
    let days = l.div_euclid(86_400);
    let secs = l.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    Local {
        year,
        month,
        day,
        hour: secs / 3600,
        minute: secs % 3600 / 60,
        second: secs % 60,
        // 1970-01-01 was a Thursday (4, Sunday = 0).
        weekday: (days + 4).rem_euclid(7) as u32,
    }
}

/// Go's `time.Date(year, month, day, hour, min, sec, 0, loc)`: out-of-range values
/// normalized (month 13 is January of the next year, day 32 the next month's first), and a
/// local time a transition skips or repeats resolved as Go resolves it: the offset in force
/// at the local time read as UTC, corrected once if the instant it gives falls in another
/// period (so a time in a spring-forward gap lands after it, an ambiguous one on the first).
fn go_date(tz: &TimeZone, year: i64, month: i64, day: i64, hour: i64, min: i64, sec: i64) -> i64 {
    let m0 = month - 1;
    let year = year + m0.div_euclid(12);
    let month = m0.rem_euclid(12) + 1;
    let days = days_from_civil(year, month, 1) + day - 1;
    let unix = days * 86_400 + hour * 3600 + min * 60 + sec;
    unix - offset_at(tz, unix - offset_at(tz, unix))
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    (if m <= 2 { y + 1 } else { y }, m, d)
}

impl SpecSchedule {
    fn day_matches(&self, l: &Local) -> bool {
        let dom = (1u64 << l.day) & self.dom > 0;
        let dow = (1u64 << l.weekday) & self.dow > 0;
        if self.dom & STAR_BIT > 0 || self.dow & STAR_BIT > 0 {
            dom && dow
        } else {
            dom || dow
        }
    }

    /// robfig's `SpecSchedule.Next`, step for step (its loops, its `goto WRAP`, its resets),
    /// on Unix seconds with Go's calendar arithmetic in `tz`.
    fn next(&self, t: Timestamp, tz: &TimeZone) -> Timestamp {
        // The upcoming whole second.
        let mut t = t.as_second() + 1;
        let mut added = false;
        let year_limit = local(tz, t).year + 5;
        'wrap: loop {
            let l = local(tz, t);
            if l.year > year_limit {
                return go_zero_time();
            }
            let mut l = l;
            while (1u64 << l.month) & self.month == 0 {
                if !added {
                    added = true;
                    t = go_date(tz, l.year, l.month, 1, 0, 0, 0);
                    l = local(tz, t);
                }
                // t.AddDate(0, 1, 0)
                t = go_date(tz, l.year, l.month + 1, l.day, l.hour, l.minute, l.second);
                l = local(tz, t);
                if l.month == 1 {
                    continue 'wrap;
                }
            }
            while !self.day_matches(&l) {
                if !added {
                    added = true;
                    t = go_date(tz, l.year, l.month, l.day, 0, 0, 0);
                    l = local(tz, t);
                }
                t = go_date(tz, l.year, l.month, l.day + 1, l.hour, l.minute, l.second);
                l = local(tz, t);
                if l.day == 1 {
                    continue 'wrap;
                }
            }
            while (1u64 << l.hour) & self.hour == 0 {
                if !added {
                    added = true;
                    t = go_date(tz, l.year, l.month, l.day, l.hour, 0, 0);
                }
                t += 3600;
                l = local(tz, t);
                if l.hour == 0 {
                    continue 'wrap;
                }
            }
            while (1u64 << l.minute) & self.minute == 0 {
                if !added {
                    added = true;
                    // t.Truncate(time.Minute), on absolute time (Go's zero time is a whole
                    // minute of Unix time too).
                    t = t.div_euclid(60) * 60;
                }
                t += 60;
                l = local(tz, t);
                if l.minute == 0 {
                    continue 'wrap;
                }
            }
            while (1u64 << l.second) & self.second == 0 {
                if !added {
                    added = true;
                }
                t += 1;
                l = local(tz, t);
                if l.second == 0 {
                    continue 'wrap;
                }
            }
            return Timestamp::from_second(t).unwrap_or(Timestamp::MAX);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn utc(s: &str) -> Timestamp {
        s.parse().unwrap()
    }

    #[test]
    fn the_go_projects_messages() {
        assert_eq!(
            parse_standard("invalid-cron-schedule")
                .unwrap_err()
                .to_string(),
            "Expected exactly 5 fields, found 1: invalid-cron-schedule"
        );
        assert_eq!(
            parse_standard("*/5 * * * *").unwrap(),
            parse_standard("*/5 * * * ?").unwrap()
        );
        assert_eq!(
            parse_standard("TZ=UTC * * * * *").unwrap_err().to_string(),
            "Expected exactly 5 fields, found 6: TZ=UTC * * * * *"
        );
        assert_eq!(
            parse_standard("@every 1d").unwrap_err().to_string(),
            "Failed to parse duration @every 1d: time: unknown unit \"d\" in duration \"1d\""
        );
        assert_eq!(
            parse_standard("x * * * *").unwrap_err().to_string(),
            "Failed to parse int from x: strconv.Atoi: parsing \"x\": invalid syntax"
        );
    }

    #[test]
    fn next_in_utc() {
        let s = parse_standard("1 * * * *").unwrap();
        assert_eq!(
            s.next(utc("2026-11-28T07:30:00Z"), &TimeZone::UTC),
            utc("2026-11-28T08:01:00Z")
        );
        let s = parse_standard("0 0 30 2 *").unwrap();
        assert_eq!(
            s.next(utc("2026-01-01T00:00:00Z"), &TimeZone::UTC),
            go_zero_time()
        );
        let s = parse_standard("@every 90m").unwrap();
        assert_eq!(
            s.next(utc("2026-11-28T07:30:00.5Z"), &TimeZone::UTC),
            utc("2026-11-28T09:00:00Z")
        );
    }
}
