use serde_json::json;

use super::*;

fn schema() -> Schema {
    Schema::from_json(
        &json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["name"],
                    "x-kubernetes-validations": [
                        {"rule": "self.replicas <= self.max", "message": "replicas above max", "fieldPath": ".replicas"},
                        {"rule": "self.name == oldSelf.name", "message": "name is immutable", "reason": "FieldValueForbidden"},
                        {"rule": "self.replicas != 7", "messageExpression": "'replicas ' + string(self.replicas) + ' is unlucky'"}
                    ],
                    "properties": {
                        "name": {"type": "string", "maxLength": 5, "pattern": "^[a-z]+$"},
                        "replicas": {"type": "integer", "minimum": 1, "default": 1},
                        "max": {"type": "integer", "default": 10},
                        "mode": {"type": "string", "enum": ["a", "b"]},
                        "id": {"type": "string", "format": "uuid"},
                        "ports": {
                            "type": "array", "maxItems": 3,
                            "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["port"],
                            "items": {"type": "object", "properties": {
                                "port": {"type": "integer"},
                                "protocol": {"type": "string", "default": "TCP"}
                            }}
                        },
                        "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                        "labels": {"type": "object", "additionalProperties": {"type": "string", "minLength": 1}}
                    }
                }
            }
        })
        .to_string(),
    )
    .unwrap()
}

fn check(
    mut v: serde_json::Value,
    old: Option<serde_json::Value>,
) -> Vec<(String, ErrorType, String)> {
    let s = schema();
    s.default_value(&mut v);
    let old = old.map(|mut o| {
        s.default_value(&mut o);
        o
    });
    match s.validate_value(&v, old.as_ref()) {
        Ok(()) => vec![],
        Err(e) => {
            e.0.into_iter()
                .map(|e| (e.field.clone(), e.error_type, e.body()))
                .collect()
        }
    }
}

#[test]
fn defaults_apply_to_absent_fields_and_list_items() {
    let s = schema();
    let mut v =
        json!({"spec": {"name": "a", "ports": [{"port": 80}], "replicas": null, "mode": null}});
    s.default_value(&mut v);
    assert_eq!(
        v,
        json!({"spec": {"name": "a", "replicas": 1, "max": 10, "ports": [{"port": 80, "protocol": "TCP"}]}})
    );
}

#[test]
fn a_valid_object_passes() {
    assert_eq!(check(json!({"spec": {"name": "abc"}}), None), vec![]);
}

#[test]
fn value_validations_have_the_servers_classes_and_paths() {
    let errs = check(
        json!({"spec": {"name": "ABCDEFG", "replicas": 0, "mode": "c", "id": "x",
            "ports": [{"port": 1}, {"port": 1}, {"port": 2}, {"port": 3}], "tags": ["a", "a"],
            "labels": {"k": ""}}}),
        None,
    );
    let got: Vec<(&str, ErrorType)> = errs.iter().map(|(f, t, _)| (f.as_str(), *t)).collect();
    for want in [
        ("spec.name", ErrorType::TooLong),
        ("spec.replicas", ErrorType::Invalid),
        ("spec.mode", ErrorType::NotSupported),
        ("spec.id", ErrorType::TypeInvalid),
        ("spec.ports", ErrorType::TooMany),
        ("spec.ports[1]", ErrorType::Duplicate),
        ("spec.tags[1]", ErrorType::Duplicate),
        ("spec.labels.k", ErrorType::Invalid),
        // Blocking errors: CEL rules did not run.
        ("", ErrorType::Invalid),
    ] {
        assert!(got.contains(&want), "{want:?} not in {errs:#?}");
    }
    // kube-openapi stops at the first failing string keyword: no pattern error after maxLength.
    assert!(
        !got.contains(&("spec.name", ErrorType::Invalid)),
        "{errs:#?}"
    );
    let body = |f: &str, t: ErrorType| {
        errs.iter()
            .find(|e| e.0 == f && e.1 == t)
            .unwrap()
            .2
            .clone()
    };
    assert_eq!(
        body("spec.name", ErrorType::TooLong),
        "Too long: may not be more than 5 bytes"
    );
    assert_eq!(
        body("spec.replicas", ErrorType::Invalid),
        "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"
    );
    assert_eq!(
        body("spec.mode", ErrorType::NotSupported),
        "Unsupported value: \"c\": supported values: \"a\", \"b\""
    );
}

#[test]
fn required_fields() {
    let errs = check(json!({"spec": {}}), None);
    assert_eq!(
        errs[0],
        (
            "spec.name".into(),
            ErrorType::Required,
            "Required value".into()
        )
    );
}

