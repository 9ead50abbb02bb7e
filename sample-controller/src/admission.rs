//! Foo's admission webhooks, served with the conversion webhook on one port
//! ([`crate::conversion::bind`]): replicas default to 1; the Deployment's name must be a DNS
//! label and may not change (the controller would orphan the old Deployment); more than 5
//! replicas is allowed with a warning. The paths are the ones the `webhook` generator's
//! `+kubebuilder:webhook` markers give for Foo v1beta1.

use kube_codegen_runtime::validation::FieldError;
use kube_codegen_runtime::webhook::admission::{
    AdmissionError, Defaulter, Request, Validator, Warnings,
};
use sample_api::apis::samplecontroller::v1beta1::Foo;

/// The path of Foo's defaulting webhook.
pub const MUTATE_PATH: &str = "/mutate-samplecontroller-k8s-io-v1beta1-foo";
/// The path of Foo's validating webhook.
pub const VALIDATE_PATH: &str = "/validate-samplecontroller-k8s-io-v1beta1-foo";

// ANCHOR: webhook
/// Foo's defaulter and validator. Their configurations (config/webhook/manifests.yaml) are
/// generated from the markers on the impls, and the controller's Service serves them with
/// `/convert`.
pub struct FooWebhook;

/// Replicas default to 1.
///
/// +kubebuilder:webhook:path=/mutate-samplecontroller-k8s-io-v1beta1-foo,mutating=true,failurePolicy=fail,sideEffects=None,groups=samplecontroller.k8s.io,resources=foos,verbs=create;update,versions=v1beta1,name=mfoo-v1beta1.kb.io,admissionReviewVersions=v1,serviceName=sample-controller-webhook,serviceNamespace=sample-controller
impl Defaulter<Foo> for FooWebhook {
    async fn default(&self, foo: &mut Foo, _req: &Request) -> Result<(), AdmissionError> {
        foo.spec.replicas.get_or_insert(1);
        Ok(())
    }
}

/// A DNS label for the Deployment, which may not be renamed.
///
/// +kubebuilder:webhook:path=/validate-samplecontroller-k8s-io-v1beta1-foo,mutating=false,failurePolicy=fail,sideEffects=None,groups=samplecontroller.k8s.io,resources=foos,verbs=create;update,versions=v1beta1,name=vfoo-v1beta1.kb.io,admissionReviewVersions=v1,serviceName=sample-controller-webhook,serviceNamespace=sample-controller
impl Validator<Foo> for FooWebhook {
    async fn validate_create(&self, foo: &Foo, _req: &Request) -> Result<Warnings, AdmissionError> {
        check(foo)
    }

    async fn validate_update(
        &self,
        old: &Foo,
        new: &Foo,
        _req: &Request,
    ) -> Result<Warnings, AdmissionError> {
        if old.spec.deployment_name != new.spec.deployment_name {
            return Err(FieldError::invalid(
                "spec.deploymentName",
                &new.spec.deployment_name,
                "field is immutable",
            )
            .into());
        }
        check(new)
    }
}

fn check(foo: &Foo) -> Result<Warnings, AdmissionError> {
    let name = &foo.spec.deployment_name;
    let label = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
    if !label {
        return Err(FieldError::invalid(
            "spec.deploymentName",
            name,
            "must be a lowercase DNS label",
        )
        .into());
    }
    Ok(match foo.spec.replicas {
        Some(n) if n > 5 => vec![format!(
            "spec.replicas: {n} replicas of {name} may not fit the cluster"
        )],
        _ => vec![],
    })
}
// ANCHOR_END: webhook
