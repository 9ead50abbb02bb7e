//! Durations as the API server reads them, once for every reader: Go's `time.ParseDuration`
//! (cel-go's `duration()`, the literal arguments the checks validate) and strfmt's
//! `ParseDuration`, which also takes `<n> <unit>` with days and weeks (`format: duration`
//! values, and their CEL values in rules).

/// Why Go's `time.ParseDuration` refuses a string.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum DurationError {
    /// Not `[-+]?([0-9]*(\.[0-9]*)?unit)+` (nor `0`).
    Syntax,
    /// Well formed, but beyond an `int64` of nanoseconds.
    Range,
}

/// Go's `time.ParseDuration`, to the nanosecond, with its arithmetic: the fraction of a unit
/// is read to 63 bits and scaled in floating point, as Go does.
pub(crate) fn parse_go(s: &str) -> Result<i64, DurationError> {
    const UNITS: &[(&str, u64)] = &[
        ("ns", 1),
        ("us", 1_000),
        ("µs", 1_000),
        ("μs", 1_000),
        ("ms", 1_000_000),
        ("s", 1_000_000_000),
        ("m", 60_000_000_000),
        ("h", 3_600_000_000_000),
    ];
    const LIMIT: u64 = 1 << 63;
    let (neg, mut rest) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(DurationError::Syntax);
    }
    let mut total: u64 = 0;
    // Overflow is found where Go finds it, but reported only once the whole string is known
    // to be well formed.
    let mut overflow = false;
    let digits = |r: &str| r.len() - r.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    while !rest.is_empty() {
        if !rest.starts_with(|c: char| c == '.' || c.is_ascii_digit()) {
            return Err(DurationError::Syntax);
        }
        let int_len = digits(rest);
        let mut v: u64 = 0;
        for b in rest[..int_len].bytes() {
            match v.checked_mul(10).map(|x| x + u64::from(b - b'0')) {
                Some(x) if v <= LIMIT / 10 && x <= LIMIT => v = x,
                _ => overflow = true,
            }
        }
        rest = &rest[int_len..];
        let (mut frac, mut scale, mut frac_len) = (0u64, 1f64, 0);
        if let Some(r) = rest.strip_prefix('.') {
            frac_len = digits(r);
            let mut stopped = false;
            for b in r[..frac_len].bytes() {
                if stopped || frac > (LIMIT - 1) / 10 {
                    stopped = true;
                    continue;
                }
                let y = frac * 10 + u64::from(b - b'0');
                if y > LIMIT {
                    stopped = true;
                    continue;
                }
                frac = y;
                scale *= 10.0;
            }
            rest = &r[frac_len..];
        }
        if int_len == 0 && frac_len == 0 {
            return Err(DurationError::Syntax);
        }
        let unit_len = rest
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(rest.len());
        let Some(&(_, unit)) = UNITS.iter().find(|(u, _)| *u == &rest[..unit_len]) else {
            return Err(DurationError::Syntax);
        };
        rest = &rest[unit_len..];
        if overflow || v > LIMIT / unit {
            overflow = true;
            continue;
        }
        v *= unit;
        if frac > 0 {
            v += (frac as f64 * (unit as f64 / scale)) as u64;
            if v > LIMIT {
                overflow = true;
                continue;
            }
        }
        total += v;
        if total > LIMIT {
            overflow = true;
        }
    }
    match (overflow, neg) {
        (true, _) => Err(DurationError::Range),
        (false, true) => Ok((total as i64).wrapping_neg()),
        (false, false) if total >= LIMIT => Err(DurationError::Range),
        (false, false) => Ok(total as i64),
    }
}