#[test]
fn cel_rules_with_field_path_message_expression_and_reason() {
    let errs = check(json!({"spec": {"name": "a", "replicas": 11}}), None);
    assert_eq!(
        errs,
        vec![(
            "spec.replicas".into(),
            ErrorType::Invalid,
            "Invalid value: replicas above max".into()
        )]
    );
    let errs = check(json!({"spec": {"name": "a", "replicas": 7}}), None);
    assert_eq!(errs[0].2, "Invalid value: replicas 7 is unlucky");
}

#[test]
fn transition_rules_run_on_update_only() {
    let old = json!({"spec": {"name": "a"}});
    assert_eq!(check(json!({"spec": {"name": "b"}}), None), vec![]);
    assert_eq!(
        check(json!({"spec": {"name": "b"}}), Some(old)),
        vec![(
            "spec".into(),
            ErrorType::Forbidden,
            "Forbidden: name is immutable".into()
        )]
    );
}

#[test]
fn unchanged_values_are_ratcheted_on_update() {
    let old = json!({"spec": {"name": "a", "replicas": 11}});
    assert_eq!(check(old.clone(), Some(old.clone())), vec![]);
    // The spec changed, so its rule's error is not ratcheted.
    let errs = check(json!({"spec": {"name": "a", "replicas": 12}}), Some(old));
    assert_eq!(errs.len(), 1);
}

#[test]
fn bad_rules_are_schema_errors() {
    let errs = Schema::check_json(&json!({"type": "object", "properties": {"a": {
        "type": "string", "x-kubernetes-validations": [{"rule": "type(self) == string"}]}}}));
    assert_eq!(
        errs[0].path,
        "properties.a.x-kubernetes-validations[0].rule"
    );
}

#[test]
fn nullable_fields_keep_null_and_others_take_their_default_or_go() {
    let s = Schema::from_json(
        &json!({"type": "object", "properties": {
            "a": {"type": "string", "nullable": true, "default": "x"},
            "b": {"type": "string", "default": "y"},
            "c": {"type": "string"},
            "l": {"type": "array", "items": {"type": "integer", "default": 7}},
            "m": {"type": "object", "additionalProperties": {"type": "object",
                "properties": {"z": {"type": "integer", "default": 1}}}}
        }})
        .to_string(),
    )
    .unwrap();
    let mut v =
        json!({"a": null, "b": null, "c": null, "l": [1, null], "m": {"k": {}}, "unknown": 1});
    s.default_value(&mut v);
    assert_eq!(
        v,
        json!({"a": null, "b": "y", "l": [1, 7], "m": {"k": {"z": 1}}})
    );
}

#[test]
fn formats_the_server_checks_and_those_it_strips() {
    use super::formats::check;
    assert_eq!(
        check("uuid", "550e8400-e29b-41d4-a716-446655440000"),
        Some(true)
    );
    assert_eq!(check("uuid", "x"), Some(false));
    assert_eq!(check("date-time", "2020-01-01T00:00:00Z"), Some(true));
    assert_eq!(check("date-time", "2020-13-01T00:00:00Z"), Some(false));
    assert_eq!(check("byte", ""), Some(false));
    assert_eq!(check("ipv4", "10.0.0.1"), Some(true));
    assert_eq!(check("cidr", "10.0.0.0/33"), Some(false));
    // Stripped by the server: never checked.
    assert_eq!(check("int32", "x"), None);
    assert_eq!(check("k8s-short-name", "Not_A_Label"), None);
}

fn embedded_schema() -> Schema {
    Schema::from_json(
        &json!({
            "type": "object",
            "properties": {
                "spec": {"type": "object", "properties": {
                    "template": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true,
                        "x-kubernetes-validations": [{"rule": "self.kind != 'Secret'"}]
                    },
                    "objects": {"type": "array", "items": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": true,
                        "x-kubernetes-preserve-unknown-fields": true
                    }}
                }}
            }
        })
        .to_string(),
    )
    .unwrap()
}

fn embedded(mut v: serde_json::Value) -> (serde_json::Value, Vec<(String, ErrorType)>) {
    let s = embedded_schema();
    s.default_value(&mut v);
    let errs = match s.validate_value(&v, None) {
        Ok(()) => vec![],
        Err(e) => {
            let mut e: Vec<(String, ErrorType)> =
                e.0.into_iter().map(|e| (e.field, e.error_type)).collect();
            e.sort();
            e
        }
    };
    (v, errs)
}

