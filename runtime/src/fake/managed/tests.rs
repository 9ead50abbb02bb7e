//! Unit tests of field ownership. The differential suite
//! (`tests/tests/fake_apply_differential.rs`) checks the same code against a real API
//! server; these pin the pieces down without one.

use serde_json::{Value, json};

use super::fieldset::{PathElement, Set, fields_path};
use super::schema::{Schema, builtin, from_crd_schema};
use super::*;

fn configmap() -> Schema {
    builtin("", "ConfigMap").unwrap()
}

fn tracker<'a>(schema: &'a Schema, now: &str) -> Tracker<'a> {
    Tracker {
        schema,
        api_version: "v1".into(),
        subresource: None,
        reset: Set::new(),
        now: now.into(),
    }
}

fn cm(data: Value) -> Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": data})
}

fn apply_id(m: &str) -> ManagerId {
    ManagerId {
        manager: m.into(),
        operation: Operation::Apply,
        api_version: None,
        subresource: None,
    }
}

#[test]
fn apply_owns_exactly_the_applied_fields_and_prunes_what_it_drops() {
    let s = configmap();
    let t = tracker(&s, "2026-01-01T00:00:00Z");
    let empty = json!({"apiVersion": "v1", "kind": "ConfigMap"});
    let (obj, managed) = t
        .apply(
            &empty,
            &cm(json!({"a": "1", "b": "2"})),
            Managed::new(),
            "m",
            false,
        )
        .unwrap();
    let obj = obj.expect("created");
    assert_eq!(obj["data"], json!({"a": "1", "b": "2"}));
    let e = &managed[&apply_id("m")];
    assert_eq!(
        e.set.to_fields_v1(),
        json!({"f:data": {"f:a": {}, "f:b": {}}})
    );
    assert_eq!(e.time.as_deref(), Some("2026-01-01T00:00:00Z"));

    // Re-applying changes nothing: no new object, same time.
    let t2 = tracker(&s, "2026-01-01T00:00:09Z");
    let (same, m2) = t2
        .apply(
            &obj,
            &cm(json!({"a": "1", "b": "2"})),
            managed.clone(),
            "m",
            false,
        )
        .unwrap();
    assert!(same.is_none());
    assert_eq!(m2, managed);

    // Dropping b removes it from the object.
    let (obj2, m3) = t2
        .apply(&obj, &cm(json!({"a": "1"})), managed, "m", false)
        .unwrap();
    assert_eq!(obj2.unwrap()["data"], json!({"a": "1"}));
    assert_eq!(
        m3[&apply_id("m")].time.as_deref(),
        Some("2026-01-01T00:00:09Z")
    );
}

