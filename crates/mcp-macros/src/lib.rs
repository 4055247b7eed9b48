//! Attribute macros for Model Context Protocol servers: [`macro@tool`], [`macro@tools`],
//! [`macro@prompt`] and [`macro@resource`]. They expand to the builders of `mcp-server`
//! (`ToolDef::returning`, `PromptDef::typed`, `ResourceDef::new`,
//! `ResourceTemplateDef::new`), which stay the way to build definitions at run time.
//!
//! A function marked `#[tool]` becomes a value the server builder registers,
//! `Server::builder(..).tool(echo)`, named as the function was; the function itself is
//! kept as its `call` (`echo::call(..)`), for tests. The tool's name is the function's,
//! its description the doc comment, its arguments the parameters (with their doc comments
//! as descriptions), and its result anything that converts into one: text, a
//! `CallToolResult`, `Json<T>` (whose type gives the `outputSchema`), or a `Result` of
//! those.
//!
//! ```
//! use mcp::prelude::*;
//!
//! /// Adds two integers.
//! #[tool(read_only)]
//! async fn add(
//!     /// The first addend.
//!     a: i64,
//!     /// The second.
//!     b: i64,
//! ) -> String {
//!     (a + b).to_string()
//! }
//!
//! let server = Server::builder("calc", "1.0").tool(add).build()?;
//! let tool = server.tool("add").unwrap();
//! assert_eq!(tool.tool().description.as_deref(), Some("Adds two integers."));
//! # Ok::<(), mcp::server::Error>(())
//! ```
//!
//! The expansions name the runtime through `::mcp::server` (the `mcp` crate); a crate
//! that depends on `mcp-server` directly says so with `crate = ::mcp_server` in each
//! attribute.

// The crate's README (its page on crates.io) is compiled and run as doc tests, so that its
// example keeps working.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeDoctests;

mod options;
mod resource;
mod tool_set;

use options::Options;
use proc_macro::TokenStream;
use proc_macro2::{Span, TokenStream as Tokens};
use quote::{format_ident, quote};
use resource::resource_definition;
use syn::spanned::Spanned;
use syn::{
    Attribute, Expr, ExprLit, FnArg, Ident, ItemFn, ItemImpl, Lit, LitStr, Meta, Pat, ReturnType,
    Signature, Type,
};
use tool_set::tool_set;

/// Makes an async (or plain) function a tool.
///
/// Options, all optional: `name = "..."` (default: the function's name), `title = "..."`,
/// `description = "..."` (default: the doc comment), the behaviour hints `read_only`,
/// `destructive`, `idempotent` and `open_world` (each may be `= false`), and
/// `crate = path` (default `::mcp::server`).
///
/// Parameters are the tool's arguments, each with its doc comment as its description; an
/// `Option` one is optional. A parameter whose type is `Context`, `Caller` (or
/// `Option<Caller>`), `HttpParts` or `HttpExtension<T>`, or that is marked `#[context]`,
/// is taken from the request instead (any type implementing `FromContext`). A single parameter of type `Args<T>` makes `T` (a struct deriving
/// `Deserialize` and `JsonSchema`) the whole argument object.
///
/// ```
/// use mcp::prelude::*;
/// use mcp::server::{Args, Json};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Divide {
///     /// The dividend.
///     a: f64,
///     /// The divisor, not zero.
///     b: f64,
/// }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Quotient {
///     quotient: f64,
/// }
///
/// /// Divides a by b.
/// #[tool(idempotent)]
/// async fn divide(Args(args): Args<Divide>, cx: Context) -> Result<Json<Quotient>, String> {
///     let _ = cx.client_capabilities();
///     if args.b == 0.0 {
///         return Err("division by zero".into());
///     }
///     Ok(Json(Quotient { quotient: args.a / args.b }))
/// }
///
/// let server = Server::builder("calc", "1.0").tool(divide).build()?;
/// assert!(server.tool("divide").unwrap().tool().output_schema.is_some());
/// # Ok::<(), mcp::server::Error>(())
/// ```
#[proc_macro_attribute]
pub fn tool(args: TokenStream, input: TokenStream) -> TokenStream {
    expand(args, input, Kind::Tool)
}

