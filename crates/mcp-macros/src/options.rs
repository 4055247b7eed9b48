//! The options of the attributes: `key = "text"`, `key = path`, `flag`, `flag = bool`.

use proc_macro2::TokenStream as Tokens;
use quote::quote;
use syn::parse::{Parse, ParseStream};
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Expr, ExprLit, Ident, Lit, LitStr, Meta, Path, Token};

use crate::Kind;

/// An attribute's options: `key = "text"`, `key = path` (for `crate`), `flag`,
/// `flag = bool`.
#[derive(Default)]
pub(crate) struct Options {
    pub(crate) entries: Vec<(Ident, Value)>,
}

pub(crate) enum Value {
    Flag(bool),
    Text(LitStr),
    Path(Path),
}

impl Parse for Options {
    fn parse(input: ParseStream) -> syn::Result<Self> {
        let mut entries = Vec::new();
        let metas = Punctuated::<Meta, Token![,]>::parse_terminated(input)?;
        for meta in metas {
            match meta {
                Meta::Path(path) => {
                    let key = path
                        .get_ident()
                        .cloned()
                        .ok_or_else(|| syn::Error::new(path.span(), "expected an option"))?;
                    entries.push((key, Value::Flag(true)));
                }
                Meta::NameValue(nv) => {
                    let key = nv
                        .path
                        .get_ident()
                        .cloned()
                        .or_else(|| {
                            // `crate` is a keyword: syn reads it as a path segment.
                            (nv.path.segments.len() == 1)
                                .then(|| Ident::new("crate", nv.path.span()))
                        })
                        .ok_or_else(|| syn::Error::new(nv.path.span(), "expected an option"))?;
                    let value = match nv.value {
                        Expr::Lit(ExprLit {
                            lit: Lit::Str(text),
                            ..
                        }) => Value::Text(text),
                        Expr::Lit(ExprLit {
                            lit: Lit::Bool(flag),
                            ..
                        }) => Value::Flag(flag.value),
                        Expr::Path(path) => Value::Path(path.path),
                        other => {
                            return Err(syn::Error::new(
                                other.span(),
                                "expected a string, `true`, `false` or a path",
                            ));
                        }
                    };
                    entries.push((key, value));
                }
                Meta::List(list) => {
                    return Err(syn::Error::new(
                        list.span(),
                        "expected `key = value` or `flag`",
                    ));
                }
            }
        }
        Ok(Options { entries })
    }
}

impl Options {
    /// Refuses an option `kind` does not take, and a repeated one.
    pub(crate) fn check(&self, kind: Kind) -> syn::Result<()> {
        let known = kind.options();
        for (i, (key, _)) in self.entries.iter().enumerate() {
            let name = key.to_string();
            if !known.contains(&name.as_str()) {
                return Err(syn::Error::new(
                    key.span(),
                    format!(
                        "unknown option `{name}` for {}; expected one of: {}",
                        kind.attribute(),
                        known.join(", ")
                    ),
                ));
            }
            if self.entries[..i].iter().any(|(k, _)| *k == name) {
                return Err(syn::Error::new(
                    key.span(),
                    format!("`{name}` is given twice"),
                ));
            }
        }
        Ok(())
    }

    pub(crate) fn text(&self, key: &str) -> syn::Result<Option<LitStr>> {
        match self.entries.iter().find(|(k, _)| k == key) {
            None => Ok(None),
            Some((_, Value::Text(text))) => Ok(Some(text.clone())),
            Some((k, _)) => Err(syn::Error::new(
                k.span(),
                format!("`{key}` takes a string: `{key} = \"...\"`"),
            )),
        }
    }

    pub(crate) fn flag(&self, key: &str) -> syn::Result<Option<bool>> {
        match self.entries.iter().find(|(k, _)| k == key) {
            None => Ok(None),
            Some((_, Value::Flag(flag))) => Ok(Some(*flag)),
            Some((k, _)) => Err(syn::Error::new(
                k.span(),
                format!("`{key}` is a flag: `{key}` or `{key} = false`"),
            )),
        }
    }

    /// The runtime's path: `crate = path` (or `"path"`), `::mcp::server` by default.
    pub(crate) fn krate(&self) -> syn::Result<Tokens> {
        match self.entries.iter().find(|(k, _)| k == "crate") {
            None => Ok(quote!(::mcp::server)),
            Some((_, Value::Path(path))) => Ok(quote!(#path)),
            Some((_, Value::Text(text))) => {
                let path: Path = text.parse()?;
                Ok(quote!(#path))
            }
            Some((k, Value::Flag(_))) => Err(syn::Error::new(
                k.span(),
                "`crate` takes a path: `crate = ::mcp_server`",
            )),
        }
    }
}
