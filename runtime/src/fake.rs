//! An in-memory Kubernetes API server behind a real [`kube::Client`], for controller unit
//! tests: the "fake clientset".
//!
//! client-go's fake clientset replaces the client; this module replaces the *server*. A
//! [`FakeApiServer`] is a [`tower::Service`] that answers the HTTP requests `kube` sends, so
//! [`kube::Api<K>`] for any `K` (k8s-openapi types, [`DynamicObject`](kube::api::DynamicObject),
//! `#[derive(CustomResource)]` types, the clients kube-codegen generates) and kube-runtime's
//! `watcher`/`reflector`/`Controller` run their real code paths against it: URL building,
//! query parameters, (de)serialization, error decoding, list-then-watch, 410 relists.
//!
//! ```
//! # #[tokio::main(flavor = "current_thread")] async fn main() -> Result<(), kube::Error> {
//! use kube::api::{Api, DynamicObject, PostParams};
//! use kube_codegen_runtime::fake::{FakeApiServer, FakeResource, Verb};
//!
//! let server = FakeApiServer::new();
//! server.register(
//!     FakeResource::namespaced("samplecontroller.k8s.io", "v1alpha1", "Foo", "foos").with_status_subresource(),
//! );
//! let client = server.client(); // needs a Tokio runtime
//! let ar = kube::api::ApiResource::from_gvk_with_plural(
//!     &kube::api::GroupVersionKind::gvk("samplecontroller.k8s.io", "v1alpha1", "Foo"),
//!     "foos",
//! );
//! let foos: Api<DynamicObject> = Api::namespaced_with(client, "default", &ar);
//! let mut foo = DynamicObject::new("example", &ar);
//! foo.data = serde_json::json!({"spec": {"replicas": 1}});
//! foos.create(&PostParams::default(), &foo).await?;
//! assert_eq!(server.actions()[0].verb, Verb::Create);
//! assert!(server.get_object("samplecontroller.k8s.io", "foos", Some("default"), "example").is_some());
//! # Ok(()) }
//! ```
//!
//! # What is emulated
//!
//! - **Resources**: a registry of [`FakeResource`]s (group, version, kind, plural, scope,
//!   status subresource). [`FakeApiServer::new`] pre-registers common built-ins
//!   ([`FakeResource::builtins`]); anything else is registered with
//!   [`FakeApiServer::register`] or [`FakeApiServer::register_crd`]. Requests for
//!   unregistered resources (or subresources other than `status`) answer 404
//!   `the server could not find the requested resource`. Versions of one group/plural share
//!   storage; objects are served with the requested version's `apiVersion` (no conversion).
//! - **Storage**: JSON objects keyed by (group, plural, namespace, name) in a `BTreeMap`, so
//!   lists are ordered by namespace then name. One global resourceVersion counter (a decimal
//!   string) is bumped by every write. Creates set `metadata.uid`, `creationTimestamp`
//!   (RFC 3339), `generation: 1` and the namespace from the URL; updates keep those and bump
//!   `generation` when anything outside `metadata` and `status` changes. An update or patch
//!   that changes nothing is a no-op: same resourceVersion, no watch event (as in the
//!   apiserver).
//! - **get / list / watch** with `labelSelector` (`a=b`, `a==b`, `a!=b`, `a in (x,y)`,
//!   `a notin (x)`, `a`, `!a`) and `fieldSelector` (`=`, `==`, `!=` on `metadata.name`,
//!   `metadata.namespace` or any dotted JSON path, e.g. `spec.color=Red`), across all
//!   namespaces or in one, `limit`/`continue` pagination, and metadata-only requests
//!   (`Api::get_metadata`, `list_metadata`, `watch_metadata`, `metadata_watcher`).
//! - **Watches** stream `ADDED`/`MODIFIED`/`DELETED` events as newline-delimited JSON:
//!   `resourceVersion` unset or `"0"` starts with synthetic `ADDED` events for the current
//!   state; a resourceVersion replays newer events from a bounded history (default 1000
//!   events, [`FakeApiServer::set_event_history_limit`], [`FakeApiServer::compact`]) or, if
//!   it is older than the history, sends one `ERROR` event with a 410 `Expired` Status
//!   (kube-runtime's watcher relists on it). `sendInitialEvents=true` (streaming lists)
//!   ends the initial events with the `k8s.io/initial-events-end` bookmark. Selector
//!   transitions are reported like the apiserver does: an object that starts matching is
//!   `ADDED`, one that stops matching is `DELETED`. `timeoutSeconds` ends the stream.
//! - **create**: `generateName` (5 random characters), 409 `AlreadyExists`, 422 `Invalid`
//!   without name or generateName, 500 when `resourceVersion` is set (as the apiserver),
//!   `status` dropped for kinds with a status subresource.
//! - **update** (PUT): 404 if missing, 409 `Conflict` on a stale `metadata.resourceVersion`
//!   (an empty one is an unconditional update), stored `status` kept for kinds with a status
//!   subresource; `PUT .../status` changes only `status`.
//! - **patch**: `application/merge-patch+json` (RFC 7386), `application/json-patch+json`
//!   (RFC 6902), `application/strategic-merge-patch+json` (**applied as a JSON merge
//!   patch**: no patch-merge keys, so lists are replaced, not merged, and `$patch`
//!   directives are not understood) and `application/apply-patch+yaml` (see below). A
//!   `metadata.resourceVersion` in the patched result that differs from the stored one is a
//!   409 Conflict. Patches to `/status` change only `status`; patches to the main resource
//!   of a kind with a status subresource leave `status` alone.
//! - **Server-side apply** with field ownership, as the API server's structured-merge-diff
//!   does it: the body must be JSON (which `kube` sends) with the resource's `apiVersion`
//!   and `kind` (400 `invalid object type` otherwise), `fieldManager` is required (422),
//!   `metadata.managedFields` must be unset (400). A missing object is created. Each
//!   manager's fields are kept in `metadata.managedFields` (`Apply` entries per manager and
//!   subresource, `Update` entries per manager and apiVersion, `fieldsV1` and entry order
//!   as the server writes them). An apply owns exactly what it sends; what it owned and no
//!   longer sends is removed unless someone else owns it; changing a field another manager
//!   owns is a 409 Conflict listing the managers and fields (`FieldManagerConflict`
//!   causes) unless `force=true`, which takes the fields over; applying the same value as
//!   another manager shares ownership. Creates, updates and non-apply patches give the
//!   fields they change to the writer's `Update` entry (`fieldManager`, else the
//!   User-Agent's first segment). `status` is not owned through the main resource of a kind
//!   with a status subresource, `spec` not through `/status`. Lists and maps merge as the
//!   schema says (`x-kubernetes-list-type` map/set/atomic, `x-kubernetes-map-type`): a
//!   CRD's from [`FakeApiServer::register_crd`], hand-written ones for ObjectMeta,
//!   ConfigMap, Secret and Deployment; without a schema, objects are structs and lists
//!   atomic (a CRD's defaults).
//!   More than ten `Update` entries fold into `ancient-changes`, as in the server. Fields
//!   a registered CRD's schema does not declare are pruned from creates, updates and
//!   patches, and make an apply fail (500, as the server answers); its `default`s are
//!   filled in. **Not emulated**: defaulting of built-in kinds (beyond container ports'
//!   protocol), version conversion and `last-applied-configuration` handling.
//! - **delete**: returns the object (200). With `metadata.finalizers` the object instead
//!   gets `deletionTimestamp` and stays (202 Accepted) until an update removes the last
//!   finalizer, which then deletes it (one `DELETED` event). New finalizers can't be added
//!   to an object being deleted (422). `preconditions` (uid, resourceVersion) are checked.
//!   **deletecollection** deletes every match and returns a list of the deleted objects.
//! - `dryRun=All` on writes validates and answers without storing.
//! - Errors are real `metav1.Status` bodies (see [`errors`]), so `kube` returns
//!   `kube::Error::Api(status)` with the apiserver's `reason`, `code` and message.
//! - **Discovery**: `/version`, `/api`, `/apis`, `/api/v1`, `/apis/{group}[/{version}]` and
//!   aggregated discovery, from the registered resources (so `kube::discovery` works).
//! - An **action log** ([`FakeApiServer::actions`]) and **reactors**
//!   ([`FakeApiServer::prepend_reactor`]) like client-go's fake clientset, and direct
//!   tracker access ([`FakeApiServer::add`], [`FakeApiServer::get`],
//!   [`FakeApiServer::get_object`], [`FakeApiServer::objects`], ...) that bypasses HTTP
//!   and the action log.
//!
//! # What is not emulated
//!
//! No controllers and no garbage collection: deleting an owner leaves its dependents,
//! `propagationPolicy` and `gracePeriodSeconds` are ignored (pods are deleted at once, no
//! kubelet), nothing fills in `status` (a Deployment never gets ready replicas), no
//! defaulting, no schema validation, no admission (webhooks, quotas, CEL rules), no
//! authentication/RBAC, no `scale`, `eviction`, `log`, `exec` or other subresources (a
//! reactor can answer those), YAML request bodies, protobuf, `resourceVersionMatch=Exact`
//! lists of old versions (lists are always served at the latest version), consistent
//! snapshots across `continue` pages, and periodic watch bookmarks. DELETE always returns
//! the object; a real apiserver answers some kinds (e.g. ConfigMaps) with a `Success`
//! Status instead, so handle both arms of `Api::delete`'s `Either`.

