#!/usr/bin/env python3
"""Write ONE API as both annotated Rust (for kube-codegen) and annotated Go (for
k8s.io/code-generator + controller-gen), so both tool chains get the same input.

    bench/gen-synthetic.py OUT [--groups 20] [--kinds 5] [--preset synthetic|sample]
                               [--runtime PATH]

OUT/rust  a crate: Cargo.toml ([package.metadata.kube-codegen]), src/lib.rs, src/apis/<group>/v1.rs
OUT/go    a module: go.mod (module bench.example.com/synthetic), hack/boilerplate.go.txt,
          apis/<group>/v1/{doc.go,types.go,register.go}

Preset "synthetic": GROUPS x KINDS kinds. Every kind has a spec with nested structs
(template -> env, limits), lists (of strings, of structs as a +listType=map), maps
(string->string, string->int64, string->struct), metav1.Condition lists, and validation
markers (Minimum/Maximum, MinLength/MaxLength/Pattern, Enum, MaxItems, MinProperties,
defaults), a status subresource, a short name and printer columns.

Preset "sample": the sample-api crate's Foo (samplecontroller.k8s.io/v1alpha1) and
TestResource (insujang.github.io/v1beta1) with the same markers, in Go. (The Rust side of
that workload is a copy of the real sample-api crate; this preset also writes a Rust copy
for completeness.)
"""
import argparse
import os
import textwrap

KIND_NAMES = ["Widget", "Gadget", "Gizmo", "Sprocket", "Doohickey", "Contraption",
              "Thingamajig", "Whatsit", "Gimmick", "Apparatus"]


def camel(snake):
    parts = snake.split("_")
    return parts[0] + "".join(p[:1].upper() + p[1:] for p in parts[1:])


def pascal(snake):
    return "".join(p[:1].upper() + p[1:] for p in snake.split("_"))


# ---- a tiny field model, rendered to both languages ---------------------------------
# kind: (rust_type, go_type); opt: optional; markers: list of marker strings (no '+')
class F:
    def __init__(self, name, rust, go, opt=False, markers=(), doc=None, rust_empty=None):
        self.name, self.rust, self.go, self.opt = name, rust, go, opt
        self.markers, self.doc, self.rust_empty = list(markers), doc, rust_empty


