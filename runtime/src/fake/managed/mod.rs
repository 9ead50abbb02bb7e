//! Server-side apply and field ownership for the fake API server: `metadata.managedFields`
//! kept as the API server keeps it (`k8s.io/apimachinery/pkg/util/managedfields` over
//! structured-merge-diff).
//!
//! The API server's field manager is a chain of wrappers; the parts reproduced here:
//! - *structured merge* ([`Tracker::apply`], [`Tracker::update`]): merge the applied
//!   configuration, prune what the applier stopped applying and nobody else owns, find
//!   conflicts (other managers owning a field whose value changes), move ownership;
//! - *strip meta*: `apiVersion`, `kind` and the system fields of `metadata` are never owned;
//! - *managed-fields updater*: an update's changed fields join the manager's `Update`
//!   entry; entry times change only when the write changes something of theirs;
//! - *build manager info*: managers are identified by name, operation, subresource and,
//!   for `Update`, apiVersion;
//! - *skip non-applied*: objects without managedFields (not created through the API) are not
//!   tracked on update, and the first apply gives their fields to `before-first-apply`;
//! - reset fields: `status` is not owned through the main resource of a kind with a status
//!   subresource, `spec` not through `/status`;
//! - encoding: entries sorted by operation, time, manager, apiVersion, subresource.
//!
//! - cap managers: beyond ten `Update` entries the oldest fold into `ancient-changes`.
//!
//! Not reproduced: the `last-applied-configuration` annotation handling, schema-change
//! reconciliation and version conversion (all versions of a resource share one field
//! layout).

pub(crate) mod fieldset;
pub(crate) mod schema;
pub(crate) mod typed;

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use fieldset::{Path, Set, fields_path, path_string};
use schema::Schema;

/// A managedFields entry's `operation`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) enum Operation {
    /// Server-side apply.
    Apply,
    /// Create, update and non-apply patches.
    Update,
}

impl Operation {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Operation::Apply => "Apply",
            Operation::Update => "Update",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "Apply" => Some(Operation::Apply),
            "Update" => Some(Operation::Update),
            _ => None,
        }
    }
}

/// Who owns a set of fields, as the API server identifies managers: `Apply` entries are one
/// per manager and subresource whatever the apiVersion, `Update` entries one per apiVersion.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct ManagerId {
    pub manager: String,
    pub operation: Operation,
    /// Only for `Update`.
    pub api_version: Option<String>,
    pub subresource: Option<String>,
}

impl ManagerId {
    /// How conflict messages name the manager (`printManager`): `"name"`, plus
    /// ` with subresource "status"`, plus ` using apps/v1` for `Update`.
    pub(crate) fn display(&self) -> String {
        let mut s = format!("{:?}", self.manager);
        if let Some(sub) = &self.subresource {
            s.push_str(&format!(" with subresource {sub:?}"));
        }
        if self.operation == Operation::Update {
            s.push_str(&format!(
                " using {}",
                self.api_version.as_deref().unwrap_or("")
            ));
        }
        s
    }
}

/// One manager's fields.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Entry {
    pub set: Set,
    /// The apiVersion of the entry (for `Apply`, the one of the last apply).
    pub api_version: String,
    /// RFC 3339, second precision; `None` when no write of this manager changed the object.
    pub time: Option<String>,
}

/// All managers of an object.
pub(crate) type Managed = BTreeMap<ManagerId, Entry>;