// `kube::core::Status` is ~300 bytes; here it is the error answer of nearly every
// operation (it becomes the HTTP response body), not a hot path worth boxing for.
#![allow(clippy::result_large_err)]

pub mod errors;
mod managed;
mod selector;
mod server;
mod store;

use std::any::TypeId;
use std::convert::Infallible;
use std::sync::Arc;
use std::task::{Context, Poll};

use futures::future::BoxFuture;
use http::{Request, Response};
use kube::core::{NamespaceResourceScope, Status};
use kube::{Resource, api::ApiResource};
use parking_lot::{Mutex, RwLock};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub use server::ResponseBody;

use store::{ObjectKey, Store};

/// One kind of object the fake server serves.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FakeResource {
    /// API group, `""` for the core group.
    pub group: String,
    /// API version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `ConfigMap`.
    pub kind: String,
    /// Plural resource name used in URLs, e.g. `configmaps`.
    pub plural: String,
    /// Namespaced (`true`) or cluster-scoped.
    pub namespaced: bool,
    /// Whether `status` is a subresource (`/status` endpoint; the main resource ignores
    /// status changes, creates drop status).
    pub status_subresource: bool,
}

impl FakeResource {
    /// A namespaced resource without a status subresource.
    #[must_use]
    pub fn namespaced(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        FakeResource {
            group: group.into(),
            version: version.into(),
            kind: kind.into(),
            plural: plural.into(),
            namespaced: true,
            status_subresource: false,
        }
    }

