//! The merge semantics of a kind, as structured-merge-diff's `schema.Schema` holds them:
//! which objects are structs (named fields), which are maps (granular or atomic), which
//! lists merge by key (`listType=map`), as sets (`listType=set`) or whole (`atomic`).
//!
//! Sources: a CustomResourceDefinition's structural schema (the `x-kubernetes-list-type`,
//! `x-kubernetes-list-map-keys`, `x-kubernetes-map-type` extensions, as the API server's
//! CRD handler converts them), and hand-written schemas for the built-ins the fake
//! registers whose semantics matter most (ObjectMeta for every kind, ConfigMap, Secret,
//! Deployment with its pod template). Anything else is an open struct: every key a named
//! field, lists atomic, which is what a CRD's schema says unless it marks list and map
//! types. SMD's untyped "deduced" semantics (granular maps) are kept for
//! `x-kubernetes-preserve-unknown-fields`.

use std::collections::BTreeMap;
use std::sync::Arc;

use k8s_openapi::apiextensions_apiserver::pkg::apis::apiextensions::v1::{
    JSONSchemaProps, JSONSchemaPropsOrArray, JSONSchemaPropsOrBool,
};
use serde_json::Value;

/// How a list merges (`x-kubernetes-list-type`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ListType {
    /// Replaced as a whole; one owner (the default for CRDs).
    Atomic,
    /// Scalars merged by value.
    Set,
    /// Objects merged by these key fields.
    Map(Vec<String>),
}

/// A struct field: its schema and its default (used for list-map keys left out).
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub schema: Arc<Schema>,
    pub default: Option<Value>,
}

/// An object: named fields (a struct), an element type for other keys (a map), or both.
#[derive(Clone, Debug, Default)]
pub(crate) struct MapSchema {
    pub fields: BTreeMap<String, Field>,
    /// The schema of keys that are not named fields; `None`: a struct (unknown keys are
    /// open structs, see [`MapSchema::lookup`]).
    pub element: Option<Arc<Schema>>,
    /// `x-kubernetes-map-type: atomic` / `structType=atomic`: replaced as a whole.
    pub atomic: bool,
    /// Whether keys other than the named fields are errors in an applied configuration and
    /// pruned from other writes: CRD schemas are complete, the hand-written built-in ones
    /// are not (their undeclared fields are treated as open structs).
    pub closed: bool,
}

impl MapSchema {
    /// The schema of a key and whether it is a named field (named fields are not members of
    /// a field set unless empty; map keys always are).
    pub(crate) fn lookup(&self, key: &str) -> (Arc<Schema>, bool) {
        match (self.fields.get(key), &self.element) {
            (Some(f), _) => (f.schema.clone(), true),
            (None, Some(element)) => (element.clone(), false),
            // Undeclared in a complete (CRD) schema: rejected or pruned before this matters.
            (None, None) if self.closed => (Arc::new(Schema::Deduced), false),
            // Undeclared in a partial hand-written or absent schema: Kubernetes objects are
            // structs nearly everywhere, so a struct field is the likeliest truth (maps are
            // declared where they matter: labels, annotations, data, selectors).
            (None, None) => (Arc::new(Schema::OpenStruct), true),
        }
    }
}

/// A list and its merge type.
#[derive(Clone, Debug)]
pub(crate) struct ListSchema {
    pub element: Arc<Schema>,
    pub list_type: ListType,
}

/// A node of a type's schema.
#[derive(Clone, Debug)]
pub(crate) enum Schema {
    /// A string, number, boolean (or an int-or-string).
    Scalar,
    /// Untyped: a map is granular with deduced values, a list is atomic, anything else is a
    /// scalar (SMD's `__untyped_deduced_`).
    Deduced,
    /// A struct whose fields are not listed: every key a named field of the same kind,
    /// lists atomic (the CRD default). Used where the fake has no schema.
    OpenStruct,
    Map(MapSchema),
    List(ListSchema),
}