/// Parses `metadata.managedFields` (`DecodeManagedFields`).
pub(crate) fn decode(obj: &Value) -> Result<Managed, String> {
    let mut out = Managed::new();
    let Some(entries) = obj.pointer("/metadata/managedFields") else {
        return Ok(out);
    };
    if entries.is_null() {
        return Ok(out);
    }
    let entries = entries
        .as_array()
        .ok_or_else(|| "metadata.managedFields must be a list".to_string())?;
    for (i, e) in entries.iter().enumerate() {
        let s = |k: &str| e.get(k).and_then(Value::as_str).filter(|s| !s.is_empty());
        let operation = Operation::parse(s("operation").unwrap_or_default())
            .ok_or_else(|| "operation must be `Apply` or `Update`".to_string())?;
        let api_version = s("apiVersion")
            .ok_or_else(|| "apiVersion must not be empty".to_string())?
            .to_string();
        match s("fieldsType") {
            Some("FieldsV1") => {}
            None => return Err(format!("missing fieldsType in managed fields entry {i}")),
            Some(t) => {
                return Err(format!(
                    "invalid fieldsType {t:?} in managed fields entry {i}"
                ));
            }
        }
        let set = match e.get("fieldsV1") {
            None | Some(Value::Null) => Set::new(),
            Some(f) => {
                Set::from_fields_v1(f).map_err(|err| format!("error decoding set: {err}"))?
            }
        };
        let id = ManagerId {
            manager: s("manager").unwrap_or_default().to_string(),
            operation,
            api_version: (operation == Operation::Update).then(|| api_version.clone()),
            subresource: s("subresource").map(str::to_string),
        };
        out.insert(
            id,
            Entry {
                set,
                api_version,
                time: s("time").map(str::to_string),
            },
        );
    }
    Ok(out)
}

/// The `metadata.managedFields` list (`encodeManagedFields`), in the API server's order;
/// `None` when nobody owns anything (the field is then left out).
pub(crate) fn encode(managed: &Managed) -> Option<Value> {
    if managed.is_empty() {
        return None;
    }
    let mut entries: Vec<(&ManagerId, &Entry)> = managed.iter().collect();
    // `sortEncodedManagedFields`: operation, then time in seconds (missing = 0), manager,
    // apiVersion, subresource. RFC 3339 strings at second precision sort as their times.
    entries.sort_by(|(a, ea), (b, eb)| {
        a.operation
            .cmp(&b.operation)
            .then_with(|| {
                ea.time
                    .as_deref()
                    .unwrap_or("")
                    .cmp(eb.time.as_deref().unwrap_or(""))
            })
            .then_with(|| a.manager.cmp(&b.manager))
            .then_with(|| ea.api_version.cmp(&eb.api_version))
            .then_with(|| a.subresource.cmp(&b.subresource))
    });
    let list = entries
        .into_iter()
        .map(|(id, e)| {
            let mut m = Map::new();
            m.insert("manager".into(), id.manager.clone().into());
            m.insert("operation".into(), id.operation.as_str().into());
            m.insert("apiVersion".into(), e.api_version.clone().into());
            if let Some(t) = &e.time {
                m.insert("time".into(), t.clone().into());
            }
            m.insert("fieldsType".into(), "FieldsV1".into());
            m.insert("fieldsV1".into(), e.set.to_fields_v1());
            if let Some(sub) = &id.subresource {
                m.insert("subresource".into(), sub.clone().into());
            }
            Value::Object(m)
        })
        .collect();
    Some(Value::Array(list))
}

/// One conflict: a field another manager owns with a different value.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Conflict {
    pub manager: ManagerId,
    pub path: Path,
}

/// The 409 of a conflicting apply, worded as the API server words it
/// (`NewConflictError`).
pub(crate) fn conflict_status(conflicts: &[Conflict]) -> kube::core::Status {
    use kube::core::response::{StatusCause, StatusDetails};
    let causes = conflicts
        .iter()
        .map(|c| StatusCause {
            reason: "FieldManagerConflict".into(),
            message: format!("conflict with {}", c.manager.display()),
            field: path_string(&c.path),
        })
        .collect();
    let message = if let [one] = conflicts {
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            one.manager.display(),
            path_string(&one.path)
        )
    } else {
        // Managers sorted by their identifier, paths in conflict order.
        let mut by_manager: BTreeMap<String, (String, Vec<String>)> = BTreeMap::new();
        for c in conflicts {
            by_manager
                .entry(identifier_json(&c.manager))
                .or_insert_with(|| (c.manager.display(), Vec::new()))
                .1
                .push(path_string(&c.path));
        }
        let mut lines = Vec::new();
        for (display, paths) in by_manager.into_values() {
            lines.push(format!("conflicts with {display}:"));
            lines.extend(paths.into_iter().map(|p| format!("- {p}")));
        }
        format!(
            "Apply failed with {} conflicts: {}",
            conflicts.len(),
            lines.join("\n")
        )
    };
    kube::core::Status::failure(&message, "Conflict")
        .with_code(409)
        .with_details(StatusDetails {
            name: String::new(),
            group: String::new(),
            kind: String::new(),
            uid: String::new(),
            causes,
            retry_after_seconds: 0,
        })
}

