//! RFC 6570 URI templates (<https://www.rfc-editor.org/rfc/rfc6570>), the form of resource
//! templates (<https://modelcontextprotocol.io/specification/2026-07-28/server/resources>,
//! Resource templates): parsing, expansion at all four levels, and matching a URI back to
//! the variables.
//!
//! Written here rather than taken from `iri-string`'s `template` module: its expansion
//! overflows a counter (a panic with overflow checks on) when a prefix modifier meets a
//! value with multi-byte characters (`{greek:2}` of `αβγ`), and it accepts `{x:0}`, which
//! RFC 6570's grammar does not; matching needs the parsed expressions, which it does not
//! expose, so a parser was needed here anyway.

use std::fmt::{self, Write as _};

use mcp_types::OrderedMap;

use crate::error::Error;

/// The value of one template variable: what expansion takes and matching gives back.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum TemplateValue {
    /// A string.
    String(String),
    /// A list (`{x*}`, `{?x*}`, or an unexploded list joined with `,`).
    List(Vec<String>),
    /// An associative array, in order (`{?x*}` with `name=value` pairs, `{/x*}`, `{x*}`).
    Map(Vec<(String, String)>),
}

impl TemplateValue {
    /// The value as a string: a list's items and a map's keys and values joined with
    /// `,`, which is how RFC 6570 expands them unexploded.
    #[must_use]
    pub fn to_joined(&self) -> String {
        match self {
            TemplateValue::String(s) => s.clone(),
            TemplateValue::List(items) => items.join(","),
            TemplateValue::Map(entries) => entries
                .iter()
                .flat_map(|(k, v)| [k.as_str(), v.as_str()])
                .collect::<Vec<_>>()
                .join(","),
        }
    }

    /// The string, if the value is one.
    #[must_use]
    pub fn as_str(&self) -> Option<&str> {
        match self {
            TemplateValue::String(s) => Some(s),
            _ => None,
        }
    }
}

impl From<&str> for TemplateValue {
    fn from(s: &str) -> Self {
        TemplateValue::String(s.to_owned())
    }
}

impl From<String> for TemplateValue {
    fn from(s: String) -> Self {
        TemplateValue::String(s)
    }
}

impl From<Vec<String>> for TemplateValue {
    fn from(items: Vec<String>) -> Self {
        TemplateValue::List(items)
    }
}

impl From<Vec<(String, String)>> for TemplateValue {
    fn from(entries: Vec<(String, String)>) -> Self {
        TemplateValue::Map(entries)
    }
}

/// An expression's operator (RFC 6570 section 2.2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Op {
    /// `{x}`
    Simple,
    /// `{+x}`
    Reserved,
    /// `{#x}`
    Fragment,
    /// `{.x}`
    Label,
    /// `{/x}`
    Path,
    /// `{;x}`
    PathParam,
    /// `{?x}`
    Query,
    /// `{&x}`
    QueryCont,
}

impl Op {
    fn from_char(c: char) -> Option<Op> {
        Some(match c {
            '+' => Op::Reserved,
            '#' => Op::Fragment,
            '.' => Op::Label,
            '/' => Op::Path,
            ';' => Op::PathParam,
            '?' => Op::Query,
            '&' => Op::QueryCont,
            _ => return None,
        })
    }

    /// What the expansion starts with when any variable is defined.
    fn first(self) -> &'static str {
        match self {
            Op::Simple | Op::Reserved => "",
            Op::Fragment => "#",
            Op::Label => ".",
            Op::Path => "/",
            Op::PathParam => ";",
            Op::Query => "?",
            Op::QueryCont => "&",
        }
    }

    /// What a named variable with an empty value expands to after its name.
    fn if_empty(self) -> &'static str {
        if self == Op::PathParam { "" } else { "=" }
    }

    /// What separates the values.
    fn sep(self) -> char {
        match self {
            Op::Simple | Op::Reserved | Op::Fragment => ',',
            Op::Label => '.',
            Op::Path => '/',
            Op::PathParam => ';',
            Op::Query | Op::QueryCont => '&',
        }
    }

    /// Whether the values are `name=value` pairs.
    fn named(self) -> bool {
        matches!(self, Op::PathParam | Op::Query | Op::QueryCont)
    }

    /// Whether reserved characters pass unencoded into the values.
    fn reserved(self) -> bool {
        matches!(self, Op::Reserved | Op::Fragment)
    }

    /// Whether `b` can appear unencoded in this expression's expansion: unreserved
    /// characters, `%` of the encoded ones, and the operator's own punctuation.
    fn may_contain(self, b: u8) -> bool {
        if self.reserved() {
            return true;
        }
        let punctuation: &[u8] = match self {
            Op::Label => b".,=",
            Op::Path => b"/,=",
            Op::PathParam => b";,=",
            Op::Query | Op::QueryCont => b"?&,=",
            _ => b",=",
        };
        b.is_ascii_alphanumeric() || b"-._~%".contains(&b) || punctuation.contains(&b)
    }
}

