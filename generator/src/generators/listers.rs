//! The `listers` generator: typed listers over informer caches, by namespace and index (lister-gen).

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Listers,
    id: "listers",
    about: "Typed listers over informer caches, by namespace and index (lister-gen).",
    requires: &[GeneratorName::Register],
    markers: &[],
    checks: &[Check::Kinds],
    output: Output::Rust {
        module: "listers",
        doc: " Typed listers over informer caches.",
        cost: 3,
        prepare,
    },
};

fn prepare(cx: &Context) -> RenderRust {
    let packages = cx.rust_packages();
    Box::new(move || kube_codegen_templates::listers::listers(&packages))
}