/// The manager identifier as the API server serializes it (`BuildManagerIdentifier`), which
/// is what multi-manager conflict messages are sorted by.
fn identifier_json(id: &ManagerId) -> String {
    // Go marshals the fields in ManagedFieldsEntry's declaration order, which decides the
    // sort order; a serde_json map would sort the keys instead.
    let q = |s: &str| serde_json::to_string(s).unwrap_or_default();
    let mut out = format!(
        "{{\"manager\":{},\"operation\":{}",
        q(&id.manager),
        q(id.operation.as_str())
    );
    if let Some(v) = &id.api_version {
        out.push_str(&format!(",\"apiVersion\":{}", q(v)));
    }
    if let Some(s) = &id.subresource {
        out.push_str(&format!(",\"subresource\":{}", q(s)));
    }
    out.push('}');
    out
}

/// The manager name of a request without `fieldManager`: the User-Agent up to the first
/// `/`, printable characters only, at most 128 bytes (`prefixFromUserAgent`); `unknown`
/// when that is empty.
pub(crate) fn manager_from_user_agent(user_agent: &str) -> String {
    let prefix = user_agent.split('/').next().unwrap_or_default();
    let mut out = String::new();
    for c in prefix.chars() {
        if c.is_control() {
            continue;
        }
        if out.len() >= 128 {
            break;
        }
        out.push(c);
    }
    if out.is_empty() {
        "unknown".into()
    } else {
        out
    }
}

/// Why an apply failed.
#[derive(Debug)]
pub(crate) enum ApplyError {
    /// Another manager owns fields the apply changes (409).
    Conflicts(Vec<Conflict>),
    /// The applied configuration cannot be typed (duplicate or missing list keys).
    Invalid(String),
    /// The stored object cannot be typed (list items without keys, e.g. from a tracker
    /// add): the API server's "failed to create typed live object".
    InvalidLive(String),
}

/// The field manager of one endpoint: the kind's schema, the request's apiVersion, the
/// subresource and the fields its strategy resets.
pub(crate) struct Tracker<'a> {
    pub schema: &'a Schema,
    pub api_version: String,
    pub subresource: Option<String>,
    pub reset: Set,
    pub now: String,
}

/// The fields `stripMeta` keeps out of every manager's set.
fn strip_set() -> Set {
    let mut s = Set::new();
    for p in [
        &["apiVersion"][..],
        &["kind"],
        &["metadata"],
        &["metadata", "name"],
        &["metadata", "namespace"],
        &["metadata", "creationTimestamp"],
        &["metadata", "selfLink"],
        &["metadata", "uid"],
        &["metadata", "clusterName"],
        &["metadata", "generation"],
        &["metadata", "managedFields"],
        &["metadata", "resourceVersion"],
    ] {
        s.insert(&fields_path(p));
    }
    s
}

/// The reset fields of an endpoint: `status` for the main resource of a kind with a status
/// subresource; `spec` (and for Deployments `metadata.labels`) for `/status`.
pub(crate) fn reset_fields(
    group: &str,
    kind: &str,
    status_subresource: bool,
    status_only: bool,
) -> Set {
    let mut s = Set::new();
    if status_only {
        s.insert(&fields_path(&["spec"]));
        if group == "apps" && kind == "Deployment" {
            s.insert(&fields_path(&["metadata", "labels"]));
        }
    } else if status_subresource {
        s.insert(&fields_path(&["status"]));
    }
    s
}

fn without_managed_fields(v: &Value) -> Value {
    let mut v = v.clone();
    if let Some(Value::Object(meta)) = v.get_mut("metadata") {
        meta.remove("managedFields");
    }
    v
}

/// At most this many `Update` entries are kept (`DefaultMaxUpdateManagers`).
const MAX_UPDATE_MANAGERS: usize = 10;

