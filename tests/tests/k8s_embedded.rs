//! E2E: a CRD embedding Kubernetes types (the fixture `generator/tests/fixtures/k8s_embedded`:
//! a JobTemplateSpec, a PodTemplateSpec, a list of JobSpec, a Condition list) on a real
//! kube-apiserver. controller-gen's CRD for the same Go types is refused (JobSpec's
//! immutability rules use `oldSelf` inside a list); ours is accepted, takes what the
//! built-in API takes, keeps the rules where they can apply, and has controller-gen's
//! list semantics for server-side apply.

use k8s_openapi::api::batch::v1::Job;
use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{
    Api, ApiResource, DynamicObject, GroupVersionKind, Patch, PatchParams, PostParams,
};
use kube_codegen_tests::*;
use serde_json::{Value, json};

const FIXTURE: &str = "generator/tests/fixtures/k8s_embedded";

fn our_crd() -> CustomResourceDefinition {
    let generated = kube_codegen::Config::new()
        .crate_dir(repo_root().join(FIXTURE))
        .generate()
        .unwrap_or_else(|e| panic!("generate {FIXTURE}:\n{e}"));
    let file = generated
        .files
        .iter()
        .find(|f| f.path.ends_with("embed.example.com_embeds.yaml"))
        .expect("the CRD");
    parse_crd(&file.contents)
}

fn controller_gen_crd() -> CustomResourceDefinition {
    let text = std::fs::read_to_string(repo_root().join(FIXTURE).join("controller-gen.yaml"))
        .expect("the golden; hack/gen-k8s-schemas.sh writes it");
    parse_crd(&text)
}

/// A pod template as people write them: several containers with ports, env, resources
/// (quantities), probes on int-or-string ports, and an image pull secret left empty, which the
/// built-in API allows (LocalObjectReference.name defaults to "").
fn pod_template(container: &str) -> Value {
    json!({
        "metadata": { "labels": { "app": "embed" } },
        "spec": {
            "restartPolicy": "Never",
            "imagePullSecrets": [{}],
            "containers": [{
                "name": container,
                "image": "busybox:1.36",
                "command": ["sh", "-c", "echo hi"],
                "ports": [
                    { "containerPort": 8080, "name": "http" },
                    { "containerPort": 8080, "protocol": "UDP", "name": "http-udp" }
                ],
                "env": [
                    { "name": "A", "value": "1" },
                    { "name": "B", "valueFrom": { "fieldRef": { "fieldPath": "metadata.name" } } }
                ],
                "resources": {
                    "requests": { "cpu": "100m", "memory": "64Mi" },
                    "limits": { "cpu": 1, "memory": "128Mi" }
                },
                "readinessProbe": { "httpGet": { "port": "http", "path": "/" } }
            }]
        }
    })
}

fn job_spec(container: &str) -> Value {
    json!({
        "backoffLimit": 2,
        "template": pod_template(container),
        "scheduling": { "disruptionMode": { "single": {} } }
    })
}

/// The CRD without the spec property `name`.
fn without(mut crd: CustomResourceDefinition, name: &str) -> CustomResourceDefinition {
    crd.spec.versions[0]
        .schema
        .as_mut()
        .and_then(|s| s.open_api_v3_schema.as_mut())
        .and_then(|s| s.properties.as_mut())
        .and_then(|p| p.get_mut("spec"))
        .and_then(|s| s.properties.as_mut())
        .expect("spec properties")
        .remove(name)
        .expect("the property");
    crd
}

/// The server's message for a rejected request.
fn message(e: kube::Error) -> String {
    match e {
        kube::Error::Api(status) => status.message.clone(),
        e => panic!("transport error: {e}"),
    }
}

