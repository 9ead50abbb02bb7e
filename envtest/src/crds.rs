//! Reading the user's CRDs and installing them.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::CustomResourceDefinition;
use kube::api::{Api, Patch, PatchParams, PostParams};
use serde::Deserialize;

use crate::error::Error;

/// Where CRDs come from, in the order the builder was given them.
#[derive(Debug, Clone)]
pub(crate) enum CrdSource {
    /// Every `*.yaml`, `*.yml` and `*.json` file directly in the directory.
    Dir(PathBuf),
    /// One file, possibly with several `---` documents.
    File(PathBuf),
    /// YAML text (the n-th one given).
    Yaml(usize, String),
    /// A typed object (from `kube::CustomResourceExt::crd()`, say).
    Object(Box<CustomResourceDefinition>),
}

/// Reads every source into CRDs, before any process starts, so a bad file costs no
/// control-plane start. Empty documents are skipped; any other kind is an error
/// (installing only some of a file would hide a mistake).
pub(crate) fn load(sources: &[CrdSource]) -> Result<Vec<CustomResourceDefinition>, Error> {
    let mut crds = Vec::new();
    for source in sources {
        match source {
            CrdSource::Dir(dir) => {
                let entries = std::fs::read_dir(dir).map_err(Error::io(format!(
                    "reading CRD directory {}",
                    dir.display()
                )))?;
                let mut files = Vec::new();
                for entry in entries {
                    let path = entry
                        .map_err(Error::io(format!(
                            "reading CRD directory {}",
                            dir.display()
                        )))?
                        .path();
                    let is_manifest = path
                        .extension()
                        .and_then(|e| e.to_str())
                        .is_some_and(|e| matches!(e, "yaml" | "yml" | "json"));
                    if is_manifest && path.is_file() {
                        files.push(path);
                    }
                }
                if files.is_empty() {
                    return Err(Error::Crd {
                        source_name: dir.display().to_string(),
                        message: "no *.yaml, *.yml or *.json file in this CRD directory".into(),
                    });
                }
                files.sort();
                for file in files {
                    load_file(&file, &mut crds)?;
                }
            }
            CrdSource::File(file) => load_file(file, &mut crds)?,
            CrdSource::Yaml(n, text) => parse(&format!("<crd_yaml #{n}>"), text, &mut crds)?,
            CrdSource::Object(crd) => crds.push((**crd).clone()),
        }
    }
    Ok(crds)
}

fn load_file(path: &Path, crds: &mut Vec<CustomResourceDefinition>) -> Result<(), Error> {
    let text = std::fs::read_to_string(path)
        .map_err(Error::io(format!("reading CRD file {}", path.display())))?;
    parse(&path.display().to_string(), &text, crds)
}

fn parse(name: &str, text: &str, crds: &mut Vec<CustomResourceDefinition>) -> Result<(), Error> {
    for (i, doc) in serde_yaml::Deserializer::from_str(text).enumerate() {
        let source_name = format!("{name} (document {})", i + 1);
        let value = serde_yaml::Value::deserialize(doc).map_err(|e| Error::Crd {
            source_name: source_name.clone(),
            message: format!("not YAML: {e}"),
        })?;
        if value.is_null() {
            continue;
        }
        let kind = value.get("kind").and_then(|k| k.as_str()).unwrap_or("");
        if kind != "CustomResourceDefinition" {
            return Err(Error::Crd {
                source_name,
                message: format!(
                    "kind is {:?}, expected CustomResourceDefinition (apiextensions.k8s.io/v1); \
                     only CRDs are installed",
                    kind
                ),
            });
        }
        let crd: CustomResourceDefinition =
            serde_yaml::from_value(value).map_err(|e| Error::Crd {
                source_name,
                message: format!(
                    "not a valid apiextensions.k8s.io/v1 CustomResourceDefinition: {e}"
                ),
            })?;
        crds.push(crd);
    }
    Ok(())
}

/// What [`install`] does with a CRD that exists already.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Existing {
    /// Fail (a fresh control plane has none: a clash is a mistake in the sources).
    Fail,
    /// Update it (server-side apply, forced): a detached control plane that is kept.
    Apply,
}

/// Creates the CRDs, then waits until each is `Established` and its resources are in
/// discovery (a client that lists them right after would otherwise get a 404).
pub(crate) async fn install(
    client: &kube::Client,
    crds: &[CustomResourceDefinition],
    deadline: Instant,
    existing: Existing,
) -> Result<(), Error> {
    let api: Api<CustomResourceDefinition> = Api::all(client.clone());
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        let mut crd = crd.clone();
        crd.metadata.resource_version = None;
        crd.metadata.managed_fields = None;
        crd.status = None;
        match existing {
            Existing::Fail => api.create(&PostParams::default(), &crd).await.map(drop),
            Existing::Apply => api
                .patch(
                    &name,
                    &PatchParams::apply("kube-codegen-envtest").force(),
                    &Patch::Apply(&crd),
                )
                .await
                .map(drop),
        }
        .map_err(Error::kube(format!(
            "installing CustomResourceDefinition {name}"
        )))?;
    }
    for crd in crds {
        let name = crd.metadata.name.clone().unwrap_or_default();
        wait_established(&api, &name, deadline).await?;
        let plural = &crd.spec.names.plural;
        for version in crd.spec.versions.iter().filter(|v| v.served) {
            let group_version = format!("{}/{}", crd.spec.group, version.name);
            loop {
                let served = client
                    .list_api_group_resources(&group_version)
                    .await
                    .is_ok_and(|list| list.resources.iter().any(|r| &r.name == plural));
                if served {
                    break;
                }
                if Instant::now() > deadline {
                    return Err(Error::CrdNotReady {
                        name,
                        problem: format!(
                            "is Established but {group_version} {plural} is not in discovery"
                        ),
                    });
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
    Ok(())
}

async fn wait_established(
    api: &Api<CustomResourceDefinition>,
    name: &str,
    deadline: Instant,
) -> Result<(), Error> {
    loop {
        let crd = api.get(name).await.map_err(Error::kube(format!(
            "reading CustomResourceDefinition {name}"
        )))?;
        let conditions = crd.status.and_then(|s| s.conditions).unwrap_or_default();
        if conditions
            .iter()
            .any(|c| c.type_ == "Established" && c.status == "True")
        {
            return Ok(());
        }
        // NamesAccepted=False (a plural clashing with another CRD's) never resolves.
        if let Some(c) = conditions
            .iter()
            .find(|c| c.type_ == "NamesAccepted" && c.status == "False")
        {
            return Err(Error::CrdNotReady {
                name: name.to_owned(),
                problem: format!(
                    "has NamesAccepted=False: {}",
                    c.message.as_deref().unwrap_or("")
                ),
            });
        }
        if Instant::now() > deadline {
            return Err(Error::CrdNotReady {
                name: name.to_owned(),
                problem: "did not become Established in time".to_owned(),
            });
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