    /// A cluster-scoped resource without a status subresource.
    #[must_use]
    pub fn cluster(group: &str, version: &str, kind: &str, plural: &str) -> Self {
        FakeResource {
            namespaced: false,
            ..Self::namespaced(group, version, kind, plural)
        }
    }

    /// Enables the `status` subresource.
    #[must_use]
    pub fn with_status_subresource(mut self) -> Self {
        self.status_subresource = true;
        self
    }

    /// The resource of a static kind (k8s-openapi or `#[derive(CustomResource)]` type); the
    /// scope comes from `K::Scope`. Add [`with_status_subresource`](Self::with_status_subresource)
    /// if the kind has one.
    #[must_use]
    pub fn of<K>() -> Self
    where
        K: Resource<DynamicType = ()>,
        K::Scope: 'static,
    {
        FakeResource {
            group: K::group(&()).into_owned(),
            version: K::version(&()).into_owned(),
            kind: K::kind(&()).into_owned(),
            plural: K::plural(&()).into_owned(),
            namespaced: TypeId::of::<K::Scope>() == TypeId::of::<NamespaceResourceScope>(),
            status_subresource: false,
        }
    }

    /// The resource of a dynamic [`ApiResource`].
    #[must_use]
    pub fn from_api_resource(ar: &ApiResource, namespaced: bool) -> Self {
        FakeResource {
            group: ar.group.clone(),
            version: ar.version.clone(),
            kind: ar.kind.clone(),
            plural: ar.plural.clone(),
            namespaced,
            status_subresource: false,
        }
    }