def structs_for(kind):
    K = kind
    return [
        (f"{K}Spec", f"{K}Spec is the desired state of a {K}.", [
            F("name", "String", "string", markers=[
                "kubebuilder:validation:MinLength=1", "kubebuilder:validation:MaxLength=63",
                "kubebuilder:validation:Pattern=`^[a-z]([-a-z0-9]*[a-z0-9])?$`"],
                doc="The name of the workload this object drives."),
            F("replicas", "i32", "int32", opt=True, markers=[
                "kubebuilder:validation:Minimum=0", "kubebuilder:validation:Maximum=100"],
                doc="How many copies run."),
            F("policy", "String", "string", markers=[
                "kubebuilder:validation:Enum=Always;Never;IfNotPresent"],
                doc="When to pull the image."),
            F("paused", "bool", "bool", opt=True, doc="Stops reconciliation while true."),
            F("labels", "BTreeMap<String, String>", "map[string]string", opt=True,
              markers=["kubebuilder:validation:MaxProperties=64"], rust_empty="BTreeMap::is_empty",
              doc="Labels copied onto every child object."),
            F("weights", "BTreeMap<String, i64>", "map[string]int64", opt=True,
              rust_empty="BTreeMap::is_empty", doc="Relative weights by zone."),
            F("tags", "Vec<String>", "[]string", opt=True, markers=[
                "kubebuilder:validation:MaxItems=32", "listType=set"],
                rust_empty="Vec::is_empty", doc="Free-form tags."),
            F("ports", f"Vec<{K}Port>", f"[]{K}Port", opt=True, markers=[
                "kubebuilder:validation:MaxItems=16", "listType=map", "listMapKey=name"],
                rust_empty="Vec::is_empty", doc="Ports the workload listens on."),
            F("template", f"{K}Template", f"{K}Template", doc="The pod-like template."),
            F("resources", f"BTreeMap<String, {K}Resource>", f"map[string]{K}Resource", opt=True,
              rust_empty="BTreeMap::is_empty", doc="Named resource budgets."),
        ]),
        (f"{K}Port", "A named port.", [
            F("name", "String", "string", markers=["kubebuilder:validation:MaxLength=15"],
              doc="The port's name, unique in the list."),
            F("port", "i32", "int32", markers=[
                "kubebuilder:validation:Minimum=1", "kubebuilder:validation:Maximum=65535"],
                doc="The port number."),
            F("protocol", "String", "string", opt=True, markers=[
                "kubebuilder:validation:Enum=TCP;UDP;SCTP"], doc="The protocol."),
        ]),
        (f"{K}Template", "What every replica runs.", [
            F("image", "String", "string", markers=["kubebuilder:validation:MinLength=1"],
              doc="The container image."),
            F("args", "Vec<String>", "[]string", opt=True, rust_empty="Vec::is_empty",
              doc="Arguments to the entrypoint."),
            F("env", f"Vec<{K}EnvVar>", f"[]{K}EnvVar", opt=True, rust_empty="Vec::is_empty",
              doc="Environment variables."),
            F("limits", f"{K}Limits", f"{K}Limits", doc="Resource limits."),
        ]),
        (f"{K}EnvVar", "An environment variable.", [
            F("name", "String", "string", markers=[
                "kubebuilder:validation:Pattern=`^[A-Za-z_][A-Za-z0-9_]*$`"], doc="Its name."),
            F("value", "String", "string", opt=True, doc="Its value."),
        ]),
        (f"{K}Limits", "CPU and memory limits.", [
            F("cpu_millis", "i64", "int64", opt=True, markers=[
                "kubebuilder:validation:Minimum=1", "kubebuilder:validation:Maximum=64000"],
                doc="CPU in thousandths of a core."),
            F("memory_mb", "i64", "int64", opt=True, markers=[
                "kubebuilder:validation:Minimum=4"], doc="Memory in MiB."),
        ]),
        (f"{K}Resource", "A resource budget.", [
            F("requests", "i64", "int64", markers=["kubebuilder:validation:Minimum=0"],
              doc="Requested amount."),
            F("limits", "i64", "int64", opt=True, markers=["kubebuilder:validation:Minimum=0"],
              doc="Limit."),
        ]),
        (f"{K}Status", f"{K}Status is the observed state of a {K}.", [
            F("observed_generation", "i64", "int64", opt=True,
              doc="The generation the controller last acted on."),
            F("phase", "String", "string", opt=True, markers=[
                "kubebuilder:validation:Enum=Pending;Running;Failed"], doc="Coarse state."),
            F("ready_replicas", "i32", "int32", opt=True, doc="Replicas ready."),
            F("conditions", "Vec<Condition>", "[]metav1.Condition", opt=True, markers=[
                "listType=map", "listMapKey=type"], rust_empty="Vec::is_empty",
                doc="Standard conditions."),
        ]),
    ]


def kind_markers(kind, short):
    return [
        "genclient",
        "kubebuilder:subresource:status",
        f"kubebuilder:resource:shortName={short},categories=bench",
        f'kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".spec.replicas"',
        f'kubebuilder:printcolumn:name="Phase",type=string,JSONPath=".status.phase"',
    ]


# ---- Rust ---------------------------------------------------------------------------
def rust_field(f):
    out = []
    if f.doc:
        out.append(f"    /// {f.doc}")
    if f.markers:
        if f.doc:
            out.append("    ///")
        out += [f"    /// +{m}" for m in f.markers]
    ty = f.rust
    if f.opt and f.rust_empty:
        out.append(f'    #[serde(default, skip_serializing_if = "{f.rust_empty}")]')
    elif f.opt:
        out.append('    #[serde(default, skip_serializing_if = "Option::is_none")]')
        ty = f"Option<{ty}>"
    out.append(f"    pub {f.name}: {ty},")
    return "\n".join(out)


