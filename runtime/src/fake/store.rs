//! The object tracker: objects as JSON keyed by (group, plural, namespace, name), the
//! global resourceVersion counter, the bounded watch-event history and the broadcast
//! channel live watches read from. All write semantics (create, update, status update,
//! patch, apply, delete, finalizers) live here; the HTTP layer only routes.

use std::collections::{BTreeMap, VecDeque};
use std::hash::{BuildHasher, RandomState};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use kube::core::Status;
use serde_json::{Map, Value, json};
use tokio::sync::broadcast;

use super::FakeResource;
use super::errors;
use super::managed::{self, ApplyError, Managed, Tracker, schema::Schema};
use super::selector::{FieldSelector, LabelSelector};

/// Where an object lives. Cluster-scoped objects have an empty namespace. The version is
/// not part of the key: all versions of a resource share one storage, like a real
/// apiserver (without conversion).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(crate) struct ObjectKey {
    pub group: String,
    pub plural: String,
    pub namespace: String,
    pub name: String,
}

impl ObjectKey {
    pub(crate) fn new(res: &FakeResource, namespace: Option<&str>, name: &str) -> Self {
        ObjectKey {
            group: res.group.clone(),
            plural: res.plural.clone(),
            namespace: if res.namespaced {
                namespace.unwrap_or_default().to_string()
            } else {
                String::new()
            },
            name: name.to_string(),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum EventType {
    Added,
    Modified,
    Deleted,
}

/// One write, as remembered in the history and broadcast to live watches.
#[derive(Debug)]
pub(crate) struct StoredEvent {
    pub rv: u64,
    pub event_type: EventType,
    pub group: String,
    pub plural: String,
    pub namespace: String,
    /// The object after the write (for a delete: its last state, carrying the delete's
    /// resourceVersion).
    pub object: Value,
    /// For MODIFIED: the object before the write, so selector-filtered watches can turn the
    /// event into ADDED/DELETED when the object starts/stops matching.
    pub previous: Option<Value>,
}

/// Label and field selectors of a list, watch or deletecollection request.
#[derive(Clone, Debug, Default)]
pub(crate) struct Selectors {
    pub labels: LabelSelector,
    pub fields: FieldSelector,
}

impl Selectors {
    pub(crate) fn parse(labels: Option<&str>, fields: Option<&str>) -> Result<Self, Status> {
        Ok(Selectors {
            labels: LabelSelector::parse(labels.unwrap_or_default())
                .map_err(|e| errors::bad_request(&e))?,
            fields: FieldSelector::parse(fields.unwrap_or_default())
                .map_err(|e| errors::bad_request(&e))?,
        })
    }

    pub(crate) fn matches(&self, obj: &Value) -> bool {
        self.labels.matches(obj) && self.fields.matches(obj)
    }
}

/// What a watch delivers: which resource, which namespace, which selectors.
#[derive(Clone, Debug)]
pub(crate) struct WatchFilter {
    pub group: String,
    pub plural: String,
    pub namespace: Option<String>,
    pub selectors: Selectors,
}

impl WatchFilter {
    /// Turns a stored event into what this watch sees, with real-apiserver semantics for
    /// selectors: an object that starts matching is ADDED, one that stops matching is
    /// DELETED (carrying its previous state with the new resourceVersion).
    pub(crate) fn apply(&self, ev: &StoredEvent) -> Option<(&'static str, Value)> {
        if ev.group != self.group || ev.plural != self.plural {
            return None;
        }
        if let Some(ns) = &self.namespace
            && *ns != ev.namespace
        {
            return None;
        }
        let now = self.selectors.matches(&ev.object);
        match ev.event_type {
            EventType::Added => now.then(|| ("ADDED", ev.object.clone())),
            EventType::Deleted => now.then(|| ("DELETED", ev.object.clone())),
            EventType::Modified => {
                let before = ev
                    .previous
                    .as_ref()
                    .is_some_and(|p| self.selectors.matches(p));
                match (before, now) {
                    (true, true) => Some(("MODIFIED", ev.object.clone())),
                    (false, true) => Some(("ADDED", ev.object.clone())),
                    (true, false) => {
                        let mut prev = ev.previous.clone().unwrap_or(Value::Null);
                        set_meta(&mut prev, "resourceVersion", ev.rv.to_string().into());
                        Some(("DELETED", prev))
                    }
                    (false, false) => None,
                }
            }
        }
    }
}

/// The start of a watch, decoded from `resourceVersion` / `sendInitialEvents`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum WatchStart {
    /// Synthetic ADDED events for the current state, then live events.
    /// `bookmark` = end the initial events with a `k8s.io/initial-events-end` bookmark.
    CurrentState { bookmark: bool },
    /// Replay history newer than this resourceVersion, then live events.
    After(u64),
}

/// The first part of a watch: events to send at once, and the live receiver.
pub(crate) struct WatchSetup {
    pub initial: Vec<(&'static str, Value)>,
    /// Send an initial-events-end bookmark at this resourceVersion after `initial`.
    pub bookmark_rv: Option<u64>,
    pub receiver: broadcast::Receiver<Arc<StoredEvent>>,
}

/// Which patch format a PATCH request uses.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum PatchKind {
    Merge,
    Json,
    StrategicMerge,
    Apply,
}

impl PatchKind {
    pub(crate) fn from_content_type(ct: &str) -> Option<Self> {
        match ct.split(';').next().unwrap_or_default().trim() {
            "application/merge-patch+json" => Some(PatchKind::Merge),
            "application/json-patch+json" => Some(PatchKind::Json),
            "application/strategic-merge-patch+json" => Some(PatchKind::StrategicMerge),
            "application/apply-patch+yaml" | "application/apply-patch+json" => {
                Some(PatchKind::Apply)
            }
            _ => None,
        }
    }
}

/// Options of a PATCH request.
#[derive(Clone, Debug, Default)]
pub(crate) struct PatchOptions<'a> {
    pub field_manager: Option<&'a str>,
    /// The request's User-Agent: non-apply writes without `fieldManager` are owned by its
    /// first segment, as the API server does.
    pub user_agent: &'a str,
    /// `force=true` on an apply: take over conflicting fields.
    pub force: bool,
    /// The request is for the `status` subresource.
    pub status_only: bool,
    pub dry_run: bool,
}

/// `DeleteOptions.preconditions`.
#[derive(Clone, Debug, Default)]
pub(crate) struct Preconditions {
    pub uid: Option<String>,
    pub resource_version: Option<String>,
}

/// The object store and event history.
pub(crate) struct Store {
    pub resources: Vec<FakeResource>,
    /// Merge schemas by (group, version, kind), from registered CRDs; built-ins and
    /// other kinds fall back to [`managed::schema::builtin`] or an untyped schema.
    schemas: BTreeMap<(String, String, String), Arc<Schema>>,
    objects: BTreeMap<ObjectKey, Value>,
    rv: u64,
    history: VecDeque<Arc<StoredEvent>>,
    history_limit: usize,
    /// Events with a resourceVersion up to and including this one are gone from the
    /// history; watching from an older resourceVersion answers 410 Expired.
    compacted: u64,
    events: broadcast::Sender<Arc<StoredEvent>>,
    /// Defaulting and validation of API writes, by (group, version, plural): what the
    /// `validation` generator registers (see [`super::Admission`]).
    admission: BTreeMap<(String, String, String), super::Admission>,
    /// Whether [`Store::admission`] runs (`FakeApiServer::set_admission`).
    pub admission_on: bool,
}

/// Capacity of the live-event channel; a watch that falls this far behind gets a 410.
const BROADCAST_CAPACITY: usize = 4096;

impl Store {
    pub(crate) fn new(history_limit: usize) -> Self {
        Store {
            resources: Vec::new(),
            schemas: BTreeMap::new(),
            objects: BTreeMap::new(),
            // The empty store is at resourceVersion 1; the first write is 2. "0" keeps its
            // special meaning ("any version") in list and watch requests.
            rv: 1,
            history: VecDeque::new(),
            history_limit,
            compacted: 1,
            events: broadcast::channel(BROADCAST_CAPACITY).0,
            admission: BTreeMap::new(),
            admission_on: true,
        }
    }