    /// One resource per served version of a CustomResourceDefinition, with its scope and
    /// status subresource.
    #[must_use]
    pub fn from_crd(
        crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    ) -> Vec<Self> {
        let spec = &crd.spec;
        spec.versions
            .iter()
            .filter(|v| v.served)
            .map(|v| FakeResource {
                group: spec.group.clone(),
                version: v.name.clone(),
                kind: spec.names.kind.clone(),
                plural: spec.names.plural.clone(),
                namespaced: spec.scope == "Namespaced",
                status_subresource: v.subresources.as_ref().is_some_and(|s| s.status.is_some()),
            })
            .collect()
    }

    /// `group/version`, or `version` for the core group.
    #[must_use]
    pub fn api_version(&self) -> String {
        if self.group.is_empty() {
            self.version.clone()
        } else {
            format!("{}/{}", self.group, self.version)
        }
    }

    /// The built-ins [`FakeApiServer::new`] registers: core/v1 pods, services, namespaces,
    /// nodes, configmaps, secrets, serviceaccounts, events; events.k8s.io/v1 events;
    /// apps/v1 deployments, replicasets, statefulsets, daemonsets; coordination.k8s.io/v1
    /// leases. Pods, services, namespaces, nodes and the apps kinds have a status
    /// subresource.
    #[must_use]
    pub fn builtins() -> Vec<Self> {
        let ns = Self::namespaced;
        let cl = Self::cluster;
        vec![
            ns("", "v1", "Pod", "pods").with_status_subresource(),
            ns("", "v1", "Service", "services").with_status_subresource(),
            cl("", "v1", "Namespace", "namespaces").with_status_subresource(),
            cl("", "v1", "Node", "nodes").with_status_subresource(),
            ns("", "v1", "ConfigMap", "configmaps"),
            ns("", "v1", "Secret", "secrets"),
            ns("", "v1", "ServiceAccount", "serviceaccounts"),
            ns("", "v1", "Event", "events"),
            ns("events.k8s.io", "v1", "Event", "events"),
            ns("apps", "v1", "Deployment", "deployments").with_status_subresource(),
            ns("apps", "v1", "ReplicaSet", "replicasets").with_status_subresource(),
            ns("apps", "v1", "StatefulSet", "statefulsets").with_status_subresource(),
            ns("apps", "v1", "DaemonSet", "daemonsets").with_status_subresource(),
            ns("coordination.k8s.io", "v1", "Lease", "leases"),
        ]
    }
}

/// The verb of a request (client-go's `testing.Action.GetVerb()`), as the apiserver names
/// it: the HTTP method, and for `GET` and `DELETE` whether a name (and `watch=true`) is
/// given. Subresources are not verbs: see [`Action::subresource`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Verb {
    /// `GET` of one object.
    Get,
    /// `GET` of a collection.
    List,
    /// `GET` of a collection with `watch=true`.
    Watch,
    /// `POST`.
    Create,
    /// `PUT`.
    Update,
    /// `PATCH` (any patch type, server-side apply included).
    Patch,
    /// `DELETE` of one object.
    Delete,
    /// `DELETE` of a collection.
    DeleteCollection,
}

