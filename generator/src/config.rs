//! [`Config`]: what to generate and where, for build.rs and the CLI alike, with the
//! settings a crate's Cargo.toml gives ([`Metadata`]). Generation itself is the pipeline's
//! ([`crate::pipeline`]); writing and checking are [`crate::output`]'s.

use std::path::{Path, PathBuf};

use crate::error::Error;
use crate::generators::{self, GeneratorName, rust};
use crate::kubernetes::{self, ChosenBy, KubernetesVersion};
use crate::model::CaSource;
use crate::output::{self, CheckReport, WriteReport};
use crate::pipeline::{self, Generated};
use crate::schema::{ConversionWebhook, SchemaOptions};

/// Settings from `[package.metadata.kube-codegen]` in the target crate's Cargo.toml.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct Metadata {
    /// Files or directories to scan, relative to the crate (default `src`).
    pub input: Option<Vec<PathBuf>>,
    /// Directory for generated Rust (default `src/generated`).
    pub out_dir: Option<PathBuf>,
    /// Directory for CRD YAML (default `crds`).
    pub crd_dir: Option<PathBuf>,
    /// The generators to run (default: all); those they require run too.
    pub generators: Option<Vec<GeneratorName>>,
    /// Output directories of YAML generators other than `crd`, e.g. `{ rbac = "config/rbac" }`.
    pub output_dirs: Option<std::collections::BTreeMap<GeneratorName, PathBuf>>,
    /// A file whose text (a licence, say) goes under the header of every generated Rust file.
    pub header_file: Option<PathBuf>,
    /// The Kubernetes version to generate for (`"1.35"`); default: the one the crate's
    /// k8s-openapi feature names, else the newest supported.
    pub kubernetes_version: Option<String>,
    /// Cut schema descriptions to this many characters.
    pub max_description_len: Option<usize>,
    /// Write an embedded `ObjectMeta` (a pod template's `metadata`) with its validatable
    /// fields, as controller-gen's `crd:generateEmbeddedObjectMeta=true` (default false).
    pub generate_embedded_object_meta: Option<bool>,
    /// Write floats (`f32`, `f64`) into schemas (default true); `false` refuses them, as
    /// controller-gen does without `crd:allowDangerousTypes=true`.
    pub allow_dangerous_types: Option<bool>,
    /// A file of YAML comments (a licence, say) written at the top of every CRD file, as
    /// controller-gen's `crd:headerFile` (relative to the crate).
    pub crd_header_file: Option<PathBuf>,
    /// What ` YEAR` in `crd-header-file` becomes, as controller-gen's `crd:year` (without
    /// it, nothing).
    pub crd_header_year: Option<String>,
    /// Generate Rust (register, deep-copy, clientset, fake) as well as CRDs (default true).
    pub rust: Option<bool>,
    /// The Rust path of the module `src/` maps to (default `crate`).
    pub types_prefix: Option<String>,
    /// Where the API server reaches the conversion webhook of kinds that opted into
    /// conversion: `{ service = "namespace/name", path = "/convert", port = 443 }` or
    /// `{ url = "https://..." }`, and `ca-bundle-from = "ca.crt"` for `caBundle`.
    pub conversion_webhook: Option<ConversionWebhookMetadata>,
    /// A PEM file whose contents become `caBundle` in every webhook client config written:
    /// the conversion webhook's and the admission webhooks' (relative to the crate).
    pub ca_bundle_from: Option<PathBuf>,
    /// `namespace/name` of a cert-manager Certificate: CRDs with a conversion webhook and
    /// the admission configurations get `cert-manager.io/inject-ca-from`, and cert-manager's
    /// CA injector fills their `caBundle` (instead of `ca-bundle-from`).
    pub inject_ca_from: Option<String>,
    /// Generate defaulting and validation for every kind, as if each were marked
    /// `+kube-codegen:validation` (default false).
    pub validate_all_kinds: Option<bool>,
}

/// `conversion-webhook = { ... }` in `[package.metadata.kube-codegen]`.
#[derive(Debug, Default, serde::Deserialize)]
#[serde(rename_all = "kebab-case", deny_unknown_fields)]
pub struct ConversionWebhookMetadata {
    /// `namespace/name` of the Service in front of the webhook.
    pub service: Option<String>,
    /// URL path on the Service (default `/convert`).
    pub path: Option<String>,
    /// Service port (default 443).
    pub port: Option<i32>,
    /// An `https://` URL instead of a Service.
    pub url: Option<String>,
    /// A PEM file whose contents become `caBundle` (relative to the crate); the same as
    /// the top-level `ca-bundle-from`, which also reaches the admission webhooks.
    pub ca_bundle_from: Option<PathBuf>,
}

