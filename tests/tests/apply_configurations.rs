//! Server-side apply with generated apply configurations, on the real API server: typed
//! apply, extraction from managedFields, the round-trip property (applying what was
//! extracted changes nothing), typed conflicts, and the refusal of an empty field manager.

use kube::api::PostParams;
use kube_codegen_runtime::apply::ApplyError;
use kube_codegen_runtime::client::ApplyOptions;
use kube_codegen_tests::*;
use sample_api::Clientset;
use sample_api::apis::samplecontroller::v1alpha1::Foo;
use sample_api::generated::applyconfigurations::samplecontroller_v1alpha1::{
    FooApplyConfiguration, FooSpecApplyConfiguration, FooStatusApplyConfiguration, extract_foo,
    extract_foo_status,
};

async fn setup(prefix: &str) -> (Clientset, TestNamespace) {
    let client = client().await;
    for f in kube_codegen::Config::from_crate(repo_root().join("sample-api"))
        .unwrap()
        .generate()
        .unwrap()
        .files
    {
        if is_crd_file(&f) {
            apply_crd(&client, &parse_crd(&f.contents)).await.unwrap();
        }
    }
    let ns = TestNamespace::new(&client, prefix).await;
    (Clientset::new(client), ns)
}

fn rv(foo: &Foo) -> String {
    foo.metadata.resource_version.clone().unwrap()
}

#[tokio::test]
async fn extraction_round_trips_and_reapplying_it_changes_nothing() {
    let (cs, ns) = setup("ac-roundtrip").await;
    let foos = cs.samplecontroller_v1alpha1().foos(&ns.name);
    let owner = ApplyOptions::new("ac-owner");
    let applied = FooApplyConfiguration::new("round", &ns.name)
        .with_labels([("app", "round"), ("tier", "web")])
        .with_finalizers(["example.com/keep"])
        .with_spec(
            FooSpecApplyConfiguration::default()
                .with_deployment_name("round-deploy")
                .with_replicas(3),
        );
    let first = foos.apply(&applied, &owner).await.unwrap();
    assert_eq!(first.spec.replicas, Some(3));

    // Another manager owns one more label: it must not show up in ac-owner's extraction.
    let other = FooApplyConfiguration::new("round", &ns.name).with_labels([("team", "b")]);
    let after_other = foos
        .apply(&other, &ApplyOptions::new("ac-other"))
        .await
        .unwrap();

    // What ac-owner owns is exactly what it applied.
    let extracted = extract_foo(&after_other, "ac-owner").unwrap();
    assert_eq!(extracted, applied);
    assert_eq!(extract_foo(&after_other, "ac-other").unwrap(), other);
    // A manager that applied nothing owns nothing but the object's identity.
    assert_eq!(
        extract_foo(&after_other, "nobody").unwrap(),
        FooApplyConfiguration::new("round", &ns.name)
    );

    // Applying the extraction unchanged is a no-op: the resourceVersion does not move.
    let again = foos.apply(&extracted, &owner).await.unwrap();
    assert_eq!(
        rv(&again),
        rv(&after_other),
        "re-applying the extraction wrote"
    );
    assert_eq!(again, after_other);

    // Status: applied through the subresource, extracted by extract_foo_status.
    let status = FooApplyConfiguration::new("round", &ns.name)
        .with_status(FooStatusApplyConfiguration::default().with_available_replicas(2));
    let with_status = foos
        .apply_status(&status, &ApplyOptions::new("ac-status"))
        .await
        .unwrap();
    assert_eq!(with_status.status.as_ref().unwrap().available_replicas, 2);
    let extracted_status = extract_foo_status(&with_status, "ac-status").unwrap();
    assert_eq!(extracted_status, status);
    // The main resource's extraction of that manager is empty: it applied only status.
    assert_eq!(
        extract_foo(&with_status, "ac-status").unwrap(),
        FooApplyConfiguration::new("round", &ns.name)
    );
    let status_again = foos
        .apply_status(&extracted_status, &ApplyOptions::new("ac-status"))
        .await
        .unwrap();
    assert_eq!(rv(&status_again), rv(&with_status));

    // Change one field of the extraction and apply: only that field moves, and a field
    // left out of the next apply is released (removed, as nobody else owns it).
    let mut changed = extract_foo(&status_again, "ac-owner").unwrap();
    changed.spec.as_mut().unwrap().replicas = None;
    // Releasing the finalizer also lets the test namespace go.
    changed.metadata.as_mut().unwrap().finalizers = None;
    changed = changed.with_labels([("tier", "db")]);
    let after_change = foos.apply(&changed, &owner).await.unwrap();
    assert_eq!(after_change.spec.replicas, None);
    assert_eq!(after_change.metadata.finalizers, None);
    assert_eq!(after_change.spec.deployment_name, "round-deploy");
    let labels = after_change.metadata.labels.clone().unwrap();
    assert_eq!(labels["tier"], "db");
    assert_eq!(labels["team"], "b", "another manager's label stays");
    assert_eq!(extract_foo(&after_change, "ac-owner").unwrap(), changed);
}

