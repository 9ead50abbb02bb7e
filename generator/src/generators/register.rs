//! The `register` generator: `kube::Resource` impls, list types, constants and the registry of kinds per group/version (register-gen).

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Register,
    id: "register",
    about: "`kube::Resource` impls, list types, constants and the registry of kinds per group/version (register-gen).",
    requires: &[],
    markers: &[],
    checks: &[Check::Kinds],
    output: Output::Rust {
        module: "register",
        doc: " `kube::Resource` impls, list types, constants and the registry of kinds.",
        cost: 1,
        prepare,
    },
};

fn prepare(cx: &Context) -> RenderRust {
    let packages = cx.rust_packages();
    Box::new(move || kube_codegen_templates::register::register(&packages))
}