/// Makes a function a prompt. Options: `name`, `title`, `description` and `crate`, as for
/// [`macro@tool`]. Its parameters are the prompt's arguments (strings on the wire; an
/// `Option` one is optional), each described by its doc comment; `Context` and
/// `#[context]` parameters as for tools. It returns text (one user message), prompt
/// messages, a `GetPromptResult`, or a `Result` of those.
///
/// ```
/// use mcp::prelude::*;
///
/// /// Asks for a code review.
/// #[prompt]
/// async fn review(
///     /// The code to review.
///     code: String,
///     /// What to focus on.
///     focus: Option<String>,
/// ) -> String {
///     format!("Review this, focusing on {}:\n{code}", focus.as_deref().unwrap_or("anything"))
/// }
///
/// let server = Server::builder("reviews", "1.0").prompt(review).build()?;
/// # Ok::<(), mcp::server::Error>(())
/// ```
#[proc_macro_attribute]
pub fn prompt(args: TokenStream, input: TokenStream) -> TokenStream {
    expand(args, input, Kind::Prompt)
}

/// Makes a function a resource at a fixed URI (`uri = "..."`) or a family of resources
/// named by an RFC 6570 template (`template = "..."`). Other options: `name` (default: the
/// function's name), `title`, `description` (default: the doc comment), `mime_type` and
/// `crate`.
///
/// A template's parameters are its variables, by name (percent-decoded; parsed with
/// `FromStr` when not a `String`; an `Option` one may be absent); a parameter named `uri`
/// receives the URI read. `Context` and `#[context]` parameters as for tools. It returns
/// text, bytes (a base64 blob), the contents themselves, or a `Result` of those.
///
/// ```
/// use mcp::prelude::*;
///
/// /// A user's profile.
/// #[resource(template = "users://{id}/profile", mime_type = "application/json")]
/// async fn profile(id: u64) -> String {
///     format!(r#"{{"id": {id}}}"#)
/// }
///
/// /// The service's README.
/// #[resource(uri = "docs://readme", mime_type = "text/markdown")]
/// async fn readme() -> &'static str {
///     "# Hello"
/// }
///
/// let server = Server::builder("docs", "1.0").resource(readme).resource_template(profile).build()?;
/// # Ok::<(), mcp::server::Error>(())
/// ```
#[proc_macro_attribute]
pub fn resource(args: TokenStream, input: TokenStream) -> TokenStream {
    expand(args, input, Kind::Resource)
}

/// Makes the methods marked `#[tool]` in an impl block tools that share the value: the
/// type becomes a `ToolSet`, registered in one call with
/// `Server::builder(..).tools(value)`; the tools share the value. Tool methods take
/// `&self` (tools run concurrently: keep mutable state behind a lock or an atomic, in an
/// `Arc` field if the program keeps a handle on it too), or no receiver. The only option
/// is `crate`.
///
/// ```
/// use std::sync::atomic::{AtomicU64, Ordering};
/// use mcp::prelude::*;
///
/// #[derive(Default)]
/// struct Counter {
///     count: AtomicU64,
/// }
///
/// #[tools]
/// impl Counter {
///     /// Adds `by` to the count and returns it.
///     #[tool]
///     async fn increment(&self, by: u64) -> String {
///         (self.count.fetch_add(by, Ordering::Relaxed) + by).to_string()
///     }
///
///     /// Reads the count.
///     #[tool(read_only)]
///     async fn read(&self) -> String {
///         self.count.load(Ordering::Relaxed).to_string()
///     }
/// }
///
/// let server = Server::builder("counter", "1.0").tools(Counter::default()).build()?;
/// assert!(server.tool("increment").is_some() && server.tool("read").is_some());
/// # Ok::<(), mcp::server::Error>(())
/// ```
#[proc_macro_attribute]
pub fn tools(args: TokenStream, input: TokenStream) -> TokenStream {
    let options = match syn::parse::<Options>(args) {
        Ok(options) => options,
        Err(e) => return e.to_compile_error().into(),
    };
    let item = match syn::parse::<ItemImpl>(input) {
        Ok(item) => item,
        Err(e) => {
            return syn::Error::new(e.span(), "#[tools] goes on an impl block")
                .to_compile_error()
                .into();
        }
    };
    tool_set(options, item)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Tool,
    Prompt,
    Resource,
}

impl Kind {
    fn attribute(self) -> &'static str {
        match self {
            Kind::Tool => "#[tool]",
            Kind::Prompt => "#[prompt]",
            Kind::Resource => "#[resource]",
        }
    }

    fn options(self) -> &'static [&'static str] {
        match self {
            Kind::Tool => &[
                "name",
                "title",
                "description",
                "read_only",
                "destructive",
                "idempotent",
                "open_world",
                "crate",
            ],
            Kind::Prompt => &["name", "title", "description", "crate"],
            Kind::Resource => &[
                "uri",
                "template",
                "name",
                "title",
                "description",
                "mime_type",
                "crate",
            ],
        }
    }
}