#[test]
fn embedded_metadata_is_rewritten_as_object_meta() {
    let (v, errs) = embedded(json!({"spec": {"template": {
        "apiVersion": "v1", "kind": "ConfigMap", "data": {"a": "b"},
        "metadata": {
            "name": "a", "unknown": 1, "labels": {}, "annotations": null, "generation": 0,
            "creationTimestamp": "2021-06-01T12:00:00.5+02:00", "deletionGracePeriodSeconds": 0,
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u", "x": 1}],
            "finalizers": [],
        }
    }}}));
    assert_eq!(errs, vec![]);
    assert_eq!(
        v["spec"]["template"]["metadata"],
        json!({
            "name": "a",
            "creationTimestamp": "2021-06-01T10:00:00Z",
            "deletionGracePeriodSeconds": 0,
            "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap", "name": "c", "uid": "u"}],
        })
    );
    let (v, _) = embedded(json!({"spec": {"template": {
        "apiVersion": "v1", "kind": "ConfigMap", "metadata": {"creationTimestamp": null}
    }}}));
    assert_eq!(v["spec"]["template"]["metadata"], json!({}));
}

#[test]
fn embedded_resources_are_checked_as_the_server_does() {
    use ErrorType::*;
    let f = |s: &str| s.to_owned();
    // Missing apiVersion and kind are required (and block the rules).
    let (_, errs) = embedded(json!({"spec": {"template": {"data": {}}}}));
    assert_eq!(
        errs,
        vec![
            (f(""), Invalid),
            (f("spec.template.apiVersion"), Required),
            (f("spec.template.kind"), Required)
        ]
    );
    let (_, errs) = embedded(json!({"spec": {"objects": [
        {"apiVersion": "a/b/c", "kind": "Not_A_Kind"},
        {"apiVersion": "v1", "kind": "K", "metadata": {
            "name": "..", "namespace": "Bad", "generation": -1,
            "labels": {"bad key!": "v"}, "finalizers": ["orphan", "foregroundDeletion"],
            "ownerReferences": [{}], "managedFields": [{"operation": "Bogus"}]
        }}
    ]}}));
    assert_eq!(
        errs,
        vec![
            // Required and NotSupported errors block the rules.
            (f(""), Invalid),
            (f("spec.objects[0].apiVersion"), Invalid),
            (f("spec.objects[0].kind"), Invalid),
            (f("spec.objects[1].metadata.finalizers"), Invalid),
            (f("spec.objects[1].metadata.generation"), Invalid),
            (f("spec.objects[1].metadata.labels"), Invalid),
            (
                f("spec.objects[1].metadata.managedFields[0].operation"),
                NotSupported
            ),
            (f("spec.objects[1].metadata.name"), Invalid),
            (f("spec.objects[1].metadata.namespace"), Invalid),
            (
                f("spec.objects[1].metadata.ownerReferences[0].apiVersion"),
                Required
            ),
            (
                f("spec.objects[1].metadata.ownerReferences[0].kind"),
                Required
            ),
            (
                f("spec.objects[1].metadata.ownerReferences[0].name"),
                Required
            ),
            (
                f("spec.objects[1].metadata.ownerReferences[0].uid"),
                Required
            ),
        ]
    );
    // What does not decode is the only error (the server's 400).
    let (_, errs) = embedded(json!({"spec": {"template": {
        "apiVersion": "v1", "kind": "Secret", "metadata": {"name": 5}
    }}}));
    assert_eq!(errs, vec![(f("spec.template.metadata"), Invalid)]);
    let (_, errs) = embedded(json!({"spec": {"objects": [{"apiVersion": 1, "kind": "K"}]}}));
    assert_eq!(errs, vec![(f("spec.objects[0].apiVersion"), Invalid)]);
    // A valid embedded resource reaches the rules.
    let (_, errs) = embedded(json!({"spec": {"template": {"apiVersion": "v1", "kind": "Secret"}}}));
    assert_eq!(errs, vec![(f("spec.template"), Invalid)]);
}

