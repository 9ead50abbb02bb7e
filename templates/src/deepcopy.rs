//! `deepcopy.rs`: a `DeepCopy` impl per API type. Fields whose types contain our own types
//! recurse through `DeepCopy`; everything else uses `clone_from`, which reuses the
//! destination's allocations for strings, vectors and maps.

use proc_macro2::TokenStream;
use quote::quote;

use crate::input::{CopyShape, CopyType};
use crate::{ident, path};

/// The `deepcopy.rs` file: `impl DeepCopy` for each of `types`.
#[must_use]
pub fn deepcopy(types: &[CopyType]) -> TokenStream {
    let impls = types.iter().map(|t| {
        let ty = path(&t.type_path);
        let body = match &t.shape {
            CopyShape::Struct(fields) if fields.is_empty() => quote!(let _ = (self, out);),
            CopyShape::Struct(fields) => {
                let stmts = fields.iter().map(|f| {
                    let name = ident(&f.name);
                    if f.deep {
                        quote!(::kube_codegen_runtime::DeepCopy::deep_copy_into(&self.#name, &mut out.#name);)
                    } else {
                        quote!(out.#name.clone_from(&self.#name);)
                    }
                });
                quote!(#(#stmts)*)
            }
            CopyShape::Newtype { deep: true } => quote!(::kube_codegen_runtime::DeepCopy::deep_copy_into(&self.0, &mut out.0);),
            CopyShape::Newtype { deep: false } => quote!(out.0.clone_from(&self.0);),
            CopyShape::Enum => quote!(out.clone_from(self);),
        };
        quote! {
            impl ::kube_codegen_runtime::DeepCopy for #ty {
                #[inline]
                fn deep_copy_into(&self, out: &mut Self) {
                    #body
                }
            }
        }
    });
    quote! {
        //! `DeepCopy` for every API type: `deep_copy_into` reuses the destination's allocations.

        #(#impls)*
    }
}
