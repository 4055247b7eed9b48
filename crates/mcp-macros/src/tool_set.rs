//! `#[tools]`: the methods of an impl block marked `#[tool]`, as one set of tools.

use proc_macro2::{Span, TokenStream as Tokens};
use quote::quote;
use syn::spanned::Spanned;
use syn::{ImplItem, ItemImpl, Meta};

use crate::options::Options;
use crate::{Callee, Kind, check_signature, definition, params};

/// `#[tools]` on an impl block.
pub(crate) fn tool_set(options: Options, mut item: ItemImpl) -> syn::Result<Tokens> {
    if options.entries.iter().any(|(k, _)| k != "crate") {
        return Err(syn::Error::new(
            Span::call_site(),
            "#[tools] takes only `crate = path`; options of a tool go on its #[tool]",
        ));
    }
    if let Some((path, _)) = &item.trait_ {
        return Err(syn::Error::new(
            path.span(),
            "#[tools] goes on an inherent impl block, not a trait impl",
        ));
    }
    let krate = options.krate()?;
    let k = quote!(#krate::__macros);
    let self_ty = item.self_ty.clone();
    let mut definitions = Vec::new();
    for impl_item in &mut item.items {
        let ImplItem::Fn(method) = impl_item else {
            continue;
        };
        let Some(position) = method.attrs.iter().position(|a| a.path().is_ident("tool")) else {
            continue;
        };
        let attribute = method.attrs.remove(position);
        // A tool may be async with nothing to await: the server awaits it anyway.
        method
            .attrs
            .push(syn::parse_quote!(#[allow(clippy::unused_async)]));
        let tool_options = match &attribute.meta {
            Meta::Path(_) => Options::default(),
            Meta::List(list) => syn::parse2::<Options>(list.tokens.clone())?,
            Meta::NameValue(nv) => {
                return Err(syn::Error::new(
                    nv.span(),
                    "expected #[tool] or #[tool(...)]",
                ));
            }
        };
        tool_options.check(Kind::Tool)?;
        if tool_options.entries.iter().any(|(k, _)| k == "crate") {
            return Err(syn::Error::new(
                attribute.span(),
                "`crate` goes on #[tools], for the whole block",
            ));
        }
        check_signature(&method.sig, Kind::Tool)?;
        let method_name = method.sig.ident.clone();
        let (callee, per_call) = match method.sig.receiver() {
            None => (quote!(<#self_ty>::#method_name), quote!()),
            Some(receiver) if matches!(receiver.kind, syn::ReceiverKind::Reference(_, _, None)) => {
                (
                    quote!(__mcp_this.#method_name),
                    quote!(let __mcp_this = #k::Arc::clone(&__mcp_this);),
                )
            }
            Some(receiver) => {
                return Err(syn::Error::new(
                    receiver.span(),
                    "a tool method takes `&self`: tools run concurrently, so keep mutable state behind a lock or an atomic",
                ));
            }
        };
        let params = params(&mut method.sig, Kind::Tool)?;
        let attrs = method.attrs.clone();
        let body = definition(
            Kind::Tool,
            &tool_options,
            &krate,
            &method.sig,
            &attrs,
            &params,
            Callee {
                path: callee,
                prelude: quote!(let __mcp_this = #k::Arc::clone(&__mcp_set);),
                per_call,
            },
        )?;
        definitions.push(body);
    }
    if definitions.is_empty() {
        return Err(syn::Error::new(
            item.self_ty.span(),
            "#[tools] found no method marked #[tool]",
        ));
    }
    let (impl_generics, ty_generics, where_clause) = item.generics.split_for_impl();
    let self_path = &item.self_ty;
    let _ = ty_generics;
    Ok(quote! {
        #item

        impl #impl_generics #k::ToolSet for #self_path #where_clause {
            fn into_tool_defs(self) -> #k::Vec<#k::ToolDef> {
                #[allow(unused_variables)]
                let __mcp_set = #k::Arc::new(self);
                #k::Vec::from([#(#definitions),*])
            }
        }
    })
}
