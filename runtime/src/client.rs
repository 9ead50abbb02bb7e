//! The typed client behind every generated per-kind client.
//!
//! Generated code wraps a [`ResourceClient<K>`] and exposes only the verbs the kind's
//! `+genclient` markers allow. Errors are [`crate::Error`], so `NotFound`, `Conflict`,
//! `AlreadyExists` and `Invalid` are variants, not status codes to compare.
//!
//! Every object it sends carries `K`'s `apiVersion` and `kind`, as client-go's codec writes
//! them into what its typed clients send: an object built with `..Default::default()`,
//! whose `TypeMeta` is empty, is created, updated and applied as it is (see
//! [`ResourceClient::create`]).

use std::fmt::Debug;

use futures::{StreamExt, TryStreamExt};
use kube::api::{
    Api, DeleteParams, ListParams, ObjectList, Patch, PatchParams, PostParams, WatchEvent,
    WatchParams,
};
use kube::core::{ClusterResourceScope, NamespaceResourceScope};
use kube::{Client, Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::apply::ApplyError;
use crate::error::{Error, Result};

/// Options for server-side apply.
#[derive(Clone, Debug)]
pub struct ApplyOptions {
    /// Who owns the applied fields (required by the apiserver).
    pub field_manager: String,
    /// Take ownership of fields other managers own, instead of failing with a Conflict.
    pub force: bool,
    /// Validate and answer without persisting (`dryRun=All`).
    pub dry_run: bool,
}

impl ApplyOptions {
    /// Apply as `field_manager`, without force, persisted.
    #[must_use]
    pub fn new(field_manager: impl Into<String>) -> Self {
        ApplyOptions {
            field_manager: field_manager.into(),
            force: false,
            dry_run: false,
        }
    }

    /// Take over fields other managers own (`force=true`), as controllers that are the
    /// sole owner of what they apply usually do.
    #[must_use]
    pub fn force(mut self) -> Self {
        self.force = true;
        self
    }

    fn params(&self) -> PatchParams {
        let mut p = PatchParams::apply(&self.field_manager);
        p.force = self.force;
        p.dry_run = self.dry_run;
        p
    }
}

/// A stream of watch events.
pub type WatchStream<K> = futures::stream::BoxStream<'static, Result<WatchEvent<K>>>;

/// Every verb client-go's typed clients have, for one kind, in one namespace or cluster-wide.
///
/// Every verb fails with [`Error`]: the apiserver's answer as a variant
/// ([`Error::NotFound`], [`Error::Conflict`], ...) or [`Error::Client`] when there was no
/// answer (transport, TLS, decoding).
///
/// ```no_run
/// # async fn run(client: kube::Client) -> kube_codegen_runtime::Result<()> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::api::PostParams;
/// use kube_codegen_runtime::client::ResourceClient;
///
/// let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
/// match config_maps.get("settings").await {
///     Ok(cm) => println!("{:?}", cm.data),
///     Err(e) if e.is_not_found() => {
///         let mut cm = ConfigMap::default();
///         cm.metadata.name = Some("settings".into());
///         config_maps.create(&cm, &PostParams::default()).await?;
///     }
///     Err(e) => return Err(e),
/// }
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct ResourceClient<K> {
    api: Api<K>,
}

impl<K> ResourceClient<K>
where
    K: Resource<DynamicType = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
{
    /// A client for a namespaced kind in one namespace.
    #[must_use]
    pub fn namespaced(client: Client, namespace: &str) -> Self
    where
        K: Resource<Scope = NamespaceResourceScope>,
    {
        ResourceClient {
            api: Api::namespaced(client, namespace),
        }
    }

    /// A client for a namespaced kind across all namespaces (list, watch, get by path).
    #[must_use]
    pub fn all_namespaces(client: Client) -> Self {
        ResourceClient {
            api: Api::all(client),
        }
    }

    /// A client for a cluster-scoped kind.
    #[must_use]
    pub fn cluster(client: Client) -> Self
    where
        K: Resource<Scope = ClusterResourceScope>,
    {
        ResourceClient {
            api: Api::all(client),
        }
    }

    /// The underlying kube `Api`, for anything not covered here.
    #[must_use]
    pub fn api(&self) -> &Api<K> {
        &self.api
    }

    /// Create the object (POST); returns it as stored. Its `apiVersion` and `kind` are
    /// `K`'s whatever `obj` holds, as client-go's codec writes the Go type's into every
    /// object a typed client sends (so does every verb that sends `obj`: [`update`],
    /// [`update_status`], [`apply`], [`apply_status`]).
    ///
    /// [`update`]: Self::update
    /// [`update_status`]: Self::update_status
    /// [`apply`]: Self::apply
    /// [`apply_status`]: Self::apply_status
    ///
    /// # Errors
    /// [`Error::AlreadyExists`] if the name is taken, [`Error::Invalid`] if validation
    /// fails, other [`Error`]s as for every verb.
    pub async fn create(&self, obj: &K, params: &PostParams) -> Result<K> {
        let body = typed_body::<K>(obj, Fill::Object)?;
        self.send("create", self.request().create(params, to_vec(&body)?))
            .await
    }

    /// Replace the object (PUT). Its `metadata.resourceVersion`, when set, guards against
    /// lost updates: a stale one fails with [`Error::Conflict`].
    ///
    /// # Errors
    /// [`Error::Conflict`] on a stale resourceVersion, [`Error::NotFound`],
    /// [`Error::Invalid`], other [`Error`]s as for every verb.
    pub async fn update(&self, obj: &K, params: &PostParams) -> Result<K> {
        let body = typed_body::<K>(obj, Fill::Object)?;
        let request = self
            .request()
            .replace(&obj.name_any(), params, to_vec(&body)?);
        self.send("replace", request).await
    }

    /// Replace the status subresource: only `.status` changes.
    ///
    /// # Errors
    /// As [`update`](Self::update); [`Error::NotFound`] also if the kind has no status
    /// subresource.
    pub async fn update_status(&self, obj: &K, params: &PostParams) -> Result<K> {
        let body = typed_body::<K>(obj, Fill::Object)?;
        let request =
            self.request()
                .replace_subresource("status", &obj.name_any(), params, to_vec(&body)?);
        self.send("replace_status", request).await
    }

    /// Delete the object `name`. With finalizers it is only marked for deletion.
    ///
    /// # Errors
    /// [`Error::NotFound`] if it does not exist, [`Error::Conflict`] if a precondition
    /// fails, other [`Error`]s as for every verb.
    pub async fn delete(&self, name: &str, params: &DeleteParams) -> Result<()> {
        self.api.delete(name, params).await?;
        Ok(())
    }

    /// Delete every object `list`'s selectors match.
    ///
    /// # Errors
    /// [`Error`] as for every verb.
    pub async fn delete_collection(&self, params: &DeleteParams, list: &ListParams) -> Result<()> {
        self.api.delete_collection(params, list).await?;
        Ok(())
    }

    /// The object `name`, from the apiserver (a lister reads the informer cache instead).
    ///
    /// # Errors
    /// [`Error::NotFound`] if it does not exist, other [`Error`]s as for every verb.
    pub async fn get(&self, name: &str) -> Result<K> {
        Ok(self.api.get(name).await?)
    }

    /// The objects `params`' selectors match, one page of at most `params.limit`.
    ///
    /// # Errors
    /// [`Error::Expired`] if a continue token is too old, other [`Error`]s as for every
    /// verb.
    pub async fn list(&self, params: &ListParams) -> Result<ObjectList<K>> {
        Ok(self.api.list(params).await?)
    }

    /// Watch from `resource_version` ("0" or "" for "from now, with the current state").
    /// Informers are the usual way to watch; this is the raw stream.
    ///
    /// # Errors
    /// [`Error`] if the watch cannot be started; errors during the watch (e.g.
    /// [`Error::Expired`] for a too old resourceVersion) are items of the stream.
    pub async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>> {
        let stream = self.api.watch(params, resource_version).await?;
        Ok(stream.map_err(Error::from).boxed())
    }

    /// Patch the object: `Patch::Merge`, `Patch::Strategic` (built-in kinds only; custom
    /// resources reject it, as on the server), `Patch::Json` or `Patch::Apply`. A merge or
    /// strategic patch that states `apiVersion` or `kind` empty (a whole object built with
    /// `..Default::default()`) states `K`'s; an apply patch gets `K`'s where it leaves them
    /// out or empty, as the API server requires them there.
    ///
    /// # Errors
    /// [`Error::NotFound`], [`Error::Conflict`] (a resourceVersion in the patch that is
    /// stale), [`Error::Invalid`], other [`Error`]s as for every verb.
    pub async fn patch<P: Serialize + Debug>(
        &self,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> Result<K> {
        Ok(match typed_patch::<K, P>(patch)? {
            Some(typed) => self.api.patch(name, params, &typed).await?,
            None => self.api.patch(name, params, patch).await?,
        })
    }

    /// Patch the status subresource.
    ///
    /// # Errors
    /// As [`patch`](Self::patch).
    pub async fn patch_status<P: Serialize + Debug>(
        &self,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> Result<K> {
        Ok(match typed_patch::<K, P>(patch)? {
            Some(typed) => self.api.patch_status(name, params, &typed).await?,
            None => self.api.patch_status(name, params, patch).await?,
        })
    }

    /// Server-side apply of a whole object: the manager owns every field `obj`
    /// serializes, which for a typed struct means every non-`Option` field too. Generated
    /// clients of contract 1 call it; code generated since applies apply configurations
    /// with [`apply_configuration`](Self::apply_configuration).
    ///
    /// # Errors
    /// [`Error::Conflict`] if another manager owns a field and `options.force` is off,
    /// [`Error::Invalid`], other [`Error`]s as for every verb.
    pub async fn apply(&self, obj: &K, options: &ApplyOptions) -> Result<K> {
        let body = typed_body::<K>(obj, Fill::Object)?;
        Ok(self
            .api
            .patch(&obj.name_any(), &options.params(), &Patch::Apply(body))
            .await?)
    }

    /// Server-side apply of the status subresource.
    ///
    /// # Errors
    /// As [`apply`](Self::apply).
    pub async fn apply_status(&self, obj: &K, options: &ApplyOptions) -> Result<K> {
        let body = typed_body::<K>(obj, Fill::Object)?;
        Ok(self
            .api
            .patch_status(&obj.name_any(), &options.params(), &Patch::Apply(body))
            .await?)
    }

    /// Server-side apply of an apply configuration (a generated `FooApplyConfiguration`):
    /// the manager owns exactly the fields `config` sets. Generated typed clients call it
    /// with the name read from the configuration's metadata. `apiVersion` and `kind` are
    /// `K`'s where `config` leaves them unset (`FooApplyConfiguration::default()`); set,
    /// they are sent as they are.
    ///
    /// # Errors
    /// [`ApplyError::MissingFieldManager`] or [`ApplyError::MissingName`] before any
    /// request; [`ApplyError::Conflict`] with the managers and fields that other managers
    /// own when `options.force` is off; [`ApplyError::Api`] for anything else.
    pub async fn apply_configuration<A: Serialize + Debug>(
        &self,
        name: &str,
        config: &A,
        options: &ApplyOptions,
    ) -> Result<K, ApplyError> {
        check_apply(name, options)?;
        let body = typed_body::<K>(config, Fill::Apply)?;
        self.api
            .patch(name, &options.params(), &Patch::Apply(body))
            .await
            .map_err(|e| ApplyError::from_error(e.into()))
    }

    /// Server-side apply of an apply configuration to the status subresource.
    ///
    /// # Errors
    /// As [`apply_configuration`](Self::apply_configuration).
    pub async fn apply_configuration_status<A: Serialize + Debug>(
        &self,
        name: &str,
        config: &A,
        options: &ApplyOptions,
    ) -> Result<K, ApplyError> {
        check_apply(name, options)?;
        let body = typed_body::<K>(config, Fill::Apply)?;
        self.api
            .patch_status(name, &options.params(), &Patch::Apply(body))
            .await
            .map_err(|e| ApplyError::from_error(e.into()))
    }

    /// GET a subresource (`+genclient:method=...,verb=get,subresource=...`).
    ///
    /// # Errors
    /// [`Error::NotFound`] if the object or the subresource does not exist, other
    /// [`Error`]s as for every verb (a body that does not serialize or an answer that
    /// does not decode as `R` is [`Error::Client`]).
    pub async fn get_subresource<R: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
    ) -> Result<R> {
        self.send_subresource::<(), R>(http::Method::GET, subresource, name, None, "")
            .await
    }

    /// PUT a subresource (`verb=update`).
    ///
    /// # Errors
    /// [`Error::NotFound`] if the object or the subresource does not exist, other
    /// [`Error`]s as for every verb (a body that does not serialize or an answer that
    /// does not decode as `R` is [`Error::Client`]).
    pub async fn update_subresource<I: Serialize, R: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        body: &I,
    ) -> Result<R> {
        self.send_subresource(
            http::Method::PUT,
            subresource,
            name,
            Some(body),
            "application/json",
        )
        .await
    }

    /// POST a subresource (`verb=create`).
    ///
    /// # Errors
    /// [`Error::NotFound`] if the object or the subresource does not exist, other
    /// [`Error`]s as for every verb (a body that does not serialize or an answer that
    /// does not decode as `R` is [`Error::Client`]).
    pub async fn create_subresource<I: Serialize, R: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        body: &I,
    ) -> Result<R> {
        self.send_subresource(
            http::Method::POST,
            subresource,
            name,
            Some(body),
            "application/json",
        )
        .await
    }

    /// PATCH a subresource with a merge patch (`verb=patch`).
    ///
    /// # Errors
    /// [`Error::NotFound`] if the object or the subresource does not exist, other
    /// [`Error`]s as for every verb (a body that does not serialize or an answer that
    /// does not decode as `R` is [`Error::Client`]).
    pub async fn patch_subresource<I: Serialize, R: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
        body: &I,
    ) -> Result<R> {
        self.send_subresource(
            http::Method::PATCH,
            subresource,
            name,
            Some(body),
            "application/merge-patch+json",
        )
        .await
    }

    /// kube's request builder for this client's URL (with its parameter checks).
    fn request(&self) -> kube::core::Request {
        kube::core::Request::new(self.api.resource_url())
    }

    /// Send a request whose body this client wrote, named `verb` as kube's `Api` names its
    /// requests (the name tracing spans carry).
    async fn send(
        &self,
        verb: &'static str,
        request: std::result::Result<http::Request<Vec<u8>>, kube::core::request::Error>,
    ) -> Result<K> {
        let mut request = request.map_err(kube::Error::BuildRequest)?;
        request.extensions_mut().insert(verb);
        Ok(self.api.clone().into_client().request::<K>(request).await?)
    }

    /// The one request path of the subresource verbs; `body` is None for GET.
    async fn send_subresource<I: Serialize, R: DeserializeOwned>(
        &self,
        method: http::Method,
        subresource: &str,
        name: &str,
        body: Option<&I>,
        content_type: &str,
    ) -> Result<R> {
        let url = format!("{}/{name}/{subresource}", self.api.resource_url());
        let mut req = http::Request::builder().method(method).uri(url);
        let bytes = match body {
            Some(b) => {
                req = req.header(http::header::CONTENT_TYPE, content_type);
                serde_json::to_vec(b).map_err(kube::Error::SerdeError)?
            }
            None => vec![],
        };
        let req = req.body(bytes).map_err(kube::Error::HttpError)?;
        Ok(self.api.clone().into_client().request::<R>(req).await?)
    }
}