/// `capManagersManager`: beyond [`MAX_UPDATE_MANAGERS`] `Update` entries, the oldest are
/// folded, per apiVersion, into an `ancient-changes` entry, so managedFields stays bounded
/// when many clients update an object.
fn cap_update_managers(managed: &mut Managed) {
    let mut updaters: Vec<ManagerId> = managed
        .keys()
        .filter(|id| id.operation == Operation::Update)
        .cloned()
        .collect();
    if updaters.len() <= MAX_UPDATE_MANAGERS {
        return;
    }
    // Oldest first (no time counts as the oldest), then by identifier, as the server sorts.
    updaters.sort_by_cached_key(|id| {
        let time = managed[id].time.clone().unwrap_or_default();
        (time, identifier_json(id))
    });
    let mut first_of_version: BTreeMap<String, ManagerId> = BTreeMap::new();
    let mut length = updaters.len();
    for id in updaters {
        if length <= MAX_UPDATE_MANAGERS {
            break;
        }
        let Some(entry) = managed.get(&id).cloned() else {
            continue;
        };
        let version = entry.api_version.clone();
        let bucket = ManagerId {
            manager: "ancient-changes".into(),
            operation: Operation::Update,
            api_version: Some(version.clone()),
            subresource: None,
        };
        match first_of_version.get(&version) {
            Some(first) => {
                if !managed.contains_key(&bucket)
                    && let Some(e) = managed.remove(first)
                {
                    managed.insert(bucket.clone(), e);
                }
                let merged = managed
                    .get(&bucket)
                    .map_or_else(|| entry.set.clone(), |b| entry.set.union(&b.set));
                managed.insert(
                    bucket,
                    Entry {
                        set: merged,
                        api_version: version,
                        time: entry.time,
                    },
                );
                // As in the server, even when `id` is the bucket itself (an older
                // `ancient-changes` that is not the first of its version).
                managed.remove(&id);
                length -= 1;
            }
            None => {
                first_of_version.insert(version, id);
            }
        }
    }
}