#[derive(Debug, Clone)]
struct VarSpec {
    name: String,
    explode: bool,
    prefix: Option<usize>,
}

#[derive(Debug, Clone)]
enum Part {
    Literal(String),
    Expr { op: Op, vars: Vec<VarSpec> },
}

/// A URI template (RFC 6570, <https://www.rfc-editor.org/rfc/rfc6570>), as resource
/// templates are (<https://modelcontextprotocol.io/specification/2026-07-28/server/resources>,
/// Resource templates).
///
/// **Expansion** ([`expand`](Self::expand)) supports all four levels of RFC 6570: every
/// operator (`{x}`, `{+x}`, `{#x}`, `{.x}`, `{/x}`, `{;x}`, `{?x}`, `{&x}`), several
/// variables per expression, explode (`{x*}`) and prefix (`{x:3}`) modifiers.
///
/// **Matching** ([`matches`](Self::matches)) a URI back to the variables, which routes
/// `resources/read`, works for every template that
/// [`parse_matchable`](Self::parse_matchable) accepts:
///
/// - `{x}`, `{x,y}`, `{/x}`, `{/x,y}`: one value per variable (all must be present); a
///   `,` in a value makes it a list. `{x}` and `{+x}` never match an empty value, and a
///   non-reserved value holds no `/`, `?` or `#`.
/// - `{+x}`, `{#x}`, `{.x}`: one variable per expression.
/// - `{;x,y}`, `{?x,y}`, `{&x}`: by name, in the template's order; an absent name is an
///   undefined variable.
/// - `{x*}`, `{/x*}` as the only variable of their expression, and `{;x*}`, `{?x*}`,
///   `{&x*}` as the last: a list, or a map when the items are `name=value` pairs (for the
///   query forms, a map unless every name is the variable's own).
/// - `{x:3}`: a string of at most 3 characters (after decoding).
/// - `{/x}`, `{.x}`, `{#x}` and the named forms match an empty part of the URI as
///   undefined variables, which are then absent from the result.
///
/// An expression's part of the URI runs to the first occurrence of the literal after it
/// (to the end of the URI when that literal ends the template): `x:{a}-{b}` matches
/// `x:1-2-3` with `a` = `1`, `b` = `2-3`. Values are percent-decoded; one that decodes to
/// invalid UTF-8, or that holds a `.` or `..` path segment before or after decoding
/// (which would name a resource outside the template's prefix), does not match. A
/// variable named twice must match the same value both times (`{a}/{a:1}` then matches
/// only one-character values), or be undefined in both.
///
/// **Refused** for matching ([`parse_matchable`](Self::parse_matchable) fails and
/// [`ambiguity`](Self::ambiguity) says why; such a template still expands), because a
/// URI could match them in more than one way: two expressions with no literal between them unless the second starts with a
/// character the first's values cannot hold (`{a}{b}` and `{+a}{?q}` are refused,
/// `{a}{/b}` and `{/a}{?q}` are accepted); several variables in one `{+…}`, `{#…}` or
/// `{.…}` expression (their values may hold the separator); an exploded variable in
/// those, or one that is not alone in `{x*}` and `{/x*}`, or not last in the named forms.
#[derive(Clone)]
pub struct UriTemplate {
    source: String,
    parts: Vec<Part>,
    /// Why a URI could match in more than one way, if it could.
    ambiguity: Option<&'static str>,
}

impl fmt::Debug for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("UriTemplate").field(&self.source).finish()
    }
}

impl fmt::Display for UriTemplate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.source)
    }
}

