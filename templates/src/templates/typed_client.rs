//! Template: the typed client of one kind.
//!
//! This file is compiled (in this crate's tests) against `PlaceholderKind`. The renderer
//! keeps `new` plus the methods named after the kind's allowed verbs, and renames
//! `PlaceholderKind` to the real kind. A method's name IS its verb: keep them in sync with
//! `ALL_VERBS` in the generator's model.
//!
//! Every method is `#[inline]` (see the crate docs): the API crate then compiles none of
//! the verbs, and a crate that calls one compiles it with `ResourceClient<Kind>`'s code.

use super::placeholder::{PlaceholderKind, PlaceholderKindApplyConfiguration};

/// Typed client for `PlaceholderKind`: client-go's verbs, with errors as
/// `kube_codegen_runtime::Error` (`NotFound`, `Conflict`, `AlreadyExists`, `Invalid`, ...).
#[derive(Clone)]
pub struct PlaceholderKindClient {
    inner: ::kube_codegen_runtime::client::ResourceClient<PlaceholderKind>,
}

impl PlaceholderKindClient {
    /// Wrap the generic client for this kind.
    #[inline]
    pub fn new(inner: ::kube_codegen_runtime::client::ResourceClient<PlaceholderKind>) -> Self {
        Self { inner }
    }

    /// Create the object.
    #[inline]
    pub async fn create(
        &self,
        obj: &PlaceholderKind,
        params: &::kube::api::PostParams,
    ) -> ::kube_codegen_runtime::Result<PlaceholderKind> {
        self.inner.create(obj, params).await
    }

    /// Replace the object; a stale `metadata.resourceVersion` fails with `Error::Conflict`.
    #[inline]
    pub async fn update(
        &self,
        obj: &PlaceholderKind,
        params: &::kube::api::PostParams,
    ) -> ::kube_codegen_runtime::Result<PlaceholderKind> {
        self.inner.update(obj, params).await
    }

    /// Replace the status subresource: only `.status` changes.
    #[inline]
    pub async fn update_status(
        &self,
        obj: &PlaceholderKind,
        params: &::kube::api::PostParams,
    ) -> ::kube_codegen_runtime::Result<PlaceholderKind> {
        self.inner.update_status(obj, params).await
    }

    /// Delete the object by name.
    #[inline]
    pub async fn delete(
        &self,
        name: &str,
        params: &::kube::api::DeleteParams,
    ) -> ::kube_codegen_runtime::Result<()> {
        self.inner.delete(name, params).await
    }

    /// Delete every object the list parameters select.
    #[inline]
    pub async fn delete_collection(
        &self,
        params: &::kube::api::DeleteParams,
        list: &::kube::api::ListParams,
    ) -> ::kube_codegen_runtime::Result<()> {
        self.inner.delete_collection(params, list).await
    }

    /// Get the object by name.
    #[inline]
    pub async fn get(&self, name: &str) -> ::kube_codegen_runtime::Result<PlaceholderKind> {
        self.inner.get(name).await
    }

    /// List objects, filtered by label and field selectors.
    #[inline]
    pub async fn list(
        &self,
        params: &::kube::api::ListParams,
    ) -> ::kube_codegen_runtime::Result<::kube::api::ObjectList<PlaceholderKind>> {
        self.inner.list(params).await
    }

    /// Watch from a resourceVersion; for caches, prefer the generated informers.
    #[inline]
    pub async fn watch(
        &self,
        params: &::kube::api::WatchParams,
        resource_version: &str,
    ) -> ::kube_codegen_runtime::Result<::kube_codegen_runtime::client::WatchStream<PlaceholderKind>>
    {
        self.inner.watch(params, resource_version).await
    }

    /// Patch the object (merge, JSON patch, or strategic merge for built-in kinds).
    #[inline]
    pub async fn patch<P: ::serde::Serialize + ::std::fmt::Debug>(
        &self,
        name: &str,
        patch: &::kube::api::Patch<P>,
        params: &::kube::api::PatchParams,
    ) -> ::kube_codegen_runtime::Result<PlaceholderKind> {
        self.inner.patch(name, patch, params).await
    }

    /// Server-side apply: the field manager (`options.field_manager`, required) owns
    /// exactly the fields `config` sets; `options.force` takes them from other managers.
    /// A field another manager owns fails with `ApplyError::Conflict`, naming both.
    #[inline]
    pub async fn apply(
        &self,
        config: &PlaceholderKindApplyConfiguration,
        options: &::kube_codegen_runtime::client::ApplyOptions,
    ) -> ::std::result::Result<PlaceholderKind, ::kube_codegen_runtime::apply::ApplyError> {
        self.inner
            .apply_configuration(config.name().unwrap_or_default(), config, options)
            .await
    }

    /// Server-side apply of the status subresource: only `config.status` is applied.
    #[inline]
    pub async fn apply_status(
        &self,
        config: &PlaceholderKindApplyConfiguration,
        options: &::kube_codegen_runtime::client::ApplyOptions,
    ) -> ::std::result::Result<PlaceholderKind, ::kube_codegen_runtime::apply::ApplyError> {
        self.inner
            .apply_configuration_status(config.name().unwrap_or_default(), config, options)
            .await
    }
}
