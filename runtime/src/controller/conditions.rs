//! Status conditions as apimachinery's `meta.SetStatusCondition` and friends keep them: one
//! condition per type, `lastTransitionTime` moved only when the status changes.

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
use k8s_openapi::jiff::Timestamp;

/// Set `new` in `conditions`, as `meta.SetStatusCondition` does: a condition of a new type
/// is appended (with `lastTransitionTime` now, unless `new` sets one other than the Unix
/// epoch); for an existing
/// type, `lastTransitionTime` changes only when the status does, and reason, message and
/// observedGeneration are updated. Returns whether anything changed, so a reconcile writes
/// status only then.
///
/// ```
/// use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, Time};
/// use kube_codegen_runtime::controller::{is_status_condition_true, set_status_condition};
///
/// let mut conditions = vec![];
/// let ready = |status: &str| Condition {
///     type_: "Ready".into(),
///     status: status.into(),
///     reason: "Reconciled".into(),
///     message: String::new(),
///     observed_generation: Some(3),
///     last_transition_time: Time(k8s_openapi::jiff::Timestamp::UNIX_EPOCH), // unset: now
/// };
/// assert!(set_status_condition(&mut conditions, ready("True")));
/// assert!(!set_status_condition(&mut conditions, ready("True"))); // nothing new
/// assert!(is_status_condition_true(&conditions, "Ready"));
/// ```
pub fn set_status_condition(conditions: &mut Vec<Condition>, new: Condition) -> bool {
    // Go's zero time and the Unix epoch both mean "not set": callers leave it unset.
    let unset = |t: &Time| t.0 == Timestamp::UNIX_EPOCH;
    let Some(existing) = conditions.iter_mut().find(|c| c.type_ == new.type_) else {
        let mut new = new;
        if unset(&new.last_transition_time) {
            new.last_transition_time = Time(Timestamp::now());
        }
        conditions.push(new);
        return true;
    };
    let mut changed = false;
    if existing.status != new.status {
        existing.status = new.status;
        existing.last_transition_time = if unset(&new.last_transition_time) {
            Time(Timestamp::now())
        } else {
            new.last_transition_time
        };
        changed = true;
    }
    if existing.reason != new.reason {
        existing.reason = new.reason;
        changed = true;
    }
    if existing.message != new.message {
        existing.message = new.message;
        changed = true;
    }
    if existing.observed_generation != new.observed_generation {
        existing.observed_generation = new.observed_generation;
        changed = true;
    }
    changed
}

/// Remove the condition of `type_`; returns whether there was one.
pub fn remove_status_condition(conditions: &mut Vec<Condition>, type_: &str) -> bool {
    let before = conditions.len();
    conditions.retain(|c| c.type_ != type_);
    conditions.len() != before
}

/// The condition of `type_`, if any.
#[must_use]
pub fn find_status_condition<'a>(
    conditions: &'a [Condition],
    type_: &str,
) -> Option<&'a Condition> {
    conditions.iter().find(|c| c.type_ == type_)
}

/// Whether the condition of `type_` is there with status `True`.
#[must_use]
pub fn is_status_condition_true(conditions: &[Condition], type_: &str) -> bool {
    find_status_condition(conditions, type_).is_some_and(|c| c.status == "True")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cond(type_: &str, status: &str, reason: &str) -> Condition {
        Condition {
            type_: type_.into(),
            status: status.into(),
            reason: reason.into(),
            message: String::new(),
            observed_generation: None,
            last_transition_time: Time(Timestamp::UNIX_EPOCH),
        }
    }

    #[test]
    fn transition_time_moves_only_with_the_status() {
        let mut cs = vec![];
        assert!(set_status_condition(
            &mut cs,
            cond("Ready", "False", "Pending")
        ));
        let first = cs[0].last_transition_time.clone();
        assert_ne!(first.0, Timestamp::UNIX_EPOCH);
        // A new reason, same status: updated, the transition time stays.
        assert!(set_status_condition(
            &mut cs,
            cond("Ready", "False", "Waiting")
        ));
        assert_eq!(cs[0].reason, "Waiting");
        assert_eq!(cs[0].last_transition_time, first);
        // A new status: the time moves (to the one given, when given).
        let mut t = cond("Ready", "True", "Done");
        t.last_transition_time = Time("2030-01-01T00:00:00Z".parse().unwrap());
        assert!(set_status_condition(&mut cs, t.clone()));
        assert_eq!(cs[0].last_transition_time, t.last_transition_time);
        // Another type is appended; removal works by type.
        assert!(set_status_condition(
            &mut cs,
            cond("Degraded", "False", "Fine")
        ));
        assert_eq!(cs.len(), 2);
        assert!(remove_status_condition(&mut cs, "Degraded"));
        assert!(!remove_status_condition(&mut cs, "Degraded"));
        assert!(is_status_condition_true(&cs, "Ready"));
        assert!(!is_status_condition_true(&cs, "Degraded"));
    }
}
