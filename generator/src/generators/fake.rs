//! The `fake` generator: a fake clientset over an in-memory API server, for unit tests (client-gen's fake).

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::diagnostics::Diagnostics;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Fake,
    id: "fake",
    about: "A fake clientset over an in-memory API server, for unit tests (client-gen's fake).",
    requires: &[GeneratorName::Client, GeneratorName::Register],
    markers: &[],
    output: Output::Rust {
        module: "fake",
        doc: " A fake `Clientset` over an in-memory API server, for unit tests.",
        cost: 5,
        prepare,
    },
};

fn prepare(cx: &Context, diags: &mut Diagnostics) -> RenderRust {
    let packages = cx.rust_packages(diags);
    Box::new(move || kube_codegen_templates::fake::fake(&packages))
}