impl UriTemplate {
    /// Parses `template`, any RFC 6570 template: one whose match would be ambiguous
    /// expands, but matches nothing ([`ambiguity`](Self::ambiguity) says why).
    ///
    /// # Errors
    /// [`Error::InvalidTemplate`] when it is not an RFC 6570 template.
    pub fn parse(template: &str) -> Result<Self, Error> {
        let invalid = |reason| Error::InvalidTemplate {
            template: template.to_owned(),
            reason,
        };
        let mut parts = Vec::new();
        let mut ambiguity = None;
        let mut rest = template;
        loop {
            let brace = rest.find(['{', '}']);
            let literal = &rest[..brace.unwrap_or(rest.len())];
            if !literal.is_empty() {
                parts.push(Part::Literal(expand_literal(literal).map_err(invalid)?));
            }
            let Some(open) = brace else { break };
            if rest.as_bytes()[open] == b'}' {
                return Err(invalid("a `}` with no `{`"));
            }
            let after = &rest[open + 1..];
            let close = after
                .find(['{', '}'])
                .filter(|&i| after.as_bytes()[i] == b'}')
                .ok_or_else(|| invalid("an unclosed `{`"))?;
            let expression = &after[..close];
            let (op, list) = match expression.chars().next() {
                Some('=' | ',' | '!' | '@' | '|') => {
                    return Err(invalid(
                        "an operator RFC 6570 reserves for future use (`=`, `,`, `!`, `@`, `|`)",
                    ));
                }
                Some(c) => match Op::from_char(c) {
                    Some(op) => (op, &expression[1..]),
                    None => (Op::Simple, expression),
                },
                None => return Err(invalid("an empty expression `{}`")),
            };
            let vars = list
                .split(',')
                .map(parse_varspec)
                .collect::<Result<Vec<_>, _>>()
                .map_err(invalid)?;
            if let Err(reason) = check_expression(op, &vars) {
                ambiguity.get_or_insert(reason);
            }
            if let Some(Part::Expr { op: before, .. }) = parts.last() {
                let first = op.first().bytes().next();
                if first.is_none_or(|b| before.may_contain(b)) {
                    ambiguity.get_or_insert(
                        "two expressions with no literal between them, and the values of \
                         the first may hold what starts the second, so where one ends is \
                         ambiguous",
                    );
                }
            }
            parts.push(Part::Expr { op, vars });
            rest = &after[close + 1..];
        }
        let source = template.to_owned();
        Ok(UriTemplate {
            source,
            parts,
            ambiguity,
        })
    }

    /// Parses `template` for matching URIs against it, as resource templates are.
    ///
    /// # Errors
    /// [`Error::InvalidTemplate`] when it is not an RFC 6570 template, or when matching
    /// it would be ambiguous, with the reason (see the type's docs).
    pub fn parse_matchable(template: &str) -> Result<Self, Error> {
        let parsed = Self::parse(template)?;
        match parsed.ambiguity {
            Some(reason) => Err(Error::InvalidTemplate {
                template: template.to_owned(),
                reason,
            }),
            None => Ok(parsed),
        }
    }