/// `namespace/name` and the rest into a [`ConversionWebhook`]; `Err` says what is wrong.
fn conversion_webhook(
    service: Option<&str>,
    url: Option<&str>,
    path: Option<String>,
    port: Option<i32>,
) -> Result<Option<ConversionWebhook>, String> {
    match (service, url) {
        (Some(_), Some(_)) => {
            Err("set either a service or a url for the conversion webhook, not both".into())
        }
        (None, Some(u)) => {
            if !u.starts_with("https://") {
                return Err(format!(
                    "conversion webhook url `{u}` must start with https:// (the API server calls webhooks over TLS only)"
                ));
            }
            if path.is_some() || port.is_some() {
                return Err("path and port go with a service; put them in the url".into());
            }
            Ok(Some(ConversionWebhook::Url(u.to_owned())))
        }
        (Some(s), None) => match s.split_once('/') {
            Some((namespace, name))
                if !namespace.is_empty() && !name.is_empty() && !name.contains('/') =>
            {
                Ok(Some(ConversionWebhook::Service {
                    namespace: namespace.to_owned(),
                    name: name.to_owned(),
                    path,
                    port,
                }))
            }
            _ => Err(format!(
                "conversion webhook service `{s}` is not `namespace/name`"
            )),
        },
        (None, None) if path.is_some() || port.is_some() => {
            Err("a conversion webhook path or port needs a service".into())
        }
        (None, None) => Ok(None),
    }
}

/// What to generate and where: the builder for build.rs and the CLI alike.
#[derive(Clone, Debug)]
pub struct Config {
    crate_dir: PathBuf,
    inputs: Vec<PathBuf>,
    out_dir: Option<PathBuf>,
    /// Output directories of YAML generators set explicitly (`crd_dir` is the `crd` one).
    output_dirs: std::collections::BTreeMap<GeneratorName, PathBuf>,
    /// `None`: every generator.
    generators: Option<Vec<GeneratorName>>,
    header_file: Option<PathBuf>,
    /// controller-gen's `crd:headerFile` and `crd:year`.
    crd_header_file: Option<PathBuf>,
    crd_header_year: Option<String>,
    /// Chosen by the caller or the metadata; `None`: the manifest's k8s-openapi feature, or
    /// the newest.
    kubernetes: Option<(KubernetesVersion, ChosenBy)>,
    schema: SchemaOptions,
    /// Read into `schema.ca` when generating (relative to the crate).
    ca_bundle_from: Option<PathBuf>,
    /// cert-manager's Certificate (`namespace/name`) for `schema.ca` instead.
    inject_ca_from: Option<String>,
    rust: rust::RustOptions,
    emit_rust: bool,
    emit_rerun_if_changed: bool,
    /// Every kind opts into the `validation` generator.
    validate_all_kinds: bool,
    /// The process exits once the files are out: the run's model is left to the OS.
    exits_after: bool,
}

impl Default for Config {
    fn default() -> Self {
        Self::new()
    }
}

impl Config {
    /// A config rooted at the current directory: the crate's, in build.rs (cargo runs build
    /// scripts there) and for a CLI run from the crate. Reads no environment.
    ///
    /// ```
    /// let config = kube_codegen::Config::new();
    /// assert_eq!(config.crd_output_dir(), std::path::Path::new("./crds"));
    /// ```
    #[must_use]
    pub fn new() -> Self {
        Config {
            crate_dir: PathBuf::from("."),
            inputs: vec![],
            out_dir: None,
            output_dirs: Default::default(),
            generators: None,
            header_file: None,
            crd_header_file: None,
            crd_header_year: None,
            kubernetes: None,
            schema: SchemaOptions::default(),
            ca_bundle_from: None,
            inject_ca_from: None,
            rust: rust::RustOptions::default(),
            emit_rust: true,
            emit_rerun_if_changed: false,
            validate_all_kinds: false,
            exits_after: false,
        }
    }

    /// A config for the crate at `dir`, with the settings of its Cargo.toml metadata
    /// (`[package.metadata.kube-codegen]`).
    ///
    /// ```no_run
    /// let config = kube_codegen::Config::from_crate("sample-api")?;
    /// let generated = config.generate()?;
    /// # Ok::<(), kube_codegen::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the Cargo.toml cannot be read or parsed, its metadata has an
    /// unknown key or a bad value, names a Kubernetes version this build does not support,
    /// or one that differs from the crate's k8s-openapi feature.
    pub fn from_crate(dir: impl Into<PathBuf>) -> Result<Self, Error> {
        Self::from_crate_dir(dir.into())
    }

