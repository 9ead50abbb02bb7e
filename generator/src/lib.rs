//! kube-codegen: generate Kubernetes API machinery from annotated Rust types.
//!
//! The user guide is the book in the repository's `docs/` (`hack/book.sh` builds it); for
//! this crate, see its chapters "Quick start", "Writing API types", "build.rs", "Importing
//! CRDs you do not own", "Porting Go API packages" and the reference pages "Markers" and
//! "Configuration".
//!
//! [`Config`] is the whole API, for build.rs and the CLI alike: it reads the annotated
//! types, runs the selected generators ([`GeneratorName`]) and returns the files in memory
//! ([`Config::generate`]), writes what changed ([`Config::write`]) or compares with the tree
//! ([`Config::check`]). Problems in the input are [`Diagnostic`]s located at
//! `file:line:col`; errors stop generation ([`Error::Input`]), warnings are returned with
//! the files ([`Generated::warnings`]).
//!
//! Inside, one private module per stage, run by `pipeline`: `read` reads Rust files and
//! follows the module tree, `markers` parses markers by the table the generators' registry
//! hands it, `resolve` builds the model and checks every input (the CRDs included),
//! `generators` holds one module per generator and their registry, `output` writes. The
//! schema builder (`schema`), the Kubernetes data (`kubernetes`) and the model (`model`)
//! sit below them; CONTRIBUTING.md's "The generator's house" draws it.
//!
//! ```no_run
//! // build.rs
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     kube_codegen::Config::new()
//!         .input("src/apis")
//!         .out_dir(std::env::var("OUT_DIR")?)
//!         .emit_rerun_if_changed(true)
//!         .write()?;
//!     Ok(())
//! }
//! ```

#![deny(missing_docs)]

mod apiext;
mod config;
mod crd_options;
mod diagnostics;
mod error;
mod generators;
mod import;
mod kubernetes;
mod markers;
mod model;
mod output;
mod parallel;
mod pipeline;
mod read;
mod resolve;
mod runtime_source;
mod scaffold;
mod schema;
mod utf8;
mod walk;

pub use config::{Config, ConversionWebhookMetadata, Metadata};
pub use crd_options::CrdOptions;
pub use error::Error;
pub use generators::{GeneratorName, MarkerDoc, ReferenceFormat, marker_docs, marker_reference};
#[cfg(feature = "import-go")]
pub use import::go::{
    GoImportOptions, GoImported, GoPackageInput, IMPORT_GO_HEADER, import_go, import_path_of,
};
pub use import::{
    IMPORT_HEADER, ImportOptions, ImportStats, Imported, Input as ImportInput, import_crds,
};
pub use kubernetes::{ChosenBy, KubernetesVersion, UnknownKubernetesVersion};
pub use output::YAML_HEADER;
pub use pipeline::{FoundGroupVersion, Generated};
pub use utf8::{InputLanguage, input_text};

/// Not API: the stages, for this crate's own tests and fuzzing and for the tool behind
/// `hack/gen-k8s-schemas.sh`. Anything here may change in any release.
#[doc(hidden)]
pub mod __private {
    /// The crd generator's YAML writer, for the floor probe (bench/floor).
    pub use crate::generators::crd::to_yaml as crd_to_yaml;
    /// `import go`'s data of Kubernetes' named non-struct types, and the function that
    /// reads it from their Go sources (the test that keeps the data fresh calls it).
    #[cfg(feature = "import-go")]
    pub use crate::import::go::{K8sNamedTypes, extract_k8s_named_types};
    pub use crate::kubernetes::schemas as k8s_schemas;
    pub use crate::output::HEADER as RUST_HEADER;
    /// Directory walks that read each directory once (the CLI's `import crd DIR`).
    pub use crate::walk::{Walk, files_below};
    /// The input's nesting limits and the stack they are sized for, for the tests at them.
    pub use crate::{parallel::STACK_SIZE, read::MAX_SOURCE_NESTING, resolve::MAX_TYPE_NESTING};
    /// The apiextensions.k8s.io/v1 types CRDs are written with.
    pub mod apiext {
        pub use crate::apiext::*;
    }
    /// The marker table and parser, for the marker fuzzer and the marker-value tests.
    pub mod markers {
        pub use crate::markers::{
            ITEMS_MARKERS, ITEMS_PREFIX, Level, MarkerSpec, Name, split_list,
        };

        /// Every marker of a run: the model's and every generator's.
        pub static MARKERS: std::sync::LazyLock<&'static [&'static MarkerSpec]> =
            std::sync::LazyLock::new(crate::generators::marker_table);

        /// Parse one doc line by the run's marker table.
        pub fn parse_line(
            line: &str,
            level: Level,
            loc: crate::Location,
        ) -> Result<Option<crate::markers::Marker>, crate::Diagnostic> {
            crate::markers::parse_line(line, level, loc, crate::generators::marker_table())
        }
    }
}

pub use diagnostics::{Diagnostic, Diagnostics, Location, Severity};
pub use model::CaSource;
pub use output::{CheckReport, GeneratedFile, OutputError, WriteReport, is_generated};
pub use runtime_source::{ManifestEntryError, RuntimeSource};
pub use scaffold::{
    ApiOptions, CrateFiles, ScaffoldError, ScaffoldFile, create_api as scaffold_api,
    init as scaffold_init,
};
pub use schema::{ConversionWebhook, SchemaOptions};