    pub(crate) fn register_admission(
        &mut self,
        group: &str,
        version: &str,
        plural: &str,
        a: super::Admission,
    ) {
        self.admission
            .insert((group.to_owned(), version.to_owned(), plural.to_owned()), a);
    }

    /// Defaults and validates an API write (create, update, patch) of `res` as the API
    /// server would, when a kind's admission is registered and admission is on.
    fn admit(
        &self,
        res: &FakeResource,
        obj: &mut Value,
        old: Option<&Value>,
    ) -> Result<(), Status> {
        if !self.admission_on {
            return Ok(());
        }
        match self
            .admission
            .get(&(res.group.clone(), res.version.clone(), res.plural.clone()))
        {
            Some(a) => a(obj, old),
            None => Ok(()),
        }
    }

    pub(crate) fn resource_version(&self) -> u64 {
        self.rv
    }

    pub(crate) fn set_history_limit(&mut self, limit: usize) {
        self.history_limit = limit;
        self.trim_history();
    }

    /// Forgets the whole event history, like an etcd compaction: watches from any
    /// resourceVersion older than the current one get 410 Expired.
    pub(crate) fn compact(&mut self) {
        self.history.clear();
        self.compacted = self.rv;
    }

    fn trim_history(&mut self) {
        while self.history.len() > self.history_limit {
            if let Some(old) = self.history.pop_front() {
                self.compacted = old.rv;
            }
        }
    }

    /// Sets the merge schema of one version of a kind (from a CRD).
    pub(crate) fn set_schema(&mut self, group: &str, version: &str, kind: &str, schema: Schema) {
        self.schemas.insert(
            (group.to_string(), version.to_string(), kind.to_string()),
            Arc::new(schema),
        );
    }

    /// The merge schema of a resource: a registered CRD's, a built-in's, or untyped.
    fn schema_for(&self, res: &FakeResource) -> Arc<Schema> {
        self.schemas
            .get(&(res.group.clone(), res.version.clone(), res.kind.clone()))
            .cloned()
            .or_else(|| managed::schema::builtin(&res.group, &res.kind).map(Arc::new))
            .unwrap_or_else(|| Arc::new(Schema::untyped_kind()))
    }

    /// Drops what `res`'s schema does not declare (custom resources; see
    /// [`managed::typed::prune_undeclared`]) and fills in its defaults, as the API server
    /// does with a decoded request body.
    fn normalize_write(&self, res: &FakeResource, obj: &mut Value) {
        let schema = self.schema_for(res);
        managed::typed::prune_undeclared(&schema, obj);
        managed::typed::apply_defaults(&schema, obj);
    }

