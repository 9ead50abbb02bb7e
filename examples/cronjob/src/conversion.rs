//! The hand-written part of v2's conversion to and from the hub v1 (Go's
//! `api/v2/cronjob_conversion.go`, `ConvertTo`/`ConvertFrom`): v2's structured schedule is
//! v1's cron string. Everything else is converted by the generated code
//! (`generated::conversion`, the conversion generator), field by field, as the Go code copies
//! it by hand.

use crate::apis::batch::{v1, v2};
use crate::generated::conversion::CronJobV2ManualConversion;

// ANCHOR: manual
impl CronJobV2ManualConversion for v2::CronJob {
    /// Go's `ConvertTo`: the five fields joined by spaces, `*` for a field not set. `out`
    /// holds the schedule kept in the `conversion-data` annotation, if any: one v2 cannot
    /// express (`@hourly`, see below) stays while v2 sets no field.
    fn cron_job_spec_schedule_to_hub(src: &v2::CronJobSpec, out: &mut v1::CronJobSpec) {
        let s = &src.schedule;
        if *s == v2::CronSchedule::default()
            && !out.schedule.is_empty()
            && !five_fields(&out.schedule)
        {
            return;
        }
        out.schedule = cron_string(s);
    }

    /// Go's `ConvertFrom`: the string split on single spaces, a `*` field left unset. Go
    /// fails a schedule that is not five fields ("invalid schedule: not a standard 5-field
    /// schedule"); here v2 gets no fields, and the generated conversion keeps the v1 object
    /// in the `conversion-data` annotation, so reading `@hourly` through v2 and writing it
    /// back loses nothing (FIDELITY.md, "The CronJob port").
    fn cron_job_spec_schedule_from_hub(src: &v1::CronJobSpec, out: &mut v2::CronJobSpec) {
        let parts: Vec<&str> = src.schedule.split(' ').collect();
        let [minute, hour, day_of_month, month, day_of_week] = parts[..] else {
            out.schedule = v2::CronSchedule::default();
            return;
        };
        let field = |raw: &str| (raw != "*").then(|| raw.to_owned());
        out.schedule = v2::CronSchedule {
            minute: field(minute),
            hour: field(hour),
            day_of_month: field(day_of_month),
            month: field(month),
            day_of_week: field(day_of_week),
        };
    }
}

/// A v2 schedule as the cron string it stands for: the five fields joined by spaces, `*` for
/// a field not set (Go's `ConvertTo`; v2's webhook validates this string).
pub fn cron_string(s: &v2::CronSchedule) -> String {
    fn part(f: &Option<v2::CronField>) -> &str {
        f.as_deref().unwrap_or("*")
    }
    [
        part(&s.minute),
        part(&s.hour),
        part(&s.day_of_month),
        part(&s.month),
        part(&s.day_of_week),
    ]
    .join(" ")
}

/// Whether Go's `ConvertFrom` takes the schedule: five fields split on single spaces.
fn five_fields(schedule: &str) -> bool {
    schedule.split(' ').count() == 5
}
// ANCHOR_END: manual

#[cfg(test)]
mod tests {
    use kube_codegen_runtime::conversion::Convertible;

    use super::*;

    fn v1_with(schedule: &str) -> v1::CronJob {
        v1::CronJob {
            spec: v1::CronJobSpec {
                schedule: schedule.into(),
                ..Default::default()
            },
            ..Default::default()
        }
    }

    #[test]
    fn the_schedule_splits_into_fields_and_joins_back() {
        let v2 = v2::CronJob::from_hub(&v1_with("*/5 0 * * 1-5"));
        assert_eq!(v2.spec.schedule.minute.as_deref(), Some("*/5"));
        assert_eq!(v2.spec.schedule.hour.as_deref(), Some("0"));
        assert_eq!(v2.spec.schedule.day_of_month, None);
        assert_eq!(v2.spec.schedule.month, None);
        assert_eq!(v2.spec.schedule.day_of_week.as_deref(), Some("1-5"));
        assert_eq!(v2.to_hub().spec.schedule, "*/5 0 * * 1-5");
    }

    #[test]
    fn a_v2_schedule_without_fields_is_every_minute() {
        let v2 = v2::CronJob::default();
        assert_eq!(v2.to_hub().spec.schedule, "* * * * *");
    }

    #[test]
    fn a_descriptor_survives_the_round_trip_through_v2() {
        let hub = v1_with("@hourly");
        let v2 = v2::CronJob::from_hub(&hub);
        assert_eq!(v2.spec.schedule, v2::CronSchedule::default());
        assert_eq!(v2.to_hub().spec.schedule, "@hourly");
    }
}