impl Verb {
    /// Every verb, in the order discovery lists them (alphabetical).
    pub const ALL: [Verb; 8] = [
        Verb::Create,
        Verb::Delete,
        Verb::DeleteCollection,
        Verb::Get,
        Verb::List,
        Verb::Patch,
        Verb::Update,
        Verb::Watch,
    ];

    /// The verb as Kubernetes spells it (RBAC rules, discovery, audit logs): `get`, `list`,
    /// `watch`, `create`, `update`, `patch`, `delete`, `deletecollection`.
    #[must_use]
    pub const fn as_str(self) -> &'static str {
        match self {
            Verb::Get => "get",
            Verb::List => "list",
            Verb::Watch => "watch",
            Verb::Create => "create",
            Verb::Update => "update",
            Verb::Patch => "patch",
            Verb::Delete => "delete",
            Verb::DeleteCollection => "deletecollection",
        }
    }
}

impl std::fmt::Display for Verb {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A string that is not one of the [`Verb`]s.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "unknown verb {0:?}: expected one of get, list, watch, create, update, patch, delete, deletecollection"
)]
pub struct UnknownVerb(pub String);

impl std::str::FromStr for Verb {
    type Err = UnknownVerb;

    /// The lowercase names of [`Verb::as_str`].
    ///
    /// # Errors
    /// [`UnknownVerb`] for anything else.
    fn from_str(s: &str) -> Result<Self, UnknownVerb> {
        Verb::ALL
            .into_iter()
            .find(|v| v.as_str() == s)
            .ok_or_else(|| UnknownVerb(s.to_owned()))
    }
}

/// Which verbs a reactor handles or [`Action::matches`] accepts: one, or any (client-go's
/// `"*"`). A [`Verb`] converts into it, so `prepend_reactor(Verb::Update, ...)` reads as
/// client-go's `PrependReactor("update", ...)`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum VerbFilter {
    /// Every verb.
    Any,
    /// Only this verb.
    Only(Verb),
}

impl VerbFilter {
    /// Whether `verb` passes.
    #[must_use]
    pub fn accepts(self, verb: Verb) -> bool {
        match self {
            VerbFilter::Any => true,
            VerbFilter::Only(v) => v == verb,
        }
    }
}

impl From<Verb> for VerbFilter {
    fn from(verb: Verb) -> Self {
        VerbFilter::Only(verb)
    }
}

/// One request the fake server received, like client-go's `testing.Action`.
#[derive(Clone, Debug, PartialEq)]
pub struct Action {
    /// What the request does.
    pub verb: Verb,
    /// The API group (`""` for the core group).
    pub group: String,
    /// The API version, e.g. `v1`.
    pub version: String,
    /// The plural resource name.
    pub resource: String,
    /// E.g. `status`.
    pub subresource: Option<String>,
    /// `None` for cluster-scoped resources and all-namespace requests.
    pub namespace: Option<String>,
    /// The object's name; `None` for collection requests (list, watch, create,
    /// deletecollection).
    pub name: Option<String>,
    /// The request body as JSON (the object for create/update, the patch for patch,
    /// DeleteOptions for delete), if any.
    pub object: Option<Value>,
    /// For patches: the content type, e.g. `application/merge-patch+json`.
    pub patch_type: Option<String>,
    /// `labelSelector` of list/watch/deletecollection requests.
    pub label_selector: Option<String>,
    /// `fieldSelector` of list/watch/deletecollection requests.
    pub field_selector: Option<String>,
}

impl Action {
    /// Whether the action has this verb and resource, with the same matching rules as
    /// reactors: a [`Verb`] or [`VerbFilter::Any`]; for the resource `"*"` matches anything,
    /// `"foos"` matches `foos` and its subresources, `"foos/status"` only the status
    /// subresource.
    #[must_use]
    pub fn matches(&self, verb: impl Into<VerbFilter>, resource: &str) -> bool {
        verb.into().accepts(self.verb) && resource_matches(resource, self)
    }
}