/// Where a body gets `K`'s `apiVersion` and `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Fill {
    /// A whole `K`: always `K`'s, whatever it holds. Its type says which kind and version
    /// its fields are, as a Go type does for client-go's codec.
    Object,
    /// An apply body of another type (an apply configuration): where it leaves them out,
    /// null or empty, as the API server requires both in an apply; a value it sets is its
    /// own (the server refuses one that is not this resource's).
    Apply,
    /// A merge or strategic merge patch: where it states them null or empty (a whole
    /// object built with `..Default::default()`); a patch that leaves them out keeps them.
    Merge,
}

/// `body` as JSON, with `K`'s `apiVersion` and `kind` where `fill` says: the one place the
/// runtime's clients complete the objects they send, as client-go's codec does. A body
/// that is not a JSON object is sent as it is.
fn typed_body<K: Resource<DynamicType = ()>>(body: &impl Serialize, fill: Fill) -> Result<Value> {
    let mut value = serde_json::to_value(body).map_err(kube::Error::SerdeError)?;
    if let Value::Object(fields) = &mut value {
        for (key, wanted) in [("apiVersion", K::api_version(&())), ("kind", K::kind(&()))] {
            let unset = match fields.get(key) {
                None => fill == Fill::Object || fill == Fill::Apply,
                Some(Value::Null) => true,
                Some(Value::String(s)) => s.is_empty() || fill == Fill::Object,
                Some(_) => fill == Fill::Object,
            };
            if unset {
                fields.insert(key.to_owned(), Value::String(wanted.into_owned()));
            }
        }
    }
    Ok(value)
}

/// `patch` with the body `typed_body` makes for its kind of patch; `None` for a patch sent
/// as it is (a JSON patch, whose operations name their paths).
fn typed_patch<K: Resource<DynamicType = ()>, P: Serialize>(
    patch: &Patch<P>,
) -> Result<Option<Patch<Value>>> {
    Ok(match patch {
        Patch::Apply(p) => Some(Patch::Apply(typed_body::<K>(p, Fill::Apply)?)),
        Patch::Merge(p) => Some(Patch::Merge(typed_body::<K>(p, Fill::Merge)?)),
        Patch::Strategic(p) => Some(Patch::Strategic(typed_body::<K>(p, Fill::Merge)?)),
        _ => None,
    })
}

fn to_vec(body: &Value) -> Result<Vec<u8>> {
    Ok(serde_json::to_vec(body).map_err(kube::Error::SerdeError)?)
}

/// The checks before an apply request: the API server would refuse an apply without a
/// field manager, and without a name there is no URL.
fn check_apply(name: &str, options: &ApplyOptions) -> Result<(), ApplyError> {
    if options.field_manager.is_empty() {
        return Err(ApplyError::MissingFieldManager);
    }
    if name.is_empty() {
        return Err(ApplyError::MissingName);
    }
    Ok(())
}
