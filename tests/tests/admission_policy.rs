//! E2E: the `admission-policy` generator's ValidatingAdmissionPolicy, enforced by the real
//! API server with no webhook. sample-api's Foo v1beta1 is marked
//! `+kube-codegen:admissionpolicy`; its committed policy and binding
//! (`sample-api/config/policy/`) are applied with kubectl. To show that the policy, not the
//! CRD's schema, refuses what it refuses, Foo's CRD then has its schemas reduced to
//! `x-kubernetes-preserve-unknown-fields` (as a CRD someone else ships might be), and no
//! conversion webhook.
//!
//! Shown: the server type-checks every expression against Foo's generated schema without a
//! warning; an object the schema
//! would refuse (a bound, a required field) is refused by the policy with the message the
//! generator wrote; a valid one is created; and the committed file is what `generate`
//! writes.

use std::time::Duration;

use anyhow::Result;
use k8s_openapi::api::admissionregistration::v1::ValidatingAdmissionPolicy;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube_codegen_tests::*;
use serde_json::{Value, json};

const POLICY_FILE: &str = "sample-api/config/policy/samplecontroller.k8s.io_foos.yaml";
const POLICY: &str = "foos-v1beta1.samplecontroller.k8s.io";

/// A merge patch that opens every version's schema of sample-api's Foo CRD (which the test
/// control plane installs from the start) and turns its conversion off.
fn open_foo_crd() -> Value {
    let text = std::fs::read_to_string(
        repo_root().join("sample-api/crds/samplecontroller.k8s.io_foos.yaml"),
    )
    .unwrap();
    let mut crd: Value = serde_json::to_value(parse_crd(&text)).unwrap();
    for v in crd["spec"]["versions"].as_array_mut().unwrap() {
        v["schema"] = json!({"openAPIV3Schema": {
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": true,
        }});
        v.as_object_mut()
            .unwrap()
            .remove("additionalPrinterColumns");
    }
    json!({"spec": {
        "conversion": {"strategy": "None", "webhook": null},
        "versions": crd["spec"]["versions"],
    }})
}

fn foo(name: &str, spec: Value) -> DynamicObject {
    serde_json::from_value(json!({
        "apiVersion": "samplecontroller.k8s.io/v1beta1",
        "kind": "Foo",
        "metadata": {"name": name},
        "spec": spec,
    }))
    .unwrap()
}

#[tokio::test]
async fn the_generated_policy_is_enforced_by_the_api_server() -> Result<()> {
    // The committed file is the generator's output.
    let generated = kube_codegen::Config::from_crate(repo_root().join("sample-api"))?
        .generators([kube_codegen::GeneratorName::AdmissionPolicy])
        .generate()?;
    let file = generated
        .files
        .iter()
        .find(|f| {
            f.path.ends_with("samplecontroller.k8s.io_foos.yaml")
                && f.contents.contains("ValidatingAdmissionPolicy")
        })
        .expect("Foo's policy");
    assert_eq!(
        file.contents,
        std::fs::read_to_string(repo_root().join(POLICY_FILE))?,
        "{POLICY_FILE} is stale: run `kube-codegen generate sample-api`"
    );

    let client = client().await;
    let path = repo_root().join(POLICY_FILE);
    kubectl_ok(&["apply", "--server-side", "-f", path.to_str().unwrap()]);

    // The server type-checks the expressions against Foo's schema: no warning for any.
    let policies: Api<ValidatingAdmissionPolicy> = Api::all(client.clone());
    let checked = eventually(
        "the policy to be type-checked",
        Duration::from_secs(30),
        || {
            let policies = policies.clone();
            async move {
                let p = policies.get(POLICY).await?;
                Ok(p.status
                    .filter(|s| s.observed_generation == p.metadata.generation)
                    .and_then(|s| s.type_checking))
            }
        },
    )
    .await?;
    let warnings = checked.expression_warnings.unwrap_or_default();
    assert!(
        warnings.is_empty(),
        "type-checking warnings: {}",
        warnings
            .iter()
            .map(|w| format!("{}: {}", w.field_ref, w.warning))
            .collect::<Vec<_>>()
            .join("\n")
    );

    // Now the schema open: what is refused from here on, the policy refuses.
    let crds: Api<k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition> =
        Api::all(client.clone());
    crds.patch(
        "foos.samplecontroller.k8s.io",
        &kube::api::PatchParams::default(),
        &kube::api::Patch::Merge(open_foo_crd()),
    )
    .await?;
    wait_established(&client, "foos.samplecontroller.k8s.io").await?;
    let ns = TestNamespace::new(&client, "admission-policy").await;
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("samplecontroller.k8s.io", "v1beta1", "Foo"),
        "foos",
    );
    let foos: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns.name, &ar);
    let refused = |name: &'static str, spec: Value| {
        let foos = foos.clone();
        async move {
            match foos.create(&PostParams::default(), &foo(name, spec)).await {
                Err(kube::Error::Api(s)) => Ok(Some(s.message)),
                Err(e) => Err(e.into()),
                Ok(_) => {
                    // Not yet enforced (the binding is picked up asynchronously): try again.
                    foos.delete(name, &Default::default()).await?;
                    Ok(None)
                }
            }
        }
    };
    // The binding takes effect asynchronously: wait for the first refusal.
    let message = eventually(
        "the policy to refuse 20 replicas",
        Duration::from_secs(30),
        || refused("too-many", json!({"deploymentName": "d", "replicas": 20})),
    )
    .await?;
    assert!(
        message.contains(&format!("ValidatingAdmissionPolicy '{POLICY}'"))
            && message.contains("spec.replicas: should be less than or equal to 10"),
        "{message}"
    );
    let message = refused("no-deployment", json!({"replicas": 1}))
        .await?
        .expect("refused");
    assert!(
        message.contains("spec.deploymentName: Required value"),
        "{message}"
    );
    let message = refused(
        "negative",
        json!({"deploymentName": "d", "minReadySeconds": -1}),
    )
    .await?
    .expect("refused");
    assert!(
        message.contains("spec.minReadySeconds: should be greater than or equal to 0"),
        "{message}"
    );
    foos.create(
        &PostParams::default(),
        &foo("fine", json!({"deploymentName": "d", "replicas": 3})),
    )
    .await?;
    Ok(())
}