/// What a schema node means for one value: SMD's `deduceAtom` picks by the value's shape when
/// the schema does not fix it, and treats a value of the wrong shape as a leaf.
pub(crate) enum Resolved<'a> {
    Scalar,
    Map(std::borrow::Cow<'a, MapSchema>),
    List(std::borrow::Cow<'a, ListSchema>),
}

impl Schema {
    pub(crate) fn resolve(&self, v: Option<&Value>) -> Resolved<'_> {
        use std::borrow::Cow;
        match self {
            Schema::Scalar => Resolved::Scalar,
            Schema::Map(m) => Resolved::Map(Cow::Borrowed(m)),
            Schema::List(l) => Resolved::List(Cow::Borrowed(l)),
            Schema::Deduced => match v {
                Some(Value::Object(_)) => Resolved::Map(Cow::Owned(MapSchema {
                    fields: BTreeMap::new(),
                    element: Some(Arc::new(Schema::Deduced)),
                    atomic: false,
                    closed: false,
                })),
                Some(Value::Array(_)) => Resolved::List(Cow::Owned(ListSchema {
                    element: Arc::new(Schema::Deduced),
                    list_type: ListType::Atomic,
                })),
                _ => Resolved::Scalar,
            },
            Schema::OpenStruct => match v {
                None | Some(Value::Object(_)) => Resolved::Map(Cow::Owned(MapSchema::default())),
                Some(Value::Array(_)) => Resolved::List(Cow::Owned(ListSchema {
                    element: Arc::new(Schema::OpenStruct),
                    list_type: ListType::Atomic,
                })),
                _ => Resolved::Scalar,
            },
        }
    }

    /// The root schema of a kind with the given top-level fields; `metadata` is always
    /// ObjectMeta, `apiVersion` and `kind` scalars.
    pub(crate) fn kind(fields: BTreeMap<String, Field>) -> Schema {
        Schema::kind_with(fields, false)
    }

    /// [`Schema::kind`], `closed` as [`MapSchema::closed`] says.
    pub(crate) fn kind_with(mut fields: BTreeMap<String, Field>, closed: bool) -> Schema {
        fields.insert("apiVersion".into(), scalar());
        fields.insert("kind".into(), scalar());
        fields.insert("metadata".into(), field(object_meta()));
        Schema::Map(MapSchema {
            fields,
            element: None,
            atomic: false,
            closed,
        })
    }

    /// A kind nothing is known about: ObjectMeta, and open structs for everything else.
    pub(crate) fn untyped_kind() -> Schema {
        // Unknown top-level keys (spec, status...) are open structs; `lookup` does that.
        Schema::kind(BTreeMap::new())
    }
}

fn field(s: Schema) -> Field {
    Field {
        schema: Arc::new(s),
        default: None,
    }
}

fn scalar() -> Field {
    field(Schema::Scalar)
}

fn strukt(fields: Vec<(&str, Field)>) -> Schema {
    Schema::Map(MapSchema {
        fields: fields
            .into_iter()
            .map(|(k, f)| (k.to_string(), f))
            .collect(),
        element: None,
        atomic: false,
        closed: false,
    })
}

fn map_of(element: Schema) -> Schema {
    Schema::Map(MapSchema {
        fields: BTreeMap::new(),
        element: Some(Arc::new(element)),
        atomic: false,
        closed: false,
    })
}

fn list(element: Schema, list_type: ListType) -> Schema {
    Schema::List(ListSchema {
        element: Arc::new(element),
        list_type,
    })
}

fn keyed(keys: &[&str]) -> ListType {
    ListType::Map(keys.iter().map(|k| (*k).to_string()).collect())
}

/// `metav1.ObjectMeta` as the API server's schema has it.
fn object_meta() -> Schema {
    let owner_ref = strukt(vec![
        ("apiVersion", scalar()),
        ("kind", scalar()),
        ("name", scalar()),
        ("uid", scalar()),
        ("controller", scalar()),
        ("blockOwnerDeletion", scalar()),
    ]);
    strukt(vec![
        ("name", scalar()),
        ("generateName", scalar()),
        ("namespace", scalar()),
        ("selfLink", scalar()),
        ("uid", scalar()),
        ("resourceVersion", scalar()),
        ("generation", scalar()),
        ("creationTimestamp", scalar()),
        ("deletionTimestamp", scalar()),
        ("deletionGracePeriodSeconds", scalar()),
        ("labels", field(map_of(Schema::Scalar))),
        ("annotations", field(map_of(Schema::Scalar))),
        ("ownerReferences", field(list(owner_ref, keyed(&["uid"])))),
        ("finalizers", field(list(Schema::Scalar, ListType::Set))),
        (
            "managedFields",
            field(list(Schema::Deduced, ListType::Atomic)),
        ),
    ])
}

