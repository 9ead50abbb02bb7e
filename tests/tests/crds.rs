//! E2E: the CRDs kube-codegen generates, on a real kube-apiserver.
//!
//! Every assertion is about what the server does (accepts, rejects, defaults, serves),
//! never about our own YAML.

use std::time::Duration;

use anyhow::Result;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, ApiResource, DynamicObject, GroupVersionKind, PostParams};
use kube_codegen_tests::*;
use serde_json::{Value, json};

fn generate(crate_dir: &str) -> Vec<(String, CustomResourceDefinition)> {
    let config = kube_codegen::Config::from_crate(repo_root().join(crate_dir)).expect("config");
    let generated = config
        .generate()
        .unwrap_or_else(|e| panic!("generate {crate_dir}:\n{e}"));
    generated
        .files
        .iter()
        .filter(|f| is_crd_file(f))
        .map(|f| {
            (
                f.path.file_name().unwrap().to_string_lossy().into_owned(),
                parse_crd(&f.contents),
            )
        })
        .collect()
}

async fn install(crate_dir: &str) -> Vec<CustomResourceDefinition> {
    let client = client().await;
    let mut out = vec![];
    for (_, crd) in generate(crate_dir) {
        out.push(apply_crd(&client, &crd).await.expect("CRD established"));
    }
    out
}

fn resource(group: &str, version: &str, kind: &str, plural: &str) -> ApiResource {
    ApiResource::from_gvk_with_plural(&GroupVersionKind::gvk(group, version, kind), plural)
}

fn object(ar: &ApiResource, value: Value) -> DynamicObject {
    let mut v = value;
    v["apiVersion"] = json!(ar.api_version);
    v["kind"] = json!(ar.kind);
    serde_json::from_value(v).expect("object")
}

/// Create an object; Ok(server's copy) or Err(the server's message).
async fn create(ns: Option<&str>, ar: &ApiResource, value: Value) -> Result<Value, String> {
    let client = client().await;
    let api: Api<DynamicObject> = match ns {
        Some(ns) => Api::namespaced_with(client, ns, ar),
        None => Api::all_with(client, ar),
    };
    match api.create(&PostParams::default(), &object(ar, value)).await {
        Ok(o) => Ok(serde_json::to_value(o).unwrap()),
        Err(kube::Error::Api(status)) => Err(status.message.clone()),
        Err(e) => panic!("transport error: {e}"),
    }
}