    /// Runs `f` with the field manager of `res`'s main resource or `/status`.
    fn with_tracker<R>(
        &self,
        res: &FakeResource,
        status_only: bool,
        f: impl FnOnce(&Tracker<'_>) -> R,
    ) -> R {
        let schema = self.schema_for(res);
        let tracker = Tracker {
            schema: &schema,
            api_version: res.api_version(),
            subresource: status_only.then(|| "status".to_string()),
            reset: managed::reset_fields(
                &res.group,
                &res.kind,
                res.status_subresource,
                status_only,
            ),
            now: now_rfc3339(),
        };
        f(&tracker)
    }

    pub(crate) fn register(&mut self, res: FakeResource) {
        self.resources.retain(|r| {
            !(r.group == res.group && r.version == res.version && r.plural == res.plural)
        });
        self.resources.push(res);
    }

    pub(crate) fn find_resource(
        &self,
        group: &str,
        version: &str,
        plural: &str,
    ) -> Option<&FakeResource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.plural == plural)
    }

    /// The resource an object belongs to, by its `apiVersion` and `kind`.
    pub(crate) fn find_kind(&self, api_version: &str, kind: &str) -> Option<&FakeResource> {
        let (group, version) = split_api_version(api_version);
        self.resources
            .iter()
            .find(|r| r.group == group && r.version == version && r.kind == kind)
            .or_else(|| {
                self.resources
                    .iter()
                    .find(|r| r.group == group && r.kind == kind)
            })
    }

    /// The resource by group and plural, any version.
    pub(crate) fn find_group_resource(&self, group: &str, plural: &str) -> Option<&FakeResource> {
        self.resources
            .iter()
            .find(|r| r.group == group && r.plural == plural)
    }