    /// [`Config::from_crate`]'s body, not generic: compiled once, in this crate, rather
    /// than in every crate that calls it (each build script, and the CLI's binary, would
    /// otherwise compile the TOML reading of the metadata again).
    fn from_crate_dir(dir: PathBuf) -> Result<Self, Error> {
        let mut config = Config::new().crate_dir(dir);
        let manifest = config.crate_dir.join("Cargo.toml");
        let text = std::fs::read_to_string(&manifest).map_err(|e| Error::Config {
            path: manifest.clone(),
            message: format!("cannot read: {e}"),
        })?;
        let doc: toml::Table = toml::from_str(&text).map_err(|e| Error::Config {
            path: manifest.clone(),
            message: e.to_string(),
        })?;
        let meta = doc
            .get("package")
            .and_then(|p| p.get("metadata"))
            .and_then(|m| m.get("kube-codegen"))
            .cloned();
        if let Some(meta) = meta {
            let meta: Metadata = meta
                .try_into()
                .map_err(|e: toml::de::Error| Error::Config {
                    path: manifest.clone(),
                    message: format!("[package.metadata.kube-codegen]: {e}"),
                })?;
            if let Some(v) = &meta.kubernetes_version {
                let chosen: KubernetesVersion = v.parse().map_err(|e| Error::Config {
                    path: manifest.clone(),
                    message: format!("[package.metadata.kube-codegen] kubernetes-version: {e}"),
                })?;
                // Chosen once: two places naming different versions is a mistake the
                // generated code would only show as type errors later.
                if let Some((feature, table)) = kubernetes::k8s_openapi_feature(&doc)
                    && feature != chosen
                {
                    return Err(Error::Config {
                        path: manifest,
                        message: format!(
                            "kubernetes-version = \"{v}\", but k8s-openapi in [{table}] enables {} (Kubernetes {feature}): name one version, or drop kubernetes-version and let the feature choose",
                            feature.k8s_openapi_feature()
                        ),
                    });
                }
                config.kubernetes = Some((chosen, ChosenBy::Metadata));
            }
            config.inputs = meta.input.unwrap_or_default();
            config.out_dir = meta.out_dir;
            config.output_dirs = meta.output_dirs.unwrap_or_default();
            if let Some(d) = meta.crd_dir {
                config.output_dirs.insert(GeneratorName::Crd, d);
            }
            config.generators = meta.generators;
            config.header_file = meta.header_file;
            config.schema.max_description_len = meta.max_description_len;
            config.schema.generate_embedded_object_meta =
                meta.generate_embedded_object_meta.unwrap_or(false);
            config.schema.refuse_floats = !meta.allow_dangerous_types.unwrap_or(true);
            config.crd_header_file = meta.crd_header_file;
            config.crd_header_year = meta.crd_header_year;
            if let Some(w) = meta.conversion_webhook {
                config.schema.conversion_webhook =
                    conversion_webhook(w.service.as_deref(), w.url.as_deref(), w.path, w.port)
                        .map_err(|message| Error::Config {
                            path: manifest.clone(),
                            message: format!(
                                "[package.metadata.kube-codegen] conversion-webhook: {message}"
                            ),
                        })?;
                config.ca_bundle_from = w.ca_bundle_from;
            }
            if let Some(file) = meta.ca_bundle_from {
                if config.ca_bundle_from.is_some() {
                    return Err(Error::Config {
                        path: manifest,
                        message: "[package.metadata.kube-codegen]: `ca-bundle-from` is given twice (top level and in `conversion-webhook`): keep the top-level one, which serves every webhook".into(),
                    });
                }
                config.ca_bundle_from = Some(file);
            }
            config.inject_ca_from = meta.inject_ca_from;
            config.emit_rust = meta.rust.unwrap_or(true);
            config.validate_all_kinds = meta.validate_all_kinds.unwrap_or(false);
            if let Some(p) = meta.types_prefix {
                config.rust.types_prefix = p;
            }
        }
        Ok(config)
    }