/// `metav1.LabelSelector`: both fields atomic lists / granular map.
fn label_selector() -> Schema {
    let requirement = strukt(vec![
        ("key", scalar()),
        ("operator", scalar()),
        ("values", field(list(Schema::Scalar, ListType::Atomic))),
    ]);
    Schema::Map(MapSchema {
        fields: [
            ("matchLabels".to_string(), field(map_of(Schema::Scalar))),
            (
                "matchExpressions".to_string(),
                field(list(requirement, ListType::Atomic)),
            ),
        ]
        .into_iter()
        .collect(),
        element: None,
        // `+structType=atomic` on LabelSelector.
        atomic: true,
        closed: false,
    })
}

/// `core/v1.Container`, with the list semantics of its most used lists; other fields are
/// open structs (atomic lists), which is what their schema says for most.
fn container() -> Schema {
    let port = strukt(vec![
        ("name", scalar()),
        ("hostPort", scalar()),
        ("containerPort", scalar()),
        (
            "protocol",
            Field {
                schema: Arc::new(Schema::Scalar),
                default: Some(Value::String("TCP".into())),
            },
        ),
        ("hostIP", scalar()),
    ]);
    let env = strukt(vec![
        ("name", scalar()),
        ("value", scalar()),
        ("valueFrom", field(Schema::OpenStruct)),
    ]);
    let volume_mount = strukt(vec![
        ("name", scalar()),
        ("readOnly", scalar()),
        ("mountPath", scalar()),
        ("subPath", scalar()),
        ("mountPropagation", scalar()),
        ("subPathExpr", scalar()),
        ("recursiveReadOnly", scalar()),
    ]);
    let mut fields: BTreeMap<String, Field> = [
        "name",
        "image",
        "workingDir",
        "imagePullPolicy",
        "terminationMessagePath",
        "terminationMessagePolicy",
        "stdin",
        "stdinOnce",
        "tty",
        "restartPolicy",
    ]
    .into_iter()
    .map(|n| (n.to_string(), scalar()))
    .collect();
    for (n, f) in [
        ("command", field(list(Schema::Scalar, ListType::Atomic))),
        ("args", field(list(Schema::Scalar, ListType::Atomic))),
        (
            "ports",
            field(list(port, keyed(&["containerPort", "protocol"]))),
        ),
        ("env", field(list(env, keyed(&["name"])))),
        (
            "volumeMounts",
            field(list(volume_mount, keyed(&["mountPath"]))),
        ),
    ] {
        fields.insert(n.to_string(), f);
    }
    Schema::Map(MapSchema {
        fields,
        element: None,
        atomic: false,
        closed: false,
    })
}

fn pod_spec() -> Schema {
    let mut fields: BTreeMap<String, Field> = BTreeMap::new();
    fields.insert(
        "containers".into(),
        field(list(container(), keyed(&["name"]))),
    );
    fields.insert(
        "initContainers".into(),
        field(list(container(), keyed(&["name"]))),
    );
    fields.insert(
        "volumes".into(),
        field(list(Schema::OpenStruct, keyed(&["name"]))),
    );
    fields.insert("nodeSelector".into(), field(map_of(Schema::Scalar)));
    for n in [
        "restartPolicy",
        "terminationGracePeriodSeconds",
        "activeDeadlineSeconds",
        "dnsPolicy",
        "serviceAccountName",
        "serviceAccount",
        "nodeName",
        "hostNetwork",
        "schedulerName",
        "priorityClassName",
        "priority",
        "hostname",
        "subdomain",
    ] {
        fields.insert(n.into(), scalar());
    }
    Schema::Map(MapSchema {
        fields,
        element: None,
        atomic: false,
        closed: false,
    })
}