    pub(crate) fn get(
        &self,
        res: &FakeResource,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, Status> {
        self.objects
            .get(&ObjectKey::new(res, namespace, name))
            .cloned()
            .ok_or_else(|| errors::not_found(&res.group, &res.plural, name))
    }

    /// Keys of the objects of `res` (in `namespace`, or all namespaces), sorted by
    /// namespace then name, that match `selectors`.
    fn matching_keys(
        &self,
        res: &FakeResource,
        namespace: Option<&str>,
        selectors: &Selectors,
    ) -> Vec<ObjectKey> {
        let start = ObjectKey {
            group: res.group.clone(),
            plural: res.plural.clone(),
            namespace: if res.namespaced {
                namespace.unwrap_or_default().to_string()
            } else {
                String::new()
            },
            name: String::new(),
        };
        self.objects
            .range(start..)
            .take_while(|(k, _)| {
                k.group == res.group
                    && k.plural == res.plural
                    && (!res.namespaced || namespace.is_none_or(|ns| k.namespace == ns))
            })
            .filter(|(_, v)| selectors.matches(v))
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// A page of matching objects. `after` is the (namespace, name) of the last object of
    /// the previous page. Returns the items and, if more remain, the count of the rest.
    pub(crate) fn list(
        &self,
        res: &FakeResource,
        namespace: Option<&str>,
        selectors: &Selectors,
        limit: Option<usize>,
        after: Option<(&str, &str)>,
    ) -> (Vec<Value>, usize) {
        let keys = self.matching_keys(res, namespace, selectors);
        let keys: Vec<_> = match after {
            Some((ns, name)) => keys
                .into_iter()
                .filter(|k| (k.namespace.as_str(), k.name.as_str()) > (ns, name))
                .collect(),
            None => keys,
        };
        let take = limit
            .filter(|l| *l > 0)
            .unwrap_or(usize::MAX)
            .min(keys.len());
        let items = keys[..take]
            .iter()
            .map(|k| self.objects[k].clone())
            .collect();
        (items, keys.len() - take)
    }

    /// All objects of a resource (any version), for direct tracker access.
    pub(crate) fn objects_of(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
    ) -> Vec<Value> {
        self.objects
            .iter()
            .filter(|(k, _)| {
                k.group == group
                    && k.plural == plural
                    && namespace.is_none_or(|ns| k.namespace == ns)
            })
            .map(|(_, v)| v.clone())
            .collect()
    }

    pub(crate) fn object(&self, key: &ObjectKey) -> Option<&Value> {
        self.objects.get(key)
    }

    // ----- writes -----

    fn emit(
        &mut self,
        event_type: EventType,
        key: &ObjectKey,
        object: Value,
        previous: Option<Value>,
    ) {
        let ev = Arc::new(StoredEvent {
            rv: self.rv,
            event_type,
            group: key.group.clone(),
            plural: key.plural.clone(),
            namespace: key.namespace.clone(),
            object,
            previous,
        });
        self.history.push_back(ev.clone());
        self.trim_history();
        // No receivers is fine.
        let _ = self.events.send(ev);
    }

    /// Stores `obj` under `key` with a fresh resourceVersion and emits the event.
    fn put(
        &mut self,
        key: ObjectKey,
        mut obj: Value,
        event_type: EventType,
        previous: Option<Value>,
    ) -> Value {
        self.rv += 1;
        set_meta(&mut obj, "resourceVersion", self.rv.to_string().into());
        self.objects.insert(key.clone(), obj.clone());
        self.emit(event_type, &key, obj.clone(), previous);
        obj
    }

    /// Removes the object with a fresh resourceVersion and emits DELETED.
    pub(crate) fn remove(&mut self, key: &ObjectKey) -> Option<Value> {
        let mut obj = self.objects.remove(key)?;
        self.rv += 1;
        set_meta(&mut obj, "resourceVersion", self.rv.to_string().into());
        self.emit(EventType::Deleted, key, obj.clone(), None);
        Some(obj)
    }

    /// POST: create. `drop_status` clears `status` for kinds with a status subresource
    /// (what the apiserver does); direct tracker adds keep it.
    ///
    /// `manager`: the field manager of an API create, which owns every field it sets (an
    /// `Update` managedFields entry); `None` for tracker adds and apply-creates.
    pub(crate) fn create(
        &mut self,
        res: &FakeResource,
        namespace: Option<&str>,
        obj: Value,
        drop_status: bool,
        dry_run: bool,
        manager: Option<&str>,
    ) -> Result<Value, Status> {
        let mut map = into_object(obj)?;
        let meta = metadata_mut(&mut map)?;
        resolve_namespace(res, namespace, meta)?;
        if meta
            .get("resourceVersion")
            .and_then(Value::as_str)
            .is_some_and(|rv| !rv.is_empty())
        {
            return Err(errors::internal_error(
                "resourceVersion should not be set on objects to be created",
            ));
        }
        let name = meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let generate = meta
            .get("generateName")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let name = if !name.is_empty() {
            name
        } else if !generate.is_empty() {
            // Like the apiserver (RetryGenerateName), try a few suffixes before giving up.
            let mut candidate = format!("{generate}{}", random_suffix());
            for _ in 0..8 {
                if !self
                    .objects
                    .contains_key(&ObjectKey::new(res, namespace, &candidate))
                {
                    break;
                }
                candidate = format!("{generate}{}", random_suffix());
            }
            candidate
        } else {
            return Err(errors::invalid(
                &res.group,
                &res.kind,
                "",
                &[(
                    "metadata.name",
                    "Required value: name or generateName is required",
                )],
            ));
        };
        if name.contains('/') || name == "." || name == ".." {
            return Err(errors::invalid(
                &res.group,
                &res.kind,
                &name,
                &[("metadata.name", "Invalid value: may not contain '/'")],
            ));
        }
        meta.insert("name".into(), name.clone().into());
        meta.insert("uid".into(), new_uid().into());
        meta.insert("creationTimestamp".into(), now_rfc3339().into());
        if has_generation(res) {
            meta.insert("generation".into(), 1.into());
        } else {
            meta.remove("generation");
        }
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        if drop_status && res.status_subresource {
            map.remove("status");
        }
        set_type_meta(&mut map, res);
        let key = ObjectKey::new(res, namespace, &name);
        if self.objects.contains_key(&key) {
            return Err(errors::already_exists(&res.group, &res.plural, &name));
        }
        let mut obj = Value::Object(map);
        if let Some(manager) = manager {
            self.normalize_write(res, &mut obj);
            self.admit(res, &mut obj, None)?;
            let start = live_or_new_managed(&json!({}), &obj, false);
            let managed = self.with_tracker(res, false, |t| {
                t.update(&json!({}), &obj, start, manager, true)
            });
            set_managed_fields(&mut obj, &managed);
        }
        if dry_run {
            return Ok(obj);
        }
        Ok(self.put(key, obj, EventType::Added, None))
    }

    /// Direct tracker add (no HTTP): create, or replace if it exists. Keeps `status`;
    /// fills uid/creationTimestamp/generation when missing; ignores any resourceVersion.
    pub(crate) fn upsert(&mut self, res: &FakeResource, obj: Value) -> Result<Value, Status> {
        let mut map = into_object(obj)?;
        let meta = metadata_mut(&mut map)?;
        let namespace = if res.namespaced {
            let ns = meta
                .get("namespace")
                .and_then(Value::as_str)
                .unwrap_or("default")
                .to_string();
            meta.insert("namespace".into(), ns.clone().into());
            Some(ns)
        } else {
            meta.remove("namespace");
            None
        };
        meta.remove("resourceVersion");
        let name = meta
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if name.is_empty() {
            return self.create(
                res,
                namespace.as_deref(),
                Value::Object(map),
                false,
                false,
                None,
            );
        }
        let key = ObjectKey::new(res, namespace.as_deref(), &name);
        let previous = self.objects.get(&key).cloned();
        let meta = metadata_mut(&mut map)?;
        let prev_meta = previous.as_ref().and_then(|p| p.get("metadata"));
        for (field, default) in [
            ("uid", Value::from(new_uid())),
            ("creationTimestamp", now_rfc3339().into()),
            ("generation", 1.into()),
        ] {
            if field == "generation" && !has_generation(res) {
                continue;
            }
            if !meta.contains_key(field) {
                let v = prev_meta
                    .and_then(|m| m.get(field))
                    .cloned()
                    .unwrap_or(default);
                meta.insert(field.into(), v);
            }
        }
        set_type_meta(&mut map, res);
        let event = if previous.is_some() {
            EventType::Modified
        } else {
            EventType::Added
        };
        Ok(self.put(key, Value::Object(map), event, previous))
    }

    /// PUT (main resource or `/status`).
    #[allow(clippy::too_many_arguments)] // the parts of one PUT request
    pub(crate) fn update(
        &mut self,
        res: &FakeResource,
        namespace: Option<&str>,
        name: &str,
        obj: Value,
        status_only: bool,
        dry_run: bool,
        manager: &str,
    ) -> Result<Value, Status> {
        let mut map = into_object(obj)?;
        let meta = metadata_mut(&mut map)?;
        match meta.get("name").and_then(Value::as_str) {
            Some(body_name) if !body_name.is_empty() && body_name != name => {
                return Err(errors::bad_request(&format!(
                    "the name of the object ({body_name}) does not match the name on the URL ({name})"
                )));
            }
            _ => {
                meta.insert("name".into(), name.into());
            }
        }
        resolve_namespace(res, namespace, meta)?;
        let body_rv = meta
            .get("resourceVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let key = ObjectKey::new(res, namespace, name);
        let old = self.get(res, namespace, name)?;
        if !body_rv.is_empty() && body_rv != meta_str(&old, "resourceVersion").unwrap_or_default() {
            return Err(errors::stale_conflict(&res.group, &res.plural, name));
        }
        let start = live_or_new_managed(&old, &Value::Object(map.clone()), status_only);
        let mut new = prepare_update(res, &old, map, status_only)?;
        self.normalize_write(res, &mut new);
        self.admit(res, &mut new, Some(&old))?;
        self.track_update(res, &old, &mut new, start, status_only, manager);
        self.finish_update(key, old, new, dry_run)
    }

    /// Records a non-apply write's field ownership on `new`.
    fn track_update(
        &self,
        res: &FakeResource,
        old: &Value,
        new: &mut Value,
        start: Managed,
        status_only: bool,
        manager: &str,
    ) {
        let managed = self.with_tracker(res, status_only, |t| {
            t.update(old, new, start, manager, false)
        });
        set_managed_fields(new, &managed);
    }

    /// PATCH (main resource or `/status`). Returns the object and whether it was created
    /// (server-side apply of a missing object).
    pub(crate) fn patch(
        &mut self,
        res: &FakeResource,
        namespace: Option<&str>,
        name: &str,
        kind: PatchKind,
        patch: &Value,
        opts: &PatchOptions<'_>,
    ) -> Result<(Value, bool), Status> {
        if kind == PatchKind::Apply {
            return self.apply(res, namespace, name, patch, opts);
        }
        let status_only = opts.status_only;
        let key = ObjectKey::new(res, namespace, name);
        let Some(old) = self.objects.get(&key).cloned() else {
            return Err(errors::not_found(&res.group, &res.plural, name));
        };
        let mut patched = old.clone();
        match kind {
            PatchKind::Merge | PatchKind::StrategicMerge | PatchKind::Apply => {
                if !patch.is_object() {
                    return Err(errors::bad_request("the patch body must be a JSON object"));
                }
                json_patch::merge(&mut patched, patch);
            }
            PatchKind::Json => {
                let ops: json_patch::Patch = serde_json::from_value(patch.clone())
                    .map_err(|e| errors::bad_request(&format!("invalid JSON patch: {e}")))?;
                json_patch::patch(&mut patched, &ops).map_err(|e| {
                    Status::failure(
                        &format!(
                            "the server rejected our request due to an error in our request: {e}"
                        ),
                        "Invalid",
                    )
                    .with_code(422)
                })?;
            }
        }
        let old_rv = meta_str(&old, "resourceVersion")
            .unwrap_or_default()
            .to_string();
        if meta_str(&patched, "resourceVersion").is_some_and(|rv| !rv.is_empty() && rv != old_rv) {
            return Err(errors::stale_conflict(&res.group, &res.plural, name));
        }
        let start = live_or_new_managed(&old, &patched, status_only);
        let map = into_object(patched)?;
        let mut new = prepare_update(res, &old, map, status_only)?;
        self.normalize_write(res, &mut new);
        self.admit(res, &mut new, Some(&old))?;
        let manager = update_manager(opts);
        self.track_update(res, &old, &mut new, start, status_only, &manager);
        Ok((self.finish_update(key, old, new, opts.dry_run)?, false))
    }

    /// Server-side apply (`application/apply-patch+yaml`), with field ownership: see
    /// [`managed`].
    fn apply(
        &mut self,
        res: &FakeResource,
        namespace: Option<&str>,
        name: &str,
        patch: &Value,
        opts: &PatchOptions<'_>,
    ) -> Result<(Value, bool), Status> {
        let status_only = opts.status_only;
        let manager = opts.field_manager.unwrap_or_default();
        if manager.is_empty() {
            return Err(errors::invalid(
                "meta.k8s.io",
                "PatchOptions",
                "",
                &[(
                    "fieldManager",
                    "Required value: is required for apply patch",
                )],
            ));
        }
        if !patch.is_object() {
            return Err(errors::bad_request(
                "the apply patch body must be an object",
            ));
        }
        let api_version = patch
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let patch_kind = patch
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default();
        if api_version.is_empty() || patch_kind.is_empty() {
            return Err(errors::bad_request(
                "invalid object type: apiVersion and kind must be set in an apply patch",
            ));
        }
        if api_version != res.api_version() || patch_kind != res.kind {
            // The API server's version check: `GroupVersionKind.String()`.
            let (g, v) = split_api_version(api_version);
            return Err(errors::bad_request(&format!(
                "invalid object type: {g}/{v}, Kind={patch_kind}"
            )));
        }
        if patch
            .pointer("/metadata/managedFields")
            .is_some_and(|m| !m.is_null())
        {
            return Err(errors::bad_request("metadata.managedFields must be nil"));
        }
        if let Some(body_name) = patch.pointer("/metadata/name").and_then(Value::as_str)
            && body_name != name
        {
            return Err(errors::bad_request(&format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        let key = ObjectKey::new(res, namespace, name);
        let existing = self.objects.get(&key).cloned();
        if existing.is_none() && status_only {
            return Err(errors::not_found(&res.group, &res.plural, name));
        }
        // Apply creates a missing object from an empty one of its kind.
        let live = existing
            .clone()
            .unwrap_or_else(|| json!({"apiVersion": res.api_version(), "kind": res.kind}));
        // A plain error in the API server: 500 without reason or details.
        let start = managed::decode(&live).map_err(|e| {
            Status::failure(&format!("failed to decode managed fields: {e}"), "").with_code(500)
        })?;
        let (new, managed) = self
            .with_tracker(res, status_only, |t| {
                t.apply(&live, patch, start, manager, opts.force)
            })
            .map_err(|e| match e {
                ApplyError::Conflicts(c) => managed::conflict_status(&c),
                // A plain error in the API server, hence a 500 without reason or details;
                // the namespace is the apply body's.
                ApplyError::InvalidLive(msg) => {
                    Status::failure(&format!("failed to create typed live object: {msg}"), "")
                        .with_code(500)
                }
                ApplyError::Invalid(msg) => Status::failure(
                    &format!(
                        "failed to create typed patch object ({}/{}; {}/{}, Kind={}): {msg}",
                        patch
                            .pointer("/metadata/namespace")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                        patch
                            .pointer("/metadata/name")
                            .and_then(Value::as_str)
                            .unwrap_or_default(),
                        res.group,
                        res.version,
                        res.kind
                    ),
                    "",
                )
                .with_code(500),
            })?;
        // The server defaults the merged object after ownership is settled, so defaults
        // are nobody's.
        let mut obj = match new {
            Some(mut new) => {
                managed::typed::apply_defaults(&self.schema_for(res), &mut new);
                new
            }
            None => live.clone(),
        };
        let Some(old) = existing else {
            set_meta(&mut obj, "name", name.into());
            if let Some(Value::Object(meta)) = obj.get_mut("metadata") {
                meta.remove("resourceVersion");
            }
            set_managed_fields(&mut obj, &managed);
            // Admission sees what `create` stores: no status under a status subresource.
            if res.status_subresource
                && let Some(m) = obj.as_object_mut()
            {
                m.remove("status");
            }
            self.admit(res, &mut obj, None)?;
            let created = self.create(res, namespace, obj, true, opts.dry_run, None)?;
            return Ok((created, true));
        };
        let map = into_object(obj)?;
        let mut new = prepare_update(res, &old, map, status_only)?;
        self.admit(res, &mut new, Some(&old))?;
        set_managed_fields(&mut new, &managed);
        Ok((self.finish_update(key, old, new, opts.dry_run)?, false))
    }

    /// Commits an update: no-op updates keep the resourceVersion and emit nothing; an update
    /// that removes the last finalizer of an object being deleted deletes it.
    fn finish_update(
        &mut self,
        key: ObjectKey,
        old: Value,
        mut new: Value,
        dry_run: bool,
    ) -> Result<Value, Status> {
        let old_rv = meta_str(&old, "resourceVersion")
            .unwrap_or_default()
            .to_string();
        set_meta(&mut new, "resourceVersion", old_rv.into());
        let finish_delete = new
            .pointer("/metadata/deletionTimestamp")
            .is_some_and(|v| !v.is_null())
            && finalizers(&new).is_empty();
        if !finish_delete && new == old {
            return Ok(old);
        }
        if dry_run {
            return Ok(new);
        }
        if finish_delete {
            self.objects.insert(key.clone(), new);
            return Ok(self.remove(&key).expect("just inserted"));
        }
        Ok(self.put(key, new, EventType::Modified, Some(old)))
    }

    /// DELETE of one object: immediate unless it has finalizers, in which case it gets a
    /// deletionTimestamp and stays until an update removes the last finalizer.
    pub(crate) fn delete(
        &mut self,
        res: &FakeResource,
        namespace: Option<&str>,
        name: &str,
        pre: &Preconditions,
        dry_run: bool,
    ) -> Result<Value, Status> {
        let key = ObjectKey::new(res, namespace, name);
        let old = self.get(res, namespace, name)?;
        let conflict = |what: &str, want: &str, have: &str| {
            errors::conflict(
                &res.group,
                &res.plural,
                name,
                &format!(
                    "Precondition failed: {what} in precondition: {want}, {what} in object meta: {have}"
                ),
            )
        };
        if let Some(uid) = pre.uid.as_deref() {
            let have = meta_str(&old, "uid").unwrap_or_default();
            if uid != have {
                return Err(conflict("UID", uid, have));
            }
        }
        if let Some(rv) = pre.resource_version.as_deref() {
            let have = meta_str(&old, "resourceVersion").unwrap_or_default();
            if rv != have {
                return Err(conflict("ResourceVersion", rv, have));
            }
        }
        if !finalizers(&old).is_empty() {
            if old
                .pointer("/metadata/deletionTimestamp")
                .is_some_and(|v| !v.is_null())
            {
                return Ok(old);
            }
            let mut new = old.clone();
            set_meta(&mut new, "deletionTimestamp", now_rfc3339().into());
            set_meta(&mut new, "deletionGracePeriodSeconds", 0.into());
            if dry_run {
                return Ok(new);
            }
            return Ok(self.put(key, new, EventType::Modified, Some(old)));
        }
        if dry_run {
            return Ok(old);
        }
        Ok(self.remove(&key).expect("exists"))
    }

    /// DELETE on a collection: deletes (or marks, for objects with finalizers) every match.
    pub(crate) fn delete_collection(
        &mut self,
        res: &FakeResource,
        namespace: Option<&str>,
        selectors: &Selectors,
        dry_run: bool,
    ) -> Result<Vec<Value>, Status> {
        let keys = self.matching_keys(res, namespace, selectors);
        let mut out = Vec::with_capacity(keys.len());
        for k in keys {
            let ns = (!k.namespace.is_empty()).then_some(k.namespace.as_str());
            out.push(self.delete(res, ns, &k.name, &Preconditions::default(), dry_run)?);
        }
        Ok(out)
    }

    /// Sets up a watch. Errors are returned for the caller to send as an ERROR event.
    pub(crate) fn watch(
        &self,
        res: &FakeResource,
        filter: &WatchFilter,
        start: WatchStart,
    ) -> Result<WatchSetup, Status> {
        let receiver = self.events.subscribe();
        match start {
            WatchStart::CurrentState { bookmark } => {
                let keys = self.matching_keys(res, filter.namespace.as_deref(), &filter.selectors);
                let initial = keys
                    .iter()
                    .map(|k| ("ADDED", self.objects[k].clone()))
                    .collect();
                Ok(WatchSetup {
                    initial,
                    bookmark_rv: bookmark.then_some(self.rv),
                    receiver,
                })
            }
            WatchStart::After(rv) => {
                if rv < self.compacted {
                    return Err(errors::expired(&format!(
                        "too old resource version: {rv} ({})",
                        self.compacted + 1
                    )));
                }
                let initial = self
                    .history
                    .iter()
                    .filter(|e| e.rv > rv)
                    .filter_map(|e| filter.apply(e))
                    .collect();
                Ok(WatchSetup {
                    initial,
                    bookmark_rv: None,
                    receiver,
                })
            }
        }
    }
}

// ----- update preparation -----

/// Builds the object an update stores, from the stored `old` and the request's `new`:
/// system metadata is kept, status is kept (main resource with a status subresource) or is
/// the only thing taken (`/status`), and the generation is bumped on non-metadata,
/// non-status changes.
fn prepare_update(
    res: &FakeResource,
    old: &Value,
    mut new: Map<String, Value>,
    status_only: bool,
) -> Result<Value, Status> {
    if status_only && res.group == "apps" && res.kind == "Deployment" {
        // The Deployment status strategy resets only spec and labels: other metadata
        // changes made through /status stick (the CRD status strategy keeps only status).
        let status = new.remove("status");
        match old.get("spec") {
            Some(spec) => new.insert("spec".into(), spec.clone()),
            None => new.remove("spec"),
        };
        let old_labels = old.pointer("/metadata/labels").cloned();
        let meta = metadata_mut(&mut new)?;
        match old_labels {
            Some(l) => meta.insert("labels".into(), l),
            None => meta.remove("labels"),
        };
        let mut out = prepare_update(res, old, new, false)?;
        if let Value::Object(map) = &mut out {
            match status {
                Some(s) => map.insert("status".into(), s),
                None => map.remove("status"),
            };
        }
        return Ok(out);
    }
    if status_only {
        let mut out = old.clone();
        if let Value::Object(map) = &mut out {
            match new.remove("status") {
                Some(s) => {
                    map.insert("status".into(), s);
                }
                None => {
                    map.remove("status");
                }
            }
        }
        return Ok(out);
    }
    let old_meta = old
        .get("metadata")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let meta = metadata_mut(&mut new)?;
    for field in [
        "name",
        "namespace",
        "uid",
        "creationTimestamp",
        "deletionTimestamp",
        "deletionGracePeriodSeconds",
        "generation",
    ] {
        match old_meta.get(field) {
            Some(v) => meta.insert(field.into(), v.clone()),
            None => meta.remove(field),
        };
    }
    if old_meta
        .get("deletionTimestamp")
        .is_some_and(|v| !v.is_null())
    {
        let before: Vec<&str> = old_meta
            .get("finalizers")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        let added: Vec<String> = meta
            .get("finalizers")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .filter(|f| !before.contains(f))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        if !added.is_empty() {
            let msg = format!(
                "Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers {added:?}"
            );
            return Err(errors::invalid(
                &res.group,
                &res.kind,
                meta_str(old, "name").unwrap_or_default(),
                &[("metadata.finalizers", &msg)],
            ));
        }
    }
    if res.status_subresource {
        match old.get("status") {
            Some(s) => {
                new.insert("status".into(), s.clone());
            }
            None => {
                new.remove("status");
            }
        }
    }
    for field in ["apiVersion", "kind"] {
        if let Some(v) = old.get(field) {
            new.insert(field.into(), v.clone());
        }
    }
    let spec_changed = {
        let strip = |v: &Map<String, Value>| {
            v.iter()
                .filter(|(k, _)| {
                    !matches!(k.as_str(), "metadata" | "status" | "apiVersion" | "kind")
                })
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect::<Map<String, Value>>()
        };
        strip(&new) != strip(old.as_object().unwrap_or(&Map::new()))
    };
    if spec_changed && has_generation(res) {
        let generation = old_meta
            .get("generation")
            .and_then(Value::as_i64)
            .unwrap_or(0)
            + 1;
        metadata_mut(&mut new)?.insert("generation".into(), generation.into());
    }
    Ok(Value::Object(new))
}

/// Whether the API server keeps `metadata.generation` for the kind: not for the built-ins
/// without a spec (their strategies never set it), for everything else the fake serves.
fn has_generation(res: &FakeResource) -> bool {
    !matches!(
        (res.group.as_str(), res.kind.as_str()),
        (
            "",
            "ConfigMap" | "Secret" | "ServiceAccount" | "Event" | "Endpoints"
        ) | ("events.k8s.io", "Event")
            | ("coordination.k8s.io", "Lease")
    )
}

// ----- managed fields -----

/// The managers an update starts from (`decodeLiveOrNew`): the request object's
/// managedFields when it carries valid, non-empty ones (an empty list resets them), else the
/// live object's; `/status` writes always use the live object's.
fn live_or_new_managed(live: &Value, new: &Value, status_only: bool) -> Managed {
    let from_live = || managed::decode(live).unwrap_or_default();
    if status_only {
        return from_live();
    }
    match new.pointer("/metadata/managedFields") {
        Some(Value::Array(a)) if a.is_empty() => Managed::new(),
        Some(Value::Array(a)) if a.len() == 1 && a[0] == json!({}) => Managed::new(),
        Some(Value::Array(_)) => match managed::decode(new) {
            Ok(m) if !m.is_empty() => m,
            _ => from_live(),
        },
        _ => from_live(),
    }
}

/// Writes (or, when nobody owns anything, removes) `metadata.managedFields`.
fn set_managed_fields(obj: &mut Value, managed: &Managed) {
    let Some(Value::Object(meta)) = obj.get_mut("metadata") else {
        return;
    };
    match managed::encode(managed) {
        Some(list) => {
            meta.insert("managedFields".into(), list);
        }
        None => {
            meta.remove("managedFields");
        }
    }
}

/// The manager of a non-apply write: `fieldManager`, else from the User-Agent.
pub(crate) fn update_manager(opts: &PatchOptions<'_>) -> String {
    match opts.field_manager.filter(|m| !m.is_empty()) {
        Some(m) => m.to_string(),
        None => managed::manager_from_user_agent(opts.user_agent),
    }
}

// ----- helpers -----

pub(crate) fn split_api_version(api_version: &str) -> (&str, &str) {
    match api_version.split_once('/') {
        Some((g, v)) => (g, v),
        None => ("", api_version),
    }
}

fn into_object(obj: Value) -> Result<Map<String, Value>, Status> {
    match obj {
        Value::Object(m) => Ok(m),
        _ => Err(errors::bad_request(
            "the body of the request must be a JSON object",
        )),
    }
}

fn metadata_mut(map: &mut Map<String, Value>) -> Result<&mut Map<String, Value>, Status> {
    let meta = map.entry("metadata").or_insert_with(|| json!({}));
    if meta.is_null() {
        *meta = json!({});
    }
    meta.as_object_mut()
        .ok_or_else(|| errors::bad_request("metadata must be a JSON object"))
}

/// Namespace from the URL wins; a different one in the body is a 400 like the apiserver's.
fn resolve_namespace(
    res: &FakeResource,
    namespace: Option<&str>,
    meta: &mut Map<String, Value>,
) -> Result<(), Status> {
    if res.namespaced {
        let url_ns = namespace.unwrap_or_default();
        if let Some(body_ns) = meta.get("namespace").and_then(Value::as_str)
            && !body_ns.is_empty()
            && body_ns != url_ns
        {
            return Err(errors::bad_request(
                "the namespace of the provided object does not match the namespace sent on the request",
            ));
        }
        meta.insert("namespace".into(), url_ns.into());
    } else {
        meta.remove("namespace");
    }
    Ok(())
}

fn set_type_meta(map: &mut Map<String, Value>, res: &FakeResource) {
    map.insert("apiVersion".into(), res.api_version().into());
    map.insert("kind".into(), res.kind.clone().into());
}

pub(crate) fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")?.get(field)?.as_str()
}

pub(crate) fn set_meta(obj: &mut Value, field: &str, value: Value) {
    if let Value::Object(map) = obj {
        let meta = map.entry("metadata").or_insert_with(|| json!({}));
        if let Value::Object(meta) = meta {
            meta.insert(field.into(), value);
        }
    }
}

fn finalizers(obj: &Value) -> Vec<&str> {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn random_u64() -> u64 {
    static COUNTER: AtomicU64 = AtomicU64::new(0);
    RandomState::new().hash_one(COUNTER.fetch_add(1, Ordering::Relaxed))
}

/// Five characters from the apiserver's generateName alphabet (no vowels, no ambiguous digits).
fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    let mut n = random_u64();
    (0..5)
        .map(|_| {
            let c = ALPHABET[(n % ALPHABET.len() as u64) as usize] as char;
            n /= ALPHABET.len() as u64;
            c
        })
        .collect()
}

/// A random version-4-style UUID.
fn new_uid() -> String {
    let (a, b) = (random_u64(), random_u64());
    format!(
        "{:08x}-{:04x}-4{:03x}-{:04x}-{:012x}",
        a >> 32,
        (a >> 16) & 0xffff,
        a & 0x0fff,
        ((b >> 48) & 0x3fff) | 0x8000,
        b & 0xffff_ffff_ffff
    )
}

/// Now, RFC 3339 at second precision like `metav1.Time`.
pub(crate) fn now_rfc3339() -> String {
    let now = k8s_openapi::jiff::Timestamp::now();
    k8s_openapi::jiff::Timestamp::from_second(now.as_second())
        .unwrap_or(now)
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uid_and_suffix_shapes() {
        let u = new_uid();
        assert_eq!(u.len(), 36, "{u}");
        assert_eq!(u.matches('-').count(), 4);
        assert_ne!(new_uid(), new_uid());
        let s = random_suffix();
        assert_eq!(s.len(), 5);
        assert!(s.chars().all(|c| "bcdfghjklmnpqrstvwxz2456789".contains(c)));
        assert!(now_rfc3339().ends_with('Z'));
    }
}