    /// The crate the inputs and outputs are relative to.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().crate_dir("api");
    /// assert_eq!(config.rust_output_dir(), std::path::Path::new("api/src/generated"));
    /// ```
    #[must_use]
    pub fn crate_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.crate_dir = dir.into();
        self
    }

    /// Add a file or directory to scan (relative paths are relative to the crate); without
    /// any, `src` is scanned.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().input("src/apis").input("src/extra.rs");
    /// ```
    #[must_use]
    pub fn input(mut self, path: impl Into<PathBuf>) -> Self {
        self.inputs.push(path.into());
        self
    }

    /// Replace the inputs.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().inputs(["src/apis", "src/more"]);
    /// ```
    #[must_use]
    pub fn inputs(mut self, paths: impl IntoIterator<Item = impl Into<PathBuf>>) -> Self {
        self.inputs = paths.into_iter().map(Into::into).collect();
        self
    }

    /// Where generated Rust goes; YAML goes below it (`<out_dir>/crds`, `<out_dir>/rbac`)
    /// unless [`Config::crd_dir`] or [`Config::output_dir`] say otherwise.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().crate_dir("api").out_dir("/tmp/out");
    /// assert_eq!(config.crd_output_dir(), std::path::Path::new("/tmp/out/crds"));
    /// ```
    #[must_use]
    pub fn out_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.out_dir = Some(dir.into());
        self
    }

    /// Where CRD YAML goes (default `crds`, or `<out_dir>/crds` with an output directory).
    ///
    /// ```
    /// let config = kube_codegen::Config::new().crate_dir("api").crd_dir("config/crd");
    /// assert_eq!(config.crd_output_dir(), std::path::Path::new("api/config/crd"));
    /// ```
    #[must_use]
    pub fn crd_dir(self, dir: impl Into<PathBuf>) -> Self {
        self.output_dir(GeneratorName::Crd, dir)
    }

    /// Where a YAML generator (`crd`, `rbac`) writes, instead of its default directory.
    ///
    /// ```
    /// use kube_codegen::{Config, GeneratorName};
    /// let config = Config::new().output_dir(GeneratorName::Rbac, "deploy/rbac");
    /// ```
    #[must_use]
    pub fn output_dir(mut self, generator: GeneratorName, dir: impl Into<PathBuf>) -> Self {
        self.output_dirs.insert(generator, dir.into());
        self
    }

    /// Run only these generators (and those they require), as controller-gen runs `crd rbac`
    /// and code-generator its `client`, `lister`, `informer` generators.
    ///
    /// ```
    /// use kube_codegen::{Config, GeneratorName};
    /// let config = Config::new().generators([GeneratorName::Crd, GeneratorName::Fake]);
    /// // `fake` needs the clientset, which needs `register` and the apply configurations.
    /// assert_eq!(
    ///     config.selected_generators(),
    ///     [
    ///         GeneratorName::Crd,
    ///         GeneratorName::Applyconfigurations,
    ///         GeneratorName::Client,
    ///         GeneratorName::Fake,
    ///         GeneratorName::Register
    ///     ]
    /// );
    /// ```
    #[must_use]
    pub fn generators(mut self, generators: impl IntoIterator<Item = GeneratorName>) -> Self {
        self.generators = Some(generators.into_iter().collect());
        self
    }

    /// The generators this config runs, with their requirements, in registry order.
    #[must_use]
    pub fn selected_generators(&self) -> Vec<GeneratorName> {
        let chosen: Vec<GeneratorName> = match &self.generators {
            Some(g) => g.clone(),
            None => GeneratorName::all().collect(),
        };
        let chosen: Vec<GeneratorName> = chosen
            .into_iter()
            .filter(|g| self.emit_rust || !generators::generator(*g).is_rust())
            .collect();
        generators::with_requirements(&chosen)
    }

    /// A file whose text (a licence, say) goes under the header of every generated Rust file.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().header_file("hack/boilerplate.rs.txt");
    /// ```
    #[must_use]
    pub fn header_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.header_file = Some(path.into());
        self
    }

    /// Generate for Kubernetes `version`: the schemas of k8s-openapi types a kind embeds are
    /// that version's, and types it lacks are errors. Without a call, a run takes the version
    /// the crate's Cargo.toml enables on k8s-openapi (`features = ["v1_35"]`), else the
    /// newest ([`KubernetesVersion::NEWEST`]); [`Generated::summary`] says which.
    ///
    /// ```
    /// use kube_codegen::{Config, KubernetesVersion};
    /// let config = Config::new().kubernetes_version(KubernetesVersion::V1_35);
    /// assert_eq!(config.chosen_kubernetes_version(), Some(KubernetesVersion::V1_35));
    /// ```
    #[must_use]
    pub fn kubernetes_version(mut self, version: KubernetesVersion) -> Self {
        self.kubernetes = Some((version, ChosenBy::Config));
        self
    }

    /// The Kubernetes version set by [`Config::kubernetes_version`] or the crate's metadata,
    /// if any (a run without one reads the crate's k8s-openapi feature).
    #[must_use]
    pub fn chosen_kubernetes_version(&self) -> Option<KubernetesVersion> {
        self.kubernetes.as_ref().map(|(v, _)| *v)
    }

    /// The run's Kubernetes version: as chosen, else the manifest's k8s-openapi feature
    /// (an unreadable manifest chooses nothing; `from_crate` reports it), else the newest.
    fn kubernetes(&self) -> (KubernetesVersion, ChosenBy) {
        if let Some(k) = &self.kubernetes {
            return k.clone();
        }
        std::fs::read_to_string(self.crate_dir.join("Cargo.toml"))
            .ok()
            .and_then(|text| toml::from_str::<toml::Table>(&text).ok())
            .and_then(|doc| kubernetes::k8s_openapi_feature(&doc))
            .map(|(v, table)| (v, ChosenBy::K8sOpenapiFeature(table)))
            .unwrap_or((KubernetesVersion::NEWEST, ChosenBy::Newest))
    }

    /// Cut schema descriptions to `n` characters (controller-gen's `crd:maxDescLen`).
    ///
    /// ```
    /// let config = kube_codegen::Config::new().max_description_len(200);
    /// ```
    #[must_use]
    pub fn max_description_len(mut self, n: usize) -> Self {
        self.schema.max_description_len = Some(n);
        self
    }

    /// Write an embedded `ObjectMeta` (a pod template's `metadata`) with the fields a CRD
    /// may validate (name, namespace, labels, annotations, finalizers), as controller-gen's
    /// `crd:generateEmbeddedObjectMeta=true` does; by default it is a bare object, and a CEL
    /// rule over a pod template's labels does not compile (the API server refuses it).
    ///
    /// ```
    /// let config = kube_codegen::Config::new().generate_embedded_object_meta(true);
    /// ```
    #[must_use]
    pub fn generate_embedded_object_meta(mut self, yes: bool) -> Self {
        self.schema.generate_embedded_object_meta = yes;
        self
    }

    /// Write floats (`f32`, `f64`) into schemas as `type: number` (the default, `true`), or
    /// refuse them at the field (`false`), as controller-gen does without
    /// `crd:allowDangerousTypes=true`: not every language reads JSON floats the same.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().allow_dangerous_types(false);
    /// ```
    #[must_use]
    pub fn allow_dangerous_types(mut self, yes: bool) -> Self {
        self.schema.refuse_floats = !yes;
        self
    }

    /// A file of YAML comments (a licence, say; relative to the crate) written at the top of
    /// every CRD file, as controller-gen's `crd:headerFile`: the text as it is, ` YEAR`
    /// replaced as [`Config::crd_header_year`] says. A line that is not a comment is an error
    /// (it would change every CRD).
    ///
    /// ```
    /// let config = kube_codegen::Config::new().crd_header_file("hack/boilerplate.yaml.txt");
    /// ```
    #[must_use]
    pub fn crd_header_file(mut self, path: impl Into<PathBuf>) -> Self {
        self.crd_header_file = Some(path.into());
        self
    }

    /// What ` YEAR` in the CRD header file becomes (controller-gen's `crd:year`; without
    /// it, nothing, as controller-gen).
    ///
    /// ```
    /// let config = kube_codegen::Config::new().crd_header_year("2026");
    /// ```
    #[must_use]
    pub fn crd_header_year(mut self, year: impl Into<String>) -> Self {
        self.crd_header_year = Some(year.into());
        self
    }

    /// This config without a CRD header file (an importer's check of its port in a scratch
    /// copy, where the crate's relative path to it points nowhere).
    pub(crate) fn without_crd_header(mut self) -> Self {
        self.crd_header_file = None;
        self
    }

    /// controller-gen's `crd:` options, as a Go project's Makefile passes them, each as the
    /// setting it is ([`CrdOptions`](crate::CrdOptions)); `ignoreUnexportedFields` is
    /// `import go`'s (Rust fields are serialized whatever their visibility).
    ///
    /// ```
    /// let options: kube_codegen::CrdOptions = "crd:maxDescLen=0,generateEmbeddedObjectMeta=true".parse()?;
    /// let config = kube_codegen::Config::new().crd_options(&options);
    /// # Ok::<(), String>(())
    /// ```
    #[must_use]
    pub fn crd_options(mut self, options: &crate::CrdOptions) -> Self {
        if let Some(n) = options.max_desc_len {
            self = self.max_description_len(n);
        }
        self.schema.generate_embedded_object_meta = options.generate_embedded_object_meta;
        self.schema.refuse_floats = !options.allow_dangerous_types;
        if let Some(h) = &options.header_file {
            self = self.crd_header_file(h);
        }
        self.crd_header_year = options.year.clone();
        self
    }

    /// Where the API server reaches the conversion webhook of kinds whose hub is marked
    /// `+kube-codegen:conversion=hub` (their CRD gets `conversion: {strategy: Webhook}`).
    ///
    /// ```
    /// use kube_codegen::{Config, ConversionWebhook};
    /// let config = Config::new().conversion_webhook(ConversionWebhook::Url("https://127.0.0.1:9443/convert".into()));
    /// ```
    #[must_use]
    pub fn conversion_webhook(mut self, webhook: ConversionWebhook) -> Self {
        self.schema.conversion_webhook = Some(webhook);
        self
    }

    /// A PEM file (relative to the crate) whose contents become `caBundle` in every webhook
    /// client config written (the CRDs' conversion, the admission configurations), read
    /// when generating.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().ca_bundle_from("certs/ca.crt");
    /// ```
    #[must_use]
    pub fn ca_bundle_from(mut self, file: impl Into<PathBuf>) -> Self {
        self.ca_bundle_from = Some(file.into());
        self
    }

    /// cert-manager's CA injection instead of a literal `caBundle`: CRDs with a conversion
    /// webhook and the admission webhook configurations get the annotation
    /// `cert-manager.io/inject-ca-from: <certificate>`, where `certificate` is the
    /// `namespace/name` of the Certificate that issues the webhook's serving certificate.
    /// Generation refuses it beside [`Config::ca_bundle_from`], and a value that is not
    /// `namespace/name`.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().inject_ca_from("system/serving-cert");
    /// ```
    #[must_use]
    pub fn inject_ca_from(mut self, certificate: impl Into<String>) -> Self {
        self.inject_ca_from = Some(certificate.into());
        self
    }

    /// `namespace/name` of a Service (with an optional path and port) or an `https://` URL,
    /// as the command line and metadata write them.
    ///
    /// # Errors
    ///
    /// A message when both or neither are well-formed.
    #[doc(hidden)]
    pub fn conversion_webhook_from_args(
        self,
        service: Option<&str>,
        url: Option<&str>,
        path: Option<String>,
        port: Option<i32>,
    ) -> Result<Self, String> {
        Ok(match conversion_webhook(service, url, path, port)? {
            Some(w) => self.conversion_webhook(w),
            None => self,
        })
    }

    /// Run the Rust generators as well as the YAML ones (default true).
    ///
    /// ```
    /// use kube_codegen::{Config, GeneratorName};
    /// let config = Config::new().emit_rust(false);
    /// assert_eq!(
    ///     config.selected_generators(),
    ///     [
    ///         GeneratorName::Crd,
    ///         GeneratorName::Rbac,
    ///         GeneratorName::Webhook,
    ///         GeneratorName::AdmissionPolicy
    ///     ]
    /// );
    /// ```
    #[must_use]
    pub fn emit_rust(mut self, yes: bool) -> Self {
        self.emit_rust = yes;
        self
    }

    /// The Rust path of the module the scanned `src/` directory maps to (default `crate`).
    /// For generated code `include!`d into another crate, e.g. `crate::api`.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().types_prefix("crate::api");
    /// ```
    #[must_use]
    pub fn types_prefix(mut self, prefix: impl Into<String>) -> Self {
        self.rust.types_prefix = prefix.into();
        self
    }

    /// Write all generated Rust into one file of inline modules, for build.rs:
    /// `include!(concat!(env!("OUT_DIR"), "/kube_codegen.rs"));`
    ///
    /// ```
    /// let config = kube_codegen::Config::new().out_dir("/tmp/out").single_file("kube_codegen.rs");
    /// ```
    #[must_use]
    pub fn single_file(mut self, name: impl Into<String>) -> Self {
        self.rust.single_file = Some(name.into());
        self
    }

    /// Print `cargo:rerun-if-changed=` for every input, and each warning as
    /// `cargo:warning=` (for build.rs).
    ///
    /// ```
    /// let config = kube_codegen::Config::new().emit_rerun_if_changed(true);
    /// ```
    #[must_use]
    pub fn emit_rerun_if_changed(mut self, yes: bool) -> Self {
        self.emit_rerun_if_changed = yes;
        self
    }

    /// The process exits soon after the run (default false), as the `kube-codegen` CLI
    /// does: the run then leaves its parsed input, model and prepared output unfreed for
    /// the OS to reclaim at exit. Freeing them one by one is about a tenth of a large run
    /// (1000 kinds: 40 of 320 ms); a long-lived process (a build.rs that goes on, a test
    /// harness) keeps the default, or each run's memory stays taken.
    ///
    /// ```
    /// let config = kube_codegen::Config::new().exits_after(true);
    /// ```
    #[must_use]
    pub fn exits_after(mut self, yes: bool) -> Self {
        self.exits_after = yes;
        self
    }

    /// Generate defaulting and validation (`kube_codegen_runtime::validation::Validate`)
    /// for every kind, as if each were marked `+kube-codegen:validation` (default false;
    /// the marker opts in one kind, or every kind of a group/version in its module's inner
    /// doc comment). The generated code needs kube-codegen-runtime's `validation` feature.
    ///
    /// ```
    /// // The foo fixture marks no kind `+kube-codegen:validation`.
    /// let fixture = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/foo");
    /// let generated = kube_codegen::Config::from_crate(fixture)?
    ///     .validate_all_kinds(true)
    ///     .generate()?;
    /// let validation = generated
    ///     .files
    ///     .iter()
    ///     .find(|f| f.path.ends_with("validation.rs"))
    ///     .expect("a validation module");
    /// assert!(validation.contents.contains("for crate::apis::samplecontroller::v1alpha1::Foo {"));
    /// # Ok::<(), kube_codegen::Error>(())
    /// ```
    #[must_use]
    pub fn validate_all_kinds(mut self, yes: bool) -> Self {
        self.validate_all_kinds = yes;
        self
    }

    fn resolve_path(&self, p: &Path) -> PathBuf {
        if p.is_absolute() {
            p.to_owned()
        } else {
            self.crate_dir.join(p)
        }
    }

    /// The directory CRD YAML is written to.
    pub fn crd_output_dir(&self) -> PathBuf {
        self.yaml_output_dir(GeneratorName::Crd)
    }

    /// The directory a YAML generator writes to: as configured, else `<out-dir>/<dir>` when
    /// an output directory is set (build.rs), else `<crate>/<default dir>`.
    fn yaml_output_dir(&self, name: GeneratorName) -> PathBuf {
        let generators::Output::Yaml {
            dir, default_dir, ..
        } = generators::generator(name).output
        else {
            return self.rust_output_dir();
        };
        match (self.output_dirs.get(&name), &self.out_dir) {
            (Some(d), _) => self.resolve_path(d),
            (None, Some(o)) => self.resolve_path(o).join(dir),
            (None, None) => self.crate_dir.join(default_dir),
        }
    }

    /// The directory generated Rust is written to.
    pub fn rust_output_dir(&self) -> PathBuf {
        match &self.out_dir {
            Some(o) => self.resolve_path(o),
            None => self.crate_dir.join("src/generated"),
        }
    }

    /// Directories whose generated files this config owns (for pruning and `check`).
    pub fn managed_dirs(&self) -> Vec<PathBuf> {
        let selected = self.selected_generators();
        let mut dirs: Vec<PathBuf> = selected
            .iter()
            .filter(|g| !generators::generator(**g).is_rust())
            .map(|g| self.yaml_output_dir(*g))
            .collect();
        if selected.iter().any(|g| generators::generator(*g).is_rust()) {
            dirs.push(self.rust_output_dir());
        }
        dirs.dedup();
        dirs
    }

    /// Generate every file in memory. Reads inputs; writes nothing.
    ///
    /// ```no_run
    /// let generated = kube_codegen::Config::from_crate("sample-api")?.generate()?;
    /// for file in &generated.files {
    ///     println!("{} ({} bytes)", file.path.display(), file.contents.len());
    /// }
    /// eprint!("{}", generated.render_warnings());
    /// # Ok::<(), kube_codegen::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Input`] with every problem of the input, located (nothing is generated when
    /// there is one error).
    pub fn generate(&self) -> Result<Generated, Error> {
        self.run(true)
    }

    /// The `caBundle` source of every webhook client config, from `ca_bundle_from` (read
    /// here) or `inject_ca_from` (checked here: one of them, and a `namespace/name`).
    fn ca_source(&self) -> Result<CaSource, Error> {
        match (&self.ca_bundle_from, &self.inject_ca_from) {
            (Some(_), Some(_)) => Err(Error::Config {
                path: self.crate_dir.join("Cargo.toml"),
                message: "both `ca-bundle-from` and `inject-ca-from` are set: a webhook's caBundle is either the literal CA or cert-manager's injection, so keep one".into(),
            }),
            (Some(file), None) => {
                let path = self.resolve_path(file);
                let pem = std::fs::read(&path).map_err(|e| Error::Config {
                    path: path.clone(),
                    message: format!("cannot read the webhooks' CA bundle: {e}"),
                })?;
                Ok(CaSource::Bundle(pem))
            }
            (None, Some(certificate)) => {
                // As a conversion Service's `namespace/name` is checked.
                let well_formed = certificate.split_once('/').is_some_and(|(ns, name)| {
                    !ns.is_empty() && !name.is_empty() && !name.contains('/')
                });
                if !well_formed {
                    return Err(Error::Config {
                        path: self.crate_dir.join("Cargo.toml"),
                        message: format!("inject-ca-from = \"{certificate}\": expected `<namespace>/<certificate name>` (cert-manager's `cert-manager.io/inject-ca-from` value), e.g. `system/serving-cert`"),
                    });
                }
                Ok(CaSource::CertManager(certificate.clone()))
            }
            (None, None) => Ok(CaSource::None),
        }
    }

    /// What [`Config::generate`] would refuse, without rendering a file: renderers refuse
    /// nothing, so the input is checked once resolved (the importers' check of a port).
    pub(crate) fn check_input(&self) -> Result<(), Error> {
        self.run(false).map(|_| ())
    }

    fn run(&self, render: bool) -> Result<Generated, Error> {
        let mut schema = self.schema.clone();
        schema.ca = self.ca_source()?;
        let inputs = if self.inputs.is_empty() {
            vec![PathBuf::from("src")]
        } else {
            self.inputs.clone()
        };
        let selected = self.selected_generators();
        let yaml_dirs = selected
            .iter()
            .filter(|g| !generators::generator(**g).is_rust())
            .map(|g| (*g, self.yaml_output_dir(*g)))
            .collect();
        pipeline::run(pipeline::Run {
            crate_dir: self.crate_dir.clone(),
            inputs: inputs.iter().map(|i| self.resolve_path(i)).collect(),
            rust_dir: self.rust_output_dir(),
            yaml_dirs,
            selected,
            schema,
            rust: self.rust.clone(),
            header_file: self.header_file.as_deref().map(|h| self.resolve_path(h)),
            crd_header_file: self
                .crd_header_file
                .as_deref()
                .map(|h| self.resolve_path(h)),
            crd_header_year: self.crd_header_year.clone(),
            kubernetes: self.kubernetes(),
            validate_all_kinds: self.validate_all_kinds,
            emit_rerun_if_changed: self.emit_rerun_if_changed,
            render,
            exits_after: self.exits_after,
        })
    }

    /// Generate and write what changed; remove generated files no longer produced.
    ///
    /// ```no_run
    /// let report = kube_codegen::Config::from_crate("sample-api")?.write()?;
    /// println!("{} written, {} unchanged", report.written.len(), report.unchanged.len());
    /// # Ok::<(), kube_codegen::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Input`] as [`Config::generate`] (then nothing is written), or
    /// [`Error::Output`] when a file cannot be written or a file in the way was not
    /// generated by kube-codegen (it is never overwritten).
    pub fn write(&self) -> Result<WriteReport, Error> {
        let generated = self.generate()?;
        self.write_generated(&generated)
    }

    /// Write files generated by [`Config::generate`] (for callers that also want the
    /// warnings and summary of that run).
    ///
    /// # Errors
    ///
    /// [`Error::Output`], as [`Config::write`].
    pub fn write_generated(&self, generated: &Generated) -> Result<WriteReport, Error> {
        Ok(output::write_all(&generated.files, &self.managed_dirs())?)
    }

    /// Generate and compare with the tree, writing nothing: for CI over generated code
    /// committed to a repository.
    ///
    /// ```no_run
    /// let report = kube_codegen::Config::from_crate("sample-api")?.check()?;
    /// assert!(report.is_clean(), "{report}");
    /// # Ok::<(), kube_codegen::Error>(())
    /// ```
    ///
    /// # Errors
    ///
    /// [`Error::Input`] as [`Config::generate`]; [`Error::Output`] when a file cannot be read.
    pub fn check(&self) -> Result<CheckReport, Error> {
        let generated = self.generate()?;
        self.check_generated(&generated)
    }

    /// Compare files generated by [`Config::generate`] with the tree, writing nothing.
    ///
    /// # Errors
    ///
    /// [`Error::Output`] when a file cannot be read.
    pub fn check_generated(&self, generated: &Generated) -> Result<CheckReport, Error> {
        Ok(output::check(&generated.files, &self.managed_dirs())?)
    }
}