#[tokio::test]
async fn conflicts_are_typed_with_managers_and_fields() {
    let (cs, ns) = setup("ac-conflict").await;
    let foos = cs.samplecontroller_v1alpha1().foos(&ns.name);
    let spec = |replicas| {
        FooSpecApplyConfiguration::default()
            .with_deployment_name("c-deploy")
            .with_replicas(replicas)
    };
    foos.apply(
        &FooApplyConfiguration::new("c", &ns.name).with_spec(spec(1)),
        &ApplyOptions::new("first-manager"),
    )
    .await
    .unwrap();
    // An Update (PUT) manager owns what it changed too.
    let mut current = foos.get("c").await.unwrap();
    current.spec.deployment_name = "edited".into();
    foos.update(
        &current,
        &PostParams {
            field_manager: Some("an-editor".into()),
            ..PostParams::default()
        },
    )
    .await
    .unwrap();

    let err = foos
        .apply(
            &FooApplyConfiguration::new("c", &ns.name).with_spec(spec(2)),
            &ApplyOptions::new("second-manager"),
        )
        .await
        .unwrap_err();
    let ApplyError::Conflict(conflict) = &err else {
        panic!("expected ApplyError::Conflict, got {err:?}");
    };
    let mut pairs: Vec<(&str, &str)> = conflict
        .conflicts
        .iter()
        .map(|c| (c.manager.as_str(), c.field.as_str()))
        .collect();
    pairs.sort();
    assert_eq!(
        pairs,
        [
            ("an-editor", ".spec.deploymentName"),
            ("first-manager", ".spec.replicas")
        ],
        "{err}"
    );
    assert_eq!(conflict.status.code, 409);
    // Forced, the second manager takes both fields.
    let forced = foos
        .apply(
            &FooApplyConfiguration::new("c", &ns.name).with_spec(spec(2)),
            &ApplyOptions::new("second-manager").force(),
        )
        .await
        .unwrap();
    assert_eq!(forced.spec.replicas, Some(2));
    assert_eq!(forced.spec.deployment_name, "c-deploy");
}

#[tokio::test]
async fn an_empty_field_manager_is_refused_before_any_request() {
    let (cs, ns) = setup("ac-nomanager").await;
    let foos = cs.samplecontroller_v1alpha1().foos(&ns.name);
    let config = FooApplyConfiguration::new("x", &ns.name)
        .with_spec(FooSpecApplyConfiguration::default().with_deployment_name("x-deploy"));
    let err = foos
        .apply(&config, &ApplyOptions::new(""))
        .await
        .unwrap_err();
    assert!(matches!(err, ApplyError::MissingFieldManager), "{err:?}");
    let err = foos
        .apply_status(&config, &ApplyOptions::new(""))
        .await
        .unwrap_err();
    assert!(matches!(err, ApplyError::MissingFieldManager), "{err:?}");
    // Nothing was sent: the object does not exist.
    assert!(foos.get("x").await.unwrap_err().is_not_found());
    // Without a name there is no URL either.
    let nameless = FooApplyConfiguration::default();
    let err = foos
        .apply(&nameless, &ApplyOptions::new("m"))
        .await
        .unwrap_err();
    assert!(matches!(err, ApplyError::MissingName), "{err:?}");
}

mod embedded {
    //! The same round trip through apply configurations of Kubernetes types
    //! (tests/shapes' Workload embeds a PodTemplateSpec and a Condition list).

    use super::*;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::Time;
    use kube_codegen_shapes::api::embed::Workload;
    use kube_codegen_shapes::applyconfigurations::embed_v1::{
        WorkloadApplyConfiguration, WorkloadSpecApplyConfiguration,
        WorkloadStatusApplyConfiguration, extract_workload, extract_workload_status,
    };
    use kube_codegen_shapes::applyconfigurations::k8s::{
        ConditionApplyConfiguration, ContainerApplyConfiguration, ContainerPortApplyConfiguration,
        PodSpecApplyConfiguration, PodTemplateSpecApplyConfiguration,
    };
    use kube_codegen_shapes::clientset::Clientset as ShapesClientset;

    async fn setup(prefix: &str) -> (ShapesClientset, TestNamespace) {
        let client = client().await;
        let generated = kube_codegen::Config::from_crate(repo_root().join("tests/shapes"))
            .unwrap()
            .generate()
            .unwrap();
        let crd = generated
            .files
            .iter()
            .find(|f| f.path.ends_with("embed.kube-codegen.dev_workloads.yaml"))
            .expect("the Workload CRD");
        apply_crd(&client, &parse_crd(&crd.contents)).await.unwrap();
        let ns = TestNamespace::new(&client, prefix).await;
        (ShapesClientset::new(client), ns)
    }