#[test]
fn conflicts_force_and_shared_ownership() {
    let s = configmap();
    let t = tracker(&s, "2026-01-01T00:00:00Z");
    let empty = json!({});
    let (obj, managed) = t
        .apply(&empty, &cm(json!({"a": "1"})), Managed::new(), "one", false)
        .unwrap();
    let obj = obj.unwrap();

    // Same value: shared, no conflict, and the object does not change (no time either).
    let (none, shared) = t
        .apply(&obj, &cm(json!({"a": "1"})), managed.clone(), "two", false)
        .unwrap();
    assert!(none.is_none());
    assert!(shared[&apply_id("two")].time.is_none());
    assert!(
        shared[&apply_id("one")]
            .set
            .has(&fields_path(&["data", "a"]))
    );

    // Different value: a conflict naming the owner and the field.
    let Err(ApplyError::Conflicts(c)) =
        t.apply(&obj, &cm(json!({"a": "2"})), managed.clone(), "two", false)
    else {
        panic!("expected a conflict");
    };
    let status = conflict_status(&c);
    assert_eq!(status.code, 409);
    assert_eq!(status.reason, "Conflict");
    assert_eq!(
        status.message,
        r#"Apply failed with 1 conflict: conflict with "one": .data.a"#
    );
    let causes = &status.details.as_ref().unwrap().causes;
    assert_eq!(causes[0].reason, "FieldManagerConflict");
    assert_eq!(causes[0].field, ".data.a");
    assert_eq!(causes[0].message, r#"conflict with "one""#);

    // Forced: the field moves; the old owner's entry, now empty, goes away.
    let (forced, m) = t
        .apply(&obj, &cm(json!({"a": "2"})), managed, "two", true)
        .unwrap();
    assert_eq!(forced.unwrap()["data"]["a"], "2");
    assert!(!m.contains_key(&apply_id("one")));
}

#[test]
fn update_takes_changed_fields_from_appliers_without_conflict() {
    let s = configmap();
    let t = tracker(&s, "2026-01-01T00:00:00Z");
    let (obj, managed) = t
        .apply(
            &json!({}),
            &cm(json!({"a": "1", "b": "1"})),
            Managed::new(),
            "ap",
            false,
        )
        .unwrap();
    let obj = obj.unwrap();
    let mut changed = obj.clone();
    changed["data"]["a"] = "2".into();
    changed["metadata"]["labels"] = json!({"l": "v"});
    let m = t.update(&obj, &changed, managed, "up", false);
    let up = ManagerId {
        manager: "up".into(),
        operation: Operation::Update,
        api_version: Some("v1".into()),
        subresource: None,
    };
    assert_eq!(
        m[&up].set.to_fields_v1(),
        json!({"f:data": {"f:a": {}}, "f:metadata": {"f:labels": {".": {}, "f:l": {}}}})
    );
    assert_eq!(
        m[&apply_id("ap")].set.to_fields_v1(),
        json!({"f:data": {"f:b": {}}})
    );
    // Objects nobody tracks yet stay untracked on update.
    assert!(
        t.update(&obj, &changed, Managed::new(), "up", false)
            .is_empty()
    );
}

#[test]
fn reset_fields_are_never_owned() {
    let s = Schema::untyped_kind();
    let mut t = tracker(&s, "2026-01-01T00:00:00Z");
    t.reset = reset_fields("example.com", "Foo", true, false);
    let body = json!({"apiVersion": "v1", "kind": "Foo", "spec": {"a": 1}, "status": {"b": 2}});
    let (_, m) = t
        .apply(&json!({}), &body, Managed::new(), "m", false)
        .unwrap();
    // Without a schema `spec` is a struct: no `.` marker, as for a CRD's spec.
    assert_eq!(
        m[&apply_id("m")].set.to_fields_v1(),
        json!({"f:spec": {"f:a": {}}})
    );
}

#[test]
fn malformed_input_is_an_error_not_a_panic() {
    let s = from_crd_schema(
        &serde_json::from_value(json!({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {"items": {"type": "array",
                "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["name"],
                "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "tags": {"type": "array", "x-kubernetes-list-type": "set",
                "items": {"type": "string"}}}}}}))
        .unwrap(),
    );
    let t = tracker(&s, "2026-01-01T00:00:00Z");
    for body in [
        json!({"spec": {"items": [{"name": "a"}, {"name": "a"}]}}),
        json!({"spec": {"items": [{"value": "no key"}]}}),
        json!({"spec": {"items": ["not an object"]}}),
        json!({"spec": {"tags": [{"a": 1}]}}),
        json!({"spec": {"tags": [null]}}),
    ] {
        let r = t.apply(&json!({}), &body, Managed::new(), "m", false);
        assert!(matches!(r, Err(ApplyError::Invalid(_))), "{body}: {r:?}");
    }
    let Err(ApplyError::Invalid(msg)) = t.apply(
        &json!({}),
        &json!({"spec": {"items": [{"name": "a"}, {"name": "a"}]}}),
        Managed::new(),
        "m",
        false,
    ) else {
        unreachable!()
    };
    assert_eq!(msg, r#".spec.items: duplicate entries for key [name="a"]"#);

    for bad in [
        json!({"metadata": {"managedFields": "x"}}),
        json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Patch", "apiVersion": "v1", "fieldsType": "FieldsV1"}]}}),
        json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Apply", "fieldsType": "FieldsV1"}]}}),
        json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV2"}]}}),
        json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"x:y": {}}}]}}),
        json!({"metadata": {"managedFields": [{"manager": "m", "operation": "Apply", "apiVersion": "v1", "fieldsType": "FieldsV1", "fieldsV1": {"k:{bad": {}}}]}}),
    ] {
        assert!(decode(&bad).is_err(), "{bad}");
    }
}

