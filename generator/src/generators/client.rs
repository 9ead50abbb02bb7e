//! The `client` generator: the typed clientset: a client per kind with client-go's verbs (client-gen).

use super::{Context, Generator, GeneratorName, Output, RenderRust};
use crate::markers::{Args, MarkerSpec, Name, T};
use crate::resolve::Check;

pub(super) const GENERATOR: Generator = Generator {
    name: GeneratorName::Client,
    id: "client",
    about: "The typed clientset: a client per kind with client-go's verbs (client-gen).",
    // The typed `apply` verbs take the kinds' apply configurations.
    requires: &[GeneratorName::Register, GeneratorName::Applyconfigurations],
    markers: MARKERS,
    checks: &[Check::Kinds],
    output: Output::Rust {
        module: "clientset",
        doc: " Typed clients for every `+genclient` kind.",
        cost: 0,
        prepare,
    },
};

fn prepare(cx: &Context) -> RenderRust {
    let packages = cx.rust_packages();
    Box::new(move || kube_codegen_templates::client::clientset(&packages))
}

/// code-generator's client markers: which structs are kinds with a client, and its verbs.
pub(super) const MARKERS: &[MarkerSpec] = &[
    MarkerSpec {
        name: Name::Genclient,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::GenclientNonNamespaced,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::GenclientNoStatus,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::GenclientNoVerbs,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::GenclientReadonly,
        args: Args::Flag,
        levels: T,
    },
    MarkerSpec {
        name: Name::GenclientOnlyVerbs,
        args: Args::Value,
        levels: T,
    },
    MarkerSpec {
        name: Name::GenclientSkipVerbs,
        args: Args::Value,
        levels: T,
    },
    MarkerSpec {
        name: Name::GenclientMethod,
        args: Args::Value,
        levels: T,
    },
];
