//! Does `deep_copy_into` beat `clone()` on a realistic object? A controller's hot path
//! copies a cached Foo, changes its status and compares: this measures that copy, into a
//! reused destination (deep_copy_into) versus a fresh clone.
//!
//! cargo run --release -p sample-api --example deepcopy_bench

use std::hint::black_box;
use std::time::Instant;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    ManagedFieldsEntry, ObjectMeta, OwnerReference,
};
use kube_codegen_runtime::DeepCopy;
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec, FooStatus};

fn realistic() -> Foo {
    let labels = (0..8)
        .map(|i| (format!("example.com/label-{i}"), format!("value-{i}")))
        .collect();
    let annotations = (0..4)
        .map(|i| (format!("example.com/annotation-{i}"), "x".repeat(200)))
        .collect();
    let mut foo = Foo::new(
        "a-realistic-foo-name",
        FooSpec {
            deployment_name: "a-realistic-deployment".into(),
            replicas: Some(3),
        },
    );
    foo.metadata = ObjectMeta {
        name: Some("a-realistic-foo-name".into()),
        namespace: Some("production-namespace".into()),
        uid: Some("6f0c3b2e-6a1c-4d0e-9d9b-0b1d8d6a3c11".into()),
        resource_version: Some("123456789".into()),
        labels: Some(labels),
        annotations: Some(annotations),
        owner_references: Some(vec![OwnerReference {
            api_version: "v1".into(),
            kind: "Thing".into(),
            name: "owner".into(),
            uid: "u".into(),
            ..Default::default()
        }]),
        managed_fields: Some(vec![
            ManagedFieldsEntry {
                manager: Some("kubectl".into()),
                operation: Some("Apply".into()),
                ..Default::default()
            };
            3
        ]),
        finalizers: Some(vec!["example.com/finalizer".into()]),
        ..Default::default()
    };
    foo.status = Some(FooStatus {
        available_replicas: 3,
    });
    foo
}

fn main() {
    let src = realistic();
    let n = 200_000;
    let mut medians = vec![];
    for label in ["clone", "deep_copy_into"] {
        let mut runs = vec![];
        for _ in 0..5 {
            let mut out = src.clone();
            let start = Instant::now();
            for _ in 0..n {
                if label == "clone" {
                    out = black_box(&src).clone();
                } else {
                    black_box(&src).deep_copy_into(&mut out);
                }
                black_box(&mut out);
            }
            runs.push(start.elapsed().as_nanos() as f64 / n as f64);
        }
        runs.sort_by(f64::total_cmp);
        println!(
            "{label:>15}: median {:.0} ns/copy over 5 runs of {n} (runs: {:?})",
            runs[2],
            runs.iter().map(|r| r.round()).collect::<Vec<_>>()
        );
        medians.push(runs[2]);
    }
    println!("deep_copy_into / clone = {:.2}", medians[1] / medians[0]);
}
