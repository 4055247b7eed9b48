//! `#[resource]`: a resource at a fixed URI, or a family named by a URI template.

use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use syn::{Attribute, LitStr, Signature};

use crate::options::Options;
use crate::{Param, doc_text, last_segment};

/// The definition of a resource or resource template: the trait, its method, its return
/// type and its body.
pub(crate) fn resource_definition(
    options: &Options,
    krate: &Tokens,
    sig: &Signature,
    attrs: &[Attribute],
    params: &[Param],
) -> syn::Result<(Tokens, Tokens, Tokens, Tokens)> {
    let k = quote!(#krate::__macros);
    let ident = &sig.ident;
    let uri = options.text("uri")?;
    let template = options.text("template")?;
    let name = match options.text("name")? {
        Some(name) => name,
        None => LitStr::new(&ident.to_string(), ident.span()),
    };
    let description = match options.text("description")? {
        Some(text) => Some(text.value()),
        None => doc_text(attrs),
    };
    let describe = description.map(|d| quote!(.description(#d)));
    let title = options.text("title")?.map(|t| quote!(.title(#t)));
    let mime = options.text("mime_type")?;
    let set_mime = mime.as_ref().map(|m| quote!(.mime_type(#m)));
    let mime_value = match &mime {
        Some(m) => quote!(#k::Option::Some(#m)),
        None => quote!(#k::Option::None),
    };
    let variables = match (&uri, &template) {
        (Some(_), None) => None,
        (None, Some(template)) => Some(template_variables(template)?),
        (Some(u), Some(_)) => {
            return Err(syn::Error::new(
                u.span(),
                "a resource has a `uri` or a `template`, not both",
            ));
        }
        (None, None) => {
            return Err(syn::Error::new(
                Span::call_site(),
                "#[resource] needs `uri = \"...\"` (one resource) or `template = \"...\"` (a family)",
            ));
        }
    };
    let mut lets = Vec::new();
    let mut passed = Vec::new();
    for (i, param) in params.iter().enumerate() {
        let local = format_ident!("__mcp_param_{}", i);
        match param {
            Param::Context { ty, .. } => lets.push(quote!(
                let #local = <#ty as #k::FromContext>::from_context(&__mcp_cx)?;
            )),
            Param::Argument { name, .. } if name == "uri" => {
                lets.push(quote!(let #local = #k::String::from(&*__mcp_uri);));
            }
            Param::Argument { name, ty, .. } => {
                let Some(variables) = &variables else {
                    return Err(syn::Error::new(
                        name.span(),
                        "a resource at a fixed `uri` takes no variables; use `template = \"...\"` for a family of resources",
                    ));
                };
                let variable = name.to_string();
                if !variables.contains(&variable) {
                    return Err(syn::Error::new(
                        name.span(),
                        format!(
                            "`{variable}` is not a variable of the template (it has: {})",
                            variables.join(", ")
                        ),
                    ));
                }
                let (optional, target) = match last_segment(ty) {
                    Some((ident, Some(inner))) if ident == "Option" => (true, quote!(#inner)),
                    _ => (false, quote!(#ty)),
                };
                let parse = quote!(
                    |__mcp_value: &#k::String| __mcp_value.parse::<#target>().map_err(|e| {
                        #k::ToolError::invalid_params(format!("variable `{}`: {}", #variable, e))
                    })
                );
                lets.push(if optional {
                    quote!(let #local = match __mcp_vars.get(#variable) {
                        #k::Option::Some(v) => #k::Option::Some((#parse)(v)?),
                        #k::Option::None => #k::Option::None,
                    };)
                } else {
                    quote!(let #local = match __mcp_vars.get(#variable) {
                        #k::Option::Some(v) => (#parse)(v)?,
                        #k::Option::None => return #k::Result::Err(#k::ToolError::invalid_params(
                            format!("the URI has no value for `{}`", #variable),
                        )),
                    };)
                });
            }
            Param::Whole { .. } => unreachable!("refused by `params`"),
        }
        passed.push(local);
    }
    let call = quote!(#ident::call(#(#passed),*));
    let call = if sig.asyncness.is_some() {
        quote!(#call.await)
    } else {
        call
    };
    let read = quote! {
        async move {
            #(#lets)*
            #k::IntoResourceContents::into_contents(#call, __mcp_uri, #mime_value)
        }
    };
    Ok(match (uri, template) {
        (Some(uri), _) => (
            quote!(IntoResourceDef),
            quote!(into_resource_def),
            quote!(#k::ResourceDef),
            quote! {
                #k::ResourceDef::new(#uri, #name, |__mcp_uri: #k::String, __mcp_cx: #k::Context| #read)
                #describe #title #set_mime
            },
        ),
        (None, Some(template)) => (
            quote!(IntoResourceTemplateDef),
            quote!(into_resource_template_def),
            quote!(#k::Result<#k::ResourceTemplateDef, #k::Error>),
            quote! {
                #k::ResourceTemplateDef::new(
                    #template,
                    #name,
                    |__mcp_uri: #k::String, __mcp_vars: #k::OrderedMap<#k::String>, __mcp_cx: #k::Context| #read,
                )
                .map(|__mcp_def| __mcp_def #describe #title #set_mime)
            },
        ),
        (None, None) => unreachable!("checked above"),
    })
}

/// The variable names of an RFC 6570 template, for checking the function's parameters
/// against them (the template itself is parsed, and refused if bad, at registration).
fn template_variables(template: &LitStr) -> syn::Result<Vec<String>> {
    let text = template.value();
    let mut names = Vec::new();
    let mut rest = text.as_str();
    while let Some(open) = rest.find('{') {
        let Some(close) = rest[open..].find('}') else {
            return Err(syn::Error::new(
                template.span(),
                "an expression is not closed by `}`",
            ));
        };
        let expression = &rest[open + 1..open + close];
        let expression = expression.trim_start_matches(['+', '#', '.', '/', ';', '?', '&']);
        for spec in expression.split(',') {
            let name = spec.split([':', '*']).next().unwrap_or_default();
            if !name.is_empty() {
                names.push(name.to_owned());
            }
        }
        rest = &rest[open + close + 1..];
    }
    Ok(names)
}
