//! Property tests: the generated `DeepCopy` equals `Clone`, whatever the destination held.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use kube_codegen_runtime::DeepCopy;
use proptest::prelude::*;
use sample_api::apis::insujang::v1beta1::{TestResource, TestResourceSpec};
use sample_api::apis::samplecontroller::v1alpha1::{Foo, FooSpec, FooStatus};

fn meta() -> impl Strategy<Value = ObjectMeta> {
    (
        proptest::option::of("[a-z]{1,12}"),
        proptest::option::of("[a-z]{1,8}"),
        proptest::option::of(proptest::collection::btree_map(
            "[a-z./]{1,10}",
            ".{0,16}",
            0..4,
        )),
        proptest::option::of(proptest::collection::vec("[a-z]{1,6}", 0..3)),
    )
        .prop_map(
            |(name, namespace, labels, finalizers): (_, _, Option<BTreeMap<String, String>>, _)| {
                ObjectMeta {
                    name,
                    namespace,
                    labels,
                    finalizers,
                    ..Default::default()
                }
            },
        )
}

fn foo() -> impl Strategy<Value = Foo> {
    (
        meta(),
        ".{0,20}",
        proptest::option::of(any::<i32>()),
        proptest::option::of(any::<i32>()),
    )
        .prop_map(|(metadata, deployment_name, replicas, available)| Foo {
            types: Foo::type_meta(),
            metadata,
            spec: FooSpec {
                deployment_name,
                replicas,
            },
            status: available.map(|available_replicas| FooStatus { available_replicas }),
        })
}

fn test_resource() -> impl Strategy<Value = TestResource> {
    (meta(), ".{0,20}", ".{0,20}", proptest::option::of(".{0,8}")).prop_map(
        |(metadata, command, custom_property, status)| TestResource {
            types: TestResource::type_meta(),
            metadata,
            spec: TestResourceSpec {
                command,
                custom_property,
            },
            status,
        },
    )
}

proptest! {
    #[test]
    fn foo_deep_copy_equals_clone(src in foo(), dst in foo()) {
        prop_assert_eq!(src.deep_copy(), src.clone());
        let mut out = dst;
        src.deep_copy_into(&mut out);
        prop_assert_eq!(out, src);
    }

    #[test]
    fn test_resource_deep_copy_equals_clone(src in test_resource(), dst in test_resource()) {
        let mut out = dst;
        src.deep_copy_into(&mut out);
        prop_assert_eq!(out, src.clone());
        prop_assert_eq!(src.deep_copy(), src);
    }
}