#[tokio::test]
async fn sample_api_crds_are_accepted_by_kubectl_and_the_rust_client() {
    let client = client().await;
    // What kubectl applies is the committed YAML; it must equal a fresh generation.
    let fresh = kube_codegen::Config::from_crate(repo_root().join("sample-api"))
        .unwrap()
        .generate()
        .unwrap();
    for f in fresh.files.iter().filter(|f| is_crd_file(f)) {
        let committed = std::fs::read_to_string(&f.path).expect("committed CRD exists");
        assert_eq!(
            committed,
            f.contents,
            "{} is stale: run kube-codegen generate sample-api",
            f.path.display()
        );
    }
    // The committed YAML, except that a webhook conversion points at this process's webhook
    // instead of the in-cluster Service the test cluster lacks (other tests here convert
    // Foos meanwhile).
    let dir = std::env::temp_dir().join(format!("kube-codegen-e2e-crds-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (file, crd) in generate("sample-api") {
        let crd = if conversion::uses_webhook(&crd) {
            conversion::repoint_installed(&client, &crd).await.unwrap();
            conversion::pointed_at_test_webhook(&crd)
        } else {
            crd
        };
        std::fs::write(dir.join(file), serde_yaml::to_string(&crd).unwrap()).unwrap();
    }
    kubectl_ok(&[
        "apply",
        "--server-side",
        "--field-manager=kubectl-e2e",
        "--force-conflicts",
        "-f",
        dir.to_str().unwrap(),
    ]);
    for (file, crd) in generate("sample-api") {
        let name = crd.metadata.name.clone().unwrap();
        let via_kubectl = wait_established(&client, &name)
            .await
            .expect("established after kubectl apply");
        let via_rust = apply_crd(&client, &crd)
            .await
            .expect("established after Rust apply");
        for served in [&via_kubectl, &via_rust] {
            let conditions = crd_conditions(served);
            assert!(
                !conditions
                    .iter()
                    .any(|(t, s)| t == "NonStructuralSchema" && s == "True"),
                "{file}: server reports a non-structural schema: {conditions:?}"
            );
            assert!(
                conditions.contains(&("NamesAccepted".into(), "True".into())),
                "{file}: {conditions:?}"
            );
        }
        // The server stored our schemas as we wrote them: nothing pruned or rewritten.
        for (ours, theirs) in crd.spec.versions.iter().zip(&via_rust.spec.versions) {
            assert_eq!(
                serde_json::to_value(&ours.schema).unwrap(),
                serde_json::to_value(&theirs.schema).unwrap(),
                "{file}: the server changed the schema of {}",
                ours.name
            );
            assert_eq!(
                ours.additional_printer_columns, theirs.additional_printer_columns,
                "{file}"
            );
        }
    }
}

#[tokio::test]
async fn printer_columns_short_names_and_categories_show_in_kubectl() {
    install("sample-api").await;
    let client = client().await;
    let ns = TestNamespace::new(&client, "columns").await;
    let foo = json!({
        "apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
        "metadata": { "name": "example-foo" },
        "spec": { "deploymentName": "example-foo-deploy", "replicas": 3 }
    });
    kubectl_stdin(
        &["apply", "-n", &ns.name, "-f", "-"],
        Some(&foo.to_string()),
    );
    let out = kubectl_ok(&["get", "fo", "-n", &ns.name]);
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(
        header,
        ["NAME", "DEPLOYMENT", "REPLICAS", "AVAILABLE", "AGE"],
        "{out}"
    );
    let row: Vec<&str> = out.lines().nth(1).unwrap().split_whitespace().collect();
    assert_eq!(
        &row[..3],
        ["example-foo", "example-foo-deploy", "3"],
        "{out}"
    );
    // The category lists Foos too.
    let by_category = kubectl_ok(&["get", "samples", "-n", &ns.name, "-o", "name"]);
    assert!(
        by_category.contains("foo.samplecontroller.k8s.io/example-foo"),
        "{by_category}"
    );

    let tr = json!({
        "apiVersion": "insujang.github.io/v1beta1", "kind": "TestResource",
        "metadata": { "name": "example-tr" },
        "spec": { "command": "echo Hello World!", "customProperty": "asdasd=1234" }
    });
    kubectl_stdin(&["apply", "-n", &ns.name, "-f", "-"], Some(&tr.to_string()));
    let out = kubectl_ok(&["get", "ts", "-n", &ns.name]);
    assert!(out.lines().next().unwrap().contains("COMMAND"), "{out}");
    assert!(out.contains("echo Hello World!"), "{out}");

    // priority=1 columns show only with -o wide.
    install("tests/fixtures/conformance").await;
    let widget = json!({
        "apiVersion": "conformance.kube-codegen.dev/v1", "kind": "Widget",
        "metadata": { "name": "w" }, "spec": { "size": 2, "color": "Red" }
    });
    kubectl_stdin(
        &["apply", "-n", &ns.name, "-f", "-"],
        Some(&widget.to_string()),
    );
    let narrow = kubectl_ok(&["get", "wd", "-n", &ns.name]);
    let wide = kubectl_ok(&["get", "wd", "-n", &ns.name, "-o", "wide"]);
    assert!(!narrow.contains("MODE"), "{narrow}");
    assert!(
        wide.lines().next().unwrap().contains("MODE") && wide.contains("fast"),
        "{wide}"
    );
}

/// One row of the conformance table: an object and what the server must say.
struct Case {
    name: &'static str,
    resource: ApiResource,
    namespaced: bool,
    object: Value,
    /// None: accepted. Some(text): rejected with a message containing text.
    rejected_with: Option<&'static str>,
    /// Fields the server must have filled in (JSON pointer, value).
    defaults: Vec<(&'static str, Value)>,
}

#[tokio::test]
async fn conformance_table_server_enforces_generated_validation() {
    install("sample-api").await;
    install("tests/fixtures/conformance").await;
    let client = client().await;
    let ns = TestNamespace::new(&client, "conformance").await;
    let widget = resource("conformance.kube-codegen.dev", "v1", "Widget", "widgets");
    let gizmo = resource("conformance.kube-codegen.dev", "v1", "Gizmo", "gizmos");
    let foo = resource("samplecontroller.k8s.io", "v1alpha1", "Foo", "foos");
    let tr = resource(
        "insujang.github.io",
        "v1beta1",
        "TestResource",
        "testresources",
    );
    let w = |name: &str, spec: Value| json!({ "metadata": { "name": name }, "spec": spec });
    let cases = vec![
        Case {
            name: "widget valid, defaults applied",
            resource: widget.clone(),
            namespaced: true,
            object: w("ok", json!({"size": 3, "color": "Green"})),
            rejected_with: None,
            defaults: vec![
                ("/spec/replicas", json!(1)),
                ("/spec/minReplicas", json!(0)),
                ("/spec/mode", json!("fast")),
            ],
        },
        Case {
            name: "minimum",
            resource: widget.clone(),
            namespaced: true,
            object: w("small", json!({"size": 0, "color": "Red"})),
            rejected_with: Some(
                "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1",
            ),
            defaults: vec![],
        },
        Case {
            name: "maximum",
            resource: widget.clone(),
            namespaced: true,
            object: w("big", json!({"size": 11, "color": "Red"})),
            rejected_with: Some("should be less than or equal to 10"),
            defaults: vec![],
        },
        Case {
            name: "enum from a Rust enum",
            resource: widget.clone(),
            namespaced: true,
            object: w("purple", json!({"size": 1, "color": "Purple"})),
            rejected_with: Some("spec.color: Unsupported value: \"Purple\""),
            defaults: vec![],
        },
        Case {
            name: "enum marker",
            resource: widget.clone(),
            namespaced: true,
            object: w("slow", json!({"size": 1, "color": "Red", "mode": "slow"})),
            rejected_with: Some("spec.mode: Unsupported value: \"slow\""),
            defaults: vec![],
        },
        Case {
            name: "required field missing",
            resource: widget.clone(),
            namespaced: true,
            object: w("nocolor", json!({"size": 1})),
            rejected_with: Some("spec.color: Required value"),
            defaults: vec![],
        },
        Case {
            name: "CEL rule",
            resource: widget.clone(),
            namespaced: true,
            object: w(
                "cel",
                json!({"size": 1, "color": "Red", "replicas": 2, "minReplicas": 5}),
            ),
            rejected_with: Some("minReplicas must not exceed replicas"),
            defaults: vec![],
        },
        Case {
            name: "CEL rule satisfied",
            resource: widget.clone(),
            namespaced: true,
            object: w(
                "cel-ok",
                json!({"size": 1, "color": "Red", "replicas": 5, "minReplicas": 2}),
            ),
            rejected_with: None,
            defaults: vec![],
        },
        Case {
            name: "pattern",
            resource: widget.clone(),
            namespaced: true,
            object: w(
                "label",
                json!({"size": 1, "color": "Red", "label": "Bad_Label"}),
            ),
            rejected_with: Some("spec.label in body should match"),
            defaults: vec![],
        },
        Case {
            name: "maxLength",
            resource: widget.clone(),
            namespaced: true,
            object: w(
                "long",
                json!({"size": 1, "color": "Red", "label": "a-very-long-label-indeed"}),
            ),
            rejected_with: Some("may not be more than 20 bytes"),
            defaults: vec![],
        },
        Case {
            name: "maxItems",
            resource: widget.clone(),
            namespaced: true,
            object: w(
                "tags",
                json!({"size": 1, "color": "Red", "tags": ["a", "b", "c", "d"]}),
            ),
            rejected_with: Some("must have at most 3 items"),
            defaults: vec![],
        },
        Case {
            name: "spec required on the kind",
            resource: widget.clone(),
            namespaced: true,
            object: json!({"metadata": {"name": "nospec"}}),
            rejected_with: Some("spec: Required value"),
            defaults: vec![],
        },
        Case {
            name: "cluster-scoped minLength",
            resource: gizmo.clone(),
            namespaced: false,
            object: w("gz-bad", json!({"owner": "ab"})),
            rejected_with: Some("should be at least 3 chars long"),
            defaults: vec![],
        },
        Case {
            name: "cluster-scoped valid",
            resource: gizmo.clone(),
            namespaced: false,
            object: w(&format!("gz-{}", ns.name), json!({"owner": "abc"})),
            rejected_with: None,
            defaults: vec![],
        },
        Case {
            name: "TestResource pattern (tutorial: command ls)",
            resource: tr.clone(),
            namespaced: true,
            object: w("ls", json!({"command": "ls", "customProperty": "x"})),
            rejected_with: Some("spec.command in body should match '^(echo).*'"),
            defaults: vec![],
        },
        Case {
            name: "TestResource valid",
            resource: tr.clone(),
            namespaced: true,
            object: w("echo", json!({"command": "echo hi", "customProperty": "x"})),
            rejected_with: None,
            defaults: vec![],
        },
        Case {
            name: "TestResource missing customProperty",
            resource: tr.clone(),
            namespaced: true,
            object: w("noprop", json!({"command": "echo hi"})),
            rejected_with: Some("spec.customProperty: Required value"),
            defaults: vec![],
        },
        Case {
            name: "Foo replicas minimum",
            resource: foo.clone(),
            namespaced: true,
            object: w("foo0", json!({"deploymentName": "d", "replicas": 0})),
            rejected_with: Some("should be greater than or equal to 1"),
            defaults: vec![],
        },
        Case {
            name: "Foo replicas maximum",
            resource: foo.clone(),
            namespaced: true,
            object: w("foo11", json!({"deploymentName": "d", "replicas": 11})),
            rejected_with: Some("should be less than or equal to 10"),
            defaults: vec![],
        },
        Case {
            name: "Foo unknown fields are pruned",
            resource: foo.clone(),
            namespaced: true,
            object: w(
                "foo-prune",
                json!({"deploymentName": "d", "replicas": 1, "bogus": true}),
            ),
            rejected_with: None,
            defaults: vec![],
        },
    ];
    let mut failures = vec![];
    for case in &cases {
        let ns_opt = case.namespaced.then_some(ns.name.as_str());
        let result = create(ns_opt, &case.resource, case.object.clone()).await;
        match (&result, case.rejected_with) {
            (Ok(obj), None) => {
                for (pointer, want) in &case.defaults {
                    if obj.pointer(pointer) != Some(want) {
                        failures.push(format!(
                            "{}: expected {pointer} = {want}, server has {:?}",
                            case.name,
                            obj.pointer(pointer)
                        ));
                    }
                }
                if case.name.contains("pruned") && obj.pointer("/spec/bogus").is_some() {
                    failures.push(format!("{}: unknown field survived: {obj}", case.name));
                }
            }
            (Err(msg), Some(want)) if msg.contains(want) => {}
            (Err(msg), Some(want)) => failures.push(format!(
                "{}: rejected, but with {msg:?}; expected it to contain {want:?}",
                case.name
            )),
            (Ok(_), Some(want)) => failures.push(format!(
                "{}: accepted; expected rejection containing {want:?}",
                case.name
            )),
            (Err(msg), None) => failures.push(format!(
                "{}: rejected with {msg:?}; expected acceptance",
                case.name
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "conformance failures:\n{}",
        failures.join("\n")
    );
}

#[tokio::test]
async fn status_and_scale_subresources_behave() {
    install("sample-api").await;
    install("tests/fixtures/conformance").await;
    let client = client().await;
    let ns = TestNamespace::new(&client, "subresources").await;
    let foo = resource("samplecontroller.k8s.io", "v1alpha1", "Foo", "foos");
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns.name, &foo);

    // Status sent on create is dropped: status belongs to the /status endpoint.
    let created = api
        .create(&PostParams::default(), &object(&foo, json!({
            "metadata": {"name": "s"}, "spec": {"deploymentName": "d", "replicas": 1}, "status": {"availableReplicas": 5}
        })))
        .await
        .unwrap();
    assert_eq!(
        created.data.get("status"),
        None,
        "status must be ignored on create"
    );

    // /status sets it.
    let mut with_status = created.clone();
    with_status.data["status"] = json!({"availableReplicas": 2});
    let updated = api
        .replace_status("s", &PostParams::default(), &with_status)
        .await
        .unwrap();
    assert_eq!(updated.data["status"]["availableReplicas"], json!(2));

    // An update of the main resource cannot change status...
    let mut main = updated.clone();
    main.data["status"] = json!({"availableReplicas": 9});
    main.data["spec"]["replicas"] = json!(4);
    let after_main = api
        .replace("s", &PostParams::default(), &main)
        .await
        .unwrap();
    assert_eq!(
        after_main.data["status"]["availableReplicas"],
        json!(2),
        "main update changed status"
    );
    assert_eq!(after_main.data["spec"]["replicas"], json!(4));

    // ...and a status update cannot change spec.
    let mut via_status = after_main.clone();
    via_status.data["spec"]["replicas"] = json!(7);
    via_status.data["status"] = json!({"availableReplicas": 3});
    let after_status = api
        .replace_status("s", &PostParams::default(), &via_status)
        .await
        .unwrap();
    assert_eq!(
        after_status.data["spec"]["replicas"],
        json!(4),
        "status update changed spec"
    );
    assert_eq!(after_status.data["status"]["availableReplicas"], json!(3));

    // Scale: kubectl scale writes spec.replicas through the scale subresource.
    let widget = json!({
        "apiVersion": "conformance.kube-codegen.dev/v1", "kind": "Widget",
        "metadata": { "name": "scaled" }, "spec": { "size": 2, "color": "Blue" }
    });
    kubectl_stdin(
        &["apply", "-n", &ns.name, "-f", "-"],
        Some(&widget.to_string()),
    );
    kubectl_ok(&["scale", "-n", &ns.name, "widget/scaled", "--replicas=3"]);
    let spec_replicas = kubectl_ok(&[
        "get",
        "-n",
        &ns.name,
        "widget/scaled",
        "-o",
        "jsonpath={.spec.replicas}",
    ]);
    assert_eq!(spec_replicas.trim(), "3");
    let scale: Value = serde_json::from_str(&kubectl_ok(&[
        "get",
        "-n",
        &ns.name,
        "widget/scaled",
        "--subresource=scale",
        "-o",
        "json",
    ]))
    .unwrap();
    assert_eq!(scale["kind"], json!("Scale"));
    assert_eq!(scale["spec"]["replicas"], json!(3));
}

#[tokio::test]
async fn two_versions_are_served_and_the_storage_version_is_stored() {
    let crds = install("tests/fixtures/conformance").await;
    let crd = crds.iter().find(|c| c.spec.names.kind == "Widget").unwrap();
    let client = client().await;
    let ns = TestNamespace::new(&client, "versions").await;
    let v1 = resource("conformance.kube-codegen.dev", "v1", "Widget", "widgets");
    let v1beta1 = resource(
        "conformance.kube-codegen.dev",
        "v1beta1",
        "Widget",
        "widgets",
    );

    // Written through the old version, read through both.
    create(
        Some(&ns.name),
        &v1beta1,
        json!({"metadata": {"name": "old"}, "spec": {"size": 4, "color": "Red"}}),
    )
    .await
    .expect("v1beta1 served");
    create(
        Some(&ns.name),
        &v1,
        json!({"metadata": {"name": "new"}, "spec": {"size": 4, "color": "Red"}}),
    )
    .await
    .expect("v1 served");
    for ar in [&v1, &v1beta1] {
        let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns.name, ar);
        let names: Vec<String> = api
            .list(&Default::default())
            .await
            .unwrap()
            .items
            .into_iter()
            .filter_map(|o| o.metadata.name)
            .collect();
        assert_eq!(names, ["new", "old"], "listing through {}", ar.version);
        let got = api.get("old").await.unwrap();
        assert_eq!(got.types.as_ref().unwrap().api_version, ar.api_version);
    }
    let name = crd.metadata.name.clone().unwrap();
    let stored = eventually("storedVersions", Duration::from_secs(10), || async {
        let crd = Api::<CustomResourceDefinition>::all(client.clone())
            .get(&name)
            .await?;
        Ok(crd.status.and_then(|s| s.stored_versions))
    })
    .await
    .unwrap();
    assert_eq!(stored, ["v1"], "only the storage version is stored");

    // The deprecated version warns its users.
    let out = kubectl(&[
        "get",
        "widgets.v1beta1.conformance.kube-codegen.dev",
        "-n",
        &ns.name,
    ]);
    assert!(out.success, "{}", out.stderr);
    assert!(
        out.stderr.contains("v1beta1 Widget is deprecated; use v1"),
        "no deprecation warning: {}",
        out.stderr
    );

    // Selectable fields work as field selectors.
    let blue = json!({"apiVersion": "conformance.kube-codegen.dev/v1", "kind": "Widget", "metadata": {"name": "blue"}, "spec": {"size": 1, "color": "Blue"}});
    kubectl_stdin(
        &["apply", "-n", &ns.name, "-f", "-"],
        Some(&blue.to_string()),
    );
    let selected = kubectl_ok(&[
        "get",
        "widgets",
        "-n",
        &ns.name,
        "--field-selector",
        "spec.color=Blue",
        "-o",
        "name",
    ]);
    assert_eq!(selected.trim(), "widget.conformance.kube-codegen.dev/blue");
}

/// What kube-codegen generates as written with a warning (issue 30) is what the API server
/// takes: the CRD is Established, and objects then meet the bounds as the warnings say.
/// If the server began to refuse one of these CRDs, the warning should become an error.
#[tokio::test]
async fn bounds_that_warn_are_what_the_server_takes() {
    let dir = "tests/fixtures/bounds-that-warn";
    let config = kube_codegen::Config::from_crate(repo_root().join(dir)).expect("config");
    let generated = config.generate().expect("generates, with warnings");
    let mut warnings: Vec<String> = generated
        .warnings
        .iter()
        .map(|w| w.message.clone())
        .collect();
    warnings.sort();
    assert_eq!(
        warnings,
        [
            "`+kubebuilder:validation:Enum` lists `a` twice",
            "`+kubebuilder:validation:Maximum` is beyond what the field's `i32` holds (-2147483648 to 2147483647)",
            "`+kubebuilder:validation:Maximum` is beyond what the field's `u32` holds (0 to 4294967295)",
            "`+kubebuilder:validation:Maximum` is beyond what the field's `u8` holds (0 to 255)",
            "no value meets these bounds: MinItems 3 is above MaxItems 1",
            "no value meets these bounds: MinLength 5 is above MaxLength 2",
            "no value meets these bounds: MinProperties 2 is above MaxProperties 1",
            "no value meets these bounds: Minimum 10 is above Maximum 5",
            "printcolumn priority -1 is negative",
        ]
    );
    install(dir).await;
    let client = client().await;
    let ns = TestNamespace::new(&client, "bounds-warn").await;
    let ar = resource("warn.kube-codegen.dev", "v1", "Bound", "bounds");
    let made = |name: &str, spec: Value| json!({"metadata": {"name": name}, "spec": spec});
    // Nothing set: taken. The duplicate enum value, and a value past what a u8 holds
    // (which a Rust client of this CRD then cannot read): taken too.
    for (name, spec) in [
        ("empty", json!({})),
        ("word", json!({"word": "a"})),
        ("small", json!({"small": 300})),
    ] {
        let got = create(Some(&ns.name), &ar, made(name, spec.clone())).await;
        assert!(got.is_ok(), "{name}: {got:?}");
    }
    // Every value of a field whose bounds no value meets: refused; and every value of an
    // int32 field whose bound is no int32 ("Maximum boundary value must be of type
    // integer with format int32").
    for (name, spec) in [
        ("wide", json!({"wide": 3})),
        ("never", json!({"never": "abc"})),
        ("items", json!({"items": ["a", "b"]})),
        ("labels", json!({"labels": {"a": "1"}})),
        ("backwards", json!({"backwards": 7})),
        ("unsigned", json!({"unsigned": 0})),
    ] {
        let got = create(Some(&ns.name), &ar, made(name, spec)).await;
        assert!(got.is_err(), "{name}: the server took {got:?}");
    }
}

/// A CRD's size against the limits its warning names (issue 30, item 8), on the real
/// server: `Small` (200 documented fields, ~190 KB) fits everywhere and is not warned of;
/// `Large` (320 fields, ~300 KB) is warned of as too big for client-side `kubectl apply`,
/// which then fails ("metadata.annotations: Too long") while `--server-side` takes it;
/// `Huge` (1,800 fields, ~1.7 MB) is warned of as near what a cluster stores, and even
/// `--server-side` fails (etcd's default request limit). The YAML piped to kubectl is the
/// generated file, as README's `generate -o - | kubectl apply --server-side -f -`. A
/// 6.2 MB CRD was generated with no word before.
#[tokio::test]
async fn crds_too_big_for_apply_or_for_etcd_are_warned_of_and_are() {
    let doc = "A field documented at length, as API reference text often is. ".repeat(14);
    let kind = |name: &str, fields: usize| {
        let mut s = format!(
            "\n/// +kubebuilder:object:root=true\n\
             #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
             pub struct {name} {{\n    #[serde(flatten)]\n    pub types: TypeMeta,\n    \
             pub metadata: ObjectMeta,\n    pub spec: {name}Spec,\n}}\n\n\
             #[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]\n\
             pub struct {name}Spec {{\n"
        );
        for i in 0..fields {
            s.push_str(&format!(
                "    /// {doc}{i}\n    pub f{i}: Option<String>,\n"
            ));
        }
        s + "}\n"
    };
    let lib = format!(
        "//! +groupName=size.e2e.kube-codegen.dev\n//! +versionName=v1\n\n\
         use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;\n\
         use kube::core::TypeMeta;\nuse serde::{{Deserialize, Serialize}};\n{}{}{}",
        kind("Small", 200),
        kind("Large", 320),
        kind("Huge", 1800)
    );
    let dir = std::env::temp_dir().join(format!("kube-codegen-e2e-size-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    let generated = kube_codegen::Config::new()
        .crate_dir(&dir)
        .generate()
        .unwrap();
    let warned = |plural: &str| {
        let name = format!("CRD {plural}.size.e2e.kube-codegen.dev is ");
        generated
            .warnings
            .iter()
            .find(|w| w.message.starts_with(&name))
            .map(|w| format!("{}\n{}", w.message, w.hint.clone().unwrap_or_default()))
    };
    assert_eq!(warned("smalls"), None);
    let large = warned("larges").expect("Large is warned of");
    assert!(
        large.contains("too big for client-side `kubectl apply`")
            && large.contains("262144 bytes of annotations")
            && large.contains("`kubectl apply --server-side`")
            && large.contains("max-description-len"),
        "{large}"
    );
    let huge = warned("huges").expect("Huge is warned of");
    assert!(
        huge.contains("near or past what a cluster stores")
            && huge.contains("1572864 bytes by default")
            && huge.contains("3145728 bytes")
            && huge.contains("max-description-len"),
        "{huge}"
    );
    // The remedy the warnings name: without descriptions, none is too big.
    let cut = kube_codegen::Config::new()
        .crate_dir(&dir)
        .max_description_len(0)
        .generate()
        .unwrap();
    assert!(
        !cut.warnings
            .iter()
            .any(|w| w.message.contains("bytes as JSON")),
        "{:?}",
        cut.warnings
    );

    let yaml = |plural: &str| {
        let f = generated
            .files
            .iter()
            .find(|f| {
                f.path
                    .ends_with(format!("size.e2e.kube-codegen.dev_{plural}.yaml"))
            })
            .unwrap();
        f.contents.clone()
    };
    let apply = |args: &[&str], plural: &str| {
        let mut all = vec!["apply"];
        all.extend(args);
        all.extend(["-f", "-"]);
        kubectl_stdin(&all, Some(&yaml(plural)))
    };
    let small = apply(&[], "smalls");
    assert!(small.success, "{}", small.stderr);
    let large = apply(&[], "larges");
    assert!(
        !large.success && large.stderr.contains("metadata.annotations: Too long"),
        "{}",
        large.stderr
    );
    let large = apply(&["--server-side", "--field-manager=size-e2e"], "larges");
    assert!(large.success, "{}", large.stderr);
    let huge = apply(&["--server-side", "--field-manager=size-e2e"], "huges");
    assert!(
        !huge.success && huge.stderr.contains("request is too large"),
        "{}",
        huge.stderr
    );
    for plural in ["smalls", "larges"] {
        kubectl_ok(&[
            "delete",
            "crd",
            &format!("{plural}.size.e2e.kube-codegen.dev"),
        ]);
    }
    let _ = std::fs::remove_dir_all(dir);
}