    fn template(containers: Vec<ContainerApplyConfiguration>) -> PodTemplateSpecApplyConfiguration {
        PodTemplateSpecApplyConfiguration::default()
            .with_spec(PodSpecApplyConfiguration::default().with_containers(containers))
    }

    fn wrv(w: &Workload) -> String {
        w.metadata.resource_version.clone().unwrap()
    }

    #[tokio::test]
    async fn two_managers_share_a_pod_template_and_extractions_round_trip() {
        let (cs, ns) = setup("ac-embedded").await;
        let workloads = cs.embed_v1().workloads(&ns.name);
        // The controller owns the app container; an admission-like manager adds a sidecar
        // and the service account, in the same template, without conflict.
        let app = WorkloadApplyConfiguration::new("w", &ns.name).with_spec(
            WorkloadSpecApplyConfiguration::default().with_template(template(vec![
                ContainerApplyConfiguration::default()
                    .with_name("app")
                    .with_image("registry.example/app:1")
                    .with_ports([ContainerPortApplyConfiguration::default()
                        .with_container_port(8080)
                        .with_name("http")]),
            ])),
        );
        workloads
            .apply(&app, &ApplyOptions::new("workload-controller"))
            .await
            .unwrap();
        let sidecar = WorkloadApplyConfiguration::new("w", &ns.name).with_spec(
            WorkloadSpecApplyConfiguration::default().with_template(
                template(vec![
                    ContainerApplyConfiguration::default()
                        .with_name("sidecar")
                        .with_image("registry.example/proxy:1"),
                ])
                .with_spec(
                    PodSpecApplyConfiguration::default()
                        .with_service_account_name("proxy")
                        .with_containers([ContainerApplyConfiguration::default()
                            .with_name("sidecar")
                            .with_image("registry.example/proxy:1")]),
                ),
            ),
        );
        let both = workloads
            .apply(&sidecar, &ApplyOptions::new("sidecar-injector"))
            .await
            .unwrap();
        let pod = both.spec.template.spec.as_ref().unwrap();
        let names: Vec<&str> = pod.containers.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["app", "sidecar"]);
        assert_eq!(pod.service_account_name.as_deref(), Some("proxy"));

        // Each extraction is what that manager applied, and re-applying it writes nothing.
        // The port's `protocol` (a list-map key, defaulted to TCP by the server) is not
        // the controller's: extraction leaves it out, so re-applying claims nothing new.
        let mine = extract_workload(&both, "workload-controller").unwrap();
        assert_eq!(mine, app);
        let theirs = extract_workload(&both, "sidecar-injector").unwrap();
        assert_eq!(theirs, sidecar);
        let again = workloads
            .apply(&mine, &ApplyOptions::new("workload-controller"))
            .await
            .unwrap();
        assert_eq!(wrv(&again), wrv(&both));
        let again = workloads
            .apply(&theirs, &ApplyOptions::new("sidecar-injector"))
            .await
            .unwrap();
        assert_eq!(wrv(&again), wrv(&both));

        // Conditions: a list map keyed by type, applied through status.
        let ready = ConditionApplyConfiguration::default()
            .with_type("Ready")
            .with_status("True")
            .with_reason("PodsReady")
            .with_message("all pods ready")
            .with_last_transition_time(Time(
                k8s_openapi::jiff::Timestamp::from_second(1_700_000_000).unwrap(),
            ));
        let status = WorkloadApplyConfiguration::new("w", &ns.name)
            .with_status(WorkloadStatusApplyConfiguration::default().with_conditions([ready]));
        let with_status = workloads
            .apply_status(&status, &ApplyOptions::new("workload-controller"))
            .await
            .unwrap();
        let extracted = extract_workload_status(&with_status, "workload-controller").unwrap();
        assert_eq!(extracted, status);
        let again = workloads
            .apply_status(&extracted, &ApplyOptions::new("workload-controller"))
            .await
            .unwrap();
        assert_eq!(wrv(&again), wrv(&with_status));

        // Releasing the app container's port (leaving it out) removes just that.
        let mut fewer = extract_workload(&again, "workload-controller").unwrap();
        let containers = fewer
            .spec
            .as_mut()
            .and_then(|s| s.template.as_mut())
            .and_then(|t| t.spec.as_mut())
            .and_then(|s| s.containers.as_mut())
            .unwrap();
        containers[0].ports = None;
        let after = workloads
            .apply(&fewer, &ApplyOptions::new("workload-controller"))
            .await
            .unwrap();
        let pod = after.spec.template.spec.as_ref().unwrap();
        assert_eq!(pod.containers[0].ports, None);
        assert_eq!(pod.containers[1].name, "sidecar");
    }
}
