//! The `fake` generator: a fake clientset over an in-memory API server, for unit tests (client-gen's fake).

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Fake,
    id: "fake",
    about: "A fake clientset over an in-memory API server, for unit tests (client-gen's fake).",
    requires: &[GeneratorName::Client, GeneratorName::Register],
    markers: &[],
    checks: &[Check::Kinds],
    output: Output::Rust {
        module: "fake",
        doc: " A fake `Clientset` over an in-memory API server, for unit tests.",
        cost: 5,
        prepare,
    },
};

fn prepare(cx: &Context) -> RenderRust {
    let packages = cx.rust_packages();
    // The fake answers as the API server would: where the `validation` module exists, its
    // admission is on from the start, so a unit test cannot store what the cluster refuses
    // unless it says so (`server.set_admission(false)`).
    let admission = if cx.generates(GeneratorName::Validation) {
        kube_codegen_templates::fake::Admission::Validation
    } else {
        kube_codegen_templates::fake::Admission::None
    };
    Box::new(move || kube_codegen_templates::fake::fake(&packages, admission))
}