    /// Why a URI could match the template in more than one way, so that
    /// [`matches`](Self::matches) matches nothing: `None` for a template that matches.
    #[must_use]
    pub fn ambiguity(&self) -> Option<&'static str> {
        self.ambiguity
    }

    /// The template as written.
    #[must_use]
    pub fn as_str(&self) -> &str {
        &self.source
    }

    /// The URI `values` make of the template (RFC 6570 section 3): a variable missing
    /// from `values` is undefined.
    ///
    /// ```
    /// use mcp_server::{TemplateValue, UriTemplate};
    /// use mcp_types::OrderedMap;
    ///
    /// let t = UriTemplate::parse("file:///logs/{day}{?level,tags*}").unwrap();
    /// let mut values = OrderedMap::new();
    /// values.insert("day", TemplateValue::from("2026-07-28"));
    /// values.insert("tags", TemplateValue::List(vec!["a b".into(), "c".into()]));
    /// assert_eq!(t.expand(&values).unwrap(), "file:///logs/2026-07-28?tags=a%20b&tags=c");
    /// assert_eq!(t.matches("file:///logs/2026-07-28?tags=a%20b&tags=c"), Some(values));
    /// ```
    ///
    /// # Errors
    /// [`Error::TemplateExpansion`] when a prefix modifier (`{x:3}`) meets a list or a map.
    pub fn expand(&self, values: &OrderedMap<TemplateValue>) -> Result<String, Error> {
        let mut out = String::new();
        for part in &self.parts {
            match part {
                Part::Literal(literal) => out.push_str(literal),
                Part::Expr { op, vars } => self.expand_expression(*op, vars, values, &mut out)?,
            }
        }
        Ok(out)
    }

    /// One expression, as RFC 6570 appendix A describes.
    fn expand_expression(
        &self,
        op: Op,
        vars: &[VarSpec],
        values: &OrderedMap<TemplateValue>,
        out: &mut String,
    ) -> Result<(), Error> {
        let reserved = op.reserved();
        let mut first = true;
        for var in vars {
            let Some(value) = values.get(&var.name) else {
                continue;
            };
            // An empty list or map is undefined (RFC 6570 section 2.3).
            let defined = match value {
                TemplateValue::String(_) => true,
                TemplateValue::List(items) => !items.is_empty(),
                TemplateValue::Map(entries) => !entries.is_empty(),
            };
            if !defined {
                continue;
            }
            if var.prefix.is_some() && value.as_str().is_none() {
                return Err(Error::TemplateExpansion {
                    template: self.source.clone(),
                    reason: format!(
                        "variable {:?} has a prefix modifier but a list or map value, which \
                         RFC 6570 section 2.4.1 does not define",
                        var.name
                    ),
                });
            }
            if first {
                out.push_str(op.first());
                first = false;
            } else {
                out.push(op.sep());
            }
            match value {
                TemplateValue::String(s) => {
                    if op.named() {
                        out.push_str(&var.name);
                        if s.is_empty() {
                            out.push_str(op.if_empty());
                            continue;
                        }
                        out.push('=');
                    }
                    let s = match var.prefix {
                        Some(n) => s.char_indices().nth(n).map_or(s.as_str(), |(i, _)| &s[..i]),
                        None => s,
                    };
                    encode(out, s, reserved);
                }
                TemplateValue::List(items) if var.explode => {
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(op.sep());
                        }
                        if op.named() {
                            out.push_str(&var.name);
                            if item.is_empty() {
                                out.push_str(op.if_empty());
                                continue;
                            }
                            out.push('=');
                        }
                        encode(out, item, reserved);
                    }
                }
                TemplateValue::List(items) => {
                    if op.named() {
                        out.push_str(&var.name);
                        out.push('=');
                    }
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        encode(out, item, reserved);
                    }
                }
                TemplateValue::Map(entries) if var.explode => {
                    for (i, (k, v)) in entries.iter().enumerate() {
                        if i > 0 {
                            out.push(op.sep());
                        }
                        encode(out, k, reserved);
                        if op.named() && v.is_empty() {
                            out.push_str(op.if_empty());
                            continue;
                        }
                        out.push('=');
                        encode(out, v, reserved);
                    }
                }
                TemplateValue::Map(entries) => {
                    if op.named() {
                        out.push_str(&var.name);
                        out.push('=');
                    }
                    for (i, (k, v)) in entries.iter().enumerate() {
                        if i > 0 {
                            out.push(',');
                        }
                        encode(out, k, reserved);
                        out.push(',');
                        encode(out, v, reserved);
                    }
                }
            }
        }
        Ok(())
    }

    /// The variables' values if `uri` matches the template (see the type's docs for
    /// what matches), percent-decoded, in the order of the template. `None` too for every
    /// URI when the template is ambiguous ([`ambiguity`](Self::ambiguity)).
    #[must_use]
    pub fn matches(&self, uri: &str) -> Option<OrderedMap<TemplateValue>> {
        if self.ambiguity.is_some() {
            return None;
        }
        let mut values = OrderedMap::new();
        // The variables some expression left undefined: one named again elsewhere with a
        // value would expand there too, so the URI does not match.
        let mut undefined = Vec::new();
        let mut rest = uri;
        for (i, part) in self.parts.iter().enumerate() {
            match part {
                Part::Literal(literal) => rest = rest.strip_prefix(literal.as_str())?,
                Part::Expr { op, vars } => {
                    // An expression runs to the next literal (its first occurrence, or the
                    // end of the URI when that literal closes the template), to the first
                    // character its values cannot hold when another expression follows
                    // (parse made sure that one starts with such a character), or to the
                    // end.
                    let end = match self.parts.get(i + 1) {
                        Some(Part::Literal(next)) if i + 2 == self.parts.len() => {
                            rest.strip_suffix(next.as_str())?.len()
                        }
                        Some(Part::Literal(next)) => rest.find(next.as_str())?,
                        Some(Part::Expr { .. }) => rest
                            .bytes()
                            .position(|b| !op.may_contain(b))
                            .unwrap_or(rest.len()),
                        None => rest.len(),
                    };
                    match_expression(*op, vars, &rest[..end], &mut values, &mut undefined)?;
                    rest = &rest[end..];
                }
            }
        }
        let consistent = undefined.iter().all(|name| !values.contains_key(name));
        (rest.is_empty() && consistent).then_some(values)
    }
}