fn resource_matches(pattern: &str, action: &Action) -> bool {
    match pattern.split_once('/') {
        _ if pattern == "*" => true,
        Some((res, sub)) => res == action.resource && action.subresource.as_deref() == Some(sub),
        None => pattern == action.resource,
    }
}

/// What a reactor returns: `None` to pass the request on, `Some(Ok(body))` to answer 200
/// (201 for create) with `body`, `Some(Err(status))` to answer with that Status error.
pub type ReactorResult = Option<Result<Value, Status>>;

type ReactorFn = dyn Fn(&Action) -> ReactorResult + Send + Sync;

struct Reactor {
    verb: VerbFilter,
    resource: String,
    react: Box<ReactorFn>,
}

impl Reactor {
    fn handles(&self, action: &Action) -> bool {
        action.matches(self.verb, &self.resource)
    }
}

/// State shared by every clone of the server, its services and clients.
pub(crate) struct Shared {
    store: Mutex<Store>,
    actions: Mutex<Vec<Action>>,
    reactors: RwLock<Vec<Arc<Reactor>>>,
}

/// Default number of write events kept for watches that resume from a resourceVersion.
pub const DEFAULT_EVENT_HISTORY: usize = 1000;

/// Defaulting and validation of one kind's API writes: called with the object about to be
/// stored (after the fake's own pruning and defaults) and, on updates and patches, the
/// stored one; it may default the object and refuses it with the API server's 422. The
/// `validation` generator's `register_fake` registers one per kind marked
/// `+kube-codegen:validation` (`kube_codegen_runtime::validation::admission`).
pub type Admission = Arc<
    dyn Fn(&mut serde_json::Value, Option<&serde_json::Value>) -> Result<(), Status> + Send + Sync,
>;

/// The in-memory API server. Cheap to clone; clones share state.
#[derive(Clone)]
pub struct FakeApiServer {
    shared: Arc<Shared>,
}

impl Default for FakeApiServer {
    fn default() -> Self {
        Self::new()
    }
}

impl std::fmt::Debug for FakeApiServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let store = self.shared.store.lock();
        f.debug_struct("FakeApiServer")
            .field("resource_version", &store.resource_version())
            .field("resources", &store.resources.len())
            .finish_non_exhaustive()
    }
}

impl FakeApiServer {
    /// A server with the [built-in resources](FakeResource::builtins) registered.
    #[must_use]
    pub fn new() -> Self {
        let server = Self::empty();
        for r in FakeResource::builtins() {
            server.register(r);
        }
        server
    }

    /// A server with no resources registered.
    #[must_use]
    pub fn empty() -> Self {
        FakeApiServer {
            shared: Arc::new(Shared {
                store: Mutex::new(Store::new(DEFAULT_EVENT_HISTORY)),
                actions: Mutex::new(Vec::new()),
                reactors: RwLock::new(Vec::new()),
            }),
        }
    }

    /// A `kube::Client` talking to this server, with default namespace `default`.
    ///
    /// Must be called inside a Tokio runtime (the client spawns its request buffer).
    #[must_use]
    pub fn client(&self) -> kube::Client {
        kube::Client::new(self.service(), "default")
    }

    /// The `tower::Service` behind [`client`](Self::client), to wrap in layers.
    #[must_use]
    pub fn service(&self) -> FakeService {
        FakeService {
            shared: self.shared.clone(),
        }
    }

    /// Defaults and validates the API writes (create, update, patch, apply) of a kind with
    /// `admission`, as the API server does from its CRD. Seeding with
    /// [`FakeApiServer::add`] is not validated.
    pub fn register_admission(
        &self,
        group: &str,
        version: &str,
        plural: &str,
        admission: Admission,
    ) {
        self.shared
            .store
            .lock()
            .register_admission(group, version, plural, admission);
    }

    /// Turns registered admission off (or back on): the switch for tests that want the
    /// fake to store what they send, invalid or not. On by default.
    pub fn set_admission(&self, on: bool) {
        self.shared.store.lock().admission_on = on;
    }