/// The doc comment of `attrs`, its lines joined as rustdoc shows them.
fn doc_text(attrs: &[Attribute]) -> Option<String> {
    let lines: Vec<String> = attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => Some(s.value()),
                _ => None,
            },
            _ => None,
        })
        .map(|line| {
            line.strip_prefix(' ')
                .unwrap_or(&line)
                .trim_end()
                .to_owned()
        })
        .collect();
    let text = lines.join("\n").trim().to_owned();
    (!text.is_empty()).then_some(text)
}

/// What a parameter of a marked function is.
enum Param {
    /// An argument: its name, type and doc comment.
    Argument {
        name: Ident,
        ty: Box<Type>,
        docs: Vec<Attribute>,
    },
    /// The whole argument object (`Args(x): Args<T>`): `T`.
    Whole { ty: Box<Type> },
    /// Taken from the request's context: its type.
    Context { ty: Box<Type> },
}

/// The last segment of a type's path, and its single generic argument if it has one.
fn last_segment(ty: &Type) -> Option<(&Ident, Option<&Type>)> {
    let Type::Path(path) = ty else { return None };
    let segment = path.path.segments.last()?;
    let inner = match &segment.arguments {
        syn::PathArguments::AngleBracketed(args) if args.args.len() == 1 => match &args.args[0] {
            syn::GenericArgument::Type(inner) => Some(inner),
            _ => None,
        },
        _ => None,
    };
    Some((&segment.ident, inner))
}

/// Reads the parameters of `sig` (the receiver aside), stripping the attributes the macro
/// consumes (`#[context]` and doc comments) from the function it keeps.
fn params(sig: &mut Signature, kind: Kind) -> syn::Result<Vec<Param>> {
    let mut params = Vec::new();
    for input in &mut sig.inputs {
        let FnArg::Typed(typed) = input else { continue };
        let marked = typed.attrs.iter().any(|a| a.path().is_ident("context"));
        let docs: Vec<Attribute> = typed
            .attrs
            .iter()
            .filter(|a| a.path().is_ident("doc"))
            .cloned()
            .collect();
        typed
            .attrs
            .retain(|a| !a.path().is_ident("context") && !a.path().is_ident("doc"));
        let segment = last_segment(&typed.ty);
        // `Option<Caller>` too: an extractor that may find nothing.
        let extractor = |ty: &Type| {
            last_segment(ty).is_some_and(|(ident, _)| {
                ["Context", "Caller", "HttpParts", "HttpExtension"].contains(&&*ident.to_string())
            })
        };
        let optional_extractor =
            segment.is_some_and(|(ident, inner)| ident == "Option" && inner.is_some_and(extractor));
        if marked || extractor(&typed.ty) || optional_extractor {
            params.push(Param::Context {
                ty: typed.ty.clone(),
            });
            continue;
        }
        if let Some((ident, Some(inner))) = segment
            && ident == "Args"
        {
            if kind != Kind::Tool {
                return Err(syn::Error::new(
                    typed.ty.span(),
                    "`Args<T>` is for tools; a prompt's or resource's arguments are its parameters",
                ));
            }
            params.push(Param::Whole {
                ty: Box::new(inner.clone()),
            });
            continue;
        }
        let name = match &*typed.pat {
            Pat::Ident(ident) if ident.subpat.is_none() => ident.ident.clone(),
            other => {
                return Err(syn::Error::new(
                    other.span(),
                    "an argument needs a plain name (`text: String`): the name is the argument's on the wire",
                ));
            }
        };
        params.push(Param::Argument {
            name,
            ty: typed.ty.clone(),
            docs,
        });
    }
    let wholes = params
        .iter()
        .filter(|p| matches!(p, Param::Whole { .. }))
        .count();
    let arguments = params
        .iter()
        .filter(|p| matches!(p, Param::Argument { .. }))
        .count();
    if wholes > 1 || (wholes == 1 && arguments > 0) {
        return Err(syn::Error::new(
            sig.inputs.span(),
            "an `Args<T>` parameter is the whole argument object: the other parameters can only be taken from the context",
        ));
    }
    Ok(params)
}