/// `name`, `name*` or `name:N` (RFC 6570 section 2.3).
fn parse_varspec(spec: &str) -> Result<VarSpec, &'static str> {
    let (name, explode, prefix) = if let Some(name) = spec.strip_suffix('*') {
        (name, true, None)
    } else if let Some((name, len)) = spec.split_once(':') {
        // max-length = %x31-39 0*3DIGIT
        let valid = (1..=4).contains(&len.len())
            && len.bytes().all(|b| b.is_ascii_digit())
            && !len.starts_with('0');
        let len = len
            .parse()
            .ok()
            .filter(|_| valid)
            .ok_or("a prefix length (`{x:N}`) must be from 1 to 9999")?;
        (name, false, Some(len))
    } else {
        (spec, false, None)
    };
    // varname = varchar *( ["."] varchar ); varchar = ALPHA / DIGIT / "_" / pct-encoded
    let bytes = name.as_bytes();
    let mut i = 0;
    let mut after_dot = true;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'%' if bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit) =>
            {
                i += 3;
                after_dot = false;
            }
            b'.' if !after_dot => {
                i += 1;
                after_dot = true;
            }
            _ if b.is_ascii_alphanumeric() || b == b'_' => {
                i += 1;
                after_dot = false;
            }
            _ => {
                return Err(
                    "a variable name is letters, digits, `_` and percent-encoded octets, \
                     with single `.` between them",
                );
            }
        }
    }
    if after_dot {
        return Err("an empty variable name, or one ending with `.`");
    }
    Ok(VarSpec {
        name: name.to_owned(),
        explode,
        prefix,
    })
}

/// A literal as it appears in the URI: checked against RFC 6570 section 2.1 (but for
/// `'`, which the RFC's own examples use), with non-ASCII characters percent-encoded.
fn expand_literal(literal: &str) -> Result<String, &'static str> {
    let bytes = literal.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        let valid = match b {
            b'%' => {
                bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
                    && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
            }
            b'"' | b'<' | b'>' | b'\\' | b'^' | b'`' | b'|' => false,
            _ => b > b' ' && b != 0x7f,
        };
        if !valid {
            return Err(
                "a literal holds a space, a control character, one of `\"<>\\^`|`, or a `%` \
                 that does not start a percent-encoded octet",
            );
        }
    }
    let mut out = String::with_capacity(literal.len());
    encode(&mut out, literal, true);
    Ok(out)
}

/// Appends `s`, percent-encoding (UTF-8, uppercase hex) what may not appear as is:
/// everything but unreserved characters, and with `reserved` but reserved characters and
/// percent-encoded octets too.
fn encode(out: &mut String, s: &str, reserved: bool) {
    let bytes = s.as_bytes();
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        let unreserved = b.is_ascii_alphanumeric() || b"-._~".contains(&b);
        let kept = unreserved || (reserved && b":/?#[]@!$&'()*+,;=".contains(&b));
        if kept {
            out.push(char::from(b));
        } else if reserved
            && b == b'%'
            && bytes.get(i + 1).is_some_and(u8::is_ascii_hexdigit)
            && bytes.get(i + 2).is_some_and(u8::is_ascii_hexdigit)
        {
            out.push_str(&s[i..i + 3]);
            i += 2;
        } else {
            let _ = write!(out, "%{b:02X}");
        }
        i += 1;
    }
}

/// Why an expression cannot be matched unambiguously, if it cannot.
fn check_expression(op: Op, vars: &[VarSpec]) -> Result<(), &'static str> {
    let several = vars.len() > 1;
    match op {
        Op::Reserved | Op::Fragment | Op::Label if several => Err(
            "several variables in one `{+…}`, `{#…}` or `{.…}` expression: their values may \
             hold the separator, so where one ends is ambiguous",
        ),
        Op::Reserved | Op::Fragment | Op::Label if vars.iter().any(|v| v.explode) => Err(
            "an exploded variable in `{+…}`, `{#…}` or `{.…}`: its items may hold the \
             separator, so where one ends is ambiguous",
        ),
        Op::Simple | Op::Path if several && vars.iter().any(|v| v.explode) => Err(
            "an exploded variable with others in `{…}` or `{/…}`: which items are its own \
             is ambiguous",
        ),
        _ if vars[..vars.len() - 1].iter().any(|v| v.explode) => Err(
            "an exploded variable before another in `{;…}`, `{?…}` or `{&…}`: which pairs \
             are its own is ambiguous",
        ),
        _ => Ok(()),
    }
}