    /// Registers (or replaces) a resource.
    pub fn register(&self, resource: FakeResource) {
        self.shared.store.lock().register(resource);
    }

    /// Registers every served version of a CustomResourceDefinition.
    pub fn register_crd(
        &self,
        crd: &k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition,
    ) {
        for r in FakeResource::from_crd(crd) {
            self.register(r);
        }
        // The merge semantics of server-side apply come from each version's schema.
        let mut store = self.shared.store.lock();
        for v in &crd.spec.versions {
            if let Some(props) = v
                .schema
                .as_ref()
                .and_then(|s| s.open_api_v3_schema.as_ref())
            {
                store.set_schema(
                    &crd.spec.group,
                    &v.name,
                    &crd.spec.names.kind,
                    managed::schema::from_crd_schema(props),
                );
            }
        }
    }

    /// The registered resources.
    #[must_use]
    pub fn resources(&self) -> Vec<FakeResource> {
        self.shared.store.lock().resources.clone()
    }

    // ----- action log -----

    /// Every request received so far, in order (discovery requests are not recorded).
    #[must_use]
    pub fn actions(&self) -> Vec<Action> {
        self.shared.actions.lock().clone()
    }

    /// Forgets the recorded actions.
    pub fn clear_actions(&self) {
        self.shared.actions.lock().clear();
    }

    // ----- reactors -----

    /// Adds a reactor in front of the others and of the object tracker.
    ///
    /// `verb` is a [`Verb`] or [`VerbFilter::Any`]; `resource` is a plural (matching the
    /// resource and its subresources), `"plural/subresource"`, or `"*"`. For each request
    /// the reactors run newest first; the first returning `Some` answers it (the tracker is
    /// not touched), `None` passes it on. For `watch`, `Some(Ok(v))` sends `v` (or each
    /// element of an array `v`) as one watch-event line, then ends the stream.
    ///
    /// Reactors run while no lock is held, so they may call back into the server (e.g.
    /// [`get_object`](Self::get_object)).
    pub fn prepend_reactor(
        &self,
        verb: impl Into<VerbFilter>,
        resource: &str,
        reactor: impl Fn(&Action) -> ReactorResult + Send + Sync + 'static,
    ) {
        self.shared.reactors.write().insert(
            0,
            Arc::new(Reactor {
                verb: verb.into(),
                resource: resource.into(),
                react: Box::new(reactor),
            }),
        );
    }

    /// Removes all reactors.
    pub fn clear_reactors(&self) {
        self.shared.reactors.write().clear();
    }

    // ----- direct tracker access -----

    /// Adds (or replaces) an object without going through HTTP or the action log, like
    /// client-go's `tracker.Add`. The kind is found from `apiVersion` and `kind`, which
    /// must be set (k8s-openapi types always serialize them). `status` is kept; a missing
    /// namespace of a namespaced kind becomes `default`; `uid`, `creationTimestamp` and
    /// `generation` are filled in when missing; the resourceVersion is assigned. A `*List`
    /// object adds each item. Watches see `ADDED` (or `MODIFIED`). Returns the stored
    /// object(s).
    pub fn add<T: Serialize>(&self, obj: &T) -> Result<Value, Status> {
        let v = serde_json::to_value(obj)
            .map_err(|e| errors::bad_request(&format!("serializing: {e}")))?;
        let api_version = v
            .get("apiVersion")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        let kind = v
            .get("kind")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string();
        if kind.ends_with("List")
            && let Some(items) = v.get("items").and_then(Value::as_array)
        {
            let added = items
                .iter()
                .map(|i| self.add(i))
                .collect::<Result<Vec<_>, _>>()?;
            return Ok(Value::Array(added));
        }
        let mut store = self.shared.store.lock();
        let res = store
            .find_kind(&api_version, &kind)
            .cloned()
            .ok_or_else(|| {
                errors::bad_request(&format!(
                    "no resource registered for apiVersion {api_version:?}, kind {kind:?}"
                ))
            })?;
        store.upsert(&res, v)
    }

