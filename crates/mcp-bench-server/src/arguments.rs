//! The arguments of the benchmark's tools, which `bench/rmcp-server` serves too (it
//! includes this file), so that both SDKs are measured on the same input schemas: `echo`,
//! `add`, `search` (a realistic schema for the validation benchmark) and `steps`, and the
//! schema of the generated tools of `--extra-tools`.

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct Echo {
    /// The text to send back.
    pub(crate) text: String,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct Add {
    /// The first addend.
    pub(crate) a: i64,
    /// The second addend.
    pub(crate) b: i64,
}

/// Where `search` looks.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SearchScope {
    Code,
    Issues,
    Docs,
}

impl SearchScope {
    pub(crate) fn as_str(&self) -> &'static str {
        match self {
            Self::Code => "code",
            Self::Issues => "issues",
            Self::Docs => "docs",
        }
    }
}

/// How `search` orders its results.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum SearchSort {
    Relevance,
    Newest,
    Oldest,
}

/// What `search` keeps.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read by the schema and the validator, not by the handler
pub(crate) struct SearchFilters {
    /// Languages to keep, such as rust or typescript.
    #[schemars(
        length(min = 1, max = 5),
        inner(regex(pattern = r"^[a-z][a-z0-9+#-]{0,31}$"))
    )]
    #[serde(default)]
    languages: Vec<String>,
    /// A repository, owner/name.
    #[schemars(regex(pattern = r"^[A-Za-z0-9_.-]{1,100}/[A-Za-z0-9_.-]{1,100}$"))]
    repository: Option<String>,
    /// Only results changed on or after this day.
    #[schemars(extend("format" = "date"))]
    since: Option<String>,
    /// Labels that must all be present.
    #[schemars(length(max = 10), inner(length(min = 1, max = 50)))]
    #[serde(default)]
    labels: Vec<String>,
    /// The least number of stars.
    #[schemars(range(min = 0, max = 1_000_000))]
    min_stars: Option<u32>,
}

/// The arguments of `search`: a realistic input schema for the validation benchmark.
#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(deny_unknown_fields)]
#[allow(dead_code)] // read by the schema and the validator, not by the handler
pub(crate) struct Search {
    /// What to look for.
    #[schemars(length(min = 1, max = 200))]
    pub(crate) query: String,
    /// Where to look.
    pub(crate) scope: SearchScope,
    /// What to keep.
    filters: Option<SearchFilters>,
    /// How to order the results.
    sort: Option<SearchSort>,
    /// How many results at most.
    #[schemars(range(min = 1, max = 100))]
    limit: Option<u8>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
pub(crate) struct Steps {
    /// How many progress notifications to send before the result (at most 1000).
    #[schemars(range(max = 1000))]
    pub(crate) steps: u16,
}

/// The input schema of the generated tools of `--extra-tools`.
pub(crate) fn extra_tool_schema() -> serde_json::Value {
    serde_json::json!({
        "type": "object",
        "properties": {
            "id": {"type": "integer", "minimum": 0, "description": "The record to fetch."},
            "fields": {
                "type": "array",
                "items": {"type": "string", "maxLength": 64},
                "maxItems": 20,
                "description": "The fields to return; all when absent."
            }
        },
        "required": ["id"],
        "additionalProperties": false
    })
}