fn pod_template() -> Schema {
    strukt(vec![
        ("metadata", field(object_meta())),
        ("spec", field(pod_spec())),
    ])
}

/// Built-in kinds with a hand-written schema: (group, kind, top-level fields).
pub(crate) fn builtin(group: &str, kind: &str) -> Option<Schema> {
    let fields: Vec<(&str, Field)> = match (group, kind) {
        ("", "ConfigMap") => vec![
            ("data", field(map_of(Schema::Scalar))),
            ("binaryData", field(map_of(Schema::Scalar))),
            ("immutable", scalar()),
        ],
        ("", "Secret") => vec![
            ("data", field(map_of(Schema::Scalar))),
            ("stringData", field(map_of(Schema::Scalar))),
            ("type", scalar()),
            ("immutable", scalar()),
        ],
        ("apps", "Deployment") => {
            let spec = strukt(vec![
                ("replicas", scalar()),
                ("selector", field(label_selector())),
                ("template", field(pod_template())),
                ("strategy", field(Schema::OpenStruct)),
                ("minReadySeconds", scalar()),
                ("revisionHistoryLimit", scalar()),
                ("paused", scalar()),
                ("progressDeadlineSeconds", scalar()),
            ]);
            vec![("spec", field(spec)), ("status", field(Schema::OpenStruct))]
        }
        _ => return None,
    };
    Some(Schema::kind(
        fields
            .into_iter()
            .map(|(k, f)| (k.to_string(), f))
            .collect(),
    ))
}

/// The schema of one version of a CRD, from its structural schema, as the API server's
/// CRD handler builds it (`x-kubernetes-*` extensions; lists are atomic unless marked).
pub(crate) fn from_crd_schema(props: &JSONSchemaProps) -> Schema {
    let mut fields = BTreeMap::new();
    for (name, p) in props.properties.iter().flatten() {
        if matches!(name.as_str(), "apiVersion" | "kind" | "metadata") {
            continue;
        }
        fields.insert(name.clone(), from_props(p));
    }
    Schema::kind_with(
        fields,
        props.x_kubernetes_preserve_unknown_fields != Some(true),
    )
}

fn from_props(p: &JSONSchemaProps) -> Field {
    Field {
        schema: Arc::new(props_schema(p)),
        default: p.default.as_ref().map(|d| d.0.clone()),
    }
}

fn props_schema(p: &JSONSchemaProps) -> Schema {
    if p.x_kubernetes_int_or_string == Some(true) {
        return Schema::Scalar;
    }
    match p.type_.as_deref() {
        Some("object") => {
            let fields: BTreeMap<String, Field> = p
                .properties
                .iter()
                .flatten()
                .map(|(k, v)| (k.clone(), from_props(v)))
                .collect();
            let element = match &p.additional_properties {
                Some(JSONSchemaPropsOrBool::Schema(s)) => Some(Arc::new(props_schema(s))),
                Some(JSONSchemaPropsOrBool::Bool(true)) => Some(Arc::new(Schema::Deduced)),
                _ if p.x_kubernetes_preserve_unknown_fields == Some(true) => {
                    Some(Arc::new(Schema::Deduced))
                }
                // `type: object` without properties: an untyped map.
                _ if fields.is_empty() => Some(Arc::new(Schema::Deduced)),
                _ => None,
            };
            Schema::Map(MapSchema {
                closed: element.is_none(),
                fields,
                element,
                atomic: p.x_kubernetes_map_type.as_deref() == Some("atomic"),
            })
        }
        Some("array") => {
            let element = match &p.items {
                Some(JSONSchemaPropsOrArray::Schema(s)) => props_schema(s),
                _ => Schema::Deduced,
            };
            let list_type = match p.x_kubernetes_list_type.as_deref() {
                Some("set") => ListType::Set,
                Some("map") => {
                    ListType::Map(p.x_kubernetes_list_map_keys.clone().unwrap_or_default())
                }
                _ => ListType::Atomic,
            };
            list(element, list_type)
        }
        Some(_) => Schema::Scalar,
        None if p.x_kubernetes_preserve_unknown_fields == Some(true) => Schema::Deduced,
        None => Schema::Deduced,
    }
}