    /// The stored object, by group, plural, namespace (`None` for cluster-scoped) and name.
    #[must_use]
    pub fn get_object(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let store = self.shared.store.lock();
        let res = store.find_group_resource(group, plural)?;
        store.object(&ObjectKey::new(res, namespace, name)).cloned()
    }

    /// The stored objects of a resource in one namespace (or all, with `None`), ordered by
    /// namespace then name.
    #[must_use]
    pub fn objects(&self, group: &str, plural: &str, namespace: Option<&str>) -> Vec<Value> {
        self.shared
            .store
            .lock()
            .objects_of(group, plural, namespace)
    }

    /// The stored object as `K` (served with `K`'s apiVersion/kind).
    #[must_use]
    pub fn get<K>(&self, namespace: Option<&str>, name: &str) -> Option<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        let v = self.get_object(&K::group(&()), &K::plural(&()), namespace, name)?;
        typed(v).ok()
    }

    /// The stored objects of `K` in one namespace (or all, with `None`).
    #[must_use]
    pub fn list<K>(&self, namespace: Option<&str>) -> Vec<K>
    where
        K: Resource<DynamicType = ()> + DeserializeOwned,
    {
        self.objects(&K::group(&()), &K::plural(&()), namespace)
            .into_iter()
            .filter_map(|v| typed(v).ok())
            .collect()
    }

    /// Removes an object at once, ignoring finalizers; watches see `DELETED`. Returns it.
    #[must_use]
    pub fn remove_object(
        &self,
        group: &str,
        plural: &str,
        namespace: Option<&str>,
        name: &str,
    ) -> Option<Value> {
        let mut store = self.shared.store.lock();
        let res = store.find_group_resource(group, plural)?.clone();
        store.remove(&ObjectKey::new(&res, namespace, name))
    }

    /// The current resourceVersion of the whole store.
    #[must_use]
    pub fn resource_version(&self) -> String {
        self.shared.store.lock().resource_version().to_string()
    }

    /// How many write events are kept for watches resuming from a resourceVersion
    /// (default [`DEFAULT_EVENT_HISTORY`]); older resourceVersions get 410 Expired.
    pub fn set_event_history_limit(&self, limit: usize) {
        self.shared.store.lock().set_history_limit(limit);
    }

    /// Drops the whole event history, like an etcd compaction: a watch from any
    /// resourceVersion older than the current one gets a 410 Expired error event.
    pub fn compact(&self) {
        self.shared.store.lock().compact();
    }
}

fn typed<K>(mut v: Value) -> Result<K, serde_json::Error>
where
    K: Resource<DynamicType = ()> + DeserializeOwned,
{
    if let Value::Object(map) = &mut v {
        map.insert("apiVersion".into(), K::api_version(&()).into_owned().into());
        map.insert("kind".into(), K::kind(&()).into_owned().into());
    }
    serde_json::from_value(v)
}

/// The `tower::Service` a [`kube::Client`] sends requests to. Obtain it from
/// [`FakeApiServer::service`].
#[derive(Clone)]
pub struct FakeService {
    shared: Arc<Shared>,
}

impl std::fmt::Debug for FakeService {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FakeService").finish_non_exhaustive()
    }
}

impl tower::Service<Request<kube::client::Body>> for FakeService {
    type Response = Response<ResponseBody>;
    type Error = Infallible;
    type Future = BoxFuture<'static, Result<Self::Response, Infallible>>;

    fn poll_ready(&mut self, _cx: &mut Context<'_>) -> Poll<Result<(), Infallible>> {
        Poll::Ready(Ok(()))
    }

    fn call(&mut self, req: Request<kube::client::Body>) -> Self::Future {
        let shared = self.shared.clone();
        Box::pin(async move { Ok(server::handle(shared, req).await) })
    }
}
