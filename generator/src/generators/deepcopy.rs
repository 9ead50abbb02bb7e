//! The `deepcopy` generator: `DeepCopy` for every API type (deepcopy-gen, controller-gen's
//! `object`). Generated deep copies build on `Clone` and read every field, so each type
//! must derive `Clone` and be reachable from the generated module.

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::markers::{Args, MarkerSpec, Name, PT};
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Deepcopy,
    id: "deepcopy",
    about: "`DeepCopy` for every API type; `deep_copy_into` reuses the destination's allocations (deepcopy-gen).",
    requires: &[],
    markers: MARKERS,
    checks: &[Check::DeepCopies],
    output: Output::Rust {
        module: "deepcopy",
        doc: " `DeepCopy` for every API type.",
        cost: 2,
        prepare,
    },
};

fn prepare(cx: &Context) -> RenderRust {
    let copy_types = super::rust::copy_types(cx.api, cx.rust);
    Box::new(move || kube_codegen_templates::deepcopy::deepcopy(&copy_types))
}

/// controller-gen's object markers that concern deep-copy generation.
pub(super) const MARKERS: &[MarkerSpec] = &[MarkerSpec {
    name: Name::ObjectGenerate,
    args: Args::OptionalBool,
    levels: PT,
}];