/// Matches one expression's part of the URI, `text`, adding its variables to `values`.
fn match_expression(
    op: Op,
    vars: &[VarSpec],
    text: &str,
    values: &mut OrderedMap<TemplateValue>,
    undefined: &mut Vec<String>,
) -> Option<()> {
    if text.is_empty() {
        undefined.extend(vars.iter().map(|v| v.name.clone()));
        // `{x}` and `{+x}` expand an undefined and an empty value alike: an empty part
        // names no resource. The others expand to nothing only when all are undefined.
        return (!matches!(op, Op::Simple | Op::Reserved)).then_some(());
    }
    let body = text.strip_prefix(op.first())?;
    let sep = op.sep();
    if op.named() {
        let pairs_left = body
            .split(sep)
            .map(|pair| match pair.split_once('=') {
                Some((name, value)) => Some((name, value)),
                // `{;x}` leaves out the `=` of an empty value; the query forms keep it.
                None => (op == Op::PathParam).then_some((pair, "")),
            })
            .collect::<Option<Vec<(&str, &str)>>>()?;
        let mut next = 0;
        for var in vars {
            if var.explode {
                let rest = &pairs_left[next..];
                next = pairs_left.len();
                if rest.is_empty() {
                    undefined.push(var.name.clone());
                    continue;
                }
                let value = if rest.iter().all(|(name, _)| *name == var.name) {
                    TemplateValue::List(
                        rest.iter()
                            .map(|(_, v)| decode_value(op, v))
                            .collect::<Option<_>>()?,
                    )
                } else {
                    TemplateValue::Map(
                        rest.iter()
                            .map(|(k, v)| Some((decode(k)?, decode_value(op, v)?)))
                            .collect::<Option<_>>()?,
                    )
                };
                bind(values, var, value)?;
            } else if let Some((_, raw)) = pairs_left.get(next).filter(|(n, _)| *n == var.name) {
                next += 1;
                bind(values, var, unexploded(op, raw)?)?;
            } else {
                undefined.push(var.name.clone());
            }
        }
        return (next == pairs_left.len()).then_some(());
    }
    if let [var] = vars {
        let value = if var.explode {
            let items: Vec<&str> = body.split(sep).collect();
            if items.iter().all(|item| item.contains('=')) {
                TemplateValue::Map(
                    items
                        .iter()
                        .map(|item| {
                            let (k, v) = item.split_once('=')?;
                            Some((decode(k)?, decode_value(op, v)?))
                        })
                        .collect::<Option<_>>()?,
                )
            } else if items.iter().any(|item| item.contains('=')) {
                return None;
            } else {
                TemplateValue::List(
                    items
                        .iter()
                        .map(|v| decode_value(op, v))
                        .collect::<Option<_>>()?,
                )
            }
        } else {
            unexploded(op, body)?
        };
        return bind(values, var, value);
    }
    // Several variables (only `{x,y}` and `{/x,y}` get here): all must be present, since
    // an undefined one is left out and which one it was would be a guess.
    let mut items = body.split(sep);
    for var in vars {
        bind(values, var, unexploded(op, items.next()?)?)?;
    }
    items.next().is_none().then_some(())
}

/// An unexploded value: a string, or a list when an operator that encodes `,` in values
/// shows a bare one.
fn unexploded(op: Op, raw: &str) -> Option<TemplateValue> {
    if !op.reserved() && raw.contains(',') {
        return Some(TemplateValue::List(
            raw.split(',')
                .map(|v| decode_value(op, v))
                .collect::<Option<_>>()?,
        ));
    }
    decode_value(op, raw).map(TemplateValue::String)
}

/// One raw value, checked and percent-decoded.
fn decode_value(op: Op, raw: &str) -> Option<String> {
    // Only `{+x}` and `{#x}` expand a `/`, `?` or `#` in a value unencoded; elsewhere one
    // belongs to the rest of the URI (a path, a query, a fragment).
    if !op.reserved() && raw.contains(['/', '?', '#']) {
        return None;
    }
    if has_dot_segment(raw) {
        return None;
    }
    // Once more after decoding, for a handler that decodes again (`%252e%252e`).
    decode(raw).filter(|value| !has_dot_segment(value))
}