/// strfmt's `<n> <unit>` form: a signed count, spaces, and a unit word (`d`, `days`,
/// `w`, `weeks`, `h`, `hours`, ... `ns`, `nanoseconds`). The count times the unit, `None`
/// when the form does not match; `Some(None)` when it does but leaves an `int64` of
/// nanoseconds.
fn parse_strfmt_form(s: &str) -> Option<Option<i64>> {
    const UNITS: &[(&[&str], i64)] = &[
        (&["ns", "nanosecond", "nanoseconds"], 1),
        (&["us", "microsecond", "microseconds"], 1_000),
        (&["ms", "millisecond", "milliseconds"], 1_000_000),
        (&["s", "second", "seconds"], 1_000_000_000),
        (&["m", "minute", "minutes"], 60_000_000_000),
        (&["h", "hour", "hours"], 3_600_000_000_000),
        (&["d", "day", "days"], 24 * 3_600_000_000_000),
        (&["w", "week", "weeks"], 7 * 24 * 3_600_000_000_000),
    ];
    let (neg, body) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    let count_len = body.len() - body.trim_start_matches(|c: char| c.is_ascii_digit()).len();
    if count_len == 0 {
        return None;
    }
    let word = body[count_len..].trim_start();
    let &(_, unit) = UNITS.iter().find(|(words, _)| words.contains(&word))?;
    let count: Option<i64> = body[..count_len].parse().ok();
    Some(
        count
            .and_then(|n| n.checked_mul(unit))
            .map(|n| if neg { -n } else { n }),
    )
}

/// Whether `s` is a `format: duration` value: Go's syntax (whatever its range), or
/// strfmt's `<n> <unit>`.
pub(crate) fn is_strfmt(s: &str) -> bool {
    parse_go(s) != Err(DurationError::Syntax) || parse_strfmt_form(s).is_some()
}

/// The value of a `format: duration` string, in nanoseconds: Go's, else (as strfmt tries
/// it after any error of Go's) strfmt's `<n> <unit>`; `None` when it is neither or out of
/// range.
pub(crate) fn parse_strfmt(s: &str) -> Option<i64> {
    parse_go(s).ok().or_else(|| parse_strfmt_form(s).flatten())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_parses_as_go_does() {
        for (s, ns) in [
            ("1s", 1_000_000_000),
            ("1.5h", 5_400_000_000_000),
            ("-2m3s", -123_000_000_000),
            ("+5ms", 5_000_000),
            ("0", 0),
            ("-0", 0),
            ("100ms", 100_000_000),
            (".5s", 500_000_000),
            ("1.s", 1_000_000_000),
            ("1h2m3.5s", 3_723_500_000_000),
            ("3µs", 3_000),
            ("3μs", 3_000),
            ("0.3s", 300_000_000),
            ("2.000000003s", 2_000_000_003),
            ("1.000000001s", 1_000_000_001),
            ("2562047h47m16.854775807s", i64::MAX),
            ("-2562047h47m16.854775808s", i64::MIN),
        ] {
            assert_eq!(parse_go(s), Ok(ns), "{s}");
        }
        for bad in [
            "", "1", "s", "1x", "1.s.", "--1s", "1 s", ".s", "-", "1sx", "1h-2m", "1e3s",
        ] {
            assert_eq!(parse_go(bad), Err(DurationError::Syntax), "{bad}");
        }
        for big in [
            "2562047h47m16.854775808s",
            "3000000h",
            "99999999999999999999h",
        ] {
            assert_eq!(parse_go(big), Err(DurationError::Range), "{big}");
        }
    }

    #[test]
    fn strfmt_adds_counts_of_units() {
        assert_eq!(parse_strfmt("3 days"), Some(3 * 24 * 3_600_000_000_000));
        assert_eq!(parse_strfmt("1w"), Some(7 * 24 * 3_600_000_000_000));
        assert_eq!(parse_strfmt("-2 hours"), Some(-7_200_000_000_000));
        assert_eq!(parse_strfmt("90s"), Some(90_000_000_000));
        assert_eq!(parse_strfmt("3 fortnights"), None);
        assert!(is_strfmt("3000000h"));
        assert!(is_strfmt("3 days"));
        assert!(is_strfmt("0"));
        assert!(!is_strfmt("3 days ago"));
        assert!(!is_strfmt("days"));
    }
}
