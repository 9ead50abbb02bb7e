//! The cron port against robfig/cron v1.2.0 itself: every case of
//! tests/fixtures/cron-reference.jsonl (hack/cron-reference/regen.sh: hand-picked and random
//! specs and instants, in two zones with daylight saving time, the instants clustered around
//! their transitions) read by `cron::parse_standard`, with robfig's error message, or with
//! its next three activations from the instant, chained.

use cronjob::cron::{Schedule, go_zero_time, parse_standard};
use jiff::Timestamp;
use jiff::tz::TimeZone;
use serde::Deserialize;

#[derive(Deserialize)]
struct Case {
    zone: String,
    spec: String,
    at: String,
    #[serde(default)]
    next: Vec<String>,
    #[serde(default)]
    err: String,
}

fn go_time(s: &str) -> Timestamp {
    if s == "0001-01-01T00:00:00Z" {
        return go_zero_time();
    }
    s.parse().unwrap_or_else(|e| panic!("{s}: {e}"))
}

#[test]
fn agrees_with_robfig_cron() {
    let text = include_str!("fixtures/cron-reference.jsonl");
    let mut zones = std::collections::BTreeMap::new();
    let (mut cases, mut nexts, mut errors) = (0, 0, 0);
    let mut disagreements = vec![];
    for line in text.lines() {
        let case: Case = serde_json::from_str(line).expect("a case");
        let tz = zones
            .entry(case.zone.clone())
            .or_insert_with(|| TimeZone::get(&case.zone).expect("zone in the system's tzdb"))
            .clone();
        cases += 1;
        let ours: Result<Schedule, String> = parse_standard(&case.spec).map_err(|e| e.to_string());
        match (&ours, case.err.is_empty()) {
            (Err(e), false) if *e == case.err => errors += 1,
            (Ok(s), true) => {
                let mut t = go_time(&case.at);
                for want in &case.next {
                    t = s.next(t, &tz);
                    nexts += 1;
                    if t != go_time(want) {
                        disagreements.push(format!(
                            "{} {:?} from {}: next {t}, robfig {want}",
                            case.zone, case.spec, case.at
                        ));
                        break;
                    }
                }
            }
            _ => disagreements.push(format!(
                "{} {:?}: ours {ours:?}, robfig {:?}",
                case.zone, case.spec, case.err
            )),
        }
    }
    assert!(
        disagreements.is_empty(),
        "{} of {cases} cases disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
    // The file is what the test is: thousands of cases, both outcomes, both zones.
    assert!(
        cases >= 2000 && errors >= 500 && nexts >= 3000,
        "{cases} {errors} {nexts}"
    );
    assert_eq!(zones.len(), 2);
}