#[test]
fn crd_schemas_reject_and_prune_undeclared_fields() {
    let s = from_crd_schema(
        &serde_json::from_value(json!({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {
                "known": {"type": "string"},
                "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                "list": {"type": "array", "items": {"type": "object",
                    "properties": {"a": {"type": "string"}}}}}}}}))
        .unwrap(),
    );
    let t = tracker(&s, "2026-01-01T00:00:00Z");
    let body = json!({"spec": {"known": "k", "bogus": 1, "free": {"anything": {"goes": 1}}}});
    let Err(ApplyError::Invalid(msg)) = t.apply(&json!({}), &body, Managed::new(), "m", false)
    else {
        panic!("undeclared field accepted");
    };
    assert_eq!(msg, ".spec.bogus: field not declared in schema");
    let Err(ApplyError::Invalid(msg)) = t.apply(
        &json!({}),
        &json!({"top": 1, "spec": {"bogus": 1}}),
        Managed::new(),
        "m",
        false,
    ) else {
        panic!("undeclared fields accepted");
    };
    assert!(msg.starts_with("errors:\n  "), "{msg}");

    let mut obj = json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}},
        "top": 1, "spec": {"known": "k", "bogus": 1, "free": {"anything": 1},
        "list": [{"a": "1", "b": "2"}]}});
    typed::prune_undeclared(&s, &mut obj);
    assert_eq!(
        obj,
        json!({"apiVersion": "x/v1", "kind": "K", "metadata": {"name": "n", "labels": {"a": "b"}},
            "spec": {"known": "k", "free": {"anything": 1}, "list": [{"a": "1"}]}})
    );
}

#[test]
fn schema_defaults_fill_missing_fields_of_present_objects() {
    let s = from_crd_schema(
        &serde_json::from_value(json!({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {
                "mode": {"type": "string", "default": "auto"},
                "inner": {"type": "object", "properties": {"n": {"type": "integer", "default": 3}}},
                "ports": {"type": "array", "x-kubernetes-list-type": "map",
                    "x-kubernetes-list-map-keys": ["port", "protocol"], "items": {"type": "object",
                        "properties": {"port": {"type": "integer"},
                            "protocol": {"type": "string", "default": "TCP"}}}}}}}}))
        .unwrap(),
    );
    let mut v =
        json!({"spec": {"mode": "manual", "ports": [{"port": 1}, {"port": 2, "protocol": "UDP"}]}});
    typed::apply_defaults(&s, &mut v);
    // `inner` is absent, so its defaults are not applied; present objects get theirs.
    assert_eq!(
        v,
        json!({"spec": {"mode": "manual", "ports": [{"port": 1, "protocol": "TCP"}, {"port": 2, "protocol": "UDP"}]}})
    );
    let mut empty = json!({"spec": {}});
    typed::apply_defaults(&s, &mut empty);
    assert_eq!(empty, json!({"spec": {"mode": "auto"}}));
}

#[test]
fn encoding_order_and_round_trip() {
    let mut m = Managed::new();
    let mut set = Set::new();
    set.insert(&fields_path(&["data", "a"]));
    let entry = |time: Option<&str>| Entry {
        set: set.clone(),
        api_version: "v1".into(),
        time: time.map(str::to_string),
    };
    m.insert(
        ManagerId {
            manager: "a-update".into(),
            operation: Operation::Update,
            api_version: Some("v1".into()),
            subresource: Some("status".into()),
        },
        entry(Some("2026-01-01T00:00:00Z")),
    );
    m.insert(apply_id("z-late"), entry(Some("2026-01-01T00:00:05Z")));
    m.insert(apply_id("y-early"), entry(Some("2026-01-01T00:00:01Z")));
    m.insert(apply_id("x-untimed"), entry(None));
    let encoded = encode(&m).unwrap();
    let managers: Vec<&str> = encoded
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["manager"].as_str().unwrap())
        .collect();
    // Apply before Update, then by time (missing first), then by name.
    assert_eq!(managers, ["x-untimed", "y-early", "z-late", "a-update"]);
    assert_eq!(encoded[3]["subresource"], "status");
    assert!(encoded[0].get("time").is_none());
    let obj = json!({"metadata": {"managedFields": encoded}});
    assert_eq!(decode(&obj).unwrap(), m);
    assert!(encode(&Managed::new()).is_none());
}

#[test]
fn conflict_messages_for_several_managers() {
    let update = ManagerId {
        manager: "ctl".into(),
        operation: Operation::Update,
        api_version: Some("apps/v1".into()),
        subresource: Some("status".into()),
    };
    let c = |m: &ManagerId, f: &[&str]| Conflict {
        manager: m.clone(),
        path: fields_path(f),
    };
    let status = conflict_status(&[
        c(&apply_id("b"), &["spec", "x"]),
        c(&update, &["status", "y"]),
        c(&apply_id("b"), &["spec", "z"]),
    ]);
    assert_eq!(
        status.message,
        "Apply failed with 3 conflicts: conflicts with \"b\":\n- .spec.x\n- .spec.z\n\
         conflicts with \"ctl\" with subresource \"status\" using apps/v1:\n- .status.y"
    );
}