#[tokio::test]
async fn embedded_kubernetes_types_work_on_the_api_server() {
    let client = client().await;
    let crds: Api<CustomResourceDefinition> = Api::all(client.clone());

    // controller-gen's own CRD is refused, for two reasons: the `{}` where WorkloadSpec's
    // CompositePodGroupTemplate recurs is not structural, ...
    let dry_run = PostParams {
        dry_run: true,
        ..Default::default()
    };
    let theirs = controller_gen_crd();
    let refused = message(crds.create(&dry_run, &theirs).await.unwrap_err());
    assert!(
        refused.contains("compositePodGroupTemplates].items.type: Required value"),
        "{refused}"
    );
    // ... and, without the workload, JobSpec's +k8s:immutable rules (`oldSelf`) in `jobs`.
    let refused = message(
        crds.create(&dry_run, &without(theirs, "workload"))
            .await
            .unwrap_err(),
    );
    assert!(
        refused.contains("oldSelf cannot be used on the uncorrelatable portion of the schema"),
        "{refused}"
    );

    // Where WorkloadSpec recurs, ours is structural, with the list's map keys; what the
    // server still refuses there is the estimated cost of its immutability rules nested in
    // two lists: a limit at this version, for controller-gen as for us (FIDELITY.md).
    let refused = message(crds.create(&dry_run, &our_crd()).await.unwrap_err());
    assert!(
        refused
            .split(", spec.validation")
            .all(|p| p.contains("Forbidden: estimated rule cost exceeds budget")),
        "{refused}"
    );

    // Ours is accepted (the workload aside, above).
    apply_crd(&client, &without(our_crd(), "workload"))
        .await
        .expect("our CRD is established");

    let ns = TestNamespace::new(&client, "embedded").await;
    let ar = ApiResource::from_gvk_with_plural(
        &GroupVersionKind::gvk("embed.example.com", "v1", "Embed"),
        "embeds",
    );
    let api: Api<DynamicObject> = Api::namespaced_with(client.clone(), &ns.name, &ar);
    let embed = |name: &str, spec: Value| -> DynamicObject {
        serde_json::from_value(json!({
            "apiVersion": ar.api_version, "kind": ar.kind,
            "metadata": { "name": name }, "spec": spec
        }))
        .unwrap()
    };
    let spec = json!({
        "jobTemplate": { "metadata": { "labels": { "team": "a" } }, "spec": job_spec("main") },
        "podTemplate": pod_template("main"),
        "jobs": [job_spec("first"), job_spec("second")]
    });

    // The built-in API takes this job spec (dry run), and so does our CRD.
    let jobs: Api<Job> = Api::namespaced(client.clone(), &ns.name);
    let job: Job = serde_json::from_value(json!({
        "metadata": { "name": "builtin" }, "spec": job_spec("main")
    }))
    .unwrap();
    jobs.create(&dry_run, &job)
        .await
        .expect("the built-in Job API accepts the job spec");
    let created = api
        .create(&PostParams::default(), &embed("one", spec.clone()))
        .await
        .expect("our CRD accepts what the built-in API accepts");
    // controller-gen's defaults are applied, as the built-in API would.
    let c = &created.data["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0];
    assert_eq!(c["ports"][0]["protocol"], json!("TCP"), "{c}");
    assert_eq!(
        created.data["spec"]["podTemplate"]["spec"]["imagePullSecrets"],
        json!([{"name": ""}])
    );

    // Validations of the embedded types hold: a Quantity pattern, ...
    let mut bad = spec.clone();
    bad["podTemplate"]["spec"]["containers"][0]["resources"]["requests"]["cpu"] = json!("lots");
    let e = message(
        api.create(&PostParams::default(), &embed("bad-quantity", bad))
            .await
            .unwrap_err(),
    );
    assert!(e.contains("resources.requests.cpu"), "{e}");
    // ... and the +k8s:immutable rules, where the server can correlate old and new.
    let mut changed = created.clone();
    changed.data["spec"]["jobTemplate"]["spec"]["scheduling"]["disruptionMode"] =
        json!({ "all": {} });
    let e = message(
        api.replace("one", &PostParams::default(), &changed)
            .await
            .unwrap_err(),
    );
    assert!(e.contains("field is immutable"), "{e}");

    // Condition's validations (status enum, reason pattern) on the status subresource.
    let condition = |status: &str, reason: &str| {
        json!({ "status": { "conditions": [{
            "type": "Ready", "status": status, "reason": reason, "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z"
        }]}})
    };
    let pp = PatchParams::default();
    api.patch_status("one", &pp, &Patch::Merge(condition("True", "AllGood")))
        .await
        .expect("a valid condition");
    let e = message(
        api.patch_status("one", &pp, &Patch::Merge(condition("Maybe", "AllGood")))
            .await
            .unwrap_err(),
    );
    assert!(e.contains("Unsupported value: \"Maybe\""), "{e}");
    let e = message(
        api.patch_status("one", &pp, &Patch::Merge(condition("True", "not a reason")))
            .await
            .unwrap_err(),
    );
    assert!(e.contains("status.conditions[0].reason"), "{e}");

    // Server-side apply merges containers by name (x-kubernetes-list-type: map), as it does
    // for a built-in Job, instead of one manager's list replacing the other's.
    let apply = |container: &str| {
        json!({
            "apiVersion": ar.api_version, "kind": ar.kind, "metadata": { "name": "ssa" },
            "spec": { "jobTemplate": { "spec": { "template": { "spec": {
                "containers": [{ "name": container, "image": "busybox:1.36" }]
            }}}}}
        })
    };
    for manager in ["first", "second"] {
        api.patch(
            "ssa",
            &PatchParams::apply(manager),
            &Patch::Apply(apply(manager)),
        )
        .await
        .unwrap_or_else(|e| panic!("apply as {manager}: {e}"));
    }
    let merged = api.get("ssa").await.unwrap();
    let names: Vec<&str> =
        merged.data["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"]
            .as_array()
            .expect("containers")
            .iter()
            .map(|c| c["name"].as_str().unwrap())
            .collect();
    assert_eq!(names, ["first", "second"]);
}
