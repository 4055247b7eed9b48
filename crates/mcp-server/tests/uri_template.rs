//! RFC 6570 URI templates (<https://www.rfc-editor.org/rfc/rfc6570>): expansion against the
//! RFC's examples and the uritemplate-test suite (<https://github.com/uri-templates/uritemplate-test>),
//! and matching URIs back to the variables.

use mcp_server::{Error, TemplateValue, UriTemplate};
use mcp_types::OrderedMap;
use serde_json::Value;

/// The variables of RFC 6570 section 3.2 (a superset of those of section 1.2).
fn rfc_values() -> OrderedMap<TemplateValue> {
    let s = |v: &str| TemplateValue::from(v);
    let list = |v: &[&str]| TemplateValue::List(v.iter().map(|s| (*s).to_owned()).collect());
    let map = |v: &[(&str, &str)]| {
        TemplateValue::Map(
            v.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    };
    let mut values = OrderedMap::new();
    values.insert("count", list(&["one", "two", "three"]));
    values.insert("dom", list(&["example", "com"]));
    values.insert("dub", s("me/too"));
    values.insert("hello", s("Hello World!"));
    values.insert("half", s("50%"));
    values.insert("var", s("value"));
    values.insert("who", s("fred"));
    values.insert("base", s("http://example.com/home/"));
    values.insert("path", s("/foo/bar"));
    values.insert("list", list(&["red", "green", "blue"]));
    values.insert("keys", map(&[("semi", ";"), ("dot", "."), ("comma", ",")]));
    values.insert("v", s("6"));
    values.insert("x", s("1024"));
    values.insert("y", s("768"));
    values.insert("empty", s(""));
    values.insert("empty_keys", map(&[]));
    values
}

/// RFC 6570 section 1.2, every example of the four levels.
const SECTION_1_2: &[(&str, &str)] = &[
    ("{var}", "value"),
    ("{hello}", "Hello%20World%21"),
    ("{+var}", "value"),
    ("{+hello}", "Hello%20World!"),
    ("{+path}/here", "/foo/bar/here"),
    ("here?ref={+path}", "here?ref=/foo/bar"),
    ("X{#var}", "X#value"),
    ("X{#hello}", "X#Hello%20World!"),
    ("map?{x,y}", "map?1024,768"),
    ("{x,hello,y}", "1024,Hello%20World%21,768"),
    ("{+x,hello,y}", "1024,Hello%20World!,768"),
    ("{+path,x}/here", "/foo/bar,1024/here"),
    ("{#x,hello,y}", "#1024,Hello%20World!,768"),
    ("{#path,x}/here", "#/foo/bar,1024/here"),
    ("X{.var}", "X.value"),
    ("X{.x,y}", "X.1024.768"),
    ("{/var}", "/value"),
    ("{/var,x}/here", "/value/1024/here"),
    ("{;x,y}", ";x=1024;y=768"),
    ("{;x,y,empty}", ";x=1024;y=768;empty"),
    ("{?x,y}", "?x=1024&y=768"),
    ("{?x,y,empty}", "?x=1024&y=768&empty="),
    ("?fixed=yes{&x}", "?fixed=yes&x=1024"),
    ("{&x,y,empty}", "&x=1024&y=768&empty="),
    ("{var:3}", "val"),
    ("{var:30}", "value"),
    ("{list}", "red,green,blue"),
    ("{list*}", "red,green,blue"),
    ("{keys}", "semi,%3B,dot,.,comma,%2C"),
    ("{keys*}", "semi=%3B,dot=.,comma=%2C"),
    ("{+path:6}/here", "/foo/b/here"),
    ("{+list}", "red,green,blue"),
    ("{+list*}", "red,green,blue"),
    ("{+keys}", "semi,;,dot,.,comma,,"),
    ("{+keys*}", "semi=;,dot=.,comma=,"),
    ("{#path:6}/here", "#/foo/b/here"),
    ("{#list}", "#red,green,blue"),
    ("{#list*}", "#red,green,blue"),
    ("{#keys}", "#semi,;,dot,.,comma,,"),
    ("{#keys*}", "#semi=;,dot=.,comma=,"),
    ("X{.var:3}", "X.val"),
    ("X{.list}", "X.red,green,blue"),
    ("X{.list*}", "X.red.green.blue"),
    ("X{.keys}", "X.semi,%3B,dot,.,comma,%2C"),
    ("X{.keys*}", "X.semi=%3B.dot=..comma=%2C"),
    ("{/var:1,var}", "/v/value"),
    ("{/list}", "/red,green,blue"),
    ("{/list*}", "/red/green/blue"),
    ("{/list*,path:4}", "/red/green/blue/%2Ffoo"),
    ("{/keys}", "/semi,%3B,dot,.,comma,%2C"),
    ("{/keys*}", "/semi=%3B/dot=./comma=%2C"),
    ("{;hello:5}", ";hello=Hello"),
    ("{;list}", ";list=red,green,blue"),
    ("{;list*}", ";list=red;list=green;list=blue"),
    ("{;keys}", ";keys=semi,%3B,dot,.,comma,%2C"),
    ("{;keys*}", ";semi=%3B;dot=.;comma=%2C"),
    ("{?var:3}", "?var=val"),
    ("{?list}", "?list=red,green,blue"),
    ("{?list*}", "?list=red&list=green&list=blue"),
    ("{?keys}", "?keys=semi,%3B,dot,.,comma,%2C"),
    ("{?keys*}", "?semi=%3B&dot=.&comma=%2C"),
    ("{&var:3}", "&var=val"),
    ("{&list}", "&list=red,green,blue"),
    ("{&list*}", "&list=red&list=green&list=blue"),
    ("{&keys}", "&keys=semi,%3B,dot,.,comma,%2C"),
    ("{&keys*}", "&semi=%3B&dot=.&comma=%2C"),
];

#[test]
fn rfc_section_1_2_examples_expand() {
    let values = rfc_values();
    for (template, expected) in SECTION_1_2 {
        let t = UriTemplate::parse(template).unwrap();
        assert_eq!(t.expand(&values).unwrap(), *expected, "{template}");
    }
}

fn json_value(v: &Value) -> Option<TemplateValue> {
    Some(match v {
        Value::Null => return None,
        Value::String(s) => TemplateValue::String(s.clone()),
        Value::Number(n) => TemplateValue::String(n.to_string()),
        Value::Array(items) => TemplateValue::List(
            items
                .iter()
                .map(|i| i.as_str().map_or_else(|| i.to_string(), str::to_owned))
                .collect(),
        ),
        Value::Object(entries) => TemplateValue::Map(
            entries
                .iter()
                .map(|(k, v)| {
                    (
                        k.clone(),
                        v.as_str().map_or_else(|| v.to_string(), str::to_owned),
                    )
                })
                .collect(),
        ),
        Value::Bool(b) => TemplateValue::String(b.to_string()),
    })
}

/// Runs one uritemplate-test file: every case expands to (one of) the expected URIs, or
/// fails where the expectation is `false`. Returns the number of cases.
fn run_suite(file: &str) -> usize {
    let path = format!(
        "{}/tests/uritemplate-test/{file}",
        env!("CARGO_MANIFEST_DIR")
    );
    let suite: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let mut cases = 0;
    for (group, body) in suite.as_object().unwrap() {
        let mut values = OrderedMap::new();
        for (name, v) in body["variables"].as_object().unwrap() {
            if let Some(v) = json_value(v) {
                values.insert(name.clone(), v);
            }
        }
        for case in body["testcases"].as_array().unwrap() {
            let template = case[0].as_str().unwrap();
            let got = UriTemplate::parse(template).and_then(|t| t.expand(&values));
            match &case[1] {
                Value::Bool(false) => {
                    assert!(got.is_err(), "{file} {group}: {template} gave {got:?}");
                }
                Value::String(expected) => {
                    assert_eq!(got.unwrap(), *expected, "{file} {group}: {template}");
                }
                Value::Array(options) => {
                    let got = got.unwrap();
                    assert!(
                        options.iter().any(|o| o.as_str() == Some(got.as_str())),
                        "{file} {group}: {template} gave {got}"
                    );
                }
                other => panic!("{file}: unexpected expectation {other}"),
            }
            cases += 1;
        }
    }
    cases
}

#[test]
fn uritemplate_test_suite_expands() {
    let counts = [
        run_suite("spec-examples.json"),
        run_suite("spec-examples-by-section.json"),
        run_suite("extended-tests.json"),
        run_suite("negative-tests.json"),
    ];
    assert!(counts.iter().all(|&n| n > 10), "{counts:?}");
}

fn strings(pairs: &[(&str, &str)]) -> OrderedMap<TemplateValue> {
    let mut values = OrderedMap::new();
    for (k, v) in pairs {
        values.insert(*k, TemplateValue::from(*v));
    }
    values
}

/// Expanding then matching gives the values back, for each matchable form.
#[test]
fn round_trips() {
    let list = |v: &[&str]| TemplateValue::List(v.iter().map(|s| (*s).to_owned()).collect());
    let map = |v: &[(&str, &str)]| {
        TemplateValue::Map(
            v.iter()
                .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
                .collect(),
        )
    };
    let mut cases: Vec<(&str, OrderedMap<TemplateValue>)> = vec![
        ("test://item/{id}", strings(&[("id", "a b/c?d#é,%")])),
        ("test://{x,y}/z", strings(&[("x", "1"), ("y", "two words")])),
        ("file:///{+path}", strings(&[("path", "a/b c/d.txt")])),
        ("doc://x/{+path}#top", strings(&[("path", "a/b")])),
        ("doc://x/y{#frag}", strings(&[("frag", "a/b?c")])),
        ("host://www{.dom}/x", strings(&[("dom", "example.com")])),
        ("p://root{/a}", strings(&[("a", "x y")])),
        ("p://root{/a,b}/end", strings(&[("a", "1"), ("b", "2")])),
        (
            "p://root{/a}{?q}",
            strings(&[("a", "seg"), ("q", "what&why=")]),
        ),
        (
            "m://x{;a,b,c}",
            strings(&[("a", "1"), ("b", ""), ("c", "3;4")]),
        ),
        (
            "s://docs{?q,lang}",
            strings(&[("q", "rust & go"), ("lang", "en")]),
        ),
        (
            "s://docs?fixed=1{&q,lang}",
            strings(&[("q", "α"), ("lang", "fr")]),
        ),
        ("t://{id:3}/x", strings(&[("id", "abc")])),
        ("t://x{?q:5}", strings(&[("q", "héllo")])),
        ("p://root{/a}", OrderedMap::new()),
        ("s://docs{?q,lang}", strings(&[("lang", "en")])),
    ];
    let mut with = |template, name: &str, value: TemplateValue| {
        let mut values = OrderedMap::new();
        values.insert(name, value);
        cases.push((template, values));
    };
    with("s://docs{?tag*}", "tag", list(&["a", "b c", "d"]));
    with(
        "s://docs{?opts*}",
        "opts",
        map(&[("sort", "asc"), ("page size", "10")]),
    );
    with("s://docs?x=1{&opts*}", "opts", map(&[("a", "1")]));
    with("s://docs{?tags}", "tags", list(&["a", "b"]));
    with("m://x{;opts*}", "opts", map(&[("a", "1"), ("b", "2")]));
    with("m://x{;l*}", "l", list(&["1", "2"]));
    with("p://root{/segs*}", "segs", list(&["a", "b c", "d"]));
    with("p://root{/kv*}", "kv", map(&[("a", "1"), ("b", "2")]));
    with("l://{ids*}/x", "ids", list(&["1", "2", "3"]));
    with("l://{ids}/x", "ids", list(&["1", "2", "3"]));
    let mut values = strings(&[("q", "x")]);
    values.insert("rest", map(&[("k", "v"), ("k2", "v2")]));
    cases.push(("s://docs{?q,rest*}", values));
    for (template, values) in cases {
        let t = UriTemplate::parse_matchable(template).unwrap();
        let uri = t.expand(&values).unwrap();
        assert_eq!(t.matches(&uri), Some(values), "{template} -> {uri}");
    }
}

#[test]
fn matched_values_are_percent_decoded() {
    let t = UriTemplate::parse_matchable("test://item/{id}").unwrap();
    let got = t.matches("test://item/caf%C3%A9%20au%20lait").unwrap();
    assert_eq!(got.get("id"), Some(&TemplateValue::from("café au lait")));
    // Lowercase hex is accepted too.
    assert_eq!(
        t.matches("test://item/%c3%a9").unwrap().get("id"),
        Some(&TemplateValue::from("é"))
    );
    for bad in [
        "test://item/%FF",    // not UTF-8
        "test://item/%C3",    // a truncated sequence
        "test://item/%zz",    // not hex
        "test://item/100%",   // a bare `%`
        "test://item/a/b",    // `/` outside `{+x}`
        "test://item/",       // empty
        "test://item/..",     // a dot segment
        "test://item/%2e%2E", // an encoded one
    ] {
        assert_eq!(t.matches(bad), None, "{bad}");
    }
    let q = UriTemplate::parse_matchable("s://docs{?q}").unwrap();
    assert_eq!(
        q.matches("s://docs?q=a%26b%3Dc").unwrap().get("q"),
        Some(&TemplateValue::from("a&b=c"))
    );
    assert_eq!(q.matches("s://docs?q=%80"), None);
    assert_eq!(q.matches("s://docs?other=1"), None);
    assert_eq!(q.matches("s://docs?q=1&q=2"), None);
    assert_eq!(q.matches("s://docs?q"), None);
}

#[test]
fn prefix_modifiers_limit_length() {
    let t = UriTemplate::parse_matchable("t://{id:3}/x").unwrap();
    assert!(t.matches("t://abc/x").is_some());
    assert!(
        t.matches("t://%C3%A9%C3%A9%C3%A9/x").is_some(),
        "three characters, six bytes"
    );
    assert_eq!(t.matches("t://abcd/x"), None);
    assert_eq!(t.matches("t://a,b/x"), None, "a list takes no prefix");
    let q = UriTemplate::parse_matchable("t://x{?q:2}").unwrap();
    assert!(q.matches("t://x?q=ab").is_some());
    assert_eq!(q.matches("t://x?q=abc"), None);
    // A prefix on a list does not expand.
    let mut values = OrderedMap::new();
    values.insert("id", TemplateValue::List(vec!["a".into()]));
    assert!(matches!(
        t.expand(&values),
        Err(Error::TemplateExpansion { .. })
    ));
}

#[test]
fn ambiguous_templates_are_refused_with_the_reason() {
    for (template, why) in [
        ("x://{a}{b}", "no literal between them"),
        ("x://{+a}{?q}", "no literal between them"),
        ("x://{/a}{/b}", "no literal between them"),
        ("x://{?a}{&b}", "no literal between them"),
        ("x://{/a}{.b}", "no literal between them"),
        ("x://{+a,b}", "several variables"),
        ("x://{#a,b}", "several variables"),
        ("x://{.a,b}", "several variables"),
        ("x://{+a*}", "exploded variable in"),
        ("x://{.a*}", "exploded variable in"),
        ("x://{a*,b}", "exploded variable with others"),
        ("x://{/a,b*}", "exploded variable with others"),
        ("x://{?a*,b}", "exploded variable before another"),
        ("x://{;a*,b}", "exploded variable before another"),
    ] {
        let err = UriTemplate::parse_matchable(template).unwrap_err();
        assert!(
            matches!(&err, Error::InvalidTemplate { reason, .. } if reason.contains(why)),
            "{template}: {err}"
        );
        assert!(err.to_string().contains(why), "{err}");
        // It is still a template: it expands, and says why it matches nothing.
        let t = UriTemplate::parse(template).unwrap();
        assert!(t.ambiguity().is_some_and(|r| r.contains(why)));
        assert_eq!(
            t.matches(&t.expand(&strings(&[("a", "1"), ("b", "2")])).unwrap()),
            None
        );
    }
    for accepted in [
        "x://{a}{/b}",
        "x://{/a}{?q}",
        "x://{a}{?q}{#f}",
        "x://{.a}{/b}",
        "x://{;a}{?b}",
    ] {
        assert!(UriTemplate::parse_matchable(accepted).is_ok(), "{accepted}");
    }
    for invalid in [
        "{",
        "a}",
        "{}",
        "{a b}",
        "{=a}",
        "{a:0}",
        "{a:10000}",
        "{a**}",
    ] {
        assert!(
            matches!(
                UriTemplate::parse(invalid),
                Err(Error::InvalidTemplate { .. })
            ),
            "{invalid}"
        );
    }
}

#[test]
fn matching_is_bounded() {
    // A long URI against a template of many expressions: linear scans, no backtracking.
    let t = UriTemplate::parse_matchable("x://{a}-{b}-{c}-{d}/{+rest}").unwrap();
    let long = format!("x://{}-1-2-3/{}", "a".repeat(100_000), "b/".repeat(50_000));
    let started = std::time::Instant::now();
    assert!(t.matches(&long).is_some());
    assert!(t.matches(&"-".repeat(200_000)).is_none());
    assert!(started.elapsed() < std::time::Duration::from_secs(5));
}
