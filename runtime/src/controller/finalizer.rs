//! Finalizers: clean up before an object goes, without ever leaving the finalizer behind
//! or removing it before the cleanup succeeded.

use std::fmt::{Debug, Display};
use std::future::Future;
use std::sync::Arc;

use kube::api::{Api, Patch, PatchParams};
use kube::{Resource, ResourceExt};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::json;

use super::Action;

/// What [`finalizer`] asks the reconcile to do.
#[derive(Debug)]
pub enum FinalizerEvent<K> {
    /// The object lives (the finalizer is on it): make the world match it.
    Apply(Arc<K>),
    /// The object is being deleted and still carries the finalizer: clean up what it
    /// owns outside the cluster. The finalizer is removed once this returns `Ok`.
    Cleanup(Arc<K>),
}

/// Why [`finalizer`] failed.
#[derive(Debug, thiserror::Error)]
pub enum FinalizerError<E: Display + Debug> {
    /// The reconcile (apply or cleanup) failed; on cleanup the finalizer stays.
    #[error("reconcile failed: {0}")]
    Reconcile(E),
    /// Adding or removing the finalizer failed; a conflict (the object changed meanwhile)
    /// is one, and is resolved by the retry the controller makes.
    #[error("patching the finalizer failed: {0}")]
    Patch(#[source] kube::Error),
    /// The object has no name (a finalizer needs a persisted object).
    #[error("the object has no name")]
    Unnamed,
}

/// Run `reconcile` under the finalizer `name` (controller-runtime's `controllerutil`
/// finalizer helpers plus the reconcile around them):
///
/// - a live object without the finalizer gets it first (a JSON patch that tests the
///   object's resourceVersion, so a concurrent change is a conflict, never a lost update),
///   then [`FinalizerEvent::Apply`] runs on the patched object;
/// - a live object with it: `Apply`;
/// - a deleted object with it: [`FinalizerEvent::Cleanup`], then the finalizer is removed
///   by a JSON patch that tests it is still at its index, only if cleanup succeeded;
/// - a deleted object without it: nothing to do.
///
/// ```no_run
/// use std::sync::Arc;
/// use k8s_openapi::api::core::v1::ConfigMap;
/// use kube::Api;
/// use kube_codegen_runtime::controller::{finalizer, Action, FinalizerError, FinalizerEvent, Request};
///
/// async fn reconcile(req: Request<ConfigMap>, api: Arc<Api<ConfigMap>>) -> Result<Action, FinalizerError<String>> {
///     let Some(config) = req.object else { return Ok(Action::Done) };
///     finalizer(&api, "example.com/bucket", config, |event| async move {
///         match event {
///             FinalizerEvent::Apply(_config) => Ok(Action::Done),   // create the bucket
///             FinalizerEvent::Cleanup(_config) => Ok(Action::Done), // delete it; Err keeps the finalizer
///         }
///     })
///     .await
/// }
/// ```
///
/// # Errors
/// [`FinalizerError::Reconcile`] from `reconcile`, [`FinalizerError::Patch`] when the
/// finalizer cannot be added or removed (a conflict included: the controller retries).
pub async fn finalizer<K, F, Fut, E>(
    api: &Api<K>,
    name: &str,
    obj: Arc<K>,
    reconcile: F,
) -> Result<Action, FinalizerError<E>>
where
    K: Resource + Clone + DeserializeOwned + Serialize + Debug,
    F: FnOnce(FinalizerEvent<K>) -> Fut,
    Fut: Future<Output = Result<Action, E>>,
    E: Display + Debug,
{
    let object_name = obj.meta().name.clone().ok_or(FinalizerError::Unnamed)?;
    let finalizers = obj.finalizers();
    let index = finalizers.iter().position(|f| f == name);
    let deleting = obj.meta().deletion_timestamp.is_some();
    let params = PatchParams::default();
    match (deleting, index) {
        (false, Some(_)) => reconcile(FinalizerEvent::Apply(obj))
            .await
            .map_err(FinalizerError::Reconcile),
        (false, None) => {
            let rv = obj.resource_version();
            let ops = if obj.meta().finalizers.is_none() {
                json!([
                    {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
                    {"op": "add", "path": "/metadata/finalizers", "value": [name]},
                ])
            } else {
                json!([
                    {"op": "test", "path": "/metadata/resourceVersion", "value": rv},
                    {"op": "add", "path": "/metadata/finalizers/-", "value": name},
                ])
            };
            let patch: json_patch::Patch =
                serde_json::from_value(ops).expect("the operations are a JSON patch");
            let patched = api
                .patch(&object_name, &params, &Patch::Json::<()>(patch))
                .await
                .map_err(FinalizerError::Patch)?;
            reconcile(FinalizerEvent::Apply(Arc::new(patched)))
                .await
                .map_err(FinalizerError::Reconcile)
        }
        (true, Some(i)) => {
            let action = reconcile(FinalizerEvent::Cleanup(obj))
                .await
                .map_err(FinalizerError::Reconcile)?;
            let path = format!("/metadata/finalizers/{i}");
            let patch: json_patch::Patch = serde_json::from_value(json!([
                {"op": "test", "path": path, "value": name},
                {"op": "remove", "path": path},
            ]))
            .expect("the operations are a JSON patch");
            match api
                .patch(&object_name, &params, &Patch::Json::<()>(patch))
                .await
            {
                Ok(_) => Ok(action),
                // Already gone: another worker or process finished the cleanup.
                Err(kube::Error::Api(s)) if s.code == 404 => Ok(Action::Done),
                Err(e) => Err(FinalizerError::Patch(e)),
            }
        }
        (true, None) => Ok(Action::Done),
    }
}