/// Percent-decodes `raw`: `None` for a malformed `%` or bytes that are not UTF-8.
fn decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        if b == b'%' {
            let high = hex(*bytes.get(i + 1)?)?;
            let low = hex(*bytes.get(i + 2)?)?;
            out.push(high << 4 | low);
            i += 3;
        } else {
            out.push(b);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

fn hex(b: u8) -> Option<u8> {
    char::from(b)
        .to_digit(16)
        .and_then(|d| u8::try_from(d).ok())
}

/// Records `var`'s value, held to its prefix limit and to the value it had if named
/// before (RFC 6570 expands a variable the same way each time).
fn bind(values: &mut OrderedMap<TemplateValue>, var: &VarSpec, value: TemplateValue) -> Option<()> {
    if let Some(limit) = var.prefix {
        // A prefix is a length in characters of a string; lists and maps take none.
        if value.as_str()?.chars().count() > limit {
            return None;
        }
    }
    if values.get(&var.name).is_some_and(|seen| *seen != value) {
        return None;
    }
    values.insert(var.name.clone(), value);
    Some(())
}

/// Whether a variable's value holds a `.` or `..` path segment, plain or
/// percent-encoded (`%2e`, with `%2f`, `%5c` and `\\` as separators too). Such a value would let a URI such as
/// `file:///srv/docs/../../etc/passwd` match `file:///srv/{+path}` and hand the handler a
/// path outside the template's own prefix (RFC 3986 §5.2.4 removes dot segments, so the
/// URI does not name a resource under the template), so it matches no template.
pub(crate) fn has_dot_segment(value: &str) -> bool {
    let lowered = value
        .to_ascii_lowercase()
        .replace("%2f", "/")
        .replace("%5c", "/");
    lowered.split(['/', '\\']).any(|segment| {
        let mut rest = segment;
        let mut dots = 0;
        while !rest.is_empty() {
            if let Some(after) = rest.strip_prefix('.') {
                rest = after;
            } else if let Some(after) = rest.strip_prefix("%2e") {
                rest = after;
            } else {
                return false;
            }
            dots += 1;
        }
        (1..=2).contains(&dots)
    })
}

#[cfg(test)]
mod tests {
    use super::{TemplateValue, UriTemplate, has_dot_segment};

    fn one(t: &UriTemplate, uri: &str, name: &str) -> Option<String> {
        t.matches(uri)?.get(name)?.as_str().map(str::to_owned)
    }

    #[test]
    fn dot_segments_match_no_template() {
        for dotted in [
            ".",
            "..",
            "a/../b",
            "a/./b",
            "%2e%2E",
            ".%2e/x",
            "a\\..\\b",
            "../",
            "..%2Fetc",
            "x%5c..%5cy",
        ] {
            assert!(has_dot_segment(dotted), "{dotted}");
        }
        for plain in [
            "a..b",
            "...",
            "a.b/c",
            "%2e%2e%2e",
            "x%2ey",
            ".hidden",
            "a/b",
        ] {
            assert!(!has_dot_segment(plain), "{plain}");
        }
        let t = UriTemplate::parse_matchable("file:///srv/{+path}").unwrap();
        assert!(t.matches("file:///srv/docs/a.txt").is_some());
        assert!(t.matches("file:///srv/docs/../../etc/passwd").is_none());
        assert!(t.matches("file:///srv/docs/%2e%2e/x").is_none());
        assert!(t.matches("file:///srv/docs/%252e%252e/x").is_none());
        let simple = UriTemplate::parse_matchable("test://item/{id}").unwrap();
        assert!(simple.matches("test://item/..").is_none());
        assert!(simple.matches("test://item/a..b").is_some());
        let segments = UriTemplate::parse_matchable("p://root{/segs*}").unwrap();
        assert!(segments.matches("p://root/a/../b").is_none());
        let query = UriTemplate::parse_matchable("s://x{?path}").unwrap();
        assert!(query.matches("s://x?path=..").is_none());
    }

    #[test]
    fn templates_match_what_they_describe() {
        let t = UriTemplate::parse_matchable("test://template/{id}/data").unwrap();
        assert_eq!(
            one(&t, "test://template/42/data", "id").as_deref(),
            Some("42")
        );
        for miss in [
            "test://template//data",
            "test://template/4/2/data",
            "test://template/42/datum",
            "x",
        ] {
            assert!(t.matches(miss).is_none(), "{miss}");
        }
        // The closing literal is anchored at the end; a repeated variable is one value.
        let suffix = UriTemplate::parse_matchable("file:///{name}.txt").unwrap();
        assert_eq!(
            one(&suffix, "file:///a.txt.txt", "name").as_deref(),
            Some("a.txt")
        );
        let twice = UriTemplate::parse_matchable("x://{a}-{a}").unwrap();
        assert!(twice.matches("x://1-1").is_some());
        assert!(twice.matches("x://1-2").is_none());
        let reserved = UriTemplate::parse_matchable("file:///{+path}").unwrap();
        assert_eq!(
            one(&reserved, "file:///a/b.txt", "path").as_deref(),
            Some("a/b.txt")
        );
        for bad in [
            "{", "a}", "{}", "{a b}", "{=a}", "{a:0}", "{a.}", "x y{a}", "%zz{a}",
        ] {
            assert!(UriTemplate::parse(bad).is_err(), "{bad}");
        }
        for ambiguous in ["{a}{b}", "{+a,b}", "{?a*,b}"] {
            assert!(UriTemplate::parse(ambiguous).is_ok(), "{ambiguous}");
            assert!(
                UriTemplate::parse_matchable(ambiguous).is_err(),
                "{ambiguous}"
            );
        }
    }

    #[test]
    fn literals_are_matched_as_expanded() {
        let t = UriTemplate::parse_matchable("file:///café/{name}").unwrap();
        assert_eq!(t.to_string(), "file:///café/{name}");
        assert_eq!(one(&t, "file:///caf%C3%A9/x", "name").as_deref(), Some("x"));
    }

    #[test]
    fn named_forms_take_names_in_order_and_skip_undefined() {
        let t = UriTemplate::parse_matchable("s://x{?a,b,c}").unwrap();
        let got = t.matches("s://x?a=1&c=3").unwrap();
        assert_eq!(got.get("a"), Some(&TemplateValue::from("1")));
        assert_eq!(got.get("b"), None);
        assert_eq!(got.get("c"), Some(&TemplateValue::from("3")));
        // Out of the template's order, or unknown names, do not match.
        assert!(t.matches("s://x?c=3&a=1").is_none());
        assert!(t.matches("s://x?d=1").is_none());
        let exploded = UriTemplate::parse_matchable("s://x{?a,rest*}").unwrap();
        let got = exploded.matches("s://x?a=1&k=v&k=w").unwrap();
        assert_eq!(
            got.get("rest"),
            Some(&TemplateValue::Map(vec![
                ("k".into(), "v".into()),
                ("k".into(), "w".into())
            ]))
        );
        let path = UriTemplate::parse_matchable("m://x{;a,b}").unwrap();
        let got = path.matches("m://x;a;b=2").unwrap();
        assert_eq!(got.get("a"), Some(&TemplateValue::from("")));
    }

    #[test]
    fn a_variable_undefined_in_one_place_is_undefined_everywhere() {
        // Found by a property test: `{.a}` matched nothing while `{;a*}` bound `a`, but
        // expanding that value fills `{.a}` too.
        let t = UriTemplate::parse_matchable("x:{;a*}#{.a}").unwrap();
        assert!(t.matches("x:;.#").is_none());
        assert!(
            t.matches("x:;a=1#.1").is_none(),
            "a list in one place, a string in the other"
        );
        let same = UriTemplate::parse_matchable("x:{/a}#{.a}").unwrap();
        assert!(same.matches("x:/1#.1").is_some());
        assert!(same.matches("x:/1#").is_none());
        assert!(same.matches("x:#").is_some());
    }

    #[test]
    fn never_panics_on_odd_input() {
        let templates = [
            "{a}",
            "{+a}",
            "{#a}",
            "{.a}",
            "{/a}",
            "{;a}",
            "{?a}",
            "{&a}",
            "{a*}",
            "{/a*}",
            "{?a*}",
            "{;a*}",
            "{a:2}",
            "x{?a,b}{#f}",
            "{a}/{+b}",
        ];
        let uris = [
            "", "%", "%%", "%C3", "é", "?", "?=", "?&", "&=&", ";", ";=", "/", "//", "#", ".", ",",
            "x{?a}", "%E2%82", "a=b,c", "?a=%", "/a=1/b", "/a/b=1",
        ];
        for template in templates {
            let t = UriTemplate::parse_matchable(template).unwrap();
            for uri in uris {
                let _ = t.matches(uri);
                let _ = t.matches(&format!("x{uri}"));
            }
        }
    }
}