/// Refuses what a marked function cannot be.
fn check_signature(sig: &Signature, kind: Kind) -> syn::Result<()> {
    if !sig.generics.params.is_empty() {
        return Err(syn::Error::new(
            sig.generics.span(),
            format!(
                "a {} function cannot be generic: its arguments' schema is fixed",
                kind.attribute()
            ),
        ));
    }
    if let ReturnType::Type(_, ty) = &sig.output
        && matches!(**ty, Type::ImplTrait(_))
    {
        return Err(syn::Error::new(
            ty.span(),
            "name the return type: the macro needs it to tell the result's schema",
        ));
    }
    Ok(())
}

/// The expression that runs the marked function with the request's values: the
/// arguments struct's fields, the whole object, the context extractions.
fn call_expr(
    params: &[Param],
    callee: &Tokens,
    asyncness: bool,
    krate: &Tokens,
    args_binding: &Tokens,
) -> Tokens {
    let mut lets = Vec::new();
    let mut passed = Vec::new();
    for (i, param) in params.iter().enumerate() {
        let local = format_ident!("__mcp_param_{}", i);
        match param {
            Param::Argument { name, .. } => {
                lets.push(quote!(let #local = #args_binding.#name;));
            }
            Param::Whole { .. } => {
                lets.push(quote!(let #local = #krate::__macros::Args(#args_binding);));
            }
            Param::Context { ty, .. } => {
                lets.push(quote!(
                    let #local = <#ty as #krate::__macros::FromContext>::from_context(&__mcp_cx)?;
                ));
            }
        }
        passed.push(local);
    }
    let call = quote!(#callee(#(#passed),*));
    let call = if asyncness { quote!(#call.await) } else { call };
    quote!({ #(#lets)* #call })
}

/// The arguments struct of a tool or prompt: one field an argument, with its doc comment.
fn args_struct(params: &[Param], krate: &Tokens, name: &Ident) -> Tokens {
    let serde_path = format!("{}::__macros::serde", krate).replace(' ', "");
    let schemars_path = format!("{}::__macros::schemars", krate).replace(' ', "");
    let fields = params.iter().filter_map(|p| match p {
        Param::Argument { name, ty, docs } => Some(quote!(#(#docs)* #name: #ty,)),
        _ => None,
    });
    quote! {
        #[derive(#krate::__macros::serde::Deserialize, #krate::__macros::schemars::JsonSchema)]
        #[serde(crate = #serde_path)]
        #[schemars(crate = #schemars_path)]
        #[allow(non_camel_case_types, dead_code)]
        struct #name { #(#fields)* }
    }
}

/// How a definition's handler reaches the marked function.
struct Callee {
    /// The function's path (`echo::call`, `__mcp_this.method`).
    path: Tokens,
    /// What runs once, before the handler is made (an `Arc` of the tools' value, taken).
    prelude: Tokens,
    /// What runs at each call, before its future is made.
    per_call: Tokens,
}

impl Callee {
    fn function(path: Tokens) -> Self {
        Callee {
            path,
            prelude: Tokens::new(),
            per_call: Tokens::new(),
        }
    }
}

/// The definition expression of a tool or prompt whose function `callee` takes `params`.
fn definition(
    kind: Kind,
    options: &Options,
    krate: &Tokens,
    sig: &Signature,
    attrs: &[Attribute],
    params: &[Param],
    callee: Callee,
) -> syn::Result<Tokens> {
    let Callee {
        path: callee,
        prelude,
        per_call,
    } = callee;
    let name = match options.text("name")? {
        Some(name) => name,
        None => LitStr::new(&sig.ident.to_string(), sig.ident.span()),
    };
    let description = match options.text("description")? {
        Some(text) => Some(text.value()),
        None => doc_text(attrs),
    };
    let describe = description.map(|d| quote!(.description(#d)));
    let title = options.text("title")?.map(|t| quote!(.title(#t)));
    let asyncness = sig.asyncness.is_some();
    let whole = params.iter().find_map(|p| match p {
        Param::Whole { ty, .. } => Some(ty.clone()),
        _ => None,
    });
    let args_name = format_ident!("__McpArgs");
    let (args_item, args_ty) = match whole {
        Some(ty) => (quote!(), quote!(#ty)),
        None => (args_struct(params, krate, &args_name), quote!(#args_name)),
    };
    let binding = quote!(__mcp_args);
    let call = call_expr(params, &callee, asyncness, krate, &binding);
    let k = quote!(#krate::__macros);
    Ok(match kind {
        Kind::Tool => {
            let mut hints = Vec::new();
            for (option, field) in [
                ("read_only", "read_only_hint"),
                ("destructive", "destructive_hint"),
                ("idempotent", "idempotent_hint"),
                ("open_world", "open_world_hint"),
            ] {
                if let Some(flag) = options.flag(option)? {
                    let field = Ident::new(field, Span::call_site());
                    hints.push(quote!(__mcp_hints.#field = #k::Option::Some(#flag);));
                }
            }
            let annotate = (!hints.is_empty()).then(|| {
                quote!(.annotations({
                    let mut __mcp_hints = #k::ToolAnnotations::default();
                    #(#hints)*
                    __mcp_hints
                }))
            });
            quote! {{
                #args_item
                #prelude
                #k::ToolDef::returning(#name, move |#binding: #args_ty, __mcp_cx: #k::Context| {
                    #per_call
                    async move {
                        #k::Result::<_, #k::ToolError>::Ok(#call)
                    }
                })
                #describe
                #title
                #annotate
            }}
        }
        Kind::Prompt => quote! {{
            #args_item
            #prelude
            #k::PromptDef::typed(#name, move |#binding: #args_ty, __mcp_cx: #k::Context| {
                #per_call
                async move {
                    #k::Result::<_, #k::ToolError>::Ok(#call)
                }
            })
            #describe
            #title
        }},
        Kind::Resource => unreachable!("resources are expanded by `resource_definition`"),
    })
}

/// `#[tool]`, `#[prompt]` or `#[resource]` on a free function.
fn expand(args: TokenStream, input: TokenStream, kind: Kind) -> TokenStream {
    let options = match syn::parse::<Options>(args) {
        Ok(options) => options,
        Err(e) => return e.to_compile_error().into(),
    };
    let item = match syn::parse::<ItemFn>(input) {
        Ok(item) => item,
        Err(e) => {
            return syn::Error::new(e.span(), format!("{} goes on a function", kind.attribute()))
                .to_compile_error()
                .into();
        }
    };
    free_function(&options, item, kind)
        .unwrap_or_else(syn::Error::into_compile_error)
        .into()
}

fn free_function(options: &Options, mut item: ItemFn, kind: Kind) -> syn::Result<Tokens> {
    options.check(kind)?;
    if let Some(receiver) = item.sig.receiver() {
        return Err(syn::Error::new(
            receiver.span(),
            format!(
                "{} on a method needs #[tools] on its impl block",
                kind.attribute()
            ),
        ));
    }
    check_signature(&item.sig, kind)?;
    let krate = options.krate()?;
    let k = quote!(#krate::__macros);
    let params = params(&mut item.sig, kind)?;
    let ident = item.sig.ident.clone();
    let vis = item.vis.clone();
    let attrs = item.attrs.clone();
    let docs: Vec<&Attribute> = attrs.iter().filter(|a| a.path().is_ident("doc")).collect();
    let (trait_name, method, ty, body) = if kind == Kind::Resource {
        resource_definition(options, &krate, &item.sig, &attrs, &params)?
    } else {
        let body = definition(
            kind,
            options,
            &krate,
            &item.sig,
            &attrs,
            &params,
            Callee::function(quote!(#ident::call)),
        )?;
        let (trait_name, method, def) = if kind == Kind::Tool {
            (quote!(IntoToolDef), quote!(into_tool_def), quote!(ToolDef))
        } else {
            (
                quote!(IntoPromptDef),
                quote!(into_prompt_def),
                quote!(PromptDef),
            )
        };
        (
            trait_name,
            method,
            quote!(#k::Result<#k::#def, #k::Error>),
            quote!((#body).check()),
        )
    };
    // The function as written, kept as the value's `call`.
    item.sig.ident = Ident::new("call", ident.span());
    item.vis = vis.clone();
    item.attrs.retain(|a| !a.path().is_ident("doc"));
    let call_doc = format!(
        "The function `{ident}` as written: {} made `{ident}` the definition itself.",
        kind.attribute()
    );
    Ok(quote! {
        #(#docs)*
        #[allow(non_camel_case_types)]
        #[derive(Debug, Clone, Copy)]
        #vis struct #ident;

        impl #ident {
            #[doc = #call_doc]
            // A handler may be async with nothing to await: the server awaits it anyway.
            #[allow(clippy::unused_async)]
            #item
        }

        impl #k::#trait_name for #ident {
            fn #method(self) -> #ty {
                #body
            }
        }
    })
}
