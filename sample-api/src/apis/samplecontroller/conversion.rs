//! The conversions of Foo that kube-codegen cannot derive: v1alpha1's `spec.replicas` is
//! v1beta1's `spec.scale.replicas`. Everything else converts by the generated code
//! (`generated::conversion`), which fails to build until these exist, naming each one.

use super::{v1alpha1, v1beta1};
use crate::generated::conversion::FooV1alpha1ManualConversion;

// ANCHOR: manual
impl FooV1alpha1ManualConversion for v1alpha1::Foo {
    fn foo_spec_replicas_to_hub(src: &v1alpha1::FooSpec, out: &mut v1beta1::FooSpec) {
        match (src.replicas, &mut out.scale) {
            (Some(r), Some(scale)) => scale.replicas = Some(r),
            (Some(r), None) => {
                out.scale = Some(v1beta1::FooScale {
                    replicas: Some(r),
                    ..Default::default()
                })
            }
            (None, Some(scale)) => scale.replicas = None,
            (None, None) => {}
        }
    }

    fn foo_spec_replicas_from_hub(src: &v1beta1::FooSpec, out: &mut v1alpha1::FooSpec) {
        out.replicas = src.scale.as_ref().and_then(|s| s.replicas);
    }
}
// ANCHOR_END: manual
