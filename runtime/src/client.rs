//! The typed client behind every generated per-kind client.
//!
//! Generated code wraps a [`ResourceClient<K>`] and exposes only the verbs the kind's
//! `+genclient` markers allow. Errors are [`crate::Error`], so `NotFound`, `Conflict`,
//! `AlreadyExists` and `Invalid` are variants, not status codes to compare.

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

use crate::error::{Error, Result};

/// Options for server-side apply.
#[derive(Clone, Debug)]
pub struct ApplyOptions {
    /// Who owns the applied fields (required by the apiserver).
    pub field_manager: String,
    /// Take ownership of fields other managers own, instead of failing with a Conflict.
    pub force: bool,
    pub dry_run: bool,
}

impl ApplyOptions {
    pub fn new(field_manager: impl Into<String>) -> Self {
        ApplyOptions {
            field_manager: field_manager.into(),
            force: false,
            dry_run: false,
        }
    }

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
    pub fn namespaced(client: Client, namespace: &str) -> Self
    where
        K: Resource<Scope = NamespaceResourceScope>,
    {
        ResourceClient {
            api: Api::namespaced(client, namespace),
        }
    }

    /// A client for a namespaced kind across all namespaces (list, watch, get by path).
    pub fn all_namespaces(client: Client) -> Self {
        ResourceClient {
            api: Api::all(client),
        }
    }

    /// A client for a cluster-scoped kind.
    pub fn cluster(client: Client) -> Self
    where
        K: Resource<Scope = ClusterResourceScope>,
    {
        ResourceClient {
            api: Api::all(client),
        }
    }

    /// The underlying kube `Api`, for anything not covered here.
    pub fn api(&self) -> &Api<K> {
        &self.api
    }

    pub async fn create(&self, obj: &K, params: &PostParams) -> Result<K> {
        Ok(self.api.create(params, obj).await?)
    }

    /// Replace the object (PUT). Its `metadata.resourceVersion`, when set, guards against
    /// lost updates: a stale one fails with [`Error::Conflict`].
    pub async fn update(&self, obj: &K, params: &PostParams) -> Result<K> {
        Ok(self.api.replace(&obj.name_any(), params, obj).await?)
    }

    /// Replace the status subresource: only `.status` changes.
    pub async fn update_status(&self, obj: &K, params: &PostParams) -> Result<K> {
        Ok(self
            .api
            .replace_status(&obj.name_any(), params, obj)
            .await?)
    }

    pub async fn delete(&self, name: &str, params: &DeleteParams) -> Result<()> {
        self.api.delete(name, params).await?;
        Ok(())
    }

    pub async fn delete_collection(&self, params: &DeleteParams, list: &ListParams) -> Result<()> {
        self.api.delete_collection(params, list).await?;
        Ok(())
    }

    pub async fn get(&self, name: &str) -> Result<K> {
        Ok(self.api.get(name).await?)
    }

    pub async fn list(&self, params: &ListParams) -> Result<ObjectList<K>> {
        Ok(self.api.list(params).await?)
    }

    /// Watch from `resource_version` ("0" or "" for "from now, with the current state").
    pub async fn watch(
        &self,
        params: &WatchParams,
        resource_version: &str,
    ) -> Result<WatchStream<K>> {
        let stream = self.api.watch(params, resource_version).await?;
        Ok(stream.map_err(Error::from).boxed())
    }

    /// Patch the object: `Patch::Merge`, `Patch::Strategic` (built-in kinds only; custom
    /// resources reject it, as on the server) or `Patch::Json`.
    pub async fn patch<P: Serialize + Debug>(
        &self,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> Result<K> {
        Ok(self.api.patch(name, params, patch).await?)
    }

    /// Patch the status subresource.
    pub async fn patch_status<P: Serialize + Debug>(
        &self,
        name: &str,
        patch: &Patch<P>,
        params: &PatchParams,
    ) -> Result<K> {
        Ok(self.api.patch_status(name, params, patch).await?)
    }

    /// Server-side apply: `obj` holds only the fields this manager owns.
    pub async fn apply(&self, obj: &K, options: &ApplyOptions) -> Result<K> {
        Ok(self
            .api
            .patch(&obj.name_any(), &options.params(), &Patch::Apply(obj))
            .await?)
    }

    /// Server-side apply of the status subresource.
    pub async fn apply_status(&self, obj: &K, options: &ApplyOptions) -> Result<K> {
        Ok(self
            .api
            .patch_status(&obj.name_any(), &options.params(), &Patch::Apply(obj))
            .await?)
    }

    /// GET a subresource (`+genclient:method=...,verb=get,subresource=...`).
    pub async fn get_subresource<R: DeserializeOwned>(
        &self,
        subresource: &str,
        name: &str,
    ) -> Result<R> {
        self.send_subresource::<(), R>(http::Method::GET, subresource, name, None, "")
            .await
    }

    /// PUT a subresource (`verb=update`).
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