DERIVE = "#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]"


def rust_group(group, version, kinds, doc):
    s = [f"//! {doc}", "//!", f"//! +groupName={group}", "",
         "use std::collections::BTreeMap;", "",
         "use k8s_openapi::apimachinery::pkg::apis::meta::v1::{Condition, ObjectMeta};",
         "use kube::core::TypeMeta;", "use serde::{Deserialize, Serialize};", ""]
    for kind, short in kinds:
        s.append(f"/// {kind} is a synthetic benchmark kind.\n///")
        s += [f"/// +{m}" for m in kind_markers(kind, short)]
        s.append(DERIVE)
        s.append(textwrap.dedent(f"""\
            pub struct {kind} {{
                #[serde(flatten)]
                pub types: TypeMeta,
                pub metadata: ObjectMeta,
                pub spec: {kind}Spec,
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub status: Option<{kind}Status>,
            }}
            """))
        for name, doc, fields in structs_for(kind):
            s.append(f"/// {doc}")
            s.append(DERIVE)
            s.append('#[serde(rename_all = "camelCase")]')
            s.append(f"pub struct {name} {{")
            s += [rust_field(f) for f in fields]
            s.append("}\n")
    # Not every file uses BTreeMap/Condition in the sample preset; keep rustc quiet.
    return "\n".join(s)


# ---- Go -----------------------------------------------------------------------------
def go_field(f):
    out = []
    if f.doc:
        out.append(f"\t// {f.doc}")
    out += [f"\t// +{m}" for m in f.markers]
    if f.opt:
        out.append("\t// +optional")
    ty = f.go
    tag = camel(f.name)
    if f.opt:
        if not (ty.startswith("[]") or ty.startswith("map[")):
            ty = "*" + ty
        tag += ",omitempty"
    out.append(f'\t{pascal(f.name)} {ty} `json:"{tag}"`')
    return "\n".join(out)


def go_doc(group, version, doc):
    return textwrap.dedent(f"""\
        // {doc}
        //
        // +k8s:deepcopy-gen=package
        // +groupName={group}
        package {version}
        """)


def go_register(group, version, kinds):
    adds = "\n".join(f"\t\t&{k}{{}},\n\t\t&{k}List{{}}," for k, _ in kinds)
    return textwrap.dedent(f"""\
        package {version}

        import (
        \tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
        \t"k8s.io/apimachinery/pkg/runtime"
        \t"k8s.io/apimachinery/pkg/runtime/schema"
        )

        // SchemeGroupVersion is group version used to register these objects.
        var SchemeGroupVersion = schema.GroupVersion{{Group: "{group}", Version: "{version}"}}

        // Kind takes an unqualified kind and returns back a Group qualified GroupKind.
        func Kind(kind string) schema.GroupKind {{ return SchemeGroupVersion.WithKind(kind).GroupKind() }}

        // Resource takes an unqualified resource and returns a Group qualified GroupResource.
        func Resource(resource string) schema.GroupResource {{
        \treturn SchemeGroupVersion.WithResource(resource).GroupResource()
        }}

        var (
        \tSchemeBuilder = runtime.NewSchemeBuilder(addKnownTypes)
        \tAddToScheme   = SchemeBuilder.AddToScheme
        )

        func addKnownTypes(scheme *runtime.Scheme) error {{
        \tscheme.AddKnownTypes(SchemeGroupVersion,
        {adds}
        \t)
        \tmetav1.AddToGroupVersion(scheme, SchemeGroupVersion)
        \treturn nil
        }}
        """)


