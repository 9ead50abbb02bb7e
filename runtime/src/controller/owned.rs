//! Writing the objects a controller owns: controller-runtime's `controllerutil`
//! `SetControllerReference` and `CreateOrUpdate`, and server-side apply with the owner
//! reference set.

use std::fmt::Debug;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::OwnerReference;
use kube::Resource;
use kube::api::PostParams;
use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::apply::ApplyError;
use crate::client::{ApplyOptions, ResourceClient};
use crate::error::Error;

/// What [`create_or_update`] did (controller-runtime's `OperationResult`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OperationResult {
    /// The object did not exist and was created.
    Created,
    /// The object existed and `mutate` changed it: it was updated.
    Updated,
    /// The object existed and `mutate` left it as it was: no request was made.
    Unchanged,
}

/// Why writing an owned object failed.
#[derive(Debug, thiserror::Error)]
pub enum OwnedError {
    /// The request failed (a conflict included: the object changed since it was read;
    /// return it from the reconcile and the controller retries with backoff).
    #[error(transparent)]
    Api(#[from] Error),
    /// The server-side apply failed.
    #[error(transparent)]
    Apply(#[from] ApplyError),
    /// `mutate` changed the object's name or namespace, which would write another object.
    #[error("the mutate function changed the object's name or namespace ({before} -> {after})")]
    IdentityChanged {
        /// `namespace/name` before.
        before: String,
        /// `namespace/name` after.
        after: String,
    },
    /// The object to write has no `metadata.name`.
    #[error("the object has no metadata.name")]
    Unnamed,
    /// The owner has no uid: it was never read from the API server, and an owner
    /// reference without the owner's uid is rejected.
    #[error("the owner {0} has no uid (pass the object as read from the API server)")]
    OwnerWithoutUid(String),
    /// The object is already controlled by another owner (controller-runtime's
    /// `AlreadyOwnedError`): two controllers would fight over it.
    #[error("{object} is already controlled by {kind} {name}")]
    AlreadyOwned {
        /// The object's name.
        object: String,
        /// The current controller's kind.
        kind: String,
        /// The current controller's name.
        name: String,
    },
}

/// The controller owner reference to `owner`: `controller: true` and
/// `blockOwnerDeletion: true`, as controller-runtime's `SetControllerReference` writes it.
///
/// # Errors
/// [`OwnedError::OwnerWithoutUid`] if `owner` was not read from the API server.
pub fn controller_reference<K: Resource<DynamicType = ()>>(
    owner: &K,
) -> Result<OwnerReference, OwnedError> {
    let meta = owner.meta();
    let name = meta.name.clone().unwrap_or_default();
    let uid = meta
        .uid
        .clone()
        .ok_or_else(|| OwnedError::OwnerWithoutUid(format!("{} {name}", K::kind(&()))))?;
    Ok(OwnerReference {
        api_version: K::api_version(&()).into_owned(),
        kind: K::kind(&()).into_owned(),
        name,
        uid,
        controller: Some(true),
        block_owner_deletion: Some(true),
    })
}

/// Make `owner` the controller of `object` (controller-runtime's
/// `SetControllerReference`): adds the controller reference, or refreshes it when it is
/// already there; other (non-controller) owner references are kept.
///
/// ```
/// use k8s_openapi::api::apps::v1::Deployment;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::controller::set_controller_reference;
///
/// let mut owner = Deployment::default();
/// owner.metadata.name = Some("web".into());
/// owner.metadata.uid = Some("1234".into());
/// let mut config = ConfigMap::default();
/// set_controller_reference(&owner, &mut config).unwrap();
/// let reference = &config.metadata.owner_references.as_ref().unwrap()[0];
/// assert_eq!((reference.kind.as_str(), reference.controller), ("Deployment", Some(true)));
/// ```
///
/// # Errors
/// [`OwnedError::AlreadyOwned`] if another object controls `object`;
/// [`OwnedError::OwnerWithoutUid`] if `owner` was not read from the API server.
pub fn set_controller_reference<K, O>(owner: &K, object: &mut O) -> Result<(), OwnedError>
where
    K: Resource<DynamicType = ()>,
    O: Resource,
{
    let reference = controller_reference(owner)?;
    let object_name = object.meta().name.clone().unwrap_or_default();
    let references = object
        .meta_mut()
        .owner_references
        .get_or_insert_with(Vec::new);
    if let Some(other) = references
        .iter()
        .find(|r| r.controller == Some(true) && r.uid != reference.uid)
    {
        return Err(OwnedError::AlreadyOwned {
            object: object_name,
            kind: other.kind.clone(),
            name: other.name.clone(),
        });
    }
    match references.iter_mut().find(|r| r.uid == reference.uid) {
        Some(existing) => *existing = reference,
        None => references.push(reference),
    }
    Ok(())
}

/// Create `object` or bring the existing one in line (controller-runtime's
/// `CreateOrUpdate`): reads the object named like `object`; if it does not exist,
/// `mutate` fills `object` and it is created; if it does, `mutate` changes the object as
/// read, and it is updated only if that changed anything. `mutate` must not change the
/// name or namespace.
///
/// The update carries the resourceVersion that was read, so a concurrent change is a
/// conflict ([`Error::Conflict`]), never a lost write: return it from the reconcile and
/// the retry reads again.
///
/// ```no_run
/// # async fn demo(client: kube::Client, owner: k8s_openapi::api::apps::v1::Deployment) -> Result<(), kube_codegen_runtime::controller::OwnedError> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::client::ResourceClient;
/// use kube_codegen_runtime::controller::{create_or_update, set_controller_reference, OperationResult};
///
/// let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
/// let mut wanted = ConfigMap::default();
/// wanted.metadata.name = Some("web-config".into());
/// let mut owner_error = None;
/// let (result, _config) = create_or_update(&config_maps, wanted, |cm| {
///     cm.data.get_or_insert_with(Default::default).insert("mode".into(), "fast".into());
///     owner_error = set_controller_reference(&owner, cm).err();
/// })
/// .await?;
/// if let Some(e) = owner_error { return Err(e); }
/// assert_ne!(result, OperationResult::Unchanged);
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`OwnedError::Api`] when the read, the create or the update fails (a conflict
/// included); [`OwnedError::IdentityChanged`] if `mutate` renamed the object (nothing is
/// written); [`OwnedError::Unnamed`] if `object` has no name.
pub async fn create_or_update<K>(
    client: &ResourceClient<K>,
    object: K,
    mutate: impl FnOnce(&mut K),
) -> Result<(OperationResult, K), OwnedError>
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
    let name = object.meta().name.clone().ok_or(OwnedError::Unnamed)?;
    let identity = |o: &K| {
        format!(
            "{}/{}",
            o.meta().namespace.as_deref().unwrap_or_default(),
            o.meta().name.as_deref().unwrap_or_default()
        )
    };
    let params = PostParams::default();
    match client.get(&name).await {
        Err(Error::NotFound(_)) => {
            let mut object = object;
            let before = identity(&object);
            mutate(&mut object);
            check_identity(&before, identity(&object))?;
            let created = client.create(&object, &params).await?;
            Ok((OperationResult::Created, created))
        }
        Err(e) => Err(e.into()),
        Ok(existing) => {
            let mut object = existing.clone();
            let before = identity(&object);
            mutate(&mut object);
            check_identity(&before, identity(&object))?;
            // Compared as JSON, what the server would see: K need not be PartialEq.
            if serde_json::to_value(&object).ok() == serde_json::to_value(&existing).ok() {
                return Ok((OperationResult::Unchanged, existing));
            }
            let updated = client.update(&object, &params).await?;
            Ok((OperationResult::Updated, updated))
        }
    }
}

fn check_identity(before: &str, after: String) -> Result<(), OwnedError> {
    if before == after {
        Ok(())
    } else {
        Err(OwnedError::IdentityChanged {
            before: before.to_owned(),
            after,
        })
    }
}

/// Server-side apply of `config` (an apply configuration, or any serializable object
/// with `apiVersion`, `kind` and `metadata.name`) as an object `owner` controls: the
/// controller owner reference to `owner` is set in the applied `metadata.ownerReferences`,
/// so the field manager owns it with the rest, and garbage collection removes the object
/// with its owner.
///
/// ```no_run
/// # async fn demo(client: kube::Client, owner: k8s_openapi::api::apps::v1::Deployment) -> Result<(), kube_codegen_runtime::controller::OwnedError> {
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube_codegen_runtime::client::{ApplyOptions, ResourceClient};
/// use kube_codegen_runtime::controller::apply_owned;
///
/// let config_maps = ResourceClient::<ConfigMap>::namespaced(client, "default");
/// let config = serde_json::json!({
///     "apiVersion": "v1", "kind": "ConfigMap",
///     "metadata": {"name": "web-config"},
///     "data": {"mode": "fast"},
/// });
/// apply_owned(&config_maps, &owner, &config, &ApplyOptions::new("web-controller").force()).await?;
/// # Ok(()) }
/// ```
///
/// # Errors
/// [`OwnedError::Apply`] as [`ResourceClient::apply_configuration`] fails;
/// [`OwnedError::Unnamed`] if `config` has no `metadata.name`;
/// [`OwnedError::OwnerWithoutUid`] if `owner` was not read from the API server.
pub async fn apply_owned<O, K, A>(
    client: &ResourceClient<O>,
    owner: &K,
    config: &A,
    options: &ApplyOptions,
) -> Result<O, OwnedError>
where
    O: Resource<DynamicType = ()>
        + Clone
        + Serialize
        + DeserializeOwned
        + Debug
        + Send
        + Sync
        + 'static,
    K: Resource<DynamicType = ()>,
    A: Serialize,
{
    let reference = controller_reference(owner)?;
    let mut value = serde_json::to_value(config)
        .map_err(|e| OwnedError::Api(Error::Client(kube::Error::SerdeError(e))))?;
    let name = value
        .pointer("/metadata/name")
        .and_then(|n| n.as_str())
        .map(str::to_owned)
        .ok_or(OwnedError::Unnamed)?;
    let metadata = value
        .as_object_mut()
        .and_then(|o| o.get_mut("metadata"))
        .and_then(|m| m.as_object_mut())
        .ok_or(OwnedError::Unnamed)?;
    let references = metadata
        .entry("ownerReferences")
        .or_insert_with(|| serde_json::Value::Array(vec![]));
    if let Some(list) = references.as_array_mut() {
        // The owner reference is a list-map keyed by uid: one entry per owner.
        list.retain(|r| r.get("uid").and_then(|u| u.as_str()) != Some(reference.uid.as_str()));
        list.push(serde_json::to_value(&reference).expect("an OwnerReference serializes"));
    }
    Ok(client.apply_configuration(&name, &value, options).await?)
}
