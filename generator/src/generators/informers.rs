//! The `informers` generator: shared informers: one watch per kind, shared by every handler (informer-gen).

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Informers,
    id: "informers",
    about: "Shared informers: one watch per kind, shared by every handler (informer-gen).",
    requires: &[GeneratorName::Listers, GeneratorName::Register],
    markers: &[],
    checks: &[Check::Kinds],
    output: Output::Rust {
        module: "informers",
        doc: " Shared informers: one watch per kind, shared by every handler.",
        cost: 4,
        prepare,
    },
};

fn prepare(cx: &Context) -> RenderRust {
    let packages = cx.rust_packages();
    Box::new(move || kube_codegen_templates::informers::informers(&packages))
}