/// A CRD's defaults are checked as the API server checks them when it creates the CRD:
/// each against its own node (bounds, enum, pattern, length, unknown fields) and the CEL
/// rules of that node and below, with the server's field paths and words.
#[test]
fn defaults_that_break_their_schema_are_reported_as_the_server_does() {
    let s = Schema::from_json(
        &json!({
            "type": "object",
            "properties": {"spec": {"type": "object", "properties": {
                "replicas": {"type": "integer", "maximum": 10, "default": 11},
                "mode": {"type": "string", "enum": ["A", "B"], "default": "C"},
                "name": {"type": "string", "maxLength": 3, "default": "abcd"},
                "id": {"type": "string", "pattern": "^[a-z]+$", "default": "a1"},
                "ok": {"type": "integer", "minimum": 1, "default": 1},
                "pair": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}},
                    "x-kubernetes-validations": [{"rule": "self.a < self.b", "message": "a must be below b"}],
                    "default": {"a": 2, "b": 1}
                },
                "extra": {
                    "type": "object",
                    "properties": {"a": {"type": "integer"}},
                    "default": {"a": 1, "z": 2}
                },
                "list": {"type": "array", "items": {"type": "integer", "maximum": 3, "default": 4}}
            }}}
        })
        .to_string(),
    )
    .unwrap();
    let got: Vec<(Vec<SchemaStep>, String)> = s
        .validate_defaults("spec.versions[0].schema.openAPIV3Schema")
        .into_iter()
        .map(|e| (e.node, e.error.to_string()))
        .collect();
    let p = |names: &[&str]| -> Vec<SchemaStep> {
        names
            .iter()
            .map(|n| match *n {
                "[]" => SchemaStep::Items,
                n => SchemaStep::Property(n.into()),
            })
            .collect()
    };
    let at = "spec.versions[0].schema.openAPIV3Schema.properties[spec]";
    let want = |node: &[&str], rest: &str| (p(node), format!("{at}{rest}"));
    assert_eq!(
        got,
        vec![
            want(
                &["spec", "extra"],
                r#".properties[extra].default: Invalid value: {"a":1,"z":2}: must not have unknown fields"#
            ),
            want(
                &["spec", "id"],
                r#".properties[id].default: Invalid value: "a1":  in body should match '^[a-z]+$'"#
            ),
            want(
                &["spec", "list", "[]"],
                ".properties[list].items.default: Invalid value: 4:  in body should be less than or equal to 3"
            ),
            want(
                &["spec", "mode"],
                r#".properties[mode].default: Unsupported value: "C": supported values: "A", "B""#
            ),
            want(
                &["spec", "name"],
                ".properties[name].default: Too long: may not be more than 3 bytes"
            ),
            want(
                &["spec", "pair"],
                ".properties[pair].default: Invalid value: a must be below b"
            ),
            want(
                &["spec", "replicas"],
                ".properties[replicas].default: Invalid value: 11:  in body should be less than or equal to 10"
            ),
        ]
    );
}

#[test]
fn property_names_are_escaped_or_kept_as_the_server_keeps_them() {
    let s = Schema::from_json(
        &json!({"type": "object", "properties": {"names": {
            "type": "object",
            "properties": {
                "want": {"type": "string"}, "1a-b": {"type": "string"}, "a-b": {"type": "string"},
                "a b": {"type": "string"}, "namespace": {"type": "string"},
            },
            "x-kubernetes-validations": [{"rule": "dyn(self).exists(k, k == self.want)"}],
        }}})
        .to_string(),
    )
    .unwrap();
    let ok = |want: &str, key: &str| {
        s.validate_value(&json!({"names": {"want": want, key: "x"}}), None)
            .is_ok()
    };
    // Escaped where CEL can name it, as written where it cannot (`UnstructuredToVal`).
    assert!(ok("a__dash__b", "a-b"));
    assert!(ok("__namespace__", "namespace"));
    assert!(ok("1a-b", "1a-b"));
    assert!(ok("a b", "a b"));
    assert!(!ok("1a__dash__b", "1a-b"));
    assert!(!ok("a-b", "a-b"));
}

/// The constructors word their errors as `field.Invalid`, `field.Required`,
/// `field.Forbidden` and `field.NotSupported` do (strings quoted as Go's `%q`).
#[test]
fn field_error_constructors_print_as_the_api_server_does() {
    assert_eq!(
        FieldError::invalid("spec.name", "a\"b", "must be a DNS label").to_string(),
        r#"spec.name: Invalid value: "a\"b": must be a DNS label"#
    );
    assert_eq!(
        FieldError::invalid("spec.replicas", 0, "must be at least 1").to_string(),
        "spec.replicas: Invalid value: 0: must be at least 1"
    );
    assert_eq!(
        FieldError::required("spec.image", "").to_string(),
        "spec.image: Required value"
    );
    assert_eq!(
        FieldError::forbidden("spec.x", "may not be set with spec.y").to_string(),
        "spec.x: Forbidden: may not be set with spec.y"
    );
    let e = FieldError::not_supported("spec.mode", "turbo", &["fast", "slow"]);
    assert_eq!(e.error_type.cause_type(), "FieldValueNotSupported");
    assert_eq!(
        e.to_string(),
        r#"spec.mode: Unsupported value: "turbo": supported values: "fast", "slow""#
    );
    assert_eq!(
        Errors::from(vec![
            FieldError::required("a", ""),
            FieldError::required("b", "")
        ])
        .to_string(),
        "[a: Required value, b: Required value]"
    );
}