def go_types(version, kinds, structs_fn, kind_markers_fn, status_opt=True):
    s = [f"package {version}", "", "import (",
         '\tmetav1 "k8s.io/apimachinery/pkg/apis/meta/v1"', ")", ""]
    for kind, short in kinds:
        s.append(f"// {kind} is a synthetic benchmark kind.")
        s += [f"// +{m}" for m in kind_markers_fn(kind, short)]
        s.append("// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object")
        s.append("// +kubebuilder:object:root=true")
        s.append(f"type {kind} struct {{")
        s.append('\tmetav1.TypeMeta   `json:",inline"`')
        s.append('\tmetav1.ObjectMeta `json:"metadata,omitempty"`')
        s.append("")
        s.append(f'\tSpec {kind}Spec `json:"spec"`')
        s.append("\t// +optional")
        s.append(f'\tStatus {kind}Status `json:"status,omitempty"`')
        s.append("}\n")
        s.append(f"// {kind}List is a list of {kind} resources.")
        s.append("// +k8s:deepcopy-gen:interfaces=k8s.io/apimachinery/pkg/runtime.Object")
        s.append("// +kubebuilder:object:root=true")
        s.append(f"type {kind}List struct {{")
        s.append('\tmetav1.TypeMeta `json:",inline"`')
        s.append('\tmetav1.ListMeta `json:"metadata"`')
        s.append("")
        s.append(f'\tItems []{kind} `json:"items"`')
        s.append("}\n")
        for name, doc, fields in structs_fn(kind):
            s.append(f"// {doc}")
            s.append(f"type {name} struct {{")
            s += [go_field(f) for f in fields]
            s.append("}\n")
    return "\n".join(s)


# ---- the sample preset (mirrors sample-api/src/apis) -----------------------------------
def sample_structs(kind):
    if kind == "Foo":
        return [
            ("FooSpec", "FooSpec is the spec for a Foo resource.", [
                F("deployment_name", "String", "string",
                  doc="The name of the Deployment the controller creates and owns for this Foo."),
                F("replicas", "i32", "int32", opt=True, markers=[
                    "kubebuilder:validation:Minimum=1", "kubebuilder:validation:Maximum=10"],
                    doc="How many replicas the Deployment runs."),
            ]),
            ("FooStatus", "FooStatus is the status for a Foo resource.", [
                F("available_replicas", "i32", "int32", opt=True,
                  doc="Ready replicas of the owned Deployment."),
            ]),
        ]
    return [
        ("TestResourceSpec", "TestResourceSpec specifies the 'spec' of TestResource CRD.", [
            F("command", "String", "string", markers=["kubebuilder:validation:Pattern=`^(echo).*`"],
              doc="The command to run; only `echo` commands are accepted."),
            F("custom_property", "String", "string"),
        ]),
    ]


def sample_markers(kind, short):
    if kind == "Foo":
        return [
            "genclient", "kubebuilder:subresource:status",
            "kubebuilder:resource:shortName=fo,categories=samples",
            'kubebuilder:metadata:annotations="api-approved.kubernetes.io=unapproved, experimental-only"',
            'kubebuilder:printcolumn:name="Deployment",type=string,JSONPath=".spec.deploymentName"',
            'kubebuilder:printcolumn:name="Replicas",type=integer,JSONPath=".spec.replicas"',
            'kubebuilder:printcolumn:name="Available",type=integer,JSONPath=".status.availableReplicas"',
            'kubebuilder:printcolumn:name="Age",type=date,JSONPath=".metadata.creationTimestamp"',
        ]
    return ["genclient", "kubebuilder:resource:shortName=ts",
            'kubebuilder:printcolumn:name="command",type=string,JSONPath=".spec.command"']


def go_types_sample_testresource(version):
    # TestResource's status is a plain optional string in the Rust type.
    body = go_types(version, [("TestResource", "ts")], sample_structs, sample_markers)
    return body.replace("\tStatus TestResourceStatus `json:\"status,omitempty\"`",
                        "\tStatus string `json:\"status,omitempty\"`")


# ---- files ------------------------------------------------------------------------
def write(path, text):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text if text.endswith("\n") else text + "\n")