impl Tracker<'_> {
    fn update_id(&self, manager: &str) -> ManagerId {
        ManagerId {
            manager: manager.to_string(),
            operation: Operation::Update,
            api_version: Some(self.api_version.clone()),
            subresource: self.subresource.clone(),
        }
    }

    /// SMD `Updater.update`: compares the objects, finds which other managers own changed
    /// fields (conflicts) and removes changed and removed fields from them (when forced).
    fn smd_update(
        &self,
        live: &Value,
        new: &Value,
        managed: &mut Managed,
        workflow: &ManagerId,
        force: bool,
    ) -> Result<typed::Comparison, Vec<Conflict>> {
        let mut cmp = typed::compare(self.schema, live, new);
        cmp.exclude(&self.reset);
        let changed = cmp.modified.union(&cmp.added);
        let mut conflicts = Vec::new();
        let mut conflict_sets = Vec::new();
        for (id, entry) in managed.iter() {
            if id == workflow {
                continue;
            }
            let c = entry.set.intersection(&changed);
            if !c.is_empty() {
                conflicts.extend(c.paths().into_iter().map(|path| Conflict {
                    manager: id.clone(),
                    path,
                }));
                conflict_sets.push((id.clone(), c));
            }
        }
        if !force && !conflicts.is_empty() {
            return Err(conflicts);
        }
        for (id, c) in conflict_sets {
            if let Some(e) = managed.get_mut(&id) {
                e.set = e.set.difference(&c);
            }
        }
        if !cmp.removed.is_empty() {
            for (id, e) in managed.iter_mut() {
                if id != workflow {
                    e.set = e.set.difference(&cmp.removed);
                }
            }
        }
        managed.retain(|_, e| !e.set.is_empty());
        Ok(cmp)
    }

    /// A non-apply write (create, update, patch) by `manager`: the fields it changed become
    /// its (`Update` entry), leaving other managers' sets; never a conflict.
    ///
    /// `track_untracked`: whether to track an object that has no managedFields yet (only on
    /// create; the API server does not start tracking on update).
    pub(crate) fn update(
        &self,
        live: &Value,
        new: &Value,
        mut managed: Managed,
        manager: &str,
        track_untracked: bool,
    ) -> Managed {
        if managed.is_empty() && !track_untracked {
            return managed;
        }
        let live = without_managed_fields(live);
        let new = without_managed_fields(new);
        let current = ManagerId {
            manager: "current-operation".into(),
            operation: Operation::Update,
            api_version: Some(self.api_version.clone()),
            subresource: self.subresource.clone(),
        };
        let Ok(cmp) = self.smd_update(&live, &new, &mut managed, &current, true) else {
            // Forced updates never conflict.
            return managed;
        };
        let set = cmp
            .modified
            .union(&cmp.added)
            .recursive_difference(&self.reset)
            .difference(&strip_set());
        if set.is_empty() {
            return managed;
        }
        let id = self.update_id(manager);
        let previous = managed.remove(&id).map(|e| e.set).unwrap_or_default();
        managed.insert(
            id,
            Entry {
                set: set.union(&previous),
                api_version: self.api_version.clone(),
                time: Some(self.now.clone()),
            },
        );
        cap_update_managers(&mut managed);
        managed
    }

    /// Server-side apply of `config` by `manager` onto `live` (an empty object when the
    /// apply creates it). Returns the new object (`None`: the object does not change) and
    /// the new managers.
    pub(crate) fn apply(
        &self,
        live: &Value,
        config: &Value,
        mut managed: Managed,
        manager: &str,
        force: bool,
    ) -> Result<(Option<Value>, Managed), ApplyError> {
        let live = without_managed_fields(live);
        if managed.is_empty() {
            // Fields that exist before anyone applies belong to `before-first-apply`.
            let empty = json!({});
            managed = self.update(&empty, &live, managed, "before-first-apply", true);
        }
        let id = ManagerId {
            manager: manager.to_string(),
            operation: Operation::Apply,
            api_version: None,
            subresource: self.subresource.clone(),
        };
        // The API server types (validates) the configuration before anything else.
        let set = typed::to_field_set(self.schema, config)
            .map_err(ApplyError::Invalid)?
            .recursive_difference(&self.reset);
        // The configuration is valid here, so a merge error comes from the live object.
        let merged = typed::merge(self.schema, &live, config).map_err(ApplyError::InvalidLive)?;
        let last = managed.get(&id).map(|e| e.set.clone());
        let time = managed.get(&id).and_then(|e| e.time.clone());
        managed.insert(
            id.clone(),
            Entry {
                set,
                api_version: self.api_version.clone(),
                time,
            },
        );
        let new = match last.filter(|l| !l.is_empty()) {
            Some(last) => self.prune(&merged, &managed, &last),
            None => merged,
        };
        self.smd_update(&live, &new, &mut managed, &id, force)
            .map_err(ApplyError::Conflicts)?;
        let changed = new != live;
        if let Some(e) = managed.get_mut(&id) {
            e.set = e.set.difference(&strip_set());
            if changed {
                e.time = Some(self.now.clone());
            }
        }
        managed.retain(|_, e| !e.set.is_empty());
        Ok((changed.then_some(new), managed))
    }

    /// SMD `Updater.prune`: removes from the merged object what the applier owned before and
    /// no longer applies, unless another manager owns it.
    fn prune(&self, merged: &Value, managed: &Managed, last: &Set) -> Value {
        let s = self.schema;
        let named = |set: &Set| typed::ensure_named_fields_are_members(set, s);
        let last = named(last);
        let pruned = typed::remove_items(s, merged, &last);
        // addBackOwnedItems
        let owned = managed
            .values()
            .fold(Set::new(), |acc, e| acc.union(&e.set));
        let merged_set = named(&typed::to_field_set_lenient(s, merged));
        let pruned_set = named(&typed::to_field_set_lenient(s, &pruned));
        let pruned = typed::remove_items(
            s,
            merged,
            &merged_set.difference(&pruned_set.union(&named(&owned))),
        );
        // addBackDanglingItems
        let pruned_set = named(&typed::to_field_set_lenient(s, &pruned));
        typed::remove_items(
            s,
            merged,
            &merged_set.difference(&pruned_set).intersection(&last),
        )
    }
}

#[cfg(test)]
mod tests;