#[test]
fn managers_from_user_agents() {
    assert_eq!(
        manager_from_user_agent("kubectl/v1.37.2 (linux/amd64)"),
        "kubectl"
    );
    assert_eq!(manager_from_user_agent(""), "unknown");
    assert_eq!(manager_from_user_agent("a\u{7}b/1"), "ab");
    assert_eq!(manager_from_user_agent(&"x".repeat(300)).len(), 128);
}

#[test]
fn crd_schema_list_and_map_types() {
    let s = from_crd_schema(
        &serde_json::from_value(json!({"type": "object", "properties": {"spec": {
            "type": "object", "properties": {
                "m": {"type": "object", "x-kubernetes-map-type": "atomic",
                    "additionalProperties": {"type": "string"}},
                "l": {"type": "array", "items": {"type": "string"}},
                "s": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}}}}}}))
        .unwrap(),
    );
    let set = typed::to_field_set(
        &s,
        &json!({"spec": {"m": {"a": "b"}, "l": ["x"], "s": ["y"]}}),
    )
    .unwrap();
    assert_eq!(
        set.to_fields_v1(),
        json!({"f:spec": {"f:m": {}, "f:l": {}, "f:s": {"v:\"y\"": {}}}})
    );
    assert!(set.has(&[
        PathElement::Field("spec".into()),
        PathElement::Field("m".into())
    ]));
}

mod properties {
    use proptest::prelude::*;
    use serde_json::{Value, json};

    use super::super::schema::from_crd_schema;
    use super::super::*;

    fn schema() -> Schema {
        from_crd_schema(
            &serde_json::from_value(json!({"type": "object", "properties": {"spec": {
                "type": "object", "properties": {
                    "n": {"type": "integer"},
                    "items": {"type": "array", "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"], "items": {"type": "object",
                            "properties": {"name": {"type": "string"}, "v": {"type": "string"}}}},
                    "tags": {"type": "array", "x-kubernetes-list-type": "set",
                        "items": {"type": "string"}},
                    "args": {"type": "array", "items": {"type": "string"}},
                    "m": {"type": "object", "additionalProperties": {"type": "string"}},
                    "free": {"type": "object", "x-kubernetes-preserve-unknown-fields": true}}}}}))
            .unwrap(),
        )
    }

    /// Any JSON, to throw at the schema: shapes it expects and shapes it does not.
    fn any_json() -> impl Strategy<Value = Value> {
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::from),
            (0i64..4).prop_map(Value::from),
            "[a-c]{0,2}".prop_map(Value::from),
        ];
        leaf.prop_recursive(3, 24, 4, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
                prop::collection::btree_map("name|v|n|items|tags|args|m|free|x", inner, 0..4)
                    .prop_map(|m| Value::Object(m.into_iter().collect())),
            ]
        })
    }

    fn body(spec: Value) -> Value {
        json!({"apiVersion": "example.com/v1", "kind": "W", "metadata": {"name": "w"}, "spec": spec})
    }

    proptest! {
        /// Whatever two managers apply, nothing panics, and when an apply succeeds,
        /// applying the same again changes neither the object nor the managers.
        #[test]
        fn applies_never_panic_and_reapplies_are_no_ops(a in any_json(), b in any_json(), force in any::<bool>()) {
            let s = schema();
            let t = Tracker {
                schema: &s,
                api_version: "example.com/v1".into(),
                subresource: None,
                reset: Set::new(),
                now: "2026-01-01T00:00:00Z".into(),
            };
            let live = json!({});
            let Ok((obj, managed)) = t.apply(&live, &body(a), Managed::new(), "a", false) else {
                return Ok(());
            };
            let obj = obj.unwrap_or(live);
            let cfg = body(b);
            // When nobody owns anything afterwards (bodies of the wrong shape own nothing),
            // the next apply hands the fields to `before-first-apply`, as the API server
            // would: not a no-op, by design.
            if let Ok((obj2, managed2)) = t.apply(&obj, &cfg, managed, "b", force)
                && !managed2.is_empty()
            {
                let obj2 = obj2.unwrap_or(obj);
                let (again, managed3) = t.apply(&obj2, &cfg, managed2.clone(), "b", force).unwrap();
                prop_assert!(again.is_none(), "re-apply changed the object: {again:?}");
                prop_assert_eq!(&managed3, &managed2);
                let encoded = encode(&managed2).map(|l| json!({"metadata": {"managedFields": l}}));
                if let Some(e) = encoded {
                    prop_assert_eq!(decode(&e).unwrap(), managed2);
                }
            }
        }
    }
}