GO_MOD = """module bench.example.com/synthetic

go 1.25.0

require k8s.io/apimachinery v0.37.2
"""


def cargo_toml(name, runtime):
    rt = (f'kube-codegen-runtime = {{ path = "{runtime}" }}' if runtime
          else 'kube-codegen-runtime = "0.1"')
    return f"""[package]
name = "{name}"
version = "0.1.0"
edition = "2024"
publish = false

[package.metadata.kube-codegen]
input = ["src/apis"]
crd-dir = "crds"
kubernetes-version = "1.37"

[dependencies]
serde = {{ version = "1", features = ["derive"] }}
serde_json = "1"
k8s-openapi = {{ version = "0.29.0", default-features = false, features = ["std", "v1_37"] }}
kube = {{ version = "5.0.0", default-features = false, features = ["client", "rustls-tls", "ring", "runtime"] }}
{rt}

[workspace]
"""


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--groups", type=int, default=20)
    ap.add_argument("--kinds", type=int, default=5)
    ap.add_argument("--preset", choices=["synthetic", "sample"], default="synthetic")
    ap.add_argument("--runtime", help="path of the runtime crate for the Rust Cargo.toml")
    a = ap.parse_args()
    rust, go = os.path.join(a.out, "rust"), os.path.join(a.out, "go")

    if a.preset == "synthetic":
        groups = []
        for g in range(a.groups):
            mod = f"group{g:02d}"
            group = f"{mod}.bench.example.com"
            kinds = [(KIND_NAMES[k % len(KIND_NAMES)] + ("" if k < len(KIND_NAMES) else str(k)),
                      f"g{g:02d}k{k}") for k in range(a.kinds)]
            groups.append((mod, group, "v1", kinds))
        for mod, group, version, kinds in groups:
            doc = f"The {version} version of the {group} benchmark API."
            write(f"{rust}/src/apis/{mod}/mod.rs", f"pub mod {version};")
            write(f"{rust}/src/apis/{mod}/{version}.rs", rust_group(group, version, kinds, doc))
            write(f"{go}/apis/{mod}/{version}/doc.go", go_doc(group, version, doc))
            write(f"{go}/apis/{mod}/{version}/register.go", go_register(group, version, kinds))
            write(f"{go}/apis/{mod}/{version}/types.go",
                  go_types(version, kinds, structs_for, kind_markers))
        mods = [m for m, *_ in groups]
        name = "bench-synthetic-api"
    else:
        sample = [("samplecontroller", "samplecontroller.k8s.io", "v1alpha1", [("Foo", "fo")],
                   "The v1alpha1 version of the samplecontroller API."),
                  ("insujang", "insujang.github.io", "v1beta1", [("TestResource", "ts")],
                   "The TestResource API from the Programming Kubernetes CRDs tutorial.")]
        for mod, group, version, kinds, doc in sample:
            write(f"{go}/apis/{mod}/{version}/doc.go", go_doc(group, version, doc))
            write(f"{go}/apis/{mod}/{version}/register.go", go_register(group, version, kinds))
            types = (go_types(version, kinds, sample_structs, sample_markers) if mod == "samplecontroller"
                     else go_types_sample_testresource(version))
            write(f"{go}/apis/{mod}/{version}/types.go", types)
        mods = []  # the Rust side of this preset is the real sample-api crate
        name = "bench-sample-api"

    write(f"{go}/go.mod", GO_MOD)
    write(f"{go}/hack/boilerplate.go.txt", "")
    if mods:
        write(f"{rust}/Cargo.toml", cargo_toml(name, a.runtime))
        write(f"{rust}/src/apis/mod.rs", "\n".join(f"pub mod {m};" for m in mods))
        write(f"{rust}/src/lib.rs", "//! Generated benchmark API.\n#![allow(clippy::all)]\n\n"
              "pub mod apis;\npub mod generated;")


if __name__ == "__main__":
    main()
